package episode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// Finish ends the episode and returns its result to store. An episode
// still running ends here as if its budget ran out. By its ending:
//
//   - an infrastructure fault: the error (it matches ErrInfrastructure),
//     and the runner runs the episode again;
//   - the agent's failure: an error outcome with the reason, no checks;
//   - otherwise the applications get Config.Settle to finish updating, the
//     final screen is kept, the task's checks read the environment (what
//     they read is stored as the episode's evidence, and a judge's
//     verdicts as its judgement), and the verdict is the result's.
//
// With Config.Release, the environment is released as soon as the checks
// have read it: a task with judge checks is then decided in two passes,
// the first reading the evidence (the judge checks' too, asking no
// model), the second deciding from what was read while the caller resets
// the environment for the next episode.
//
// A judge that gave no verdict does not make the agent run again: the
// evidence is kept and the episode is an error with End set, which proctor
// judge decides later. Evidence that could not be read is an
// infrastructure fault.
func (ep *Episode) Finish(ctx context.Context) (store.Result, error) {
	if ep.end == nil {
		ep.endWith(Ending{End: check.EndBudget, Reason: "the episode was finished before the agent ended it"})
	}
	end := *ep.end
	res := ep.res
	switch end.How {
	case ByInfrastructure:
		return res, end.Err
	case ByAgentFault:
		res.Outcome, res.Reason = string(check.Error), end.Reason
		res.Duration, res.Finished = time.Since(ep.begun), time.Now().UTC()
		return res, nil
	}
	cfg := ep.cfg
	t := ep.t
	checks, err := check.CompileAll(t.Checks, t.Milestones)
	if err != nil {
		return res, infra(err) // the suite was linted; this is a bug
	}
	if len(t.After) > 0 {
		if err := ep.runAfter(ctx); err != nil {
			return res, err
		}
		res = ep.res
	}
	if cfg.Settle > 0 && res.Steps > 0 {
		select {
		case <-time.After(cfg.Settle):
		case <-ctx.Done():
			return res, infra(ctx.Err())
		}
	}
	changes, err := ep.stateDiff(ctx)
	if err != nil {
		return res, err
	}
	jctx, cancel := context.WithTimeout(ctx, cfg.JudgeTimeout)
	defer cancel()
	// The screen the checks judge is kept (the viewer shows it; judge
	// checks look at it).
	final, err := finalScreen(jctx, cfg.Store, ep.e)
	if err != nil && checks.Judged() {
		return res, infra(fmt.Errorf("the final screen: %w", err))
	}
	res.FinalShot = final.name
	// What the checks read is recorded, so that proctor rescore can judge
	// the episode again with changed checks.
	released := false
	release := func() {
		if cfg.Release != nil && !released {
			released = true
			cfg.Release()
		}
	}
	live := &Evidence{Env: ep.e, Traj: ep.traj, Suite: cfg.Suite, Services: ep.svc, Store: cfg.Store, Shots: ep.shots, Final: final.screen, Changes: changes}
	ev := check.NewRecorder(live)
	var v check.Verdict
	if cfg.Release != nil && checks.Judged() {
		// The environment is read first, the judge checks' evidence
		// with it (no model is asked), and released; the checks are then
		// decided from what was read, the models asked meanwhile.
		checks.Judge = gathering{}
		if unread := unreadEvidence(checks.Evaluate(jctx, ev, end.End)); unread != "" {
			return res, infra(errors.New(unread)) // evidence could not be read: retry
		}
		release()
		checks.Judge = cfg.Judge
		v = checks.Evaluate(jctx, readEvidence{Recorded: ev.Recorded(), ev: live}, end.End)
	} else {
		checks.Judge = cfg.Judge
		v = checks.Evaluate(jctx, ev, end.End)
	}
	// A judge that gave no verdict is not a reason to run the agent again:
	// the evidence was read and is kept, the episode is an infrastructure
	// error, and proctor judge decides it later.
	undecided, judgeDown := check.UndecidedJudge(v)
	if v.Outcome == check.Error && !judgeDown {
		return res, infra(errors.New(v.Reason)) // evidence could not be read: retry
	}
	release() // the records need it not
	if err := cfg.Store.SaveEvidence(t.ID, ep.repeat, ev.Recorded()); err != nil {
		return res, infra(err)
	}
	if checks.Judged() {
		jg := store.Judgement{Task: t.ID, Repeat: ep.repeat, Judge: cfg.Judge.Name(), At: time.Now(), Source: store.JudgedInRun, Checks: store.JudgeResults(v)}
		if judgeDown {
			jg.Err = undecided
		}
		if err := cfg.Store.SaveJudgement(jg); err != nil {
			return res, infra(err)
		}
	}
	res.JudgeInputTokens, res.JudgeOutputTokens, res.JudgeCost = v.JudgeUsage.InputTokens, v.JudgeUsage.OutputTokens, v.JudgeUsage.Cost
	if v.Outcome == check.Uncompleted {
		v.Reason = ep.uncompletedReason()
	}
	if judgeDown {
		res.End = string(end.End)
		v.Reason = "infrastructure fault: " + undecided + " (the evidence is kept: proctor judge RUN decides the episode without running the agent again)"
	}
	vb, _ := json.Marshal(v)
	res.Outcome, res.Reason, res.Milestone, res.Verdict = string(v.Outcome), v.Reason, v.MilestoneScore, vb
	res.Answer, _ = ep.traj.Answer()
	res.Duration = time.Since(ep.begun)
	res.InputTokens, res.OutputTokens, res.Cost = ep.usage.InputTokens, ep.usage.OutputTokens, ep.usage.Cost
	res.Finished = time.Now().UTC()
	return res, nil
}

