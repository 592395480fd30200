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
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/query"
	"github.com/proctor-eval/proctor/service"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/proctor-eval/proctor/usage"
)

// ObsMode is what the agent observes at each step.
type ObsMode string

// Observation modes (ScienceBoard's four).
const (
	ObsScreenshot ObsMode = "screenshot"      // the screen
	ObsTree       ObsMode = "a11y"            // the linearised accessibility tree
	ObsBoth       ObsMode = "screenshot+a11y" // both
	ObsMarks      ObsMode = "som"             // set-of-mark screenshot and the tree
)

// ObsModes lists the modes.
var ObsModes = []ObsMode{ObsScreenshot, ObsTree, ObsBoth, ObsMarks}

// Defaults.
const (
	DefaultEarlyStop = 5 // identical consecutive turns that stop an episode (ProBench)
	DefaultRetries   = 2 // reruns of an episode after an infrastructure fault
	DefaultSettle    = 500 * time.Millisecond
	// DefaultAgentTimeout bounds one call to the agent (a model request
	// included); a call that takes longer is a transient fault, retried
	// while the episode's wall time lasts.
	DefaultAgentTimeout = agent.DefaultTimeout
	DefaultResetTimeout = 3 * time.Minute // reset and setup of one episode
	DefaultJudgeTimeout = 2 * time.Minute // the checks of one episode
	DefaultStopGrace    = 3 * time.Second // after an interrupt, before environments are closed under running episodes
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
	// Lost is told when a place of the pool is gone for good, so that the
	// run's record can name it; nil: only the progress says so.
	Lost       func(name, reason string)
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
}

