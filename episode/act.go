package episode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/task"
)

// Act performs the agent's turn on the step Observe began and records
// it: the turn's actions up to the first terminal one (DONE, FAIL, ANS),
// cut at the first that is invalid, points off the screen or is refused
// by the task (commands on a GUI-only task). An action refused, or one
// that fails by the agent's fault, is fed back to the agent in the next
// observation and the episode goes on. An error means the episode ended
// (the wall time ran out, or the environment failed: see Abort).
func (ep *Episode) Act(ctx context.Context, turn agent.Turn) error {
	rec := ep.rec
	if rec == nil {
		return fmt.Errorf("episode %s: Act without an observation", ep.t.ID)
	}
	ep.rec = nil
	step := rec.Index
	ep.usage = ep.usage.Add(turn.Usage)
	ep.history = append(ep.history, turn)
	rec.Raw, rec.Thought, rec.ParseError, rec.ModelLatency = turn.Raw, turn.Thought, turn.ParseError, turn.Latency
	rec.InputTokens, rec.OutputTokens, rec.Cost = turn.Usage.InputTokens, turn.Usage.OutputTokens, turn.Usage.Cost
	rec.Actions, _ = json.Marshal(turn.Actions)
	if turn.Space != nil {
		rec.Space, _ = json.Marshal(turn.Space)
	}
	if turn.Prompt != nil {
		rec.Prompt, _ = json.Marshal(turn.Prompt)
	}
	if turn.Models != nil {
		rec.Models, _ = json.Marshal(turn.Models)
	}
	if ep.timeUp(ctx) { // the answer came too late to be acted on
		reason := ep.limitReason(fmt.Sprintf("while the agent was thinking (step %d)", step))
		rec.EnvError = "not performed: " + reason
		if err := ep.cfg.Store.SaveTurn(*rec); err != nil {
			return ep.fail(ctx, phaseActing, infra(err))
		}
		ep.endWith(Ending{End: check.EndBudget, Reason: reason})
		return ErrWallTime
	}
	ep.feedback = ""
	if turn.ParseError != "" {
		ep.feedback = "your last reply could not be used: " + turn.ParseError
		ep.res.Unparsed++
		ep.problem(fmt.Sprintf("step %d: reply not usable: %s", step, turn.ParseError))
	}
	// Perform the actions up to the first that ends the episode.
	var act []action.Action
	var final *action.Action
	for i, a := range turn.Actions {
		if a.Kind.Terminal() {
			final = &turn.Actions[i]
			break
		}
		act = append(act, a)
	}
	act, refused := CheckActions(act, ep.info.Screen)
	if refused != nil {
		final = nil // an answer after a refused action was not reached
	} else {
		act, refused = GUIOnly(ep.t, act)
	}
	ectx, cancel := ep.Bound(ctx)
	defer cancel()
	envStart := time.Now()
	done, err := ep.e.Do(ectx, act)
	rec.EnvLatency += time.Since(envStart)
	if err == nil && refused != nil {
		err = refused
	}
	seen := rec.Notices // told with the observation
	if n, ok := ep.e.(env.Notices); ok {
		rec.Notices = append(rec.Notices, n.Notices()...)
	}
	for _, d := range done {
		ep.traj.Steps = append(ep.traj.Steps, check.Step{Action: d.Action, Element: d.Element, Turn: step})
	}
	rec.Done, _ = json.Marshal(done)
	if err != nil {
		if !env.AgentsFault(err) {
			// The wall time, or the environment: the episode ends; its
			// step is recorded first.
			end := ep.classify(ctx, phaseActing, err)
			if end.How == ByChecks {
				rec.EnvError = end.Reason
				if serr := ep.cfg.Store.SaveTurn(*rec); serr != nil {
					return ep.fail(ctx, phaseActing, infra(serr))
				}
			}
			ep.endWith(end)
			return end.Err
		}
		rec.EnvError = err.Error()
		ep.feedback = err.Error() // the agent's mistake: it hears about it
		ep.res.Refused++
		ep.problem(fmt.Sprintf("step %d: refused: %s", step, err))
		final = nil
	}
	if len(rec.Notices) > len(seen) {
		ep.feedback = strings.TrimPrefix(ep.feedback+"; "+strings.Join(rec.Notices[len(seen):], "; "), "; ")
	}
	if err := ep.cfg.Store.SaveTurn(*rec); err != nil {
		return ep.fail(ctx, phaseActing, infra(err))
	}
	if final != nil {
		ep.traj.Steps = append(ep.traj.Steps, check.Step{Action: *final, Turn: step})
		ep.final = final
		return nil
	}
	if sig := signature(turn.Actions); sig == ep.lastSig && sig != "" {
		ep.same++
	} else {
		ep.lastSig, ep.same = sig, 1
	}
	return nil
}

// signature identifies a turn's actions for early stop.
func signature(acts []action.Action) string {
	parts := make([]string, len(acts))
	for i, a := range acts {
		parts[i] = a.String()
	}
	return strings.Join(parts, "; ")
}

// CheckActions cuts a turn's actions at the first that is invalid or
// points off the screen, and says why; a reply with more than
// action.MaxPerTurn actions is refused whole.
func CheckActions(acts []action.Action, screen action.Size) ([]action.Action, error) {
	if len(acts) > action.MaxPerTurn {
		return nil, fmt.Errorf("%w: the reply holds %d actions; at most %d are performed in one step", action.ErrInvalid, len(acts), action.MaxPerTurn)
	}
	for i, a := range acts {
		if err := a.Check(screen); err != nil {
			return acts[:i], fmt.Errorf("action %d (%s): %w", i+1, a.Kind, err)
		}
	}
	return acts, nil
}

// GUIOnly cuts the actions of a task that allows only the graphical
// interface at the first command, and says why.
func GUIOnly(t *task.Task, acts []action.Action) ([]action.Action, error) {
	if t.Interface != "gui" {
		return acts, nil
	}
	for i, a := range acts {
		if a.Kind == action.Code {
			return acts[:i], fmt.Errorf("%w: this task allows only the graphical interface; commands (%s) are refused", env.ErrForbidden, a.Kind)
		}
	}
	return acts, nil
}

// maxProblems bounds the reasons an episode's result keeps.
const maxProblems = 3

// problem records the reason of a reply not used or an action refused,
// the first few of them.
func (ep *Episode) problem(reason string) {
	if len(ep.res.Problems) < maxProblems {
		if len(reason) > 300 {
			reason = strings.ToValidUTF8(reason[:300], "") + "…"
		}
		ep.res.Problems = append(ep.res.Problems, reason)
	}
}
