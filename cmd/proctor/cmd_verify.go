package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/judge"
	"github.com/proctor-eval/proctor/receipt"
	"github.com/proctor-eval/proctor/run"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

// packagesOf reads the Debian package versions of a receipt; a test
// gives its own.
var packagesOf = receipt.Packages

// thisMachine describes the machine of a receipt; a test gives its own.
var thisMachine = receipt.ThisMachine

// agentParams are the agent's settings a receipt records.
type agentParams struct {
	URL     string        `json:"url,omitempty"`
	Timeout string        `json:"timeout,omitempty"`
	Model   *modelOptions `json:"model,omitempty"`
}

// makeReceipt is the receipt of a run of rc on tasks of s with the places
// of sources, as of now; extra names Debian packages to read besides
// those of the tasks. Started is now.
func makeReceipt(ctx context.Context, rc runConfig, s *task.Suite, tasks []*task.Task, sources []env.Source, extra []string) store.Receipt {
	r := store.Receipt{Harness: version, Suite: rc.Suite, SuiteHash: run.SuiteHash(tasks), SuiteFile: receipt.SuiteFile(s),
		Filter: rc.Filter, Tag: rc.Tag, Tasks: receipt.Tasks(s, tasks), Envs: rc.Envs,
		Agent: rc.Agent, Model: rc.Model.Model, Obs: rc.Obs, PromptHash: promptHash(rc),
		Repeat: rc.Repeat, Parallel: rc.Parallel, MaxCost: rc.MaxCost, Machine: thisMachine(), Started: time.Now().UTC()}
	p := agentParams{URL: rc.AgentURL}
	if rc.AgentTimeout > 0 {
		p.Timeout = rc.AgentTimeout.String()
	}
	if modelAgent(rc.Agent) {
		p.Model = &rc.Model
	}
	r.AgentParams, _ = json.Marshal(p)
	if rc.Judge != nil {
		r.Judge = &store.JudgeReceipt{Models: rc.Judge.Models, Provider: rc.Judge.Provider, BaseURLs: rc.Judge.BaseURLs, PromptHash: judge.PromptHash()}
	}
	if seed, ok := agentSeed(rc); ok {
		r.Seeds = map[string]int64{"agent": seed}
	}
	names := receipt.PackageNames(s, tasks)
	for _, n := range extra {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if pk, err := packagesOf(ctx, names); err == nil {
		r.Packages = pk
	}
	r.Places = placeReceipts(sources)
	return r
}

// agentSeed is the seed of the agent's random choices, for the agents
// that make some (random).
func agentSeed(rc runConfig) (int64, bool) {
	if modelAgent(rc.Agent) || interactiveAgent(rc.Agent) {
		return 0, false
	}
	f, err := agentFactory(rc, nil, io.Discard)
	if err != nil {
		return 0, false
	}
	a, err := f()
	if err != nil {
		return 0, false
	}
	if r, ok := a.(*agent.Random); ok {
		return r.Seed, true
	}
	return 0, false
}

// placeReceipts describes the places of a pool.
func placeReceipts(sources []env.Source) []store.PlaceReceipt {
	out := make([]store.PlaceReceipt, 0, len(sources))
	for _, s := range sources {
		p := store.PlaceReceipt{Name: s.Name, Types: append([]string{s.Type}, s.Also...), Remote: s.Remote}
		if s.Size != (action.Size{}) {
			p.Screen = sizeText(s.Size)
		}
		out = append(out, p)
	}
	return out
}

func sizeText(s action.Size) string { return fmt.Sprintf("%dx%d", s.W, s.H) }

// seenEnvs records the environments a run's places start, as they
// describe themselves, once per place and screen size.
type seenEnvs struct {
	mu   sync.Mutex
	list []store.SeenEnv
}

// watch makes the sources tell s what they start.
func (s *seenEnvs) watch(sources []env.Source) {
	for i := range sources {
		start, name := sources[i].Start, sources[i].Name
		sources[i].Start = func(ctx context.Context, size action.Size) (env.Env, error) {
			e, err := start(ctx, size)
			if err != nil {
				return e, err
			}
			ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
			info, ierr := e.Info(ictx)
			cancel()
			if ierr == nil {
				s.add(store.SeenEnv{Place: name, Kind: info.Kind, Screen: sizeText(info.Screen), Display: info.Display, Versions: info.Versions})
			}
			return e, nil
		}
	}
}

func (s *seenEnvs) add(e store.SeenEnv) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.list {
		if o.Place == e.Place && o.Screen == e.Screen && o.Kind == e.Kind {
			return
		}
	}
	s.list = append(s.list, e)
}

// into adds what was seen to the receipt's Seen, in order of place.
func (s *seenEnvs) into(r *store.Receipt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.list {
		if !slices.ContainsFunc(r.Seen, func(o store.SeenEnv) bool {
			return o.Place == e.Place && o.Screen == e.Screen && o.Kind == e.Kind
		}) {
			r.Seen = append(r.Seen, e)
		}
	}
	sort.SliceStable(r.Seen, func(i, j int) bool { return r.Seen[i].Place < r.Seen[j].Place })
}

