package episode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
)

// How says who decides the outcome of an episode that ended.
type How int

const (
	// ByChecks: the agent ended the episode, or a budget, the wall time or
	// early stop did; the task's checks decide the outcome.
	ByChecks How = iota
	// ByAgentFault: the agent failed (its call failed for a reason of its
	// own, not the service's): the outcome is an error of the agent's,
	// without checks, and the episode is not run again.
	ByAgentFault
	// ByInfrastructure: the environment, a service or the harness failed:
	// the episode is not scored, and the runner runs it again.
	ByInfrastructure
)

// Ending is how an episode ended.
type Ending struct {
	How How
	// End is what the checks are told (ByChecks).
	End check.End
	// Reason says why, in words: the budget or limit reached, the agent's
	// failure, the fault.
	Reason string
	// Err is the error that ended the episode, if one did.
	Err error
}

// ErrWallTime is returned by the calls that the wall-time limit ended.
const ErrWallTime Error = "the wall-time limit was reached"

// Next reports whether another step may run; when none may, the episode
// has ended and Ending says how. The end conditions, in the order they
// are tested, are the one list of them:
//
//	ended before (Abort, the wall time in a call, a fault)  as recorded
//	a terminal action (DONE, FAIL, ANS) performed           the checks decide (check.EndAgent)
//	EarlyStop identical turns in a row                      early stopped (check.EndEarlyStop)
//	the task's step budget used up                          uncompleted (check.EndBudget)
//	the cost budget spent                                   uncompleted (check.EndBudget)
//	the wall time over, between steps                       uncompleted (check.EndBudget)
//	an interrupt (ctx ended)                                infrastructure fault, run again
func (ep *Episode) Next(ctx context.Context) bool {
	if ep.end != nil {
		return false
	}
	next := ep.step + 1
	switch {
	case ep.final != nil:
		ep.endWith(Ending{End: check.EndAgent, Reason: fmt.Sprintf("the agent ended the episode (%s)", ep.final.Kind)})
	case ep.cfg.EarlyStop > 0 && ep.same >= ep.cfg.EarlyStop:
		ep.endWith(Ending{End: check.EndEarlyStop, Reason: fmt.Sprintf("the agent repeated the same turn %d times", ep.same)})
	case next > ep.maxSteps:
		ep.endWith(Ending{End: check.EndBudget, Reason: fmt.Sprintf("the step budget of %d steps was used up", ep.t.MaxSteps())})
	case ep.cfg.CostBudget > 0 && ep.usage.Cost >= ep.cfg.CostBudget:
		ep.endWith(Ending{End: check.EndBudget, Reason: fmt.Sprintf("the cost budget of $%.4g was spent ($%.4g)", ep.cfg.CostBudget, ep.usage.Cost)})
	case ep.timeUp(ctx):
		ep.endWith(Ending{End: check.EndBudget, Reason: ep.limitReason(fmt.Sprintf("before step %d", next)), Err: ErrWallTime})
	case ctx.Err() != nil:
		ep.endWith(Ending{How: ByInfrastructure, Reason: ctx.Err().Error(), Err: infra(ctx.Err())})
	default:
		return true
	}
	return false
}

// Ending says how the episode ended; ok is false while it runs.
func (ep *Episode) Ending() (Ending, bool) {
	if ep.end == nil {
		return Ending{}, false
	}
	return *ep.end, true
}

func (ep *Episode) endWith(e Ending) {
	if ep.end == nil {
		ep.end = &e
	}
}

func (ep *Episode) limitReason(while string) string {
	return fmt.Sprintf("the wall-time limit of %s was reached %s", ep.limit, while)
}

// phase is what the episode was doing when an error came.
type phase int

const (
	phaseStarting  phase = iota // the agent was starting
	phaseObserving              // the environment was observed
	phaseThinking               // the agent was asked for its turn
	phaseActing                 // the turn was performed
)

