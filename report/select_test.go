package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/store"
)

// outcomes makes a run's results from a task's outcomes over repeats:
// "s" success, "f" failure, "e" error, one letter a repeat.
func outcomes(m map[string]string) []store.Result {
	word := map[byte]string{'s': "success", 'f': "failure", 'e': "error"}
	var out []store.Result
	for task, os := range m {
		for i := range len(os) {
			out = append(out, store.Result{Task: task, Repeat: i, Outcome: word[os[i]]})
		}
	}
	return out
}

func TestSelectTasks(t *testing.T) {
	// Three agents over repeats.
	a := outcomes(map[string]string{"easy": "sss", "hard": "fff", "split": "sss", "flaky": "sfs", "err": "sse", "gone": "eee", "half": "ss"})
	b := outcomes(map[string]string{"easy": "sss", "hard": "fff", "split": "fff", "flaky": "sss", "err": "ses", "gone": "fff", "half": "ss"})
	c := outcomes(map[string]string{"easy": "ss", "hard": "ff", "split": "fff", "flaky": "sss", "err": "fff", "gone": "sss", "half": "sf"})
	tests := []struct {
		name                   string
		runs                   [][]store.Result
		stable, discriminating bool
		kept, flaky, agreed    []string
		undecided              []string
	}{
		{"stable, one run", [][]store.Result{a}, true, false,
			[]string{"easy", "err", "half", "hard", "split"}, []string{"flaky"}, []string{"easy", "err", "flaky", "half", "hard", "split"}, []string{"gone"}},
		{"stable, two runs", [][]store.Result{a, b}, true, false,
			[]string{"easy", "err", "half", "hard", "split"}, []string{"flaky"}, []string{"easy", "err", "half", "hard"}, []string{"gone"}},
		{"discriminating, two runs", [][]store.Result{a, b}, false, true,
			[]string{"flaky", "split"}, []string{"flaky"}, []string{"easy", "err", "half", "hard"}, []string{"gone"}},
		{"both, two runs", [][]store.Result{a, b}, true, true,
			[]string{"split"}, []string{"flaky"}, []string{"easy", "err", "half", "hard"}, []string{"gone"}},
		{"both, three runs", [][]store.Result{a, b, c}, true, true,
			[]string{"err", "split"}, []string{"flaky", "half"}, []string{"easy", "hard"}, []string{"gone"}},
		{"discriminating, three runs", [][]store.Result{a, b, c}, false, true,
			[]string{"err", "flaky", "half", "split"}, []string{"flaky", "half"}, []string{"easy", "hard"}, []string{"gone"}},
		{"a task one run lacks", [][]store.Result{a, outcomes(map[string]string{"easy": "f"})}, false, true,
			[]string{"easy"}, nil, nil, []string{"err", "flaky", "gone", "half", "hard", "split"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			names := make([]string, len(tt.runs))
			s := SelectTasks(names, tt.runs, tt.stable, tt.discriminating)
			for _, c := range []struct {
				what      string
				got, want []string
			}{{"kept", s.Kept, tt.kept}, {"flaky", s.Flaky, tt.flaky}, {"agreed", s.Agreed, tt.agreed}, {"undecided", s.Undecided, tt.undecided}} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
			if want := 7 - len(tt.undecided); s.Tasks != want { // seven tasks in all
				t.Errorf("tasks = %d, want %d (every task but the undecided)", s.Tasks, want)
			}
		})
	}
}

func TestSelectionFilter(t *testing.T) {
	s := SelectTasks([]string{"runs/a", "runs/b"}, [][]store.Result{
		outcomes(map[string]string{"x": "s", "y": "s", "z": "f"}),
		outcomes(map[string]string{"x": "f", "y": "s", "z": "s"}),
	}, true, true)
	var b strings.Builder
	if err := s.WriteFilter(&b); err != nil {
		t.Fatal(err)
	}
	want := "# proctor tasks select: 2 of 3 tasks, stable in every run and discriminating between runs\n# runs: runs/a, runs/b\nx\nz\n"
	if b.String() != want {
		t.Errorf("filter file:\n%s\nwant\n%s", b.String(), want)
	}
	if got := s.Summary(); got != "2 of 3 tasks kept (stable in every run and discriminating between runs): 0 flaky, 1 scored alike by every run" {
		t.Errorf("summary %q", got)
	}
}

func TestBriefRepeats(t *testing.T) {
	tests := []struct {
		name string
		rs   []store.Result
		want RepeatBrief
	}{
		{"no repeats", outcomes(map[string]string{"a": "s", "b": "f"}), RepeatBrief{MaxRepeats: 1}},
		// pass^3 of a is 1, of b C(2,3)/C(3,3) = 0; c was decided twice only.
		{"repeats", outcomes(map[string]string{"a": "sss", "b": "ssf", "c": "sse", "d": "e"}),
			RepeatBrief{MaxRepeats: 3, Tried: 3, Flipped: 1, FlipRate: 1.0 / 3, K: 3, PassHatK: 0.5}},
		{"all flipped", outcomes(map[string]string{"a": "sf", "b": "fs"}),
			RepeatBrief{MaxRepeats: 2, Tried: 2, Flipped: 2, FlipRate: 1, K: 2, PassHatK: 0}},
	}
	for _, tt := range tests {
		if got := BriefRepeats(tt.rs); got != tt.want {
			t.Errorf("%s: BriefRepeats = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
