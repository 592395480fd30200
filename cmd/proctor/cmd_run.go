package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/xdesktop"
	"github.com/proctor-eval/proctor/judge"
	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/run"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/suites"
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

// DefaultSuite is the built-in suite: `proctor run` and `proctor validate`
// use it when none is given.
const DefaultSuite = "suites/desktop"

type runOptions struct {
	suite, agent, agentURL, obs, filter, tag, out, resume string
	parallel, repeat                                      int
	maxCost                                               float64
	agentTimeout                                          time.Duration
	report                                                string
	envs                                                  envOptions
	model                                                 modelOptions
	judge                                                 judgeOptions
}

// modelOptions configure the agents that call a model API; agent's type,
// whose JSON names runs record, so that --resume rebuilds the same agent.
type modelOptions = agent.ModelOptions

func newRunCommand() *cobra.Command {
	var o runOptions
	c := &cobra.Command{
		Use:   "run [--suite DIR] --agent NAME",
		Short: "Run an agent on a suite of tasks on local desktops",
		Long: `Run starts a pool of environments, runs every task of the suite (each
--repeat times) with the agent, judges each episode with the task's checks,
and records everything in a run folder: results.db (SQLite) and the
screenshots, stored once by content hash.

Each episode resets a desktop and runs the task's setup, then loops: observe
(--obs), ask the agent, perform its actions, record the step; until the agent
says DONE, FAIL or ANS, the step budget (the task's, else its level's), the
wall-time limit or --max-cost is reached, or the agent repeats the same
actions 5 times (early stop). The task's wall time bounds every call of
the episode: the agent thinking, a wait, an action; reaching it ends the
episode as uncompleted, with the reason. Faults of the desktop or of the
agent's service (5xx, no answer within --agent-timeout) are retried, then
recorded as errors, never as the agent's failure; a desktop that died is
replaced. The agent's own mistakes (an invalid action, a click off the
screen, an amount over a limit, a missing element) are told to it and the
episode goes on.

The pool is made from --env, repeatable: "local" (the default) is
--parallel local desktops; "guest=https://HOST:PORT#sha256=FINGERPRINT" is
a desktop served by "proctor guest" on another machine, pinned to the
certificate fingerprint the daemon printed, with the token from
--token-file or $PROCTOR_TOKEN; "browser" (or "browser=N") is headless
Chromium browsers for the tasks of environment.type browser; and
"vnc://HOST:PORT" is a desktop reached over VNC (see --vnc-guest). Give
several to spread a run over machines.
Each episode runs on an environment of its task's type and resolution: a
local desktop is started at the size the task asks for; a guest serves the
size it has. A guest that dies leaves the pool and its episode runs on
another.

Before anything is scored, every environment must start and answer (a wrong
token, fingerprint or API version stops the run here), every task must
have an environment of its type and size that offers what its checks and
gold need (commands, files, the accessibility tree...), and every
application the tasks launch must be installed on the local desktops. Ctrl-C or SIGTERM stops within seconds (a second
one at once); a killed run continues with --resume without redoing or
losing finished episodes, and runs again the episodes that ended in an
error.

The default suite is the folder suites/desktop when the working directory
has one, else the copy built into proctor.

Observation modes: screenshot, a11y, screenshot+a11y, som (set-of-mark).

Agents:
` + agent.Describe(),
		Example: `  proctor run --agent replay
  proctor run --suite testdata/runner --agent noop --parallel 2 --repeat 3
  proctor run --agent http --agent-url http://127.0.0.1:8750 --obs a11y
  proctor run --agent openai --model gpt-5 --obs som --demonstrations --max-cost 0.5
  proctor run --agent planner-grounder --model gpt-5 --grounder-model os-atlas --grounder-base-url http://127.0.0.1:8000/v1
  proctor run --agent human --filter dialog-later
  proctor run --agent replay --token-file token --env guest=https://10.0.0.5:7400#sha256=FINGERPRINT --env guest=https://10.0.0.6:7400#sha256=FINGERPRINT
  proctor run --resume runs/20261122-010000-replay`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd, o) },
	}
	f := c.Flags()
	f.StringVar(&o.suite, "suite", DefaultSuite, "suite folder or task file")
	f.StringVar(&o.agent, "agent", "", "agent: "+strings.Join(agent.Names(), ", "))
	f.StringVar(&o.agentURL, "agent-url", "", "URL of the agent for --agent http")
	f.StringVar(&o.obs, "obs", string(run.ObsMarks), "observation: screenshot, a11y, screenshot+a11y or som")
	f.IntVar(&o.parallel, "parallel", 1, "local desktops running episodes at once")
	o.envs.flags(f)
	f.IntVar(&o.repeat, "repeat", 1, "runs of each task")
	f.StringVar(&o.filter, "filter", "", "run only tasks whose id matches this regular expression")
	f.StringVar(&o.tag, "tag", "", "run only tasks with this tag")
	f.StringVar(&o.out, "out", "", "run folder (default runs/DATE-AGENT)")
	f.StringVar(&o.resume, "resume", "", "continue the run in this folder")
	f.Float64Var(&o.maxCost, "max-cost", 0, "dollars an episode may spend on the model (0: no limit)")
	f.DurationVar(&o.agentTimeout, "agent-timeout", agent.DefaultTimeout, "longest wait for one answer of the agent (retried as a transient fault; the task's wall time bounds every wait)")
	f.StringVar(&o.report, "report", "text", "report printed at the end: text, markdown, json or none")
	f.StringVar(&o.model.Model, "model", "", "model name (--agent openai or anthropic)")
	f.StringVar(&o.model.BaseURL, "base-url", "", "API base URL (default: the provider's)")
	f.StringVar(&o.model.APIKeyEnv, "api-key-env", "", "environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY)")
	f.StringVar(&o.model.Format, "format", "pyautogui", "output format asked of the model: pyautogui or json (--agent reflect: screenagent too)")
	f.StringVar(&o.model.Unit, "unit", "", "coordinates the model writes: px (default), ratio, k (0..1000) or smart-resize (pixels of the screenshot resized as UI-TARS's smart resize does, within --max-pixels)")
	f.IntVar(&o.model.MaxPixels, "max-pixels", 0, "pixel budget of --unit smart-resize and --grounder-unit smart-resize (default 12845056 = 16384x28x28, UI-TARS 1.5's)")
	f.StringVar(&o.model.Display, "display", "", "display WIDTHxHEIGHT declared by --agent openai-computer; screenshots are scaled to it (default: the screen)")
	f.Float64Var(&o.model.Temperature, "temperature", 0.5, "sampling temperature")
	f.Float64Var(&o.model.TopP, "top-p", 0.9, "nucleus sampling")
	f.IntVar(&o.model.MaxTokens, "max-tokens", 1500, "longest reply")
	f.IntVar(&o.model.History, "history", 3, "earlier turns kept in the prompt")
	f.BoolVar(&o.model.Demos, "demonstrations", false, "put each task's demonstrations in the prompt")
	f.StringVar(&o.model.GrounderModel, "grounder-model", "", "grounding model (--agent planner-grounder)")
	f.StringVar(&o.model.GrounderBaseURL, "grounder-base-url", "", "grounding model's API base URL (default: --base-url)")
	f.StringVar(&o.model.GrounderFormat, "grounder-format", "osatlas", "grounding model's output format: osatlas, uitars or pyautogui")
	f.StringVar(&o.model.GrounderUnit, "grounder-unit", "k", "grounding model's coordinates: px, ratio, k or smart-resize")
	f.IntVar(&o.model.MaxRetries, "max-retries", 3, "retries of one sub-task before planning again (--agent reflect)")
	f.StringVar(&o.model.Prices, "prices", "", `JSON price file {"model": {"input": 3, "output": 15}} in dollars per million tokens, of the agent's and the judges' models (default: built-in list prices)`)
	o.judge.flags(f)
	return c
}

