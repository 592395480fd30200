package rescore

import (
	"encoding/json"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/store"
)

func TestEnd(t *testing.T) {
	ended := check.Trajectory{Steps: []check.Step{{Action: action.Action{Kind: action.Click}}, {Action: action.Action{Kind: action.Answer, Text: "3"}}}}
	open := check.Trajectory{Steps: []check.Step{{Action: action.Action{Kind: action.Click}}}}
	tests := []struct {
		name string
		traj check.Trajectory
		old  check.Outcome
		want check.End
	}{
		{"the agent ended it", ended, check.Success, check.EndAgent},
		{"the agent ended it, whatever the old outcome", ended, check.Uncompleted, check.EndAgent},
		{"budget", open, check.Uncompleted, check.EndBudget},
		{"early stop", open, check.EarlyStopped, check.EndEarlyStop},
		{"no step at all", check.Trajectory{}, check.Uncompleted, check.EndBudget},
		{"an error", open, check.Error, check.EndError},
	}
	for _, tc := range tests {
		if got := End(&check.Recorded{Steps: tc.traj}, tc.old); got != tc.want {
			t.Errorf("%s: End = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// Undecided picks out the error episodes whose only fault was a judge
// that gave no verdict, which proctor judge decides later.
func TestUndecided(t *testing.T) {
	verdict := func(results ...check.Result) []byte {
		b, _ := json.Marshal(check.Verdict{Outcome: check.Error, Reason: "evidence could not be read", Checks: results})
		return b
	}
	undecided := check.Result{Kind: check.JudgeKind, Err: "judge undecided: judge openai:j: judge unavailable (openai): 503"}
	unread := check.Result{Kind: check.Contains, Err: "file ~/x was not recorded"}
	passed := check.Result{Kind: check.Contains, Pass: true}
	tests := []struct {
		name string
		r    store.Result
		want bool
	}{
		{"the judge gave no verdict", store.Result{Outcome: "error", Verdict: verdict(passed, undecided)}, true},
		{"evidence could not be read too", store.Result{Outcome: "error", Verdict: verdict(unread, undecided)}, false},
		{"an error without a verdict", store.Result{Outcome: "error", Reason: "infrastructure fault after 3 attempts"}, false},
		{"an unreadable verdict", store.Result{Outcome: "error", Verdict: []byte("{")}, false},
		{"not an error", store.Result{Outcome: "failure", Verdict: verdict(passed, undecided)}, false},
	}
	for _, tc := range tests {
		if got := Undecided(tc.r); got != tc.want {
			t.Errorf("%s: Undecided = %v, want %v", tc.name, got, tc.want)
		}
	}
}
