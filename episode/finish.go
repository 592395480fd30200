package episode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/store"
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
	if cfg.Settle > 0 && res.Steps > 0 {
		select {
		case <-time.After(cfg.Settle):
		case <-ctx.Done():
			return res, infra(ctx.Err())
		}
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
	checks.Judge = cfg.Judge
	ev := check.NewRecorder(&Evidence{Env: ep.e, Traj: ep.traj, Suite: cfg.Suite, Services: ep.svc, Store: cfg.Store, Shots: ep.shots, Final: final.screen})
	v := checks.Evaluate(jctx, ev, end.End)
	// A judge that gave no verdict is not a reason to run the agent again:
	// the evidence was read and is kept, the episode is an infrastructure
	// error, and proctor judge decides it later.
	undecided, judgeDown := check.UndecidedJudge(v)
	if v.Outcome == check.Error && !judgeDown {
		return res, infra(errors.New(v.Reason)) // evidence could not be read: retry
	}
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
