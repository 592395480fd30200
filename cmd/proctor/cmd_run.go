package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/provider"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/rescore"
	"github.com/proctor-eval/proctor/run"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/suites"
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// DefaultSuite is the built-in suite: `proctor run` and `proctor validate`
// use it when none is given.
const DefaultSuite = "suites/desktop"

type runOptions struct {
	suite, agent, agentURL, obs, filter, tag, out, resume string
	parallel, repeat                                      int
	controlsTolerance                                     int
	maxCost                                               float64
	agentSeed                                             int64
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
		Use:   "run [SUITE] --agent NAME",
		Short: "Run an agent on a suite of tasks in the pool's environments (--env)",
		Long: `Run starts a pool of environments, runs every task of the suite (each
--repeat times) with the agent, judges each episode with the task's checks,
and records everything in a run folder: results.db (SQLite) and the
screenshots, stored once by content hash. The folder's receipt says exactly
what was run (task and asset hashes, package versions, environments, agent,
judge, machine): proctor report --receipt prints it, proctor verify compares
it with today's suite and environment.

The suite is a folder or task file, given as the argument or with --suite
(the same).

Each episode resets an environment and runs the task's setup, then loops: observe
(--obs), ask the agent, perform its actions, record the step; until the agent
says DONE, FAIL or ANS, the step budget (the task's, else its level's), the
wall-time limit or --max-cost is reached, or the agent repeats the same
actions 5 times (early stop). The task's wall time bounds every call of
the episode: the agent thinking, a wait, an action; reaching it ends the
episode as uncompleted, with the reason. Faults of the environment or of the
agent's service (5xx, no answer within --agent-timeout, a refused
connection) are retried, each retry told in the progress, then recorded as
errors, never as the agent's failure; an environment that died is started
again. The agent's own mistakes (an invalid action, a click off the
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
gold need (commands, files, the accessibility tree...), every
application the tasks launch must be installed on the local desktops, and
the URL of --agent http must accept connections. When tasks have judge
checks, the judge must answer a test question and, where the suite has
judge controls (SUITE/` + rescore.ControlsDir + `/, from proctor validate --record-verdicts:
judge checks of its validation with a known verdict), get no more than
--judge-controls-tolerance of them wrong (default 0); a judge refused there
is told the controls it got wrong, and a judge that passes has its answers
kept with the run, which proctor report shows. A run refused there
leaves no run folder. Ctrl-C or SIGTERM stops within seconds (a second
one at once); a killed run continues with --resume without redoing or
losing finished episodes, and runs again the episodes that ended in an
error. A resumed run keeps the suite, selection, agent and settings it
recorded and refuses flags that would change them; it takes --env (and
--token-file, --vnc-*, --reset-command), --report and a judge
(--judge-model and its flags, --prices).

The default suite is the folder suites/desktop when the working directory
has one, else the copy built into proctor.

Observation modes: screenshot, a11y, screenshot+a11y, som (set-of-mark).

Agents:
` + agent.Describe(),
		Example: `  proctor run --agent replay
  proctor run testdata/runner --agent noop --parallel 2 --repeat 3
  proctor run suites/web --env browser --agent replay
  proctor run --agent http --agent-url http://127.0.0.1:8750 --obs a11y
  proctor run --agent openai --model gpt-5 --obs som --demonstrations --max-cost 0.5
  proctor run --agent planner-grounder --model gpt-5 --grounder-model os-atlas --grounder-base-url http://127.0.0.1:8000/v1
  proctor run --agent human --filter dialog-later
  proctor run --agent replay --token-file token --env guest=https://10.0.0.5:7400#sha256=FINGERPRINT --env guest=https://10.0.0.6:7400#sha256=FINGERPRINT
  proctor run --resume runs/20261122-010000-replay`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			suite, err := suiteArg(cmd, args, o.suite)
			if err != nil {
				return err
			}
			o.suite = suite
			return runRun(cmd, o, args)
		},
	}
	f := c.Flags()
	f.StringVar(&o.suite, "suite", DefaultSuite, "suite folder or task file (or give it as the argument)")
	f.StringVar(&o.agent, "agent", "", "agent: "+strings.Join(agent.Names(), ", "))
	f.StringVar(&o.agentURL, "agent-url", "", "URL of the agent for --agent http")
	f.StringVar(&o.obs, "obs", string(run.ObsMarks), "observation: screenshot, a11y, screenshot+a11y or som")
	f.IntVar(&o.parallel, "parallel", 1, parallelHelp)
	o.envs.flags(f)
	f.IntVar(&o.repeat, "repeat", 1, "runs of each task")
	f.StringVar(&o.filter, "filter", "", "run only tasks whose id matches this regular expression, or with @FILE the tasks FILE lists,\none id a line (proctor tasks select writes such files)")
	f.StringVar(&o.tag, "tag", "", "run only tasks with this tag")
	f.StringVar(&o.out, "out", "", "run folder (default runs/DATE-AGENT)")
	f.StringVar(&o.resume, "resume", "", "continue the run in this folder")
	f.Float64Var(&o.maxCost, "max-cost", 0, "dollars an episode may spend on the model (0: no limit)")
	f.Int64Var(&o.agentSeed, "agent-seed", agent.DefaultSeed, "seed of --agent random: each episode draws from its own seed, made of this one, the task and the repeat\n(repeats differ; the same seed repeats a run's actions)")
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
	controlsToleranceFlag(f, &o.controlsTolerance)
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
	// AgentSeed seeds the random agent; 0 in runs recorded before it
	// existed means agent.DefaultSeed.
	AgentSeed int64 `json:"agent_seed,omitempty"`
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
	return agent.Options{URL: rc.AgentURL, Model: rc.Model, Timeout: rc.AgentTimeout, In: in, Out: out, Seed: rc.AgentSeed,
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

// parallelHelp is the help of run's and validate's --parallel.
const parallelHelp = "environments running episodes at once: the desktops of --env local and the browsers of --env browser\n" +
	"(local=N or browser=N sets it for one); each guest, VNC desktop or Android device is one"

// suiteArg is the suite a command was given: its argument or its --suite
// flag (the same; both given must agree), else the flag's default.
func suiteArg(cmd *cobra.Command, args []string, flag string) (string, error) {
	if len(args) == 0 {
		return flag, nil
	}
	if cmd.Flags().Changed("suite") && filepath.Clean(flag) != filepath.Clean(args[0]) {
		return "", fmt.Errorf("two suites given: %s as the argument and %s with --suite; give one", args[0], flag)
	}
	return args[0], nil
}

// resumeHonours are the flags of run that a resumed run takes: where it
// runs, how it reports, and a judge given anew. The rest choose or
// configure the run, which keeps what it recorded.
var resumeHonours = map[string]bool{"resume": true, "env": true, "token-file": true, "vnc-password-file": true,
	"vnc-guest": true, "reset-command": true, "report": true, "judge-controls-tolerance": true}

// resumeJudgeFlags configure a judge, which a resume takes with
// --judge-model (--prices prices its model); without it, they are unused.
var resumeJudgeFlags = map[string]bool{"judge-model": true, "judge-provider": true, "judge-base-url": true,
	"judge-api-key-env": true, "judge-timeout": true, "prices": true}

// resumeTakes refuses the flags that a resumed run would ignore, naming
// them: the run keeps the selection and settings rc it recorded, so a
// flag (or the suite argument) is refused unless it is one the resume
// takes or it gives the recorded value again.
func resumeTakes(cmd *cobra.Command, args []string, o runOptions, rc runConfig) error {
	m, r := o.model, rc.Model
	same := map[string]bool{
		"suite": filepath.Clean(o.suite) == filepath.Clean(rc.Suite), "agent": o.agent == rc.Agent,
		"agent-url": o.agentURL == rc.AgentURL, "obs": o.obs == rc.Obs, "filter": o.filter == rc.Filter, "tag": o.tag == rc.Tag,
		"parallel": o.parallel == rc.Parallel, "repeat": o.repeat == rc.Repeat, "max-cost": o.maxCost == rc.MaxCost,
		"agent-timeout": o.agentTimeout == cmp.Or(rc.AgentTimeout, agent.DefaultTimeout),
		"agent-seed":    o.agentSeed == cmp.Or(rc.AgentSeed, agent.DefaultSeed),
		"out":           filepath.Clean(o.out) == filepath.Clean(o.resume),
		"model":         m.Model == r.Model, "base-url": m.BaseURL == r.BaseURL, "api-key-env": m.APIKeyEnv == r.APIKeyEnv,
		"format": m.Format == r.Format, "unit": m.Unit == r.Unit, "max-pixels": m.MaxPixels == r.MaxPixels,
		"display": m.Display == r.Display, "temperature": m.Temperature == r.Temperature, "top-p": m.TopP == r.TopP,
		"max-tokens": m.MaxTokens == r.MaxTokens, "history": m.History == r.History, "demonstrations": m.Demos == r.Demos,
		"grounder-model": m.GrounderModel == r.GrounderModel, "grounder-base-url": m.GrounderBaseURL == r.GrounderBaseURL,
		"grounder-format": m.GrounderFormat == r.GrounderFormat, "grounder-unit": m.GrounderUnit == r.GrounderUnit,
		"max-retries": m.MaxRetries == r.MaxRetries, "prices": m.Prices == r.Prices,
	}
	judge := cmd.Flags().Changed("judge-model")
	var ignored []string
	if len(args) > 0 && filepath.Clean(args[0]) != filepath.Clean(rc.Suite) {
		ignored = append(ignored, "the suite argument "+args[0])
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if !resumeHonours[f.Name] && !(judge && resumeJudgeFlags[f.Name]) && !same[f.Name] {
			ignored = append(ignored, "--"+f.Name)
		}
	})
	if len(ignored) == 0 {
		return nil
	}
	return fmt.Errorf("--resume %s continues the run with the selection and settings it recorded (suite, --filter, --tag, agent, --parallel, --repeat...) "+
		"and does not take what would change them: %s; leave them out, or start a new run with --out", o.resume, strings.Join(ignored, ", "))
}

