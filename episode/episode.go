// Package episode runs one task on one environment: Start resets the
// environment with the task's setup, Observe and Act take turns with the
// agent's replies, Next holds the one list of conditions that end an
// episode, Abort maps an error to how the episode ended, and Finish
// settles the applications, runs the checks and returns the result to
// store. The runner (package run) schedules episodes over a pool and calls
// the agent; this package knows neither the pool nor the agent's calls.
//
// A worker's loop over it:
//
//	ep, err := episode.Start(ctx, e, svc, cfg, t, repeat)
//	// ... start the agent with ep.AgentTask(); on error ep.Abort(err)
//	for ep.Next() {
//		obs, err := ep.Observe(ctx)
//		if err != nil {
//			ep.Abort(err)
//			break
//		}
//		turn, err := ask(obs, ep.History())
//		if err != nil {
//			ep.Abort(err)
//			break
//		}
//		ep.Act(ctx, turn)
//	}
//	res, err := ep.Finish(ctx)
package episode

import (
	"context"
	"fmt"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/service"
	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/proctor-eval/proctor/usage"
)

// Defaults.
const (
	DefaultEarlyStop    = 5 // identical consecutive turns that stop an episode (ProBench)
	DefaultSettle       = 500 * time.Millisecond
	DefaultResetTimeout = 3 * time.Minute // reset and setup of one episode
	DefaultJudgeTimeout = 2 * time.Minute // the checks of one episode
)

// Config is what every episode of a run shares.
type Config struct {
	Suite *task.Suite
	Obs   ObsMode // "": ObsMarks
	// EarlyStop is the number of identical consecutive turns that stop an
	// episode; 0: DefaultEarlyStop; negative: never.
	EarlyStop  int
	CostBudget float64 // dollars per episode; 0: none
	// Settle is how long the applications get to finish updating (their
	// files, their accessibility trees) after the last action, before the
	// checks read them; 0: DefaultSettle, negative: none.
	Settle       time.Duration
	ResetTimeout time.Duration // 0: DefaultResetTimeout
	JudgeTimeout time.Duration // 0: DefaultJudgeTimeout
	// Judge decides the tasks' judge checks.
	Judge judgment.Model
	// Store records the steps, screenshots, evidence and judgements.
	Store *store.Store
	// Origins a browser's pages may reach in every episode besides the
	// task's own pages and its command services: the suite's static
	// services' (see Reach).
	Origins []string
	// Release, when set, is called once by Finish as soon as the
	// environment is no longer needed: after the checks have read it,
	// before the judge checks' models are asked and the records written
	// (see Finish). A caller resets the environment for the next episode
	// meanwhile. A Finish that ends in a fault calls it not.
	Release func()
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Obs == "" {
		c.Obs = ObsMarks
	}
	if c.EarlyStop == 0 {
		c.EarlyStop = DefaultEarlyStop
	}
	if c.Settle == 0 {
		c.Settle = DefaultSettle
	}
	if c.ResetTimeout <= 0 {
		c.ResetTimeout = DefaultResetTimeout
	}
	if c.JudgeTimeout <= 0 {
		c.JudgeTimeout = DefaultJudgeTimeout
	}
	return c
}

// Episode is one task on one environment, from its reset to its result.
// Its methods are called from one goroutine.
type Episode struct {
	cfg Config
	e   env.Env
	svc *service.Instances
	// setup is what the reset prepared (apps, assets, reach): the steps
	// after the agent run with the same.
	setup  env.Setup
	t      *task.Task // with the services' origins filled in
	repeat int
	info   env.Info
	res    store.Result

	begun    time.Time // when the environment was ready for the agent
	limit    time.Duration
	deadline time.Time
	maxSteps int

	step     int         // the last step observed, from 1
	rec      *store.Turn // the step being recorded: observed, not yet acted
	history  []agent.Turn
	traj     check.Trajectory
	shots    map[int]string // the screenshot shown at each step, in the store
	usage    usage.Usage
	feedback string
	final    *action.Action // the terminal action that ended the agent's turn
	lastSig  string
	same     int // identical consecutive turns
	started  bool

	end *Ending // set when the episode ended

	// before is the snapshot of the environment's state after the setup
	// (changes.go).
	before *statediff.Snapshot
}

// Result is the result that an episode of t, repeat, starts from: the
// task's fields, no outcome yet.
func Result(t *task.Task, repeat int) store.Result {
	return store.Result{Task: t.ID, Instruction: t.Instruction, Repeat: repeat, Level: string(t.Level), Weight: t.Level.Weight(),
		Apps: t.AllApps(), Domain: t.Domain, Persona: t.Persona, Kind: string(t.Kind), Difficulty: t.Difficulty, Template: t.Template, Interface: t.Interface}
}