// runConfig is what a run records so that --resume can repeat it.
type runConfig struct {
	Suite    string       `json:"suite"`
	Agent    string       `json:"agent"`
	AgentURL string       `json:"agent_url,omitempty"`
	Model    modelOptions `json:"model,omitempty"`
	Obs      string       `json:"obs"`
	Filter   string       `json:"filter,omitempty"`
	Tag      string       `json:"tag,omitempty"`
	Parallel int          `json:"parallel"`
	Repeat   int          `json:"repeat"`
	MaxCost  float64      `json:"max_cost,omitempty"`
	// AgentTimeout bounds one call to the agent; 0 in runs recorded
	// before it existed means the default.
	AgentTimeout time.Duration `json:"agent_timeout,omitempty"`
	// Envs are the --env values (never a token); a resume uses them
	// unless it is given its own.
	Envs []string `json:"envs,omitempty"`
	// Judge decides the judge checks; a resume uses it unless given its
	// own --judge-model.
	Judge *judgeOptions `json:"judge,omitempty"`
}

// agentOptions gathers what the agents may need from a run's
// configuration; in and out are the terminal of --agent human.
func agentOptions(rc runConfig, in io.Reader, out io.Writer) agent.Options {
	obs := run.ObsMode(rc.Obs)
	return agent.Options{URL: rc.AgentURL, Model: rc.Model, Timeout: rc.AgentTimeout, In: in, Out: out,
		Prompt: agent.PromptConfig{Screenshot: obs != run.ObsTree, Tree: obs != run.ObsScreenshot, Marks: obs == run.ObsMarks}}
}

