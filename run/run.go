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
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
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
)

// Config is one run.
type Config struct {
	Suite     *task.Suite
	Tasks     []*task.Task // the tasks to run, in order
	Agent     agent.Factory
	AgentName string
	Model     string
	Obs       ObsMode
	Parallel  int // environments in the pool
	Repeat    int // runs of each task
	// NewEnv makes one environment of the pool.
	NewEnv     func(ctx context.Context) (env.Env, error)
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
	Settle   time.Duration
	Progress io.Writer // a line per finished episode; nil: quiet
}

// job is one episode to run.
type job struct {
	t      *task.Task
	repeat int
}

// Run runs every task Repeat times on a pool of Parallel environments and
// records each episode in the store. Episodes the store already holds are
// skipped, so a killed run resumes where it stopped. It returns the
// results of the whole run, old and new.
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
	finished, err := cfg.Store.Finished()
	if err != nil {
		return nil, err
	}
	var jobs []job
	for rep := 0; rep < cfg.Repeat; rep++ {
		for _, t := range cfg.Tasks {
			if !finished[t.ID][rep] {
				jobs = append(jobs, job{t, rep})
			}
		}
	}
	total := len(cfg.Tasks) * cfg.Repeat
	p := newProgress(cfg.Progress, total, total-len(jobs))
	if len(jobs) > 0 {
		if err := runJobs(ctx, cfg, jobs, p); err != nil {
			return nil, err
		}
	}
	return cfg.Store.Results()
}

func runJobs(ctx context.Context, cfg Config, jobs []job, p *progress) error {
	n := min(cfg.Parallel, len(jobs))
	// Pre-flight: every environment must start before any task is scored.
	envs := make([]env.Env, 0, n)
	defer func() {
		for _, e := range envs {
			e.Close()
		}
	}()
	for i := 0; i < n; i++ {
		e, err := cfg.NewEnv(ctx)
		if err != nil {
			return fmt.Errorf("pre-flight: environment %d of %d does not start: %w", i+1, n, err)
		}
		envs = append(envs, e)
	}
	queue := make(chan job)
	errc := make(chan error, n)
	var wg sync.WaitGroup
	for _, e := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				res := runEpisode(ctx, cfg, e, j)
				if ctx.Err() != nil {
					return // interrupted: the episode is not recorded, a resume reruns it
				}
				if err := cfg.Store.SaveResult(res); err != nil {
					errc <- err
					return
				}
				p.done(res)
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case queue <- j:
		case <-ctx.Done():
			break feed
		case err := <-errc:
			close(queue)
			wg.Wait()
			return err
		}
	}
	close(queue)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
	}
	return ctx.Err()
}

// infraError is a fault of the environment or the model service.
type infraError struct{ err error }

func (e infraError) Error() string { return e.err.Error() }
func (e infraError) Unwrap() error { return e.err }

// runEpisode runs one episode, rerunning it after infrastructure faults.
func runEpisode(ctx context.Context, cfg Config, e env.Env, j job) store.Result {
	var last error
	wait := cfg.Backoff
	attempts := 0
	for attempt := 0; attempt <= max(cfg.Retries, 0); attempt++ {
		attempts++
		if attempt > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
			wait *= 2
		}
		if ctx.Err() != nil {
			break
		}
		res, err := episode(ctx, cfg, e, j)
		if err == nil {
			res.Attempts = attempts
			return res
		}
		last = err
	}
	res := baseResult(j)
	res.Outcome, res.Reason, res.Attempts = string(check.Error), fmt.Sprintf("infrastructure fault after %d attempts: %v", attempts, last), attempts
	res.Finished = time.Now().UTC()
	return res
}

func baseResult(j job) store.Result {
	t := j.t
	return store.Result{Task: t.ID, Instruction: t.Instruction, Repeat: j.repeat, Level: string(t.Level), Weight: t.Level.Weight(),
		Apps: t.AllApps(), Domain: t.Domain, Kind: string(t.Kind), Difficulty: t.Difficulty}
}