// Start resets e (and the suite's command services svc, when not nil)
// for repeat of task t: the services from their pristine data first, then
// the environment with the task's setup steps and assets. The episode's
// time (its wall-time limit, its Duration) starts when Start returns; the
// reset is timed apart (store.Result.Setup). An error is an
// infrastructure fault (it matches ErrInfrastructure).
func Start(ctx context.Context, e env.Env, svc *service.Instances, cfg Config, t *task.Task, repeat int) (*Episode, error) {
	cfg = cfg.withDefaults()
	ep := &Episode{cfg: cfg, e: e, svc: svc, t: t, repeat: repeat, res: Result(t, repeat), shots: map[int]string{}}
	start := time.Now()
	if err := cfg.Store.ClearTurns(t.ID, repeat); err != nil {
		return nil, infra(err)
	}
	as, err := assets(cfg.Suite, t)
	if err != nil {
		return nil, infra(fmt.Errorf("read assets: %w", err))
	}
	if svc != nil {
		// The applications first, from their pristine data: the setup may
		// open them.
		rctx, cancel := context.WithTimeout(ctx, cfg.ResetTimeout)
		// A task that uses no command service runs none (nil would run
		// them all).
		used := t.UsedServices()
		if used == nil {
			used = []string{}
		}
		err := svc.Reset(rctx, used)
		cancel()
		if err != nil {
			return nil, infra(fmt.Errorf("reset the services: %w", err))
		}
		if ep.t, err = t.WithServices(svc.Origins()); err != nil {
			return nil, infra(err)
		}
		ep.res.Instruction = ep.t.Instruction
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.ResetTimeout)
	origins, web := Reach(cfg, t, svc)
	ep.setup = env.Setup{Steps: ep.t.Setup, Apps: suiteApps(cfg.Suite), Assets: as, Type: t.Environment.TypeOrDefault(),
		Origins: origins, Web: web}
	if ep.setup.Type == "x11" {
		ep.setup.Session = cfg.Suite.SessionOf(t)
	}
	err = e.Reset(rctx, ep.setup)
	cancel()
	if err != nil {
		return nil, infra(fmt.Errorf("reset: %w", err))
	}
	ictx, cancel := context.WithTimeout(ctx, cfg.ResetTimeout)
	ep.info, err = e.Info(ictx)
	cancel()
	if err != nil {
		return nil, infra(err)
	}
	ep.res.Setup = time.Since(start)
	if err := ep.snapshotBefore(ctx); err != nil {
		return nil, err
	}
	ep.begun = time.Now()
	ep.limit = t.WallTime()
	ep.deadline = ep.begun.Add(ep.limit)
	ep.maxSteps = t.MaxSteps()
	return ep, nil
}

func suiteApps(s *task.Suite) map[string]task.AppSpec {
	if s == nil {
		return nil
	}
	return s.Apps
}

// assets reads the assets the task's steps copy (its setup's and those
// after the agent).
func assets(s *task.Suite, t *task.Task) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, sec := range t.Sections() {
		for _, st := range sec.Steps {
			if st.Copy != nil {
				b, err := s.ReadAsset(st.Copy.Asset)
				if err != nil {
					return nil, err
				}
				out[st.Copy.Asset] = b
			}
		}
	}
	return out, nil
}

// Task is the task as the episode runs it, with the services' origins
// filled in.
func (ep *Episode) Task() *task.Task { return ep.t }

// Info is what the environment said of itself after the reset.
func (ep *Episode) Info() env.Info { return ep.info }

// AgentTask is what the agent is told when it starts.
func (ep *Episode) AgentTask() agent.Task {
	t := ep.t
	return agent.Task{ID: t.ID, Instruction: t.Instruction, Apps: t.AllApps(), Screen: ep.info.Screen,
		MaxSteps: t.MaxSteps(), Demonstrations: t.Demonstrations, Gold: t.Gold, Repeat: ep.repeat}
}

// AgentStarted tells the episode that the agent started: from now on an
// error of the agent's is its own failure, not the harness's.
func (ep *Episode) AgentStarted() { ep.started = true }

// History is the agent's turns so far, oldest first.
func (ep *Episode) History() []agent.Turn { return ep.history }

// Bound returns ctx bounded by the episode's wall time: every call of the
// episode, the agent's and the environment's alike, runs under it.
func (ep *Episode) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, ep.deadline)
}

// timeUp reports whether the episode's wall time, and not an interrupt
// of ctx, is what ended a call.
func (ep *Episode) timeUp(ctx context.Context) bool {
	return ctx.Err() == nil && !time.Now().Before(ep.deadline)
}

// alive probes the environment after the wall time ended one of its
// calls: a dead or stuck environment is an infrastructure fault, not the
// agent's lack of time.
func (ep *Episode) alive(ctx context.Context) bool {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := ep.e.Info(pctx)
	return err == nil
}