// gathering is the judge of the first pass of a Finish that releases the
// environment before judging: each judge check reads its evidence, and
// gets no verdict.
type gathering struct{}

// errGathered is what gathering answers.
var errGathered = errors.New("the evidence was gathered; the judge is asked once the environment is released")

func (gathering) Judge(context.Context, judgment.Request) (judgment.Verdict, error) {
	return judgment.Verdict{}, errGathered
}

func (gathering) Name() string { return "gathering" }

// unreadEvidence is the first error of a gathering pass's checks that is
// not the gathering judge's: evidence that could not be read.
func unreadEvidence(v check.Verdict) string {
	results := slices.Clone(v.Checks)
	for _, m := range v.Milestones {
		results = append(results, m.Checks...)
	}
	for _, r := range results {
		if r.Err != "" && !(r.Undecided() && strings.HasSuffix(r.Err, errGathered.Error())) {
			return r.Reason
		}
	}
	return ""
}

// readEvidence is the evidence of the checks once the environment is
// released: what they read from it (check.Recorded), with the episode's
// screens, assets and state diff, none of which needs the environment.
type readEvidence struct {
	*check.Recorded
	ev *Evidence
}

func (r readEvidence) FinalScreen(ctx context.Context) (check.Screen, error) {
	return r.ev.FinalScreen(ctx)
}

func (r readEvidence) StepScreen(ctx context.Context, turn int) (check.Screen, error) {
	return r.ev.StepScreen(ctx, turn)
}

func (r readEvidence) Asset(name string) ([]byte, error) { return r.ev.Asset(name) }

func (r readEvidence) StateChanges(ctx context.Context) (*statediff.Diff, error) {
	return r.ev.StateChanges(ctx)
}

// uncompletedReason is the reason of an uncompleted outcome: the budget or
// limit that ended the episode, or, when the agent ended it without a
// final answer the checks accept as an end, the step budget.
func (ep *Episode) uncompletedReason() string {
	if ep.end.End == check.EndBudget {
		return ep.end.Reason
	}
	return fmt.Sprintf("the step budget of %d steps was used up", ep.t.MaxSteps())
}

// Trajectory is what the agent did so far, as the checks see it.
func (ep *Episode) Trajectory() check.Trajectory { return ep.traj }

// kept is a screenshot kept in the store.
type kept struct {
	name   string // in the store
	screen check.Screen
}

// finalScreen takes the screen after the episode and keeps it.
func finalScreen(ctx context.Context, st *store.Store, e env.Env) (kept, error) {
	sh, err := e.Screenshot(ctx, env.ShotOptions{})
	if err != nil {
		return kept{}, err
	}
	name, err := st.PutShot(sh.Data, sh.Format)
	if err != nil {
		return kept{}, err
	}
	return kept{name: name, screen: check.Screen{Data: sh.Data, Format: sh.Format}}, nil
}

// HarnessTurn is the By of a recorded turn that the harness took, not
// the agent: the steps after the agent (task.Task.After).
const HarnessTurn = "harness"

// runAfter runs the task's steps after the agent (save, close an app so
// that it writes its settings) once the applications have settled, and
// records them as a turn of the harness's after the agent's last; they
// are not the agent's actions and the checks' trajectory leaves them out.
// A step that fails on a live environment is recorded with its error and
// the checks decide (the agent may have closed the window a close step
// names); an environment that died, or a run that was stopped, is an
// infrastructure fault.
func (ep *Episode) runAfter(ctx context.Context) error {
	cfg, t := ep.cfg, ep.t
	if cfg.Settle > 0 && ep.res.Steps > 0 {
		select {
		case <-time.After(cfg.Settle):
		case <-ctx.Done():
			return infra(ctx.Err())
		}
	}
	rec := store.Turn{Task: t.ID, Repeat: ep.repeat, Index: ep.step + 1, By: HarnessTurn,
		Raw: "after the agent: " + describeSteps(t.After)}
	rec.Steps, _ = json.Marshal(t.After)
	s := ep.setup
	s.Steps = t.After
	actx, cancel := context.WithTimeout(ctx, cfg.ResetTimeout)
	start := time.Now()
	err := env.RunSteps(actx, ep.e, s)
	cancel()
	rec.EnvLatency = time.Since(start)
	if err != nil {
		if ctx.Err() != nil || !ep.alive(ctx) {
			return infra(fmt.Errorf("after the agent: %w", err))
		}
		rec.EnvError = err.Error()
		ep.problem("after the agent: " + err.Error())
	}
	if err := cfg.Store.SaveTurn(rec); err != nil {
		return infra(err)
	}
	return nil
}

// describeSteps names steps in a line: "keys ctrl+s; close \"Writer\"".
func describeSteps(steps []task.Step) string {
	var parts []string
	for _, st := range steps {
		switch {
		case st.Keys != nil:
			parts = append(parts, "keys "+*st.Keys)
		case st.Type != nil:
			parts = append(parts, fmt.Sprintf("type %q", *st.Type))
		case st.Click != nil:
			parts = append(parts, fmt.Sprintf("click (%g, %g)", st.Click.X, st.Click.Y))
		case st.Close != nil:
			parts = append(parts, fmt.Sprintf("close %q", st.Close.Title))
		case st.Run != nil:
			parts = append(parts, fmt.Sprintf("run %q", st.Run.Command))
		case st.Focus != nil:
			parts = append(parts, fmt.Sprintf("focus %q", st.Focus.Title))
		case st.Spec() != nil:
			parts = append(parts, st.Spec().Kind())
		}
	}
	return strings.Join(parts, "; ")
}
