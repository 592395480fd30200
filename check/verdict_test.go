package check

import (
	"context"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

func traj(kinds ...action.Kind) Trajectory {
	var t Trajectory
	for _, k := range kinds {
		a := action.Action{Kind: k}
		if k == action.Answer {
			a.Text = "42"
		}
		t.Steps = append(t.Steps, Step{Action: a})
	}
	return t
}

func TestJudge(t *testing.T) {
	fileCheck := Spec{Kind: Exists, File: "/out.txt"}
	milestones := []Milestone{
		{ID: "opened", Weight: 1, Rubric: "the editor is open", Checks: []Spec{{Kind: Exists, Window: "Editor"}}},
		{ID: "saved", Weight: 3, Rubric: "the file is saved", Checks: []Spec{fileCheck}},
	}
	withFile := map[string][]byte{"/out.txt": []byte("x")}
	tests := []struct {
		name       string
		checks     []Spec
		ms         []Milestone
		files      map[string][]byte
		windows    []string
		cmds       map[string]observe.CommandResult
		traj       Trajectory
		end        End
		want       Outcome
		milestone  float64
		reasonPart string
	}{
		{"success", []Spec{fileCheck}, nil, withFile, nil, nil, traj(action.Click, action.Done), EndAgent, Success, 1, "all checks passed"},
		{"failure", []Spec{fileCheck}, nil, nil, nil, nil, traj(action.Done), EndAgent, Failure, 0, "does not exist"},
		{"uncompleted by budget", []Spec{fileCheck}, nil, withFile, nil, nil, traj(action.Click), EndBudget, Uncompleted, 0, "budget"},
		{"early stop", []Spec{fileCheck}, nil, withFile, nil, nil, traj(action.Click, action.Click), EndEarlyStop, EarlyStopped, 0, "repeated"},
		{"error", []Spec{fileCheck}, nil, withFile, nil, nil, traj(action.Click), EndError, Error, 0, "infrastructure"},
		{"fail on feasible", []Spec{fileCheck}, nil, withFile, nil, nil, traj(action.Fail), EndAgent, Failure, 1, "FAIL on a feasible"},
		{"fail on infeasible", []Spec{{Kind: Infeasible}}, nil, nil, nil, nil, traj(action.Fail), EndAgent, Success, 1, "all checks"},
		{"answer on infeasible", []Spec{{Kind: Infeasible}}, nil, nil, nil, nil, traj(action.Answer), EndAgent, Failure, 0, "infeasible"},
		{"unreadable evidence", []Spec{{Kind: CommandKind, Command: "ls", ExitCode: new(int)}}, nil, nil, nil, nil, traj(action.Done), EndAgent, Error, 0, "could not be read"},
		{"milestones partial", []Spec{{Kind: Milestones, Milestones: []string{"opened", "saved"}}}, milestones, nil, []string{"Editor"}, nil, traj(action.Done), EndAgent, Failure, 0.25, "below 1.00"},
		{"milestones all", []Spec{{Kind: Milestones, Milestones: []string{"opened", "saved"}}}, milestones, withFile, []string{"Editor"}, nil, traj(action.Done), EndAgent, Success, 1, "all checks"},
		{"milestones count when uncompleted", []Spec{fileCheck}, milestones, nil, []string{"Editor"}, nil, traj(action.Click), EndBudget, Uncompleted, 0.25, "budget"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := CompileAll(tc.checks, tc.ms)
			if err != nil {
				t.Fatal(err)
			}
			ev := &Recorded{Files: tc.files, WindowList: tc.windows, Commands: tc.cmds, Steps: tc.traj}
			v := s.Evaluate(context.Background(), ev, tc.end)
			if v.Outcome != tc.want || v.MilestoneScore != tc.milestone || !strings.Contains(v.Reason, tc.reasonPart) {
				t.Fatalf("Judge = %s (%.2f) %q; want %s (%.2f) with %q", v.Outcome, v.MilestoneScore, v.Reason, tc.want, tc.milestone, tc.reasonPart)
			}
			if len(v.Milestones) != len(tc.ms) {
				t.Fatalf("milestones reported %d, want %d", len(v.Milestones), len(tc.ms))
			}
		})
	}
}

func TestCompileAllNamesPlace(t *testing.T) {
	tests := []struct {
		checks []Spec
		ms     []Milestone
		want   string
	}{
		{[]Spec{{Kind: Exists, File: "a"}, {Kind: Predicate, Probe: &Probe{Answer: true}}}, nil, "checks[1].expr:"},
		{[]Spec{{Kind: Milestones, Milestones: []string{"nope"}}}, nil, `checks[0].milestones: no milestone has id "nope"`},
		{nil, []Milestone{{ID: "a", Weight: 1}}, "milestones[0].checks: a milestone needs"},
		{nil, []Milestone{{ID: "a", Weight: 0, Checks: []Spec{{Kind: Infeasible}}}}, "milestones[0].weight"},
		{nil, []Milestone{{ID: "a", Weight: 1, Checks: []Spec{{Kind: Infeasible}}}, {ID: "a", Weight: 1, Checks: []Spec{{Kind: Infeasible}}}}, `milestones[1].id: "a" is used twice`},
		{nil, []Milestone{{ID: "a", Weight: 1, Checks: []Spec{{Kind: Range, Probe: &Probe{Answer: true}}}}}, "milestones[0].checks[0].min:"},
	}
	for _, tc := range tests {
		_, err := CompileAll(tc.checks, tc.ms)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CompileAll = %v, want %q", err, tc.want)
		}
	}
}