// Abort ends the episode with err, an error of the agent's call (its
// start, or the turn asked of it after Observe): the one mapping from an
// error to how an episode ends, which Observe and Act use for their own
// errors too:
//
//	an infrastructure fault (ErrInfrastructure), or an interrupt            run again
//	the agent's start failed, not transiently, with the wall time over      uncompleted (checks run)
//	the agent's start failed otherwise                                      run again
//	the agent's turn failed transiently (agent.ErrTransient), or the
//	service failed so before (a 5xx, a refused connection, no answer
//	within the agent timeout)                                               run again
//	the agent's turn failed with the wall time over                         uncompleted (checks run)
//	the agent's turn failed otherwise                                       an error of the agent's, not run again
//	observing or acting passed a limit of the environment's (env.ErrLimit:
//	a page's memory)                                                         uncompleted (checks run)
//	observing or acting failed with the wall time over, the env alive       uncompleted (checks run)
//	observing or acting failed otherwise                                    run again
//
// An episode already ended keeps its first ending.
func (ep *Episode) Abort(ctx context.Context, err error) {
	if ep.end != nil || err == nil {
		return
	}
	ph := phaseThinking
	if !ep.started {
		ph = phaseStarting
	}
	end := ep.classify(ctx, ph, err)
	if ph == phaseThinking && ep.rec != nil && end.How != ByInfrastructure {
		// The step the agent did not answer is recorded.
		rec := ep.rec
		ep.rec = nil
		if end.How == ByChecks {
			rec.EnvError = "no answer: " + end.Reason
		}
		if serr := ep.cfg.Store.SaveTurn(*rec); serr != nil {
			end = Ending{How: ByInfrastructure, Reason: serr.Error(), Err: infra(serr)}
		}
	}
	ep.endWith(end)
}

// fail ends the episode with an error of ph and returns the error the
// caller returns.
func (ep *Episode) fail(ctx context.Context, ph phase, err error) error {
	end := ep.classify(ctx, ph, err)
	ep.endWith(end)
	return end.Err
}

// classify maps an error of phase ph to an ending (see Abort).
func (ep *Episode) classify(ctx context.Context, ph phase, err error) Ending {
	step := ep.step
	limit := func(while string) Ending {
		return Ending{End: check.EndBudget, Reason: ep.limitReason(while), Err: fmt.Errorf("%w: %w", ErrWallTime, err)}
	}
	fault := func(format string, args ...any) Ending {
		e := infra(fmt.Errorf(format, args...))
		return Ending{How: ByInfrastructure, Reason: e.Error(), Err: e}
	}
	transient := errors.Is(err, agent.ErrTransient)
	switch {
	case errors.Is(err, ErrInfrastructure):
		return Ending{How: ByInfrastructure, Reason: err.Error(), Err: err}
	case errors.Is(err, env.ErrLimit) && ph != phaseThinking && ph != phaseStarting:
		return Ending{End: check.EndBudget, Reason: fmt.Sprintf("step %d: %v", step, err), Err: err}
	// A call whose service failed (a 5xx, a refused connection, the agent
	// timeout) is the service's fault even when the wall time ran out as
	// it was retried; a call the wall time cut short, with no such
	// failure, is the agent's lack of time (agent.HTTP does not call the
	// caller's deadline transient).
	case ph == phaseStarting && !transient && ep.timeUp(ctx):
		return limit("while the agent was starting")
	case ph == phaseStarting:
		return fault("agent start: %w", err)
	case ph == phaseThinking && (transient || ctx.Err() != nil):
		return fault("step %d: agent: %w", step, err)
	case ph == phaseThinking && ep.timeUp(ctx):
		return limit(fmt.Sprintf("while the agent was thinking (step %d)", step))
	case ph == phaseThinking:
		e := fmt.Errorf("step %d: the agent failed: %w", step, err)
		return Ending{How: ByAgentFault, Reason: e.Error(), Err: e}
	case ph == phaseObserving && ep.timeUp(ctx) && ep.alive(ctx):
		return limit(fmt.Sprintf("while observing (step %d)", step))
	case ph == phaseObserving:
		return fault("step %d: observe: %w", step, err)
	case ep.timeUp(ctx) && ep.alive(ctx):
		return limit(fmt.Sprintf("while acting (step %d)", step))
	default:
		return fault("step %d: act: %w", step, err)
	}
}

// Duration is the episode's time so far, from the end of its reset.
func (ep *Episode) Duration() time.Duration { return time.Since(ep.begun) }