// finishReceipt completes a run's receipt with the environments it
// started and, when it ran to its end (done), when it ended.
func finishReceipt(st *store.Store, seen *seenEnvs, done bool, stderr io.Writer) {
	r, err := st.Receipt()
	if err != nil {
		fmt.Fprintf(stderr, "the run's receipt is not completed: %v\n", err)
		return
	}
	if done {
		r.Finished = time.Now().UTC()
	}
	seen.into(&r)
	if err := st.SaveReceipt(r); err != nil {
		fmt.Fprintf(stderr, "the run's receipt is not completed: %v\n", err)
	}
}

// resumeReceipt notes in the receipt of a resumed run that it continues,
// with what changed since; a run made before receipts gets one now.
func resumeReceipt(ctx context.Context, st *store.Store, cur store.Receipt, stderr io.Writer) error {
	r, err := st.Receipt()
	if errors.Is(err, store.ErrNoReceipt) {
		return st.SaveReceipt(cur)
	}
	if err != nil {
		return err
	}
	cur.Packages = nil
	if names := keys(r.Packages); len(names) > 0 {
		cur.Packages, _ = packagesOf(ctx, names)
	}
	drift := receipt.Drift(r, cur)
	for _, d := range drift {
		fmt.Fprintf(stderr, "drift since the run began: %s\n", d)
	}
	r.Resumed = append(r.Resumed, store.Resumption{At: time.Now().UTC(), Harness: version, Drift: drift})
	r.Finished = time.Time{}
	return st.SaveReceipt(r)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func newVerifyCommand() *cobra.Command {
	var suite string
	var envs envOptions
	c := &cobra.Command{
		Use:   "verify RUN",
		Short: "Say whether the suite and environment still match a run's receipt",
		Long: `Verify compares the receipt of a run (see proctor report --receipt) with
the suite and the environment as they are now, and names every drift: a
task file or its content changed, an asset a task uses changed or is
gone, a task's screen size changed, a task gone from the selection or
newly selected, suite.yaml changed, a Debian package of the apps, of Xvfb
or of Chromium at another version (or no longer installed), an environment
of the pool gone, new, or at another screen size, the machine (system,
kernel, cores, memory), the harness's version, and the agent's or the
judge's prompt template.

The suite is the one the run recorded, or --suite; the pool is made
again from the --env values the run recorded, or from --env (places are
described, not started: a guest is asked for its screen). The exit status
is 0 when everything matches, 1 when something drifted.`,
		Example: `  proctor verify runs/20261122-010000-replay
  proctor verify runs/a --suite suites/desktop --env mem=1280x800`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd, args[0], suite, &envs)
		},
	}
	c.Flags().StringVar(&suite, "suite", "", "the suite to compare with (default: the one the run was made with)")
	envs.flags(c.Flags())
	return c
}

func runVerify(cmd *cobra.Command, dir, suite string, envs *envOptions) error {
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	st, err := store.OpenRun(dir)
	if err != nil {
		return err
	}
	defer st.Close()
	rec, err := st.Receipt()
	if err != nil {
		return fmt.Errorf("%w (runs made before receipts were kept have none)", err)
	}
	info, err := st.Run()
	if err != nil {
		return err
	}
	var rc runConfig
	if err := json.Unmarshal(info.Config, &rc); err != nil {
		return fmt.Errorf("%s: unreadable configuration: %v", dir, err)
	}
	s, path, err := runSuite(st, suite)
	if err != nil {
		return err
	}
	tasks, err := selectTasks(s.Tasks, rc.Filter, rc.Tag, path)
	if err != nil {
		tasks = nil // every task of the run is gone: each drift says so
	}
	var drift []string
	if len(envs.specs) == 0 {
		envs.specs = rec.Envs
	}
	rc.Envs = envs.specs
	sources, err := envs.sources(ctx, rc.Parallel, cmd.ErrOrStderr())
	if err != nil {
		drift = append(drift, fmt.Sprintf("environments: the pool cannot be made (%v)", err))
	}
	defer releaseSources(sources)
	cur := makeReceipt(ctx, rc, s, tasks, sources, keys(rec.Packages))
	if err != nil {
		cur.Places = nil
	}
	drift = append(drift, receipt.Drift(rec, cur)...)
	if len(drift) == 0 {
		fmt.Fprintf(out, "%s matches its receipt: %s, %s, %s and the machine are as they were\n", dir,
			plural(len(cur.Tasks), "task"), plural(len(cur.Packages), "package"), plural(len(cur.Places), "environment"))
		return nil
	}
	fmt.Fprintf(out, "%s: %s from its receipt:\n  %s\n", dir, plural(len(drift), "drift"), strings.Join(drift, "\n  "))
	return exitError{1}
}