// job is one episode to run.
type job struct {
	t      *task.Task
	repeat int
	lost   int // places that left the pool while running it
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

// place is one place of the pool: its source and the environment it
// started, replaced when it dies. The mutex lets an interrupt close the
// environment while an episode runs on it.
type place struct {
	src  env.Source
	mu   sync.Mutex
	e    env.Env
	size action.Size // what e was started at
	info env.Info
	lost error // set when the place left the pool
	// startTimeout bounds starting the environment (a daemon that
	// accepts the connection and never answers, a desktop that hangs).
	startTimeout time.Duration
	// svc are the suite's command services of this place, restored
	// before every episode; nil when the suite has none.
	svc *service.Instances
}

func (p *place) env() env.Env {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.e
}

func (p *place) close() {
	p.mu.Lock()
	e := p.e
	p.e = nil
	p.mu.Unlock()
	if e != nil {
		e.Close()
	}
}

// serves reports whether the place can run the job.
func (p *place) serves(j job) bool {
	return p.fits(j) && !(p.src.Remote && len(j.local) > 0)
}

// fits reports whether the place has the job's environment type and size.
func (p *place) fits(j job) bool {
	if p.lost != nil || p.src.Type != j.typ() && !slices.Contains(p.src.Also, j.typ()) {
		return false
	}
	return p.src.Size == (action.Size{}) || p.src.Size == j.size()
}

// start starts the place's environment at size and reads its Info.
func (p *place) start(ctx context.Context, size action.Size) error {
	p.close()
	sctx, cancel := context.WithTimeout(ctx, p.startTimeout)
	defer cancel()
	e, err := p.src.Start(sctx, size)
	if err != nil {
		return err
	}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	info, err := e.Info(ictx)
	cancel()
	if err != nil {
		e.Close()
		return err
	}
	p.mu.Lock()
	p.e, p.size, p.info = e, size, info
	p.mu.Unlock()
	return nil
}

// ready makes sure the place has a live environment of the job's size.
func (p *place) ready(ctx context.Context, j job) error {
	if p.env() != nil && (p.src.Size != (action.Size{}) || p.size == j.size()) {
		return nil
	}
	return p.start(ctx, j.size())
}

// heal checks the place's environment after an infrastructure fault and
// starts it again when it died. An error means the place left the pool.
func (p *place) heal(ctx context.Context, pr *progress) error {
	e := p.env()
	if e != nil {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := e.Info(pctx)
		cancel()
		if err == nil || ctx.Err() != nil {
			return nil
		}
		pr.notef("environment %s died (%v)", p.src.Name, err)
	}
	if p.src.Once {
		p.close()
		return fmt.Errorf("%w: %s died and cannot be started again", ErrNoEnvironment, p.src.Name)
	}
	if err := p.start(ctx, p.size); err != nil {
		return fmt.Errorf("%w: %s died and could not be started again: %v", ErrNoEnvironment, p.src.Name, err)
	}
	pr.notef("environment %s started again", p.src.Name)
	return nil
}

// Error is a sentinel error of the runner.
type Error string

func (e Error) Error() string { return string(e) }

// ErrNoEnvironment means a place of the pool lost its environment for good.
const ErrNoEnvironment Error = "no environment"

// queue hands out the episodes; a worker takes the first its place can
// serve, and one whose environment is gone puts its episode back. A
// worker with nothing to take waits while episodes are in flight, since
// one may come back to it.
type queue struct {
	mu       sync.Mutex
	cond     sync.Cond
	jobs     []job
	inflight int
	closed   bool
}

func newQueue(jobs []job) *queue {
	q := &queue{jobs: jobs}
	q.cond.L = &q.mu
	return q
}

// pop takes the first job ok accepts; false when there is none and none
// can come back, or the queue was closed.
func (q *queue) pop(ok func(job) bool) (job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed {
		for i, j := range q.jobs {
			if ok(j) {
				q.jobs = append(q.jobs[:i:i], q.jobs[i+1:]...)
				q.inflight++
				return j, true
			}
		}
		if q.inflight == 0 {
			break
		}
		q.cond.Wait()
	}
	return job{}, false
}

// done ends a popped job; back puts it back instead.
func (q *queue) done()      { q.end(nil) }
func (q *queue) back(j job) { q.end(&j) }

func (q *queue) end(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j != nil {
		q.jobs = append(q.jobs, *j)
	}
	q.inflight--
	q.cond.Broadcast()
}

// close wakes every waiting worker for good (an interrupt).
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

func (q *queue) drain() []job {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.jobs
	q.jobs = nil
	return out
}

// sources are the pool's places: cfg.Sources, or Parallel x11 places
// made with NewEnv.
func sources(cfg Config) []env.Source {
	if len(cfg.Sources) > 0 {
		return cfg.Sources
	}
	out := make([]env.Source, cfg.Parallel)
	for i := range out {
		out[i] = env.Source{Name: fmt.Sprintf("local %d", i+1), Type: "x11",
			Start: func(ctx context.Context, _ action.Size) (env.Env, error) { return cfg.NewEnv(ctx) }}
	}
	return out
}

// preflight starts the places that serve some job, at the size of the
// first, and refuses the run, naming tasks and checks, when a task has no
// place of its type and size or needs a capability its places lack.
func preflight(ctx context.Context, cfg Config, jobs []job) ([]*place, error) {
	var places []*place
	for _, src := range sources(cfg) {
		places = append(places, &place{src: src, startTimeout: cfg.ResetTimeout})
	}
	var problems, unjudged []string
	seen := map[string]bool{}
	for _, j := range jobs {
		if seen[j.t.ID] {
			continue
		}
		seen[j.t.ID] = true
		if cfg.Judge == nil && judged(j.t) {
			unjudged = append(unjudged, j.t.ID)
		}
		n, far := 0, []string{}
		for _, p := range places {
			if p.serves(j) {
				n++
			} else if p.fits(j) {
				far = append(far, p.src.Name)
			}
		}
		switch {
		case n == 0 && len(far) > 0:
			problems = append(problems, fmt.Sprintf("task %s uses the service(s) %s, which Proctor starts on this machine's loopback; %s runs on another machine and cannot reach them: run it on a local environment (--env local or --env browser)", j.t.ID, strings.Join(j.local, ", "), strings.Join(far, ", ")))
		case n == 0:
			problems = append(problems, fmt.Sprintf("task %s needs a %s environment of %dx%d; the pool has %s", j.t.ID, j.typ(), j.size().W, j.size().H, describePool(places)))
		}
	}
	if len(unjudged) > 0 {
		names := strings.Join(unjudged, ", ")
		if len(unjudged) > 5 {
			names = strings.Join(unjudged[:5], ", ") + fmt.Sprintf(" and %d more", len(unjudged)-5)
		}
		problems = append(problems, fmt.Sprintf("%d tasks have judge checks (%s), and no judge model is configured: give --judge-model (and --judge-provider, --judge-base-url where needed)", len(unjudged), names))
	}
	if cfg.Suite != nil {
		for _, sv := range cfg.Suite.Services {
			if d := cfg.Suite.DataPath(sv); sv.IsCommand() && d != "" {
				if st, err := os.Stat(d); err != nil || !st.IsDir() {
					problems = append(problems, fmt.Sprintf("service %s: its data folder %s is missing: run `proctor setup %s` first", sv.Name, d, cfg.Suite.Name))
				}
			}
		}
	}
	if len(problems) > 0 {
		return nil, preflightError(problems)
	}
	var started []*place
	for _, p := range places {
		if len(started) == len(jobs) {
			break // more places than episodes: the rest would idle
		}
		for _, j := range jobs {
			if p.serves(j) {
				if err := p.start(ctx, j.size()); err != nil {
					for _, s := range started {
						s.close()
					}
					return nil, fmt.Errorf("pre-flight: environment %s does not start: %w", p.src.Name, err)
				}
				p.svc = service.NewInstances(cfg.Suite)
				started = append(started, p)
				break
			}
		}
	}
	// An observation with the tree needs it of every place.
	if cfg.Obs != ObsScreenshot {
		for _, p := range started {
			if !p.info.Has(task.CapTree) {
				problems = append(problems, fmt.Sprintf("observation mode %s needs tree, which %s does not offer: use --obs screenshot", cfg.Obs, p.src.Name))
			}
		}
	}
	for _, j := range jobs {
		if !seen[j.t.ID] {
			continue
		}
		delete(seen, j.t.ID)
		for _, p := range started {
			if !p.serves(j) {
				continue
			}
			for _, n := range j.t.Missing(p.info.Caps) {
				problems = append(problems, fmt.Sprintf("task %s: %s needs %s, which %s does not offer", j.t.ID, n.Label, n.Cap, p.src.Name))
			}
		}
	}
	if len(problems) > 0 {
		for _, s := range started {
			s.close()
		}
		return nil, preflightError(problems)
	}
	return started, nil
}

func describePool(places []*place) string {
	var parts []string
	for _, p := range places {
		size := "any size"
		if p.src.Size != (action.Size{}) {
			size = fmt.Sprintf("%dx%d", p.src.Size.W, p.src.Size.H)
		}
		types := strings.Join(append([]string{p.src.Type}, p.src.Also...), ", ")
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", p.src.Name, types, size))
	}
	if len(parts) == 0 {
		return "no environment"
	}
	return strings.Join(parts, ", ")
}

// judged reports whether t has judge checks.
func judged(t *task.Task) bool {
	s, err := check.CompileAll(t.Checks, t.Milestones)
	return err == nil && s.Judged()
}

func preflightError(problems []string) error {
	sort.Strings(problems)
	return fmt.Errorf("pre-flight refused the run:\n  %s", strings.Join(problems, "\n  "))
}

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
				j, ok := q.pop(p.serves)
				if !ok {
					return
				}
				began := time.Now()
				err := p.ready(ctx, j)
				var res store.Result
				if err != nil {
					err = fmt.Errorf("%w: %s does not start: %v", ErrNoEnvironment, p.src.Name, err)
				} else {
					res, err = runEpisode(ctx, cfg, p, j, pr)
				}
				if ctx.Err() != nil {
					q.done()
					return // interrupted: the episode is not recorded, a resume reruns it
				}
				if err != nil {
					p.lost = err
					pr.notef("environment %s left the pool: %v", p.src.Name, err)
					if cfg.Lost != nil {
						cfg.Lost(p.src.Name, err.Error())
					}
					if j.lost++; j.lost < 2 {
						q.back(j) // another place of the pool takes it
						return
					}
					// A second place lost on one episode: the episode, not
					// the places, is the likelier cause; it ends as an error
					// instead of emptying the pool.
					res = baseResult(j)
					res.Outcome, res.Reason = string(check.Error), fmt.Sprintf("infrastructure fault: %d environments were lost running it, the last: %v", j.lost, err)
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
		res := baseResult(j)
		res.Outcome, res.Reason = string(check.Error), fmt.Sprintf("no environment of the pool can run it any more (%s environment of %dx%d)", j.typ(), j.size().W, j.size().H)
		res.Finished = time.Now().UTC()
		if err := cfg.Store.SaveResult(res); err != nil {
			return err
		}
		pr.done(res)
	}
	return ctx.Err()
}