// describeSuite names a suite in messages: its path, or the built-in
// suite when the path resolved to the copy built into proctor.
func describeSuite(arg, dir string) string {
	if filepath.Clean(arg) != filepath.Clean(dir) {
		return "the built-in " + filepath.Base(filepath.Clean(arg)) + " suite"
	}
	return arg
}

// selectTasks keeps the tasks whose id matches filter and that carry tag;
// suite names the suite searched, for the message when none is kept.
func selectTasks(all []*task.Task, filter, tag, suite string) ([]*task.Task, error) {
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
		var by []string
		if filter != "" {
			by = append(by, fmt.Sprintf("--filter %q", filter))
		}
		if tag != "" {
			by = append(by, fmt.Sprintf("--tag %q", tag))
		}
		if len(by) == 0 {
			return nil, fmt.Errorf("no task selected: %s holds no task", suite)
		}
		return nil, fmt.Errorf("no task selected: none of the %s of %s matches %s (check them, or give another suite)",
			plural(len(all), "task"), suite, strings.Join(by, " and "))
	}
	return kept, nil
}

// plural writes n and the noun, in the plural unless n is 1 (a noun in
// -y takes -ies, any other an s).
func plural(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "y"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// resolution is what a run records as its screen size: the size its
// tasks ask for (each episode runs at its task's), or the distinct sizes,
// largest first, when they differ.
func resolution(tasks []*task.Task) string {
	seen := map[action.Size]bool{}
	var sizes []action.Size
	for _, t := range tasks {
		sz, err := t.Environment.Size()
		if err != nil || seen[sz] {
			continue // lint refuses a bad resolution
		}
		seen[sz] = true
		sizes = append(sizes, sz)
	}
	if len(sizes) == 0 {
		return task.DefaultResolution
	}
	sort.Slice(sizes, func(a, b int) bool {
		if sa, sb := sizes[a].W*sizes[a].H, sizes[b].W*sizes[b].H; sa != sb {
			return sa > sb
		}
		return sizes[a].W > sizes[b].W
	})
	out := make([]string, len(sizes))
	for i, sz := range sizes {
		out[i] = fmt.Sprintf("%dx%d", sz.W, sz.H)
	}
	return strings.Join(out, ", ")
}

// agentDialTimeout bounds the pre-flight's connection to an http agent.
var agentDialTimeout = 5 * time.Second

// agentProblems is the pre-flight of the agent: an http agent's URL must
// accept connections.
func agentProblems(ctx context.Context, rc runConfig) []string {
	if rc.Agent != "http" {
		return nil
	}
	if err := dialAgent(ctx, rc.AgentURL); err != nil {
		return []string{fmt.Sprintf("the agent at %s (--agent-url) does not accept connections: %v", rc.AgentURL, err)}
	}
	return nil
}

// dialAgent opens and closes a TCP connection to the host of the URL.
func dialAgent(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	d := net.Dialer{Timeout: agentDialTimeout}
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return err
	}
	return c.Close()
}