func agentFactory(rc runConfig, in io.Reader, out io.Writer) (agent.Factory, error) {
	return agent.New(rc.Agent, agentOptions(rc, in, out))
}

// modelAgent reports whether the agent calls model APIs.
func modelAgent(name string) bool {
	d, ok := agent.Get(name)
	return ok && d.Model
}

// interactiveAgent reports whether a person acts (one desktop, shown).
func interactiveAgent(name string) bool {
	d, ok := agent.Get(name)
	return ok && d.Interactive
}

func promptHash(rc runConfig) string {
	return agent.PromptHashOf(rc.Agent, agentOptions(rc, nil, nil))
}

// suitePath resolves a suite argument: a folder or file on disk wins; a
// built-in suite's path (suites/desktop, the default, or suites/web), when
// the working directory has no such folder, is the one built into the
// binary, written out to the user's cache.
func suitePath(path string) (string, error) {
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return path, nil // there, or unreadable: the loader says why
	}
	dir, name := filepath.Split(filepath.Clean(path))
	if filepath.Clean(dir) == "suites" && slices.Contains(suites.Names(), name) {
		return suites.Dir(name)
	}
	return path, nil
}

// selectTasks keeps the tasks whose id matches filter and that carry tag.
func selectTasks(all []*task.Task, filter, tag string) ([]*task.Task, error) {
	re, err := regexp.Compile(filter)
	if err != nil {
		return nil, fmt.Errorf("--filter: %v", err)
	}
	var kept []*task.Task
	for _, t := range all {
		if re.MatchString(t.ID) && (tag == "" || hasTag(t, tag)) {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return nil, errors.New("no task selected (check --filter and --tag)")
	}
	return kept, nil
}

// preflight refuses tasks this runner cannot run and apps that are not
// installed, before anything is scored.
// The runner's own pre-flight then refuses tasks that no environment of
// the pool can run.
func preflight(s *task.Suite, tasks []*task.Task, local bool) error {
	var problems []string
	missing := map[string]string{}
	for _, t := range tasks {
		if !local || t.Environment.TypeOrDefault() != "x11" {
			continue // only local desktops' applications can be looked for here
		}
		var apps []string
		for _, st := range t.Setup {
			if st.Launch != nil {
				apps = append(apps, st.Launch.App)
			}
			if st.Open != nil && st.Open.App != "" {
				apps = append(apps, st.Open.App)
			}
		}
		for _, a := range apps {
			spec, ok := s.App(a)
			if !ok {
				continue // lint reports it
			}
			bin := strings.Fields(spec.Command)[0]
			if _, err := xdesktop.LookPath(bin); err != nil {
				missing[bin] = spec.Package
			}
		}
	}
	for bin, pkg := range missing {
		problems = append(problems, fmt.Sprintf("%s is not installed (apt-get install %s)", bin, pkg))
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		return fmt.Errorf("pre-flight refused the run:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

func runRun(cmd *cobra.Command, o runOptions) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	var rc runConfig
	dir := o.out
	var st *store.Store
	var err error
	if o.resume != "" {
		dir = o.resume
		if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err != nil {
			return fmt.Errorf("--resume %s: no run there (%v)", dir, err)
		}
		if st, err = store.Open(dir); err != nil {
			return err
		}
		prev, err := st.Run()
		if err != nil {
			st.Close()
			return err
		}
		if err := json.Unmarshal(prev.Config, &rc); err != nil {
			st.Close()
			return fmt.Errorf("--resume %s: unreadable configuration: %v", dir, err)
		}
	} else {
		rc = runConfig{Suite: o.suite, Agent: o.agent, AgentURL: o.agentURL, Obs: o.obs, Filter: o.filter, Tag: o.tag,
			Parallel: o.parallel, Repeat: o.repeat, MaxCost: o.maxCost, AgentTimeout: o.agentTimeout, Envs: o.envs.specs}
		if modelAgent(o.agent) {
			rc.Model = o.model
		}
		if interactiveAgent(o.agent) {
			rc.Parallel = 1 // one person, one desktop
		}
	}
	if o.judge.set() {
		o.judge.Prices = o.model.Prices
		rc.Judge = &o.judge
	}
	factory, err := agentFactory(rc, cmd.InOrStdin(), stderr)
	if err != nil {
		return err
	}
	obs := run.ObsMode(rc.Obs)
	valid := false
	for _, m := range run.ObsModes {
		valid = valid || m == obs
	}
	if !valid {
		return fmt.Errorf("unknown observation mode %q (screenshot, a11y, screenshot+a11y, som)", rc.Obs)
	}
	suiteDir, err := suitePath(rc.Suite)
	if err != nil {
		return err
	}
	s, ps := task.Load(suiteDir)
	if len(ps) > 0 {
		return fmt.Errorf("the suite has problems (see proctor tasks lint %s):\n%w", rc.Suite, ps)
	}
	tasks, err := selectTasks(s.Tasks, rc.Filter, rc.Tag)
	if err != nil {
		return err
	}
	if len(o.envs.specs) == 0 {
		o.envs.specs = rc.Envs
	}
	if err := preflight(s, tasks, o.envs.hasLocal()); err != nil {
		return err
	}
	if st == nil && dir == "" {
		dir = filepath.Join("runs", time.Now().Format("20060102-150405")+"-"+rc.Agent)
	}
	var jm judge.Model
	if rc.Judge != nil {
		if jm, err = rc.Judge.model(runJudgeCache(dir), false); err != nil {
			if st != nil {
				st.Close()
			}
			return err
		}
	}
	sources, err := o.envs.sources(ctx, rc.Parallel, stderr)
	if err != nil {
		return err
	}
	if st == nil {
		if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err == nil {
			return fmt.Errorf("%s already holds a run: continue it with --resume %s, or choose another --out", dir, dir)
		}
		if st, err = store.Open(dir); err != nil {
			return err
		}
		cb, _ := json.Marshal(rc)
		if err := st.SetRun(store.Run{ID: filepath.Base(dir), Started: time.Now().UTC(), Harness: version, Suite: rc.Suite,
			SuiteHash: run.SuiteHash(tasks), Agent: rc.Agent, Model: rc.Model.Model, PromptHash: promptHash(rc),
			ObsMode: rc.Obs, Resolution: task.DefaultResolution,
			Parallel: rc.Parallel, Repeat: rc.Repeat, Planned: len(tasks) * rc.Repeat, Config: cb}); err != nil {
			st.Close()
			return err
		}
	}
	defer st.Close()
	names := make([]string, len(sources))
	for i, src := range sources {
		names[i] = src.Name
		if interactiveAgent(rc.Agent) {
			start := src.Start
			sources[i].Start = func(ctx context.Context, size action.Size) (env.Env, error) {
				e, err := start(ctx, size)
				if d, ok := e.(*xdesktop.Desktop); ok && err == nil {
					fmt.Fprintf(stderr, "the desktop is display %s: view it with `x11vnc -display %s -auth %s -localhost -forever` and a VNC viewer on 127.0.0.1:5900\n",
						d.Display(), d.Display(), d.XAuthority())
				}
				return e, err
			}
		}
	}
	fmt.Fprintf(stderr, "run %s: %d tasks x %d on %s, agent %s, observation %s\n", dir, len(tasks), rc.Repeat, strings.Join(names, ", "), rc.Agent, rc.Obs)
	agentTimeout := rc.AgentTimeout
	if interactiveAgent(rc.Agent) {
		agentTimeout = 1000 * time.Hour // a person takes the time the task's wall time gives
	}
	_, err = run.Run(ctx, run.Config{
		Suite: s, Tasks: tasks, Agent: factory, AgentName: rc.Agent, Obs: obs, Sources: sources, Repeat: rc.Repeat,
		Lost: func(name, reason string) {
			fmt.Fprintf(stderr, "lost environment %s: %s\n", name, reason)
			if err := st.SaveLost(store.Lost{Name: name, Reason: reason, At: time.Now()}); err != nil {
				fmt.Fprintf(stderr, "the run folder does not record it: %v\n", err)
			}
		},
		Store: st, Harness: version, CostBudget: rc.MaxCost, AgentTimeout: agentTimeout, Progress: stderr, Judge: jm,
	})
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "interrupted; continue with: proctor run --resume %s\n", dir)
		return exitError{130}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "run folder: %s\n", dir)
	if o.report == "none" {
		return nil
	}
	r, err := report.Load(dir)
	if err != nil {
		return err
	}
	return report.Write(cmd.OutOrStdout(), []*report.Report{r}, o.report)
}
