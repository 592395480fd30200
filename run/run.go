// Package run orchestrates a benchmark run: a pool of environments, one
// episode per task and repeat (reset, observe, ask the agent, act, record),
// budgets and early stop, retries of infrastructure faults, the verdict of
// each task's checks, and a store that lets a killed run resume without
// losing or repeating finished tasks.
package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/episode"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/service"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// ObsMode is what the agent observes at each step (package episode).
type ObsMode = episode.ObsMode

// Observation modes.
const (
	ObsScreenshot = episode.ObsScreenshot
	ObsTree       = episode.ObsTree
	ObsBoth       = episode.ObsBoth
	ObsMarks      = episode.ObsMarks
)

// ObsModes lists the modes.
var ObsModes = episode.ObsModes

// Defaults.
const (
	DefaultEarlyStop = episode.DefaultEarlyStop // identical consecutive turns that stop an episode (ProBench)
	DefaultRetries   = 2                        // reruns of an episode after an infrastructure fault
	DefaultSettle    = episode.DefaultSettle
	// DefaultAgentTimeout bounds one call to the agent (a model request
	// included); a call that takes longer is a transient fault, retried
	// while the episode's wall time lasts.
	DefaultAgentTimeout = agent.DefaultTimeout
	DefaultResetTimeout = episode.DefaultResetTimeout // reset and setup of one episode
	DefaultJudgeTimeout = episode.DefaultJudgeTimeout // the checks of one episode
	DefaultStopGrace    = 3 * time.Second             // after an interrupt, before environments are closed under running episodes
)

// Config is one run.
type Config struct {
	Suite     *task.Suite
	Tasks     []*task.Task // the tasks to run, in order
	Agent     agent.Factory
	AgentName string
	Model     string
	Obs       ObsMode
	Repeat    int // runs of each task
	// Sources are the places of the pool, from the environment providers.
	// Each episode runs on a place that serves its task's environment
	// type and screen size.
	Sources []env.Source
	// Parallel and NewEnv make a pool of Parallel x11 places, each started
	// with NewEnv (at whatever size it makes), when Sources is empty.
	Parallel int
	NewEnv   func(ctx context.Context) (env.Env, error)
	// Lost is told when a place of the pool is gone for good, or its
	// environment died under an episode and was started again (a pod
	// replaced), so that the run's record can name it; nil: only the
	// progress says so. It is given the environment's name, the episode
	// and the reason (which names the episode too) and the time.
	Lost       func(store.Lost)
	Store      *store.Store
	RunID      string
	Harness    string
	EarlyStop  int           // 0: DefaultEarlyStop; negative: never
	Retries    int           // 0: DefaultRetries; negative: none
	Backoff    time.Duration // first wait before a retry; doubles; 0: 2s
	CostBudget float64       // dollars per episode; 0: none
	// Settle is how long the applications get to finish updating (their
	// files, their accessibility trees) after the last action, before the
	// checks read them; 0: DefaultSettle, negative: none.
	Settle time.Duration
	// AgentTimeout bounds one call to the agent; 0: DefaultAgentTimeout.
	// Every call is also bounded by the episode's wall time.
	AgentTimeout time.Duration
	ResetTimeout time.Duration // 0: DefaultResetTimeout
	JudgeTimeout time.Duration // 0: DefaultJudgeTimeout
	// Judge decides the tasks' judge checks; a run of a task with judge
	// checks and no judge is refused before it starts.
	Judge judgment.Model
	// StopGrace is how long running episodes get to stop after ctx ends
	// before their environments are closed under them; 0: DefaultStopGrace.
	StopGrace time.Duration
	Progress  io.Writer // a line per finished episode; nil: quiet
	// Validation says the episodes replay a suite's trajectories to prove
	// its checks (proctor validate): some are meant to fail, so the
	// progress shows no success rate.
	Validation bool

	static []string // the origins of the suite's static services (service.Set.Reachable)
}

// job is one episode to run.
type job struct {
	t      *task.Task
	repeat int
	lost   int // places that left the pool while running it
	tried  int // attempts made on those places, counted in its Attempts
	// local lists the command services the task uses: Proctor starts
	// them on this machine's loopback, so only a place here serves it.
	local []string
}

// localServices lists the command services t uses.
func localServices(s *task.Suite, t *task.Task) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, name := range t.UsedServices() {
		if sv, ok := s.Service(name); ok && sv.IsCommand() {
			out = append(out, name)
		}
	}
	return out
}

// label names the job in messages: the task, and the repeat when a run
// has several.
func (j job) label(repeats int) string {
	if repeats > 1 {
		return fmt.Sprintf("%s (repeat %d of %d)", j.t.ID, j.repeat+1, repeats)
	}
	return j.t.ID
}

