package episode

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/mem"
	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/task"
)

// afterSave is testdata/mem's task whose text the harness saves after the
// agent (tab to the Save button, space).
func afterSave(t *testing.T) *task.Task {
	t.Helper()
	s, ps := task.Load("../testdata/mem")
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	tk, ok := s.Task("editor-after-save")
	if !ok {
		t.Fatal("testdata/mem has no editor-after-save")
	}
	return tk
}

// play runs the gold solution of tk's episode and finishes it.
func play(t *testing.T, ep *Episode) (check.Trajectory, error) {
	t.Helper()
	ctx := context.Background()
	gold := ep.t.Gold
	for i := 0; ep.Next(ctx); i++ {
		if _, err := ep.Observe(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ep.Act(ctx, turn(gold[i])); err != nil {
			t.Fatal(err)
		}
	}
	_, err := ep.Finish(ctx)
	return ep.Trajectory(), err
}

// TestAfterStepsSave: the steps after the agent save what the agent typed
// (the checks pass only with them), are recorded as one turn of the
// harness's after the agent's last, and are not in the agent's
// trajectory.
func TestAfterStepsSave(t *testing.T) {
	tk := afterSave(t)
	ep := start(t, Config{}, tk)
	ctx := context.Background()
	for i := 0; ep.Next(ctx); i++ {
		if _, err := ep.Observe(ctx); err != nil {
			t.Fatal(err)
		}
		ep.Act(ctx, turn(tk.Gold[i]))
	}
	res, err := ep.Finish(ctx)
	if err != nil || res.Outcome != string(check.Success) {
		t.Fatalf("Finish = %s %q, %v; want success (the harness saved)", res.Outcome, res.Reason, err)
	}
	for _, s := range ep.Trajectory().Steps {
		if s.Action.Kind == action.Key {
			t.Errorf("the harness's key %v is in the agent's trajectory", s.Action.Keys)
		}
	}
	turns, err := ep.cfg.Store.Turns(res.Task, res.Repeat)
	if err != nil {
		t.Fatal(err)
	}
	last := turns[len(turns)-1]
	if len(turns) != len(tk.Gold)+1 || last.By != HarnessTurn || last.Index != len(tk.Gold)+1 {
		t.Fatalf("turns %d, the last by %q at %d; want %d, the harness's last", len(turns), last.By, last.Index, len(tk.Gold)+1)
	}
	var steps []task.Step
	if err := json.Unmarshal(last.Steps, &steps); err != nil || len(steps) != 2 || steps[0].Keys == nil || *steps[0].Keys != "tab" {
		t.Fatalf("recorded steps %s (%v)", last.Steps, err)
	}
	if last.Raw != "after the agent: keys tab; keys space" || len(last.Actions) != 0 {
		t.Fatalf("harness turn raw %q actions %s", last.Raw, last.Actions)
	}

	// Without them the same episode fails: the text was never saved.
	plain := *tk
	plain.After = nil
	ep = start(t, Config{}, &plain)
	for i := 0; ep.Next(ctx); i++ {
		if _, err := ep.Observe(ctx); err != nil {
			t.Fatal(err)
		}
		ep.Act(ctx, turn(tk.Gold[i]))
	}
	if res, err := ep.Finish(ctx); err != nil || res.Outcome == string(check.Success) {
		t.Fatalf("without the steps after the agent: %s, %v; want a failure", res.Outcome, err)
	}
}

// TestAfterStepFailures: a step that fails on a live environment is
// recorded with its error and counted as a problem, and the checks
// decide; an environment that dies in the steps is an infrastructure
// fault, never a score.
func TestAfterStepFailures(t *testing.T) {
	tk := *afterSave(t)
	tk.After = append([]task.Step{{Close: &task.Close{Title: "Gnumeric"}}}, tk.After...)
	ep := start(t, Config{}, &tk)
	if _, err := play(t, ep); err != nil {
		t.Fatal(err)
	}
	res := ep.res
	turns, _ := ep.cfg.Store.Turns(res.Task, res.Repeat)
	last := turns[len(turns)-1]
	if !strings.Contains(last.EnvError, `after[0] close: not found: no window whose title holds "Gnumeric"`) || len(ep.res.Problems) != 1 || !strings.Contains(ep.res.Problems[0], "after the agent: after[0] close") {
		t.Fatalf("env error %q, problems %q; want the close step's refusal", last.EnvError, ep.res.Problems)
	}

	dead := start(t, Config{}, afterSave(t), mem.Fault{Method: "RunSteps", Call: 1, Die: true})
	_, err := play(t, dead)
	if !errors.Is(err, ErrInfrastructure) || !strings.Contains(err.Error(), "after the agent") {
		t.Fatalf("a death in the steps after the agent: %v; want an infrastructure fault", err)
	}
	if !errors.Is(err, env.ErrClosed) {
		t.Fatalf("%v does not say the environment closed", err)
	}
}

// TestWantsChanges: only a task that declares what may change (or whose
// suite does), or has a side_effects check, takes the snapshots.
func TestWantsChanges(t *testing.T) {
	plain := afterSave(t)
	s, _ := task.Load("../testdata/mem")
	if WantsChanges(s, plain) {
		t.Error("a task without changes: or side_effects takes snapshots")
	}
	ep := start(t, Config{}, plain)
	if ep.before != nil {
		t.Error("the episode of a task without changes: took a snapshot")
	}
	withCheck := *plain
	withCheck.Checks = append(append([]check.Spec(nil), plain.Checks...), check.Spec{Kind: check.SideEffects})
	withMilestone := *plain
	withMilestone.Milestones = []check.Milestone{{ID: "m", Weight: 1, Checks: []check.Spec{{Kind: check.SideEffects}}}}
	for name, tk := range map[string]*task.Task{"check": &withCheck, "milestone": &withMilestone} {
		if !WantsChanges(s, tk) {
			t.Errorf("a task with a side_effects %s takes no snapshot", name)
		}
	}
	suite := *s
	suite.Changes = &statediff.Allowed{}
	if !WantsChanges(&suite, plain) {
		t.Error("a task of a suite that declares changes: takes no snapshot")
	}
}
