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
// must fail and reach that score, within MilestoneTolerance; the table
// shows both with enough digits to tell them apart.
func TestJudgeMilestones(t *testing.T) {
	two, third := 0.666667, 0.33
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
		{"wrong at its score", variant{trajectory: "w", milestone: &two}, "failure", 2.0 / 3, "not success, milestone 0.667 (±0.005)", "failure, milestone 0.667", true},
		{"a third written with two decimals", variant{trajectory: "w", milestone: &third}, "failure", 1.0 / 3, "not success, milestone 0.330 (±0.005)", "failure, milestone 0.333", true},
		{"wrong short of its score", variant{trajectory: "w", milestone: &two}, "failure", 1.0 / 3, "not success, milestone 0.667 (±0.005)", "failure, milestone 0.333", false},
		{"wrong that passes", variant{trajectory: "w", milestone: &two}, "success", 1, "not success, milestone 0.667 (±0.005)", "success, milestone 1.000", false},
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

// A milestone violation's reason speaks of the milestones, not of the
// outcome that was right: the score, the one stated with its tolerance,
// and the milestones reached and missed by name.
func TestMilestoneViolationReason(t *testing.T) {
	verdict := []byte(`{"outcome":"failure","reason":"checks[2]: the task was not completed","milestones":[` +
		`{"id":"open-file","weight":1,"pass":true,"checks":[]},{"id":"save-file","weight":1,"pass":false,"checks":[]},` +
		`{"id":"close-dialog","weight":1,"pass":false,"checks":[]}],"milestone_score":0.3333333}`)
	half := 0.5
	for _, tc := range []struct {
		name    string
		outcome string
		verdict []byte
		want    string
	}{
		{"the outcome is right", "failure", verdict,
			"milestone score 0.333 is not the stated 0.500 (±0.005): 1 of 3 milestones reached (open-file), missed save-file, close-dialog"},
		{"the outcome is wrong too", "success", verdict,
			"checks[2]: the task was not completed; milestone score 0.333 is not the stated 0.500 (±0.005): 1 of 3 milestones reached (open-file), missed save-file, close-dialog"},
		{"no verdict recorded", "failure", nil, "milestone score 0.333 is not the stated 0.500 (±0.005)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rowOf(variant{trajectory: "w", milestone: &half}, store.Result{Task: "t [w]", Outcome: tc.outcome,
				Reason: "checks[2]: the task was not completed", Milestone: 1.0 / 3, Verdict: tc.verdict})
			if r.OK || r.Reason != tc.want {
				t.Fatalf("reason %q (ok %v), want %q", r.Reason, r.OK, tc.want)
			}
			var b bytes.Buffer
			WriteVerbose(&b, []Row{r})
			if !strings.Contains(b.String(), "milestone 0.500 (±0.005)") || !strings.Contains(b.String(), "milestone 0.333") {
				t.Errorf("the table does not show both scores:\n%s", b.String())
			}
		})
	}
}
