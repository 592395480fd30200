package validate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/store"
)

func TestWriteCutsReasonsUnlessVerbose(t *testing.T) {
	long := "checks[0]: value " + strings.Repeat("x", 200) + " is not the expected one"
	rows := []Row{{Task: "t", Trajectory: "gold", Want: "success", Got: "failure", Reason: long}}
	var short, whole bytes.Buffer
	Write(&short, rows)
	WriteVerbose(&whole, rows)
	if strings.Contains(short.String(), "expected one") || !strings.Contains(short.String(), "…") {
		t.Errorf("the table does not cut a long reason:\n%s", short.String())
	}
	if !strings.Contains(whole.String(), long) || !strings.Contains(whole.String(), "VIOLATION") {
		t.Errorf("verbose does not print the reason whole:\n%s", whole.String())
	}
}

// TestJudgeMilestones: a wrong trajectory that states its milestone score
// must fail and reach exactly that score; the table shows both.
func TestJudgeMilestones(t *testing.T) {
	two := 0.666667
	for _, tc := range []struct {
		name      string
		v         variant
		outcome   string
		milestone float64
		want, got string
		ok        bool
	}{
		{"gold", variant{trajectory: Gold, wantPass: true}, "success", 1, "success", "success", true},
		{"wrong, no score stated", variant{trajectory: "w"}, "failure", 0.5, "not success", "failure", true},
		{"wrong at its score", variant{trajectory: "w", milestone: &two}, "failure", 2.0 / 3, "not success, milestone 0.67", "failure, milestone 0.67", true},
		{"wrong short of its score", variant{trajectory: "w", milestone: &two}, "failure", 1.0 / 3, "not success, milestone 0.67", "failure, milestone 0.33", false},
		{"wrong that passes", variant{trajectory: "w", milestone: &two}, "success", 1, "not success, milestone 0.67", "success, milestone 1.00", false},
		{"an error proves nothing", variant{trajectory: "w"}, "error", 0, "not success", "error", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rowOf(tc.v, store.Result{Task: "t [" + tc.v.trajectory + "]", Outcome: tc.outcome, Milestone: tc.milestone})
			if r.Task != "t" || r.Want != tc.want || r.Got != tc.got || r.OK != tc.ok {
				t.Fatalf("row %+v, want %q %q ok %v", r, tc.want, tc.got, tc.ok)
			}
		})
	}
}
