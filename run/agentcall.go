package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/proctor-eval/proctor/agent"
)

// abandonGrace is how long an agent gets to return once its call's
// context has ended.
const abandonGrace = 2 * time.Second

// callAgent calls f with a context bounded by the agent timeout and by
// ctx, and returns when f does or soon after that context ends: an agent
// that ignores its context cannot hold an episode past its deadline. A
// call that outlives the agent timeout is a transient fault; one that does
// not return within abandonGrace after its context ended also matches
// errAbandoned.
func callAgent[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type answer struct {
		v   T
		err error
	}
	c := make(chan answer, 1)
	go func() {
		v, err := f(cctx)
		c <- answer{v, err}
	}()
	var zero T
	var a answer
	select {
	case a = <-c:
		if a.err == nil || cctx.Err() == nil {
			return a.v, a.err
		}
	case <-cctx.Done():
		select {
		case a = <-c:
		case <-time.After(abandonGrace):
			a.err = errAbandoned
		}
	}
	if ctx.Err() != nil {
		return zero, fmt.Errorf("%w (%w)", ctx.Err(), a.err)
	}
	return zero, agent.Transient(fmt.Errorf("no answer within the agent timeout of %s: %w", timeout, a.err))
}

// agentCallAttempts is how many times one call to the agent is tried
// when it fails transiently.
const agentCallAttempts = 4

// retry calls f, retrying transient failures with backoff a few times,
// but never an agent whose call was abandoned. It says whether any attempt
// failed transiently: a service that failed so before the wall time ran
// out is at fault, not the agent. Each retry is told to note (what failed,
// the attempt, the wait), when note is not nil; what names the call.
func retry(ctx context.Context, cfg Config, what string, note func(format string, args ...any), f func() error) (transient bool, err error) {
	wait := cfg.Backoff
	for attempt := 1; attempt <= agentCallAttempts; attempt++ {
		if err = f(); err == nil || !errors.Is(err, agent.ErrTransient) {
			return transient, err
		}
		transient = true
		if errors.Is(err, errAbandoned) || attempt == agentCallAttempts || ctx.Err() != nil {
			return transient, err // no wait after the last attempt
		}
		if note != nil {
			note("%s failed (%v): attempt %d of %d, retrying in %s", what, err, attempt, agentCallAttempts, wait)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return transient, err
		}
		wait *= 2
	}
	return transient, err
}

// agentCalls are the calls to one episode's agent.
type agentCalls struct {
	cfg  Config
	note func(format string, args ...any) // tells the progress of a retry
	// abandoned is set when a call did not return after its context
	// ended: the agent is not called again, not even to stop.
	abandoned bool
}

// ask calls the agent with f through callAgent and retry. An error that
// came after a transient failure matches agent.ErrTransient: a service
// that failed so before the wall time ran out is at fault, not the agent.
func ask[T any](ctx context.Context, c *agentCalls, what string, f func(context.Context) (T, error)) (T, error) {
	var v T
	transient, err := retry(ctx, c.cfg, what, c.note, func() error {
		var err error
		v, err = callAgent(ctx, c.cfg.AgentTimeout, f)
		return err
	})
	c.abandoned = c.abandoned || errors.Is(err, errAbandoned)
	if err != nil && transient && !errors.Is(err, agent.ErrTransient) {
		err = transientError{err}
	}
	return v, err
}

// transientError marks an error that followed a transient failure, its
// message unchanged.
type transientError struct{ err error }

func (e transientError) Error() string        { return e.err.Error() }
func (e transientError) Unwrap() error        { return e.err }
func (e transientError) Is(target error) bool { return target == agent.ErrTransient }

// stop tells the agent the episode is over, unless a call was abandoned.
func (c *agentCalls) stop(ctx context.Context, ag agent.Agent) {
	if c.abandoned {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	callAgent(sctx, 10*time.Second, func(c context.Context) (struct{}, error) { return struct{}{}, ag.Stop(c) })
}