// infraError is a fault of the environment or the model service.
type infraError struct{ err error }

func (e infraError) Error() string { return e.err.Error() }
func (e infraError) Unwrap() error { return e.err }

// runEpisode runs one episode, rerunning it after infrastructure faults on
// a healthy environment (the place's, started again if it died). A non-nil
// error means the place left the pool; the episode was not recorded.
func runEpisode(ctx context.Context, cfg Config, s *place, j job, p *progress) (store.Result, error) {
	var last error
	wait := cfg.Backoff
	attempts := 0
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
		e := s.env()
		if e == nil {
			return store.Result{}, ErrNoEnvironment
		}
		attempts++
		res, err := episode(ctx, cfg, e, s.svc, j, p)
		if err == nil {
			res.Attempts = attempts
			s.mu.Lock()
			res.Env = s.info.Kind
			s.mu.Unlock()
			return res, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
		if attempt < n {
			p.notef("retry: %s: infrastructure fault (%v): episode attempt %d of %d, retrying in %s", j.label(cfg.Repeat), err, attempt, n, wait)
		}
		if err := s.heal(ctx, p); err != nil {
			return store.Result{}, err
		}
	}
	res := baseResult(j)
	res.Outcome, res.Reason, res.Attempts = string(check.Error), fmt.Sprintf("infrastructure fault after %d attempts: %v", attempts, last), attempts
	// The time it took: every attempt and the waits between them.
	res.Duration = time.Since(began)
	res.Finished = time.Now().UTC()
	return res, nil
}

