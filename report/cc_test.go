package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/store"
)

func step(t *testing.T, envErr string, acts []action.Action, done ...action.Action) store.Turn {
	t.Helper()
	ab, err := json.Marshal(acts)
	if err != nil {
		t.Fatal(err)
	}
	var d []map[string]any
	for _, a := range done {
		rec := map[string]any{"action": a, "element": "push button OK"}
		if a.Point != nil && a.Point.Unit == "" {
			rec["at"] = [2]int{int(a.Point.X), int(a.Point.Y)}
		}
		d = append(d, rec)
	}
	db, _ := json.Marshal(d) // null when nothing was performed, as the runner writes it
	return store.Turn{Actions: ab, Done: db, EnvError: envErr}
}

func kinds(acts []action.Action) string {
	var ks []string
	for _, a := range acts {
		ks = append(ks, string(a.Kind))
	}
	return strings.Join(ks, " ")
}

func TestPerformed(t *testing.T) {
	click := action.Action{Kind: action.Click, Point: &action.Point{X: 1, Y: 2}}
	typ := action.Action{Kind: action.Type, Text: "hi"}
	done := action.Action{Kind: action.Done}
	tests := []struct {
		name  string
		steps []store.Turn
		want  string
	}{
		{"performed and final", []store.Turn{step(t, "", []action.Action{click}, click), step(t, "", []action.Action{typ, done}, typ)}, "click type done"},
		{"a failed action: the final is not reached", []store.Turn{step(t, "no such element", []action.Action{click, done})}, ""},
		{"cut at the first failure", []store.Turn{step(t, "action not possible", []action.Action{typ, click, done}, typ)}, "type"},
		{"no final: a budget ran out", []store.Turn{step(t, "", []action.Action{click}, click), step(t, "", []action.Action{click}, click)}, "click click"},
		{"nothing performed", []store.Turn{step(t, "", nil)}, ""},
		{"an answer", []store.Turn{step(t, "", []action.Action{{Kind: action.Answer, Text: "3"}, click})}, "answer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Performed(tc.steps)
			if err != nil {
				t.Fatal(err)
			}
			if kinds(got) != tc.want {
				t.Fatalf("Performed = %q, want %q", kinds(got), tc.want)
			}
		})
	}
	if _, err := Performed([]store.Turn{{Index: 3, Done: json.RawMessage(`{`)}}); err == nil || !strings.Contains(err.Error(), "step 3") {
		t.Fatalf("a broken record: %v", err)
	}
}

func TestPerformedCCScore(t *testing.T) {
	gold := []action.Action{{Kind: action.Click, Point: &action.Point{X: 100, Y: 200}}, {Kind: action.Type, Text: "Hello"}, {Kind: action.Done}}
	screen := action.Size{W: 1920, H: 1080}
	tests := []struct {
		name  string
		steps []store.Turn
		score func(float64) bool
	}{
		{"the gold", []store.Turn{step(t, "", gold[:1], gold[0]), step(t, "", gold[1:], gold[1])}, func(s float64) bool { return s == 1 }},
		{"elsewhere, other text", []store.Turn{step(t, "", []action.Action{{Kind: action.Click, Point: &action.Point{X: 900, Y: 40}}, {Kind: action.Type, Text: "Bye"}, {Kind: action.Done}},
			action.Action{Kind: action.Click, Point: &action.Point{X: 900, Y: 40}}, action.Action{Kind: action.Type, Text: "Bye"})}, func(s float64) bool { return s > 0 && s < 1 }},
		{"a click on an element, landed in the gold", []store.Turn{{Actions: json.RawMessage(`[{"kind":"click","target":{"tag":7}},{"kind":"type","text":"Hello"},{"kind":"done"}]`),
			Done: json.RawMessage(`[{"action":{"kind":"click","target":{"tag":7}},"at":[100,200]},{"action":{"kind":"type","text":"Hello"}}]`)}}, func(s float64) bool { return s == 1 }},
		{"never ended", []store.Turn{step(t, "", []action.Action{{Kind: action.Wait}}, action.Action{Kind: action.Wait})}, func(s float64) bool { return s == 0 }},
	}
	for _, tc := range tests {
		pred, err := Performed(tc.steps)
		if err != nil {
			t.Fatal(err)
		}
		if s := score.CCScore(gold, pred, screen).Score; !tc.score(s) {
			t.Errorf("%s: CC-Score %.3f", tc.name, s)
		}
	}
}

func TestWriteRejudgedAndCC(t *testing.T) {
	r := Make("runs/x", store.Run{ID: "x"}, results())
	r.Rejudged = MakeRejudged([]store.Rescore{
		{Task: "a", Repeat: 0, At: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC), OldOutcome: "success", Outcome: "failure", Reason: "value \"a|b\" is not\n\"c\""},
		{Task: "b", Repeat: 0, OldOutcome: "failure", Outcome: "failure"},
	})
	// A gold without plans or reflections: their sub-metrics are n/a.
	r.CC = &CC{CCMetrics: score.CCMetrics{CCScore: 0.75, KeyboardBLEU: 0.5, KeyboardPairs: 6, Sequences: 4}, Unscored: 1}
	other := Make("runs/y", store.Run{ID: "y"}, results())
	tests := []struct {
		format string
		want   []string
	}{
		{"text", []string{"Re-judged: 1 flipped (x, 2 episodes, 2026-11-22 03:00 UTC)", `a     0       success -> failure  value "a|b" is not "c"`,
			"cc-score                    0.750  -", "plan BLEU                   n/a    -", "reflect F1                  n/a    -",
			"episodes scored (unscored)  4 (1)  -"}},
		{"markdown", []string{"### Re-judged: 1 flipped", `| a | 0 | success -> failure | value "a\|b" is not "c" |`, "| keyboard BLEU | 0.500 | - |",
			"| plan BLEU | n/a | - |"}},
		{"json", []string{`"rejudged": {`, `"cc_score": 0.75`, `"unscored": 1`}},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		if err := Write(&b, []*Report{r, other}, tc.format); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s report lacks %q:\n%s", tc.format, w, b.String())
			}
		}
		if tc.format != "json" && strings.Count(b.String(), "Re-judged") != 1 {
			t.Errorf("%s: a run never re-judged shows a Re-judged section:\n%s", tc.format, b.String())
		}
	}
	var b bytes.Buffer
	Write(&b, []*Report{other}, "text")
	if strings.Contains(b.String(), "CC-Score") {
		t.Errorf("a CC-Score table without scores:\n%s", b.String())
	}
}