// lost tells cfg.Lost (when set) that the place named name was lost
// while running j.
func (cfg *Config) lost(name string, j job, reason string) {
	if cfg.Lost != nil {
		cfg.Lost(store.Lost{Name: name, Task: j.t.ID, Repeat: j.repeat,
			Reason: fmt.Sprintf("while running %s: %s", j.label(cfg.Repeat), reason), At: time.Now()})
	}
}

// typ is the environment type the job needs.
func (j job) typ() string { return j.t.Environment.TypeOrDefault() }

// size is the screen size the job needs (lint refuses a bad resolution).
func (j job) size() action.Size {
	s, err := j.t.Environment.Size()
	if err != nil {
		s, _ = task.Environment{}.Size()
	}
	return s
}

// Run runs every task Repeat times on a pool of Parallel environments and
// records each episode in the store. Episodes the store already holds are
// skipped, so a killed run resumes where it stopped; episodes that ended
// in an error are run again, but for those its judge left undecided
// (store.Result.End), which proctor judge decides. It returns the results of the whole run, old
// and new.
func Run(ctx context.Context, cfg Config) ([]store.Result, error) {
	if cfg.Parallel < 1 {
		cfg.Parallel = 1
	}
	if cfg.Repeat < 1 {
		cfg.Repeat = 1
	}
	if cfg.Obs == "" {
		cfg.Obs = ObsMarks
	}
	if cfg.EarlyStop == 0 {
		cfg.EarlyStop = DefaultEarlyStop
	}
	if cfg.Retries == 0 {
		cfg.Retries = DefaultRetries
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 2 * time.Second
	}
	if cfg.Settle == 0 {
		cfg.Settle = DefaultSettle
	}
	cfg.AgentTimeout = orDefault(cfg.AgentTimeout, DefaultAgentTimeout)
	cfg.ResetTimeout = orDefault(cfg.ResetTimeout, DefaultResetTimeout)
	cfg.JudgeTimeout = orDefault(cfg.JudgeTimeout, DefaultJudgeTimeout)
	cfg.StopGrace = orDefault(cfg.StopGrace, DefaultStopGrace)
	finished, err := cfg.Store.Finished()
	if err != nil {
		return nil, err
	}
	if cfg.Suite != nil && len(cfg.Suite.Services) > 0 {
		svcs, err := service.Start(ctx, cfg.Suite.Dir, cfg.Suite.Services)
		if err != nil {
			return nil, err
		}
		defer svcs.Close()
		if cfg.Tasks, err = svcs.Fill(cfg.Tasks); err != nil {
			return nil, err
		}
		cfg.static = svcs.Reachable()
	}
	// An error that is only a judge's missing verdict is not run again:
	// its evidence is kept, and proctor judge decides it without the agent.
	old, err := cfg.Store.Results()
	if err != nil {
		return nil, err
	}
	undecided := map[string]map[int]bool{}
	for _, r := range old {
		if r.End != "" && r.Outcome == string(check.Error) {
			if undecided[r.Task] == nil {
				undecided[r.Task] = map[int]bool{}
			}
			undecided[r.Task][r.Repeat] = true
		}
	}
	var jobs []job
	rerun := 0
	for rep := 0; rep < cfg.Repeat; rep++ {
		for _, t := range cfg.Tasks {
			switch outcome, ok := finished[t.ID][rep]; {
			case !ok:
				jobs = append(jobs, job{t: t, repeat: rep, local: localServices(cfg.Suite, t)})
			case outcome == string(check.Error) && !undecided[t.ID][rep]:
				jobs = append(jobs, job{t: t, repeat: rep, local: localServices(cfg.Suite, t)})
				rerun++
			}
		}
	}
	total := len(cfg.Tasks) * cfg.Repeat
	p := newProgress(cfg.Progress, total, total-len(jobs), rerun)
	p.validation = cfg.Validation
	if len(jobs) > 0 {
		if err := runJobs(ctx, cfg, jobs, p); err != nil {
			return nil, err
		}
	}
	return cfg.Store.Results()
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// SuiteHash fingerprints the tasks of a run, so that runs on different
// task versions are told apart.
func SuiteHash(tasks []*task.Task) string {
	h := sha256.New()
	ids := make([]string, len(tasks))
	byID := map[string]*task.Task{}
	for i, t := range tasks {
		ids[i] = t.ID
		byID[t.ID] = t
	}
	sort.Strings(ids)
	for _, id := range ids {
		b, _ := json.Marshal(byID[id])
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
