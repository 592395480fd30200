package run

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/episode"
	"github.com/proctor-eval/proctor/service"
	"github.com/proctor-eval/proctor/store"
)

func runJobs(ctx context.Context, cfg Config, jobs []job, pr *progress) error {
	// Episodes of one size run together, so that places restart seldom.
	sort.SliceStable(jobs, func(a, b int) bool {
		sa, sb := jobs[a].size(), jobs[b].size()
		return sa.W*sa.H > sb.W*sb.H
	})
	// Pre-flight: every place must start before any task is scored.
	places, err := preflight(ctx, cfg, jobs)
	if err != nil {
		return err
	}
	defer func() {
		for _, p := range places {
			p.close()
			p.svc.Close()
		}
	}()
	q := newQueue(jobs)
	errc := make(chan error, len(places))
	var wg sync.WaitGroup
	for _, p := range places {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				j, ok := q.pop(p.kind(), p.serves)
				if !ok {
					if ctx.Err() == nil {
						// Not needed any more: what the place holds (a
						// pod) goes back now, not when the run ends.
						p.close()
						if p.src.Release != nil {
							p.src.Release()
						}
					}
					return
				}
				began := time.Now()
				err := p.ready(ctx, j)
				var res store.Result
				if err != nil {
					err = fmt.Errorf("%w: %s does not start: %v", ErrNoEnvironment, p.src.Name, err)
				} else {
					var tried int
					res, tried, err = runEpisode(ctx, cfg, p, j, pr)
					j.tried += tried
				}
				if ctx.Err() != nil {
					q.done()
					return // interrupted: the episode is not recorded, a resume reruns it
				}
				if err != nil {
					p.lost = err
					pr.notef("environment %s left the pool: %v", p.src.Name, err)
					cfg.lost(p.src.Name, j, err.Error())
					if j.lost++; j.lost < 2 {
						q.back(j) // another place of the pool takes it
						return
					}
					// A second place lost on one episode: the episode, not
					// the places, is the likelier cause; it ends as an error
					// instead of emptying the pool.
					res = episode.Result(j.t, j.repeat)
					res.Outcome, res.Reason = string(check.Error), fmt.Sprintf("infrastructure fault: %d environments were lost running it, the last: %v", j.lost, err)
					res.Attempts = j.tried
					res.Duration = time.Since(began) // on the last of them
					res.Finished = time.Now().UTC()
				}
				err = cfg.Store.SaveResult(res)
				q.done()
				if err != nil {
					errc <- err
					return
				}
				pr.done(res)
				if p.lost != nil {
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		q.close()
		// Every call honours ctx; an environment stuck in a call anyway is
		// closed under it, and the run returns even if that does not help.
		select {
		case <-done:
		case <-time.After(cfg.StopGrace):
			for _, p := range places {
				p.close()
			}
			select {
			case <-done:
			case <-time.After(cfg.StopGrace):
			}
		}
		return ctx.Err()
	}
	select {
	case err := <-errc:
		return err
	default:
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// Episodes left when no place can take them are recorded as errors,
	// so the run ends with a complete table and --resume retries them.
	for _, j := range q.drain() {
		res := episode.Result(j.t, j.repeat)
		res.Outcome, res.Reason = string(check.Error), fmt.Sprintf("no environment of the pool can run it any more (%s environment of %dx%d)", j.typ(), j.size().W, j.size().H)
		res.Attempts = j.tried // on places lost on it
		res.Finished = time.Now().UTC()
		if err := cfg.Store.SaveResult(res); err != nil {
			return err
		}
		pr.done(res)
	}
	return ctx.Err()
}

// runEpisode runs one episode, rerunning it after infrastructure faults on
// a healthy environment (the place's, started again if it died), and says
// how many attempts it made here. A non-nil error means the place left
// the pool; the episode was not recorded. The result's Attempts counts
// the attempts of places lost on it before (j.tried) too.
func runEpisode(ctx context.Context, cfg Config, pl *place, j job, p *progress) (store.Result, int, error) {
	var last error
	wait := cfg.Backoff
	attempts := j.tried
	n := max(cfg.Retries, 0) + 1
	began := time.Now()
	for attempt := 1; attempt <= n; attempt++ {
		if attempt > 1 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
			wait *= 2
		}
		if ctx.Err() != nil {
			break
		}
		e := pl.env()
		if e == nil {
			return store.Result{}, attempts - j.tried, ErrNoEnvironment
		}
		attempts++
		res, err := play(ctx, cfg, e, pl.svc, j, p)
		if err == nil {
			res.Attempts = attempts
			pl.mu.Lock()
			res.Env = pl.info.Kind
			pl.mu.Unlock()
			return res, attempts - j.tried, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
		if errors.Is(err, env.ErrForbidden) {
			// The task asks for what its environment refuses (a setup
			// step writing outside the allowed folders): running it again
			// cannot help, and the place is sound.
			res := episode.Result(j.t, j.repeat)
			res.Outcome, res.Reason, res.Attempts = string(check.Error), fmt.Sprintf("the task asks for what the environment refuses (not run again): %v", err), attempts
			res.Duration, res.Finished = time.Since(began), time.Now().UTC()
			return res, attempts - j.tried, nil
		}
		if attempt < n {
			p.notef("retry: %s: infrastructure fault (%v): episode attempt %d of %d, retrying in %s", j.label(cfg.Repeat), err, attempt, n, wait)
		}
		// A dead environment started again is recorded as lost, with the
		// episode it died under, as one that left the pool is.
		lost := func(reason string) { cfg.lost(pl.src.Name, j, reason) }
		if err := pl.heal(ctx, p, lost); err != nil {
			return store.Result{}, attempts - j.tried, err
		}
	}
	res := episode.Result(j.t, j.repeat)
	res.Outcome, res.Reason, res.Attempts = string(check.Error), fmt.Sprintf("infrastructure fault after %d attempts: %v", attempts, last), attempts
	// The time it took: every attempt and the waits between them.
	res.Duration = time.Since(began)
	res.Finished = time.Now().UTC()
	return res, attempts - j.tried, nil
}

// episodeConfig is what the run's episodes share.
func (cfg Config) episodeConfig() episode.Config {
	return episode.Config{Suite: cfg.Suite, Obs: cfg.Obs, EarlyStop: cfg.EarlyStop, CostBudget: cfg.CostBudget, Settle: cfg.Settle,
		ResetTimeout: cfg.ResetTimeout, JudgeTimeout: cfg.JudgeTimeout, Judge: cfg.Judge, Store: cfg.Store, Origins: cfg.static}
}

// play runs one attempt of an episode on e: the reset, the agent's turns
// over package episode, the checks. The agent is called here, each call
// bounded by the agent timeout and the episode's wall time and retried
// when it fails transiently. An error is an infrastructure fault.
func play(ctx context.Context, cfg Config, e env.Env, svc *service.Instances, j job, pr *progress) (store.Result, error) {
	ep, err := episode.Start(ctx, e, svc, cfg.episodeConfig(), j.t, j.repeat)
	if err != nil {
		return episode.Result(j.t, j.repeat), err
	}
	ag, err := cfg.Agent()
	if err != nil {
		return episode.Result(j.t, j.repeat), err
	}
	ectx, cancel := ep.Bound(ctx)
	defer cancel()
	c := agentCalls{cfg: cfg, note: func(format string, args ...any) {
		pr.notef("retry: %s: "+format, append([]any{j.label(cfg.Repeat)}, args...)...)
	}}
	defer c.stop(ctx, ag)
	if _, err := ask(ectx, &c, "agent start", func(ctx context.Context) (struct{}, error) { return struct{}{}, ag.Start(ctx, ep.AgentTask()) }); err != nil {
		ep.Abort(ctx, err)
	}
	ep.AgentStarted()
	for ep.Next(ctx) {
		obs, err := ep.Observe(ctx)
		if err != nil {
			break
		}
		turn, err := ask(ectx, &c, fmt.Sprintf("step %d: agent", obs.Step), func(ctx context.Context) (agent.Turn, error) { return ag.Next(ctx, obs, ep.History()) })
		if err != nil {
			ep.Abort(ctx, err)
			break
		}
		ep.Act(ctx, turn)
	}
	return ep.Finish(ctx)
}
