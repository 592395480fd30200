package score

import (
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestBLEUPublishedExamples(t *testing.T) {
	// The example sentences of Papineni et al. as used in NLTK's documentation,
	// whose published values are 0.5045666840058485 (sentence) and
	// 0.5920778868801042 (corpus).
	hyp1 := strings.Fields("It is a guide to action which ensures that the military always obeys the commands of the party")
	ref1a := strings.Fields("It is a guide to action that ensures that the military will forever heed Party commands")
	ref1b := strings.Fields("It is the guiding principle which guarantees the military forces always being under the command of the Party")
	ref1c := strings.Fields("It is the practical guide for the army always to heed the directions of the party")
	if got := BLEU(hyp1, [][]string{ref1a, ref1b, ref1c}, 4); !near(got, 0.5045666840058485) {
		t.Errorf("sentence BLEU = %.16f, want 0.5045666840058485", got)
	}
	hyp2 := strings.Fields("he read the book because he was interested in world history")
	ref2a := strings.Fields("he was interested in world history because he read the book")
	got := CorpusBLEU([][]string{hyp1, hyp2}, [][][]string{{ref1a, ref1b, ref1c}, {ref2a}}, 4)
	if !near(got, 0.5920778868801042) {
		t.Errorf("corpus BLEU = %.16f, want 0.5920778868801042", got)
	}
}

func TestBLEUHandComputed(t *testing.T) {
	tests := []struct {
		name      string
		cand, ref string
		n         int
		want      float64
	}{
		// Papineni's clipping example: 7 "the", the reference holds 2: 2/7.
		{"clipped unigrams", "the the the the the the the", "the cat is on the mat", 1, 2.0 / 7},
		// Same length, precisions 5/6, 4/5, 3/4, 2/3: (1/3)^(1/4).
		{"ctrl+c vs ctrl+v chars", "c t r l + c", "c t r l + v", 4, math.Pow(1.0/3, 0.25)},
		// Candidate shorter than reference: brevity penalty exp(1 - 6/4).
		{"brevity", "the cat is on", "the cat is on the mat", 2, math.Exp(1-6.0/4) * 1},
		{"identical", "a b c d e", "a b c d e", 4, 1},
		{"no 4-gram match", "a b c", "a b c", 4, 0},
		{"empty candidate", "", "a b", 1, 0},
	}
	for _, tc := range tests {
		got := BLEU(strings.Fields(tc.cand), [][]string{strings.Fields(tc.ref)}, tc.n)
		if !near(got, tc.want) {
			t.Errorf("%s: BLEU = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := CharBLEU("ctrl+c", "ctrl+v"); !near(got, math.Pow(1.0/3, 0.25)) {
		t.Errorf("CharBLEU = %v", got)
	}
}

// TestCharBLEUAgreesWithBLEU checks the fast character path against the
// general implementation on many strings.
func TestCharBLEUAgreesWithBLEU(t *testing.T) {
	words := []string{"ctrl", "+", "c", "a", "the", "é", "日本", " ", "open", "file", "aa", "ab"}
	seed := uint32(7)
	next := func() int { seed = seed*1664525 + 1013904223; return int(seed >> 8) }
	for i := 0; i < 2000; i++ {
		var c, r strings.Builder
		for k := next() % 8; k > 0; k-- {
			c.WriteString(words[next()%len(words)])
		}
		for k := next() % 8; k > 0; k-- {
			r.WriteString(words[next()%len(words)])
		}
		fast := CharBLEU(c.String(), r.String())
		slow := BLEU([]rune(c.String()), [][]rune{[]rune(r.String())}, 4)
		if !near(fast, slow) {
			t.Fatalf("CharBLEU(%q, %q) = %v, BLEU = %v", c.String(), r.String(), fast, slow)
		}
	}
}
