package rescore

import (
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
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