func baseResult(j job) store.Result {
	t := j.t
	return store.Result{Task: t.ID, Instruction: t.Instruction, Repeat: j.repeat, Level: string(t.Level), Weight: t.Level.Weight(),
		Apps: t.AllApps(), Domain: t.Domain, Persona: t.Persona, Kind: string(t.Kind), Difficulty: t.Difficulty}
}

// assets reads the assets the task's setup copies.
func assets(s *task.Suite, t *task.Task) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, st := range t.Setup {
		if st.Copy != nil {
			b, err := s.ReadAsset(st.Copy.Asset)
			if err != nil {
				return nil, err
			}
			out[st.Copy.Asset] = b
		}
	}
	return out, nil
}

// signature identifies a turn's actions for early stop.
func signature(acts []action.Action) string {
	parts := make([]string, len(acts))
	for i, a := range acts {
		parts[i] = a.String()
	}
	return strings.Join(parts, "; ")
}

// errAbandoned marks an agent call that did not return after its context
// ended: the agent may still be running it, so it is not called again.
const errAbandoned Error = "the agent did not return when its call was cancelled"

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

// checkActions cuts a turn's actions at the first that is invalid or
// points off the screen, and says why; a reply with more than
// action.MaxPerTurn actions is refused whole.
func checkActions(acts []action.Action, screen action.Size) ([]action.Action, error) {
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

// episode runs one task once. An error return is an infrastructure fault.
// The task's wall time bounds every call of the episode, the agent's and
// the environment's alike; reaching it ends the episode as uncompleted,
// and the checks then get their own time.
func episode(ctx context.Context, cfg Config, e env.Env, svc *service.Instances, j job, pr *progress) (store.Result, error) {
	t := j.t
	res := baseResult(j)
	// note tells the progress of a retried call to the agent.
	note := func(format string, args ...any) {
		pr.notef("retry: %s: "+format, append([]any{j.label(cfg.Repeat)}, args...)...)
	}
	// The reset and setup are timed apart (Setup): the episode's time
	// (Duration) starts when the environment is ready for the agent.
	start := time.Now()
	if err := cfg.Store.ClearSteps(t.ID, j.repeat); err != nil {
		return res, infraError{err}
	}
	as, err := assets(cfg.Suite, t)
	if err != nil {
		return res, infraError{fmt.Errorf("read assets: %w", err)}
	}
	if svc != nil {
		// The applications first, from their pristine data: the setup may
		// open them.
		rctx, cancel := context.WithTimeout(ctx, cfg.ResetTimeout)
		err := svc.Reset(rctx, t.UsedServices())
		cancel()
		if err != nil {
			return res, infraError{fmt.Errorf("reset the services: %w", err)}
		}
		if t, err = t.WithServices(svc.Origins()); err != nil {
			return res, infraError{err}
		}
		res.Instruction = t.Instruction
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.ResetTimeout)
	err = e.Reset(rctx, env.Setup{Steps: t.Setup, Apps: cfg.Suite.Apps, Assets: as, Type: j.typ()})
	cancel()
	if err != nil {
		return res, infraError{fmt.Errorf("reset: %w", err)}
	}
	ictx, cancel := context.WithTimeout(ctx, cfg.ResetTimeout)
	info, err := e.Info(ictx)
	cancel()
	if err != nil {
		return res, infraError{err}
	}
	res.Setup = time.Since(start)
	start = time.Now()
	ag, err := cfg.Agent()
	if err != nil {
		return res, err
	}
	limit := t.WallTime()
	ectx, cancelEpisode := context.WithTimeout(ctx, limit)
	defer cancelEpisode()
	// timeUp reports whether the episode's wall time, and not an interrupt,
	// ended a call.
	timeUp := func() bool { return ectx.Err() != nil && ctx.Err() == nil }
	limitReason := func(while string) string {
		return fmt.Sprintf("the wall-time limit of %s was reached %s", limit, while)
	}
	at := agent.Task{ID: t.ID, Instruction: t.Instruction, Apps: t.AllApps(), Screen: info.Screen,
		MaxSteps: t.MaxSteps(), Demonstrations: t.Demonstrations, Gold: t.Gold}
	abandoned := false // an agent that did not return is not called again
	defer func() {
		if abandoned {
			return
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		callAgent(sctx, 10*time.Second, func(c context.Context) (struct{}, error) { return struct{}{}, ag.Stop(c) })
	}()
	// alive probes the environment after the wall time ended one of its
	// calls: a dead or stuck environment is an infrastructure fault, not
	// the agent's lack of time.
	alive := func() bool {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := e.Info(pctx)
		return err == nil
	}

	var history []agent.Turn
	var traj check.Trajectory
	shots := map[int]string{} // the screenshot shown at each step
	var usage usage.Usage
	end := check.EndBudget
	reason := fmt.Sprintf("the step budget of %d steps was used up", t.MaxSteps())
	lastSig, same := "", 0
	feedback := ""
	steps := 0
	maxSteps := t.MaxSteps()
	transient, err := retry(ectx, cfg, "agent start", note, func() error {
		_, err := callAgent(ectx, cfg.AgentTimeout, func(c context.Context) (struct{}, error) { return struct{}{}, ag.Start(c, at) })
		return err
	})
	abandoned = errors.Is(err, errAbandoned)
	switch {
	case err != nil && !transient && timeUp():
		reason, maxSteps = limitReason("while the agent was starting"), 0
	case err != nil:
		return res, infraError{fmt.Errorf("agent start: %w", err)}
	}
	for step := 1; step <= maxSteps; step++ {
		if cfg.CostBudget > 0 && usage.Cost >= cfg.CostBudget {
			reason = fmt.Sprintf("the cost budget of $%.4g was spent ($%.4g)", cfg.CostBudget, usage.Cost)
			break
		}
		if timeUp() {
			reason = limitReason("before step " + fmt.Sprint(step))
			break
		}
		rec := store.Step{Task: t.ID, Repeat: j.repeat, Index: step}
		envStart := time.Now()
		obs, err := observeEnv(ectx, cfg, e, info.Screen)
		if err != nil {
			if timeUp() && alive() {
				reason = limitReason(fmt.Sprintf("while observing (step %d)", step))
				break
			}
			return res, infraError{fmt.Errorf("step %d: observe: %w", step, err)}
		}
		steps = step
		obs.Step, obs.Feedback = step, feedback
		rec.EnvLatency = time.Since(envStart)
		if obs.Screenshot != nil {
			if rec.Shot, err = cfg.Store.PutShot(obs.Screenshot, obs.Format); err != nil {
				return res, infraError{err}
			}
			shots[step] = rec.Shot
		}
		rec.Tree = obs.Tree
		if len(obs.Marks) > 0 {
			rec.Marks, _ = json.Marshal(obs.Marks)
		}
		var turn agent.Turn
		transient, err := retry(ectx, cfg, fmt.Sprintf("step %d: agent", step), note, func() error {
			var err error
			turn, err = callAgent(ectx, cfg.AgentTimeout, func(c context.Context) (agent.Turn, error) { return ag.Next(c, obs, history) })
			return err
		})
		abandoned = abandoned || errors.Is(err, errAbandoned)
		if err != nil {
			switch {
			case transient || errors.Is(err, agent.ErrTransient) || ctx.Err() != nil:
				// The service failed (before the wall time ran out, if it
				// did): the episode runs again, with a fresh agent.
				return res, infraError{fmt.Errorf("step %d: agent: %w", step, err)}
			case timeUp():
				reason = limitReason(fmt.Sprintf("while the agent was thinking (step %d)", step))
				rec.EnvError = "no answer: " + reason
				if err := cfg.Store.SaveStep(rec); err != nil {
					return res, infraError{err}
				}
			default:
				res.Outcome, res.Reason = string(check.Error), fmt.Sprintf("step %d: the agent failed: %v", step, err)
				if err := cfg.Store.SaveStep(rec); err != nil {
					return res, infraError{err}
				}
				res.Steps, res.Duration, res.Finished = step, time.Since(start), time.Now().UTC()
				return res, nil
			}
			break
		}
		usage = usage.Add(turn.Usage)
		history = append(history, turn)
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
		if timeUp() { // the answer came too late to be acted on
			reason = limitReason(fmt.Sprintf("while the agent was thinking (step %d)", step))
			rec.EnvError = "not performed: " + reason
			if err := cfg.Store.SaveStep(rec); err != nil {
				return res, infraError{err}
			}
			break
		}
		feedback = ""
		if turn.ParseError != "" {
			feedback = "your last reply could not be used: " + turn.ParseError
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
		act, refused := checkActions(act, info.Screen)
		if refused != nil {
			final = nil // an answer after a refused action was not reached
		} else {
			act, refused = guiOnly(t, act)
		}
		envStart = time.Now()
		done, err := e.Do(ectx, act)
		rec.EnvLatency += time.Since(envStart)
		if err == nil && refused != nil {
			err = refused
		}
		for _, d := range done {
			traj.Steps = append(traj.Steps, check.Step{Action: d.Action, Element: d.Element, Turn: step})
		}
		rec.Done, _ = json.Marshal(done)
		stop := false
		switch {
		case err == nil:
		case env.AgentsFault(err):
			rec.EnvError = err.Error()
			feedback = err.Error() // the agent's mistake: it hears about it
			final = nil
		case timeUp() && alive():
			reason = limitReason(fmt.Sprintf("while acting (step %d)", step))
			rec.EnvError = reason
			stop = true
		default:
			return res, infraError{fmt.Errorf("step %d: act: %w", step, err)}
		}
		if err := cfg.Store.SaveStep(rec); err != nil {
			return res, infraError{err}
		}
		if stop {
			break
		}
		if final != nil {
			traj.Steps = append(traj.Steps, check.Step{Action: *final, Turn: step})
			end = check.EndAgent
			break
		}
		if sig := signature(turn.Actions); sig == lastSig && sig != "" {
			same++
		} else {
			lastSig, same = sig, 1
		}
		if cfg.EarlyStop > 0 && same >= cfg.EarlyStop {
			end = check.EndEarlyStop
			break
		}
	}
	suite, err := check.CompileAll(t.Checks, t.Milestones)
	if err != nil {
		return res, err // the suite was linted; this is a bug
	}
	if cfg.Settle > 0 && steps > 0 {
		select {
		case <-time.After(cfg.Settle):
		case <-ctx.Done():
			return res, infraError{ctx.Err()}
		}
	}
	jctx, cancelJudge := context.WithTimeout(ctx, cfg.JudgeTimeout)
	defer cancelJudge()
	// The screen the checks judge is kept (the viewer shows it; judge
	// checks look at it).
	final, err := finalScreen(jctx, cfg, e)
	if err != nil && suite.Judged() {
		return res, infraError{fmt.Errorf("the final screen: %w", err)}
	}
	res.FinalShot = final.name
	// What the checks read is recorded, so that proctor rescore can judge
	// the episode again with changed checks.
	suite.Judge = cfg.Judge
	ev := check.NewRecorder(&evidence{e: e, traj: traj, suite: cfg.Suite, svc: svc, store: cfg.Store, shots: shots, final: final})
	v := suite.Evaluate(jctx, ev, end)
	// A judge that gave no verdict is not a reason to run the agent again:
	// the evidence was read and is kept, the episode is an infrastructure
	// error, and proctor judge decides it later.
	undecided, judgeDown := check.UndecidedJudge(v)
	if v.Outcome == check.Error && !judgeDown {
		return res, infraError{errors.New(v.Reason)} // evidence could not be read: retry
	}
	if err := cfg.Store.SaveEvidence(t.ID, j.repeat, ev.Recorded()); err != nil {
		return res, infraError{err}
	}
	if suite.Judged() {
		jg := store.Judgement{Task: t.ID, Repeat: j.repeat, Judge: cfg.Judge.Name(), At: time.Now(), Source: store.JudgedInRun, Checks: store.JudgeResults(v)}
		if judgeDown {
			jg.Err = undecided
		}
		if err := cfg.Store.SaveJudgement(jg); err != nil {
			return res, infraError{err}
		}
	}
	res.JudgeInputTokens, res.JudgeOutputTokens, res.JudgeCost = v.JudgeUsage.InputTokens, v.JudgeUsage.OutputTokens, v.JudgeUsage.Cost
	if v.Outcome == check.Uncompleted {
		v.Reason = reason
	}
	if judgeDown {
		res.End = string(end)
		v.Reason = "infrastructure fault: " + undecided + " (the evidence is kept: proctor judge RUN decides the episode without running the agent again)"
	}
	vb, _ := json.Marshal(v)
	res.Outcome, res.Reason, res.Milestone, res.Verdict = string(v.Outcome), v.Reason, v.MilestoneScore, vb
	res.Answer, _ = traj.Answer()
	res.Steps, res.Duration = steps, time.Since(start)
	res.InputTokens, res.OutputTokens, res.Cost = usage.InputTokens, usage.OutputTokens, usage.Cost
	res.Finished = time.Now().UTC()
	return res, nil
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

// observeEnv builds the observation of the mode.
func observeEnv(ctx context.Context, cfg Config, e env.Env, screen action.Size) (agent.Observation, error) {
	obs := agent.Observation{Screen: screen}
	var tr *observe.Tree
	if cfg.Obs != ObsTree {
		shot, err := e.Screenshot(ctx, env.ShotOptions{Marks: cfg.Obs == ObsMarks})
		if err != nil {
			return obs, err
		}
		obs.Screenshot, obs.Format, obs.Marks = shot.Data, shot.Format, shot.Marks
		tr = shot.Tree // the tree the marks came from, when there is one
	}
	if cfg.Obs != ObsScreenshot {
		if tr == nil {
			var err error
			if tr, err = e.Tree(ctx); err != nil {
				return obs, err
			}
		}
		obs.Tree = observe.Linearize(tr.Filter(observe.Options{Screen: screen}), 0)
	}
	if tb, ok := e.(env.Tabs); ok {
		tabs, err := tb.Tabs(ctx)
		if err != nil {
			return obs, err
		}
		obs.Tabs = tabs
	}
	return obs, nil
}

// shot is a screenshot kept in the store.
type shot struct {
	name   string // in the store
	data   []byte
	format string
}

// finalScreen takes the screen after the episode and keeps it.
func finalScreen(ctx context.Context, cfg Config, e env.Env) (shot, error) {
	sh, err := e.Screenshot(ctx, env.ShotOptions{})
	if err != nil {
		return shot{}, err
	}
	name, err := cfg.Store.PutShot(sh.Data, sh.Format)
	if err != nil {
		return shot{}, err
	}
	return shot{name: name, data: sh.Data, format: sh.Format}, nil
}

// evidence lets the checks read the environment after an episode.
type evidence struct {
	e     env.Env
	traj  check.Trajectory
	suite *task.Suite
	svc   *service.Instances
	store *store.Store
	shots map[int]string // the screenshot of each step, in the store
	final shot
}

func (v *evidence) FinalScreen(context.Context) (check.Screen, error) {
	if v.final.data == nil {
		return check.Screen{}, errors.New("no screen was taken after the episode")
	}
	return check.Screen{Data: v.final.data, Format: v.final.format}, nil
}

func (v *evidence) StepScreen(_ context.Context, turn int) (check.Screen, error) {
	return store.StepScreen(v.store, v.shots[turn])
}

func (v *evidence) Service(ctx context.Context, q query.Service) (string, bool, error) {
	if q.Port() != 0 {
		return env.CallLoopback(ctx, v.e, q)
	}
	if v.svc == nil {
		return "", false, fmt.Errorf("%s: the suite runs no command service", q.Describe())
	}
	return v.svc.Query(ctx, q)
}

func (v *evidence) Command(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error) {
	return v.e.Run(ctx, cmd, timeout)
}
func (v *evidence) ReadFile(ctx context.Context, p string) ([]byte, error) {
	return v.e.ReadFile(ctx, p)
}
func (v *evidence) Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	return v.e.Elements(ctx, q)
}
func (v *evidence) Windows(ctx context.Context) ([]string, error) {
	ws, err := v.e.Windows(ctx)
	titles := make([]string, len(ws))
	for i, w := range ws {
		titles[i] = w.Title
	}
	return titles, err
}
func (v *evidence) Clipboard(ctx context.Context) (string, error) { return v.e.Clipboard(ctx) }
func (v *evidence) Page(ctx context.Context, q observe.PageQuery) (string, bool, error) {
	return env.ReadPage(ctx, v.e, q)
}
func (v *evidence) Asset(name string) ([]byte, error) { return v.suite.ReadAsset(name) }
func (v *evidence) Trajectory() check.Trajectory      { return v.traj }

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

// guiOnly cuts the actions of a GUI-only task (interface: gui) at the first
// command, which is refused with an error the agent hears: such a task
// must be done through the applications' windows.
func guiOnly(t *task.Task, acts []action.Action) ([]action.Action, error) {
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