// preflight refuses tasks this runner cannot run and apps that are not
// installed (as the providers of envs find them), before anything is
// scored or written; problems found elsewhere (the agent's) are given with
// them.
// The runner's own pre-flight then refuses tasks that no environment of
// the pool can run.
func preflight(s *task.Suite, tasks []*task.Task, envs *envOptions, problems ...string) error {
	problems = append(envs.preflight(s, tasks), problems...)
	sort.Strings(problems)
	if len(problems) > 0 {
		return fmt.Errorf("pre-flight refused the run:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

func runRun(cmd *cobra.Command, o runOptions, args []string) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	var rc runConfig
	dir := o.out
	var st *store.Store
	var err error
	if o.filter, err = filterPattern(o.filter); err != nil {
		return err
	}
	if o.resume != "" {
		dir = o.resume
		if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err != nil {
			return fmt.Errorf("--resume %s: no run there (%v)", dir, err)
		}
		if st, err = store.Open(dir); err != nil {
			return err
		}
		defer st.Close()
		prev, err := st.Run()
		if err != nil {
			return err
		}
		if err := json.Unmarshal(prev.Config, &rc); err != nil {
			return fmt.Errorf("--resume %s: unreadable configuration: %v", dir, err)
		}
		if err := resumeTakes(cmd, args, o, rc); err != nil {
			return err
		}
	} else {
		rc = runConfig{Suite: o.suite, Agent: o.agent, AgentURL: o.agentURL, Obs: o.obs, Filter: o.filter, Tag: o.tag,
			Parallel: o.parallel, Repeat: o.repeat, MaxCost: o.maxCost, AgentTimeout: o.agentTimeout, Envs: o.envs.specs}
		if o.agent == "random" {
			rc.AgentSeed = o.agentSeed
		}
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
	tasks, err := selectTasks(s.Tasks, rc.Filter, rc.Tag, describeSuite(rc.Suite, suiteDir))
	if err != nil {
		return err
	}
	if len(o.envs.specs) == 0 {
		o.envs.specs = rc.Envs
	}
	if err := preflight(s, tasks, &o.envs, agentProblems(ctx, rc)...); err != nil {
		return err
	}
	if st == nil && dir == "" {
		dir = filepath.Join("runs", time.Now().Format("20060102-150405")+"-"+rc.Agent)
	}
	var jm judgment.Model
	var controls []store.JudgeControl
	if rc.Judge != nil {
		if jm, err = rc.Judge.model(runJudgeCache(dir), false); err != nil {
			return err
		}
		if err := judgeAnswers(ctx, jm, tasks); err != nil {
			return err
		}
		if judged(tasks) {
			if controls, err = askControls(ctx, jm, s.Dir, o.controlsTolerance, stderr); err != nil {
				return fmt.Errorf("pre-flight refused the run:\n  %w", err)
			}
		}
	}
	if err := agentAnswers(ctx, factory, rc.Agent); err != nil {
		return err
	}
	o.envs.episodes = len(tasks) * rc.Repeat
	sources, err := o.envs.sources(ctx, rc.Parallel, stderr)
	if err != nil {
		return err
	}
	defer releaseSources(sources)
	// discard removes what a new run wrote, when it was refused before
	// any episode, so that the same command can be given again.
	discard := func() {}
	if st == nil {
		if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err == nil {
			return fmt.Errorf("%s already holds a run: continue it with --resume %s, or choose another --out", dir, dir)
		}
		made := firstMissing(dir)
		if st, err = store.Open(dir); err != nil {
			return err
		}
		defer st.Close()
		discard = func() {
			st.Close()
			removeRunFolder(dir, made)
		}
		cb, _ := json.Marshal(rc)
		if err := st.SetRun(store.Run{ID: filepath.Base(dir), Started: time.Now().UTC(), Harness: version, Suite: rc.Suite,
			SuiteHash: run.SuiteHash(tasks), Agent: rc.Agent, Model: rc.Model.Model, PromptHash: promptHash(rc),
			ObsMode: rc.Obs, Resolution: resolution(tasks),
			Parallel: rc.Parallel, Repeat: rc.Repeat, Planned: len(tasks) * rc.Repeat, Config: cb}); err != nil {
			discard()
			return err
		}
		if err := st.SaveReceipt(makeReceipt(ctx, rc, s, tasks, sources, nil)); err != nil {
			discard()
			return err
		}
	} else {
		now := rc
		now.Envs = o.envs.specs
		if err := resumeReceipt(ctx, st, makeReceipt(ctx, now, s, tasks, sources, nil), stderr); err != nil {
			return err
		}
	}
	if controls != nil {
		if err := st.SaveJudgeControls(jm.Name(), controls); err != nil {
			discard()
			return err
		}
	}
	var seen seenEnvs
	seen.watch(sources)
	names := make([]string, len(sources))
	for i, src := range sources {
		names[i] = src.Name
	}
	// The run's line comes with the first thing the run prints, after
	// the runner's pre-flight: a run it refuses says only why.
	var headOnce sync.Once
	out := headedWriter{w: stderr, head: func() {
		headOnce.Do(func() {
			fmt.Fprintf(stderr, "run %s: %s x %d on %s, agent %s, observation %s\n", dir, plural(len(tasks), "task"), rc.Repeat, strings.Join(names, ", "), rc.Agent, rc.Obs)
		})
	}}
	for i, src := range sources {
		if interactiveAgent(rc.Agent) {
			start := src.Start
			sources[i].Start = func(ctx context.Context, size action.Size) (env.Env, error) {
				e, err := start(ctx, size)
				if w, ok := e.(provider.Watchable); ok && err == nil {
					fmt.Fprintln(out, w.Watch())
				}
				return e, err
			}
		}
	}
	agentTimeout := rc.AgentTimeout
	if interactiveAgent(rc.Agent) {
		agentTimeout = 1000 * time.Hour // a person takes the time the task's wall time gives
	}
	_, err = run.Run(ctx, run.Config{
		Suite: s, Tasks: tasks, Agent: factory, AgentName: rc.Agent, Obs: obs, Sources: sources, Repeat: rc.Repeat,
		Lost: func(l store.Lost) {
			fmt.Fprintf(out, "lost environment %s: %s\n", l.Name, l.Reason)
			if err := st.SaveLost(l); err != nil {
				fmt.Fprintf(out, "the run folder does not record it: %v\n", err)
			}
		},
		Store: st, Harness: version, CostBudget: rc.MaxCost, AgentTimeout: agentTimeout, Progress: out, Judge: jm,
	})
	if errors.Is(err, context.Canceled) {
		finishReceipt(st, &seen, false, stderr)
		fmt.Fprintf(stderr, "interrupted; continue with: proctor run --resume %s\n", dir)
		return exitError{130}
	}
	if err != nil {
		// A run refused before any episode (its pre-flight) leaves nothing.
		if rs, rerr := st.Results(); rerr == nil && len(rs) == 0 {
			discard()
		} else {
			finishReceipt(st, &seen, false, stderr)
		}
		return withFlags(err)
	}
	out.head()
	finishReceipt(st, &seen, true, stderr)
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

// headedWriter writes to w after calling head, which prints a header
// once, before the first line.
type headedWriter struct {
	w    io.Writer
	head func()
}

func (h headedWriter) Write(p []byte) (int, error) {
	h.head()
	return h.w.Write(p)
}

// firstMissing is the highest folder of dir's path that does not exist
// (the first a run into dir creates), or "" when dir exists.
func firstMissing(dir string) string {
	missing := ""
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return missing
		}
		missing = p
		if filepath.Dir(p) == p {
			return missing
		}
	}
}

// removeRunFolder removes what a new run wrote in dir: dir, when it
// made it, and the folders above up to made, the highest it created, when
// they are empty (another run may have begun there since); when dir was
// there before, the run's files.
func removeRunFolder(dir, made string) {
	if made != "" {
		os.RemoveAll(dir)
		for p := filepath.Dir(filepath.Clean(dir)); len(p) >= len(made) && p != filepath.Dir(p); p = filepath.Dir(p) {
			if os.Remove(p) != nil {
				break
			}
		}
		return
	}
	for _, f := range []string{store.DBFile, store.DBFile + "-wal", store.DBFile + "-shm"} {
		os.Remove(filepath.Join(dir, f))
	}
	os.Remove(filepath.Join(dir, store.ShotDir)) // when empty
	os.Remove(runJudgeCache(dir))
}

// preflightFixes say, in the command's flags, what fixes a problem of a
// run's pre-flight.
var preflightFixes = map[error]string{
	run.ErrNoJudge:      "give --judge-model (and --judge-provider, --judge-base-url where needed)",
	run.ErrNeedsTree:    "use --obs screenshot",
	run.ErrLocalService: "run it on a local environment (--env local or --env browser)",
}

// withFlags adds to the problems of a refused pre-flight the flags that
// fix them; other errors are returned as they are.
func withFlags(err error) error {
	var pe *run.PreflightError
	if !errors.As(err, &pe) {
		return err
	}
	out := &run.PreflightError{Problems: slices.Clone(pe.Problems)}
	for i, p := range out.Problems {
		if fix, ok := preflightFixes[p.Kind]; ok {
			out.Problems[i].Text += ": " + fix
		}
	}
	return out
}

// judged reports whether some of the tasks have judge checks.
func judged(tasks []*task.Task) bool {
	return slices.ContainsFunc(tasks, func(t *task.Task) bool {
		c, err := check.CompileAll(t.Checks, t.Milestones)
		return err == nil && c.Judged()
	})
}

// judgeProbeTimeout bounds the pre-flight's question to the judge, and
// to the agent's models.
const judgeProbeTimeout = time.Minute

// agentAnswers asks the models of an agent that calls model endpoints
// (agent.Prober) one small question each before the run, so that an
// endpoint that cannot be reached refuses the run before any episode.
func agentAnswers(ctx context.Context, factory agent.Factory, name string) error {
	a, err := factory()
	if err != nil {
		return err
	}
	p, ok := a.(agent.Prober)
	if !ok {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, judgeProbeTimeout)
	defer cancel()
	if err := p.Probe(pctx); err != nil {
		return fmt.Errorf("pre-flight refused the run:\n  the %s agent's model does not answer a test question: %v (check --model, --base-url and the API key)", name, err)
	}
	return nil
}

// judgeAnswers asks jm one small question before a run whose tasks have
// judge checks, so that a judge that cannot be reached (a wrong URL, key
// or model) refuses the run before any episode, instead of making every
// episode an error.
func judgeAnswers(ctx context.Context, jm judgment.Model, tasks []*task.Task) error {
	if !judged(tasks) {
		return nil
	}
	jctx, cancel := context.WithTimeout(ctx, judgeProbeTimeout)
	defer cancel()
	_, err := jm.Judge(jctx, judgment.Request{Expectation: `The note says "ready".`,
		Evidence: []judgment.Part{judgment.Text("a note", "ready")}})
	if err != nil {
		return fmt.Errorf("pre-flight refused the run:\n  the judge %s does not answer a test question: %v (check --judge-model, --judge-base-url and the API key)", jm.Name(), err)
	}
	return nil
}