// assets reads the assets the task's setup copies.
func assets(s *task.Suite, t *task.Task) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, st := range t.Setup {
		if st.Copy != nil {
			b, err := os.ReadFile(s.AssetPath(st.Copy.Asset))
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

// episode runs one task once. An error return is an infrastructure fault.
func episode(ctx context.Context, cfg Config, e env.Env, j job) (store.Result, error) {
	t := j.t
	res := baseResult(j)
	start := time.Now()
	if err := cfg.Store.ClearSteps(t.ID, j.repeat); err != nil {
		return res, infraError{err}
	}
	as, err := assets(cfg.Suite, t)
	if err != nil {
		return res, infraError{fmt.Errorf("read assets: %w", err)}
	}
	if err := e.Reset(ctx, env.Setup{Steps: t.Setup, Apps: cfg.Suite.Apps, Assets: as}); err != nil {
		return res, infraError{fmt.Errorf("reset: %w", err)}
	}
	info, err := e.Info(ctx)
	if err != nil {
		return res, infraError{err}
	}
	ag, err := cfg.Agent()
	if err != nil {
		return res, err
	}
	at := agent.Task{ID: t.ID, Instruction: t.Instruction, Apps: t.AllApps(), Screen: info.Screen,
		MaxSteps: t.MaxSteps(), Demonstrations: t.Demonstrations, Gold: t.Gold}
	if err := retry(ctx, cfg, func() error { return ag.Start(ctx, at) }); err != nil {
		return res, infraError{fmt.Errorf("agent start: %w", err)}
	}
	defer ag.Stop(context.WithoutCancel(ctx))

	deadline := start.Add(t.WallTime())
	var history []agent.Turn
	var traj check.Trajectory
	var usage agent.Usage
	end := check.EndBudget
	lastSig, same := "", 0
	feedback := ""
	steps := 0
	for step := 1; step <= t.MaxSteps(); step++ {
		if time.Now().After(deadline) || cfg.CostBudget > 0 && usage.Cost >= cfg.CostBudget {
			break
		}
		steps = step
		rec := store.Step{Task: t.ID, Repeat: j.repeat, Index: step}
		envStart := time.Now()
		obs, err := observeEnv(ctx, cfg, e, info.Screen)
		if err != nil {
			return res, infraError{fmt.Errorf("step %d: observe: %w", step, err)}
		}
		obs.Step, obs.Feedback = step, feedback
		rec.EnvLatency = time.Since(envStart)
		if obs.Screenshot != nil {
			if rec.Shot, err = cfg.Store.PutShot(obs.Screenshot, obs.Format); err != nil {
				return res, infraError{err}
			}
		}
		rec.Tree = obs.Tree
		var turn agent.Turn
		err = retry(ctx, cfg, func() error {
			var err error
			turn, err = ag.Next(ctx, obs, history)
			return err
		})
		if err != nil {
			if errors.Is(err, agent.ErrTransient) || ctx.Err() != nil {
				return res, infraError{fmt.Errorf("step %d: agent: %w", step, err)}
			}
			res.Outcome, res.Reason = string(check.Error), fmt.Sprintf("step %d: the agent failed: %v", step, err)
			cfg.Store.SaveStep(rec)
			res.Steps, res.Duration, res.Finished = step, time.Since(start), time.Now().UTC()
			return res, nil
		}
		usage = usage.Add(turn.Usage)
		history = append(history, turn)
		rec.Raw, rec.Thought, rec.ParseError, rec.ModelLatency = turn.Raw, turn.Thought, turn.ParseError, turn.Latency
		rec.InputTokens, rec.OutputTokens, rec.Cost = turn.Usage.InputTokens, turn.Usage.OutputTokens, turn.Usage.Cost
		rec.Actions, _ = json.Marshal(turn.Actions)
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
		var refused error
		act, refused = guiOnly(t, act)
		envStart = time.Now()
		done, err := e.Do(ctx, act)
		rec.EnvLatency += time.Since(envStart)
		if err == nil && refused != nil {
			err = refused
		}
		for _, d := range done {
			traj.Steps = append(traj.Steps, check.Step{Action: d.Action, Element: d.Element})
		}
		rec.Done, _ = json.Marshal(done)
		if err != nil {
			if errors.Is(err, env.ErrBadAction) || errors.Is(err, env.ErrNotFound) || errors.Is(err, env.ErrForbidden) {
				rec.EnvError = err.Error()
				feedback = err.Error() // the agent's mistake: it hears about it
			} else {
				return res, infraError{fmt.Errorf("step %d: act: %w", step, err)}
			}
		}
		if err := cfg.Store.SaveStep(rec); err != nil {
			return res, infraError{err}
		}
		if final != nil {
			traj.Steps = append(traj.Steps, check.Step{Action: *final})
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
	ev := &evidence{e: e, traj: traj, suite: cfg.Suite}
	v := suite.Judge(ctx, ev, end)
	if v.Outcome == check.Error && end != check.EndError {
		return res, infraError{errors.New(v.Reason)} // evidence could not be read: retry
	}
	vb, _ := json.Marshal(v)
	res.Outcome, res.Reason, res.Milestone, res.Verdict = string(v.Outcome), v.Reason, v.MilestoneScore, vb
	res.Answer, _ = traj.Answer()
	res.Steps, res.Duration = steps, time.Since(start)
	res.InputTokens, res.OutputTokens, res.Cost = usage.InputTokens, usage.OutputTokens, usage.Cost
	res.Finished = time.Now().UTC()
	return res, nil
}

// retry calls f, retrying transient failures with backoff a few times.
func retry(ctx context.Context, cfg Config, f func() error) error {
	wait := cfg.Backoff
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		if err = f(); err == nil || !errors.Is(err, agent.ErrTransient) {
			return err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return err
		}
		wait *= 2
	}
	return err
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
	return obs, nil
}

// evidence lets the checks read the environment after an episode.
type evidence struct {
	e     env.Env
	traj  check.Trajectory
	suite *task.Suite
}

func (v *evidence) Command(ctx context.Context, cmd string, timeout time.Duration) (check.CommandResult, error) {
	return v.e.Run(ctx, cmd, timeout)
}
func (v *evidence) ReadFile(ctx context.Context, p string) ([]byte, error) {
	return v.e.ReadFile(ctx, p)
}
func (v *evidence) Elements(ctx context.Context, q check.ElementQuery) ([]check.Element, error) {
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
func (v *evidence) Asset(name string) ([]byte, error)             { return os.ReadFile(v.suite.AssetPath(name)) }
func (v *evidence) Trajectory() check.Trajectory                  { return v.traj }

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
