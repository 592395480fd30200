package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/episode"
	"github.com/proctor-eval/proctor/service"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/proctor-eval/proctor/task/probetext"
	"github.com/spf13/cobra"
)

type probeOptions struct {
	gold, asJSON bool
	envs         envOptions
}

func newProbeCommand() *cobra.Command {
	var o probeOptions
	c := &cobra.Command{
		Use:   "probe SUITE TASK PROBE",
		Short: "Print what a probe reads on a desktop prepared by a task's setup",
		Long: `Probe resets a desktop (--env; a local one by default) with the task's setup,
as a run does, replays the task's gold solution first with --gold, and prints
the value a check's probe reads there, whole.

PROBE is written as in a task file's probe: a mapping whose braces may be
left out, in YAML or JSON: 'file: ~/out.txt', '{file: ~/sales.ods, cell: B7}',
'file: ~/canvas.png, read: image', 'element: {role: text, app: mousepad}',
'command: ls ~', 'window: true', 'clipboard: true', 'answer: true'. It is
checked as the task linter checks a probe, and an error names the field.

The value is what the checks compare: a file's content, a command's standard
output, an element's text (else its name), the window titles one a line, the
clipboard's text, the agent's answer (after --gold). A file read as ods, odt
or image is JSON, printed indented (--json gives the value as the checks see
it). When there is nothing to read (no such file or element, a command that
exits non-zero, no answer) or a file does not decode, probe says so on
standard error and exits 1.`,
		Example: `  proctor probe suites/desktop editor-write-1 'file: ~/draft1.txt' --gold
  proctor probe suites/desktop gimp-draw-horizontal-line 'file: ~/canvas.png, read: image' --gold
  proctor probe suites/desktop sheet-total-q1 'file: ~/sales.ods, cell: B7'
  proctor probe suites/desktop editor-write-1 'element: {app: mousepad, role: text}' --json`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProbe(cmd.Context(), o, args[0], args[1], args[2], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	c.Flags().BoolVar(&o.gold, "gold", false, "replay the task's gold solution before probing")
	c.Flags().BoolVar(&o.asJSON, "json", false, `print {"task", "probe", "gold", "found", "value"} as JSON, the value exactly as the checks see it`)
	o.envs.flags(c.Flags())
	return c
}

// probeReport is what --json prints.
type probeReport struct {
	Task  string      `json:"task"`
	Probe check.Probe `json:"probe"`
	Gold  bool        `json:"gold"`
	Found bool        `json:"found"`
	Value string      `json:"value"`
	// Reason says why nothing was read, or why the file did not decode.
	Reason string `json:"reason,omitempty"`
}

func runProbe(ctx context.Context, o probeOptions, suite, id, src string, stdout, stderr io.Writer) error {
	p, err := probetext.Parse(src)
	if err != nil {
		return err
	}
	suiteDir, err := suitePath(suite)
	if err != nil {
		return err
	}
	s, ps := task.Load(suiteDir)
	if s == nil {
		return ps
	}
	t, ok := s.Task(id)
	if !ok {
		if len(ps) > 0 {
			return fmt.Errorf("no task %q loaded; the suite has problems:\n%w", id, ps)
		}
		return fmt.Errorf("no task %q in %s (see proctor tasks list %s)", id, suite, suite)
	}
	if len(ps) > 0 {
		// An author probes while writing checks: other problems of the
		// suite do not stop it, but are mentioned.
		fmt.Fprintf(stderr, "note: the suite has %s (see proctor tasks lint %s)\n", plural(len(ps), "problem"), suite)
	}
	if err := preflight(s, []*task.Task{t}, &o.envs); err != nil {
		return err
	}
	sources, err := o.envs.sources(ctx, 1, stderr)
	if err != nil {
		return err
	}
	defer releaseSources(sources)
	prep, err := prepareDesktop(ctx, s, t, o.gold, sources, stderr)
	if err != nil {
		return err
	}
	defer prep.close()
	rctx, cancel := context.WithTimeout(ctx, episode.DefaultJudgeTimeout)
	defer cancel()
	val, found, reason, err := readProbe(rctx, *p, prep.ev)
	if err != nil {
		return err
	}
	if o.asJSON {
		b, _ := json.MarshalIndent(probeReport{Task: t.ID, Probe: *p, Gold: o.gold, Found: found, Value: val, Reason: reason}, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else if found {
		out := val
		if p.Read == "ods" || p.Read == "odt" || p.Read == "image" {
			if out, err = probetext.IndentJSON(val); err != nil {
				return fmt.Errorf("%s: %v", p, err)
			}
		}
		fmt.Fprint(stdout, out)
		if !strings.HasSuffix(out, "\n") {
			fmt.Fprintln(stdout)
		}
	}
	if !found {
		fmt.Fprintf(stderr, "%s: %s\n", p, reason)
		return exitError{1}
	}
	return nil
}

// prepared is an environment as an episode of a task left it, with what
// its checks would read.
type prepared struct {
	ev    *episode.Evidence
	close func()
}

// prepareDesktop resets an environment of the pool with the task's setup
// through package episode, as an episode of a run does, replaying the gold
// solution with gold or saying DONE at once without it, and returns the
// environment as the episode left it, with the trajectory its checks saw
// and the suite's command services still running.
func prepareDesktop(ctx context.Context, s *task.Suite, t *task.Task, gold bool, sources []env.Source, stderr io.Writer) (*prepared, error) {
	var closers []func()
	p := &prepared{close: func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}}
	fail := func(err error) (*prepared, error) {
		p.close()
		return nil, err
	}
	src, ok := sourceFor(sources, t)
	if !ok {
		return nil, fmt.Errorf("%s: no environment of the pool serves its %s environment", t.ID, t.Environment.TypeOrDefault())
	}
	var svc *service.Instances
	var static []string // what a browser reaches the static services at
	if len(s.Services) > 0 {
		set, err := service.Start(ctx, s.Dir, s.Services)
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() { set.Close() })
		filled, err := set.Fill([]*task.Task{t})
		if err != nil {
			return fail(err)
		}
		t = filled[0]
		static = set.Reachable()
		svc = service.NewInstances(s)
		closers = append(closers, func() { svc.Close() })
	}
	size, _ := t.Environment.Size()
	sctx, cancel := context.WithTimeout(ctx, episode.DefaultResetTimeout)
	e, err := src.Start(sctx, size)
	cancel()
	if err != nil {
		return fail(fmt.Errorf("environment %s does not start: %w", src.Name, err))
	}
	closers = append(closers, func() { e.Close() })
	dir, err := os.MkdirTemp("", "proctor-probe-")
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { os.RemoveAll(dir) })
	st, err := store.Open(dir)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { st.Close() })
	name := "noop"
	if gold {
		name = "replay"
	}
	mk, _ := agent.Lookup(name)
	ag, err := mk()
	if err != nil {
		return fail(err)
	}
	ep, err := episode.Start(ctx, e, svc, episode.Config{Suite: s, Obs: episode.ObsScreenshot, Store: st, Origins: static}, t, 0)
	if err != nil {
		return fail(fmt.Errorf("%s: the environment could not be prepared: %w", t.ID, err))
	}
	if err := ag.Start(ctx, ep.AgentTask()); err != nil {
		ep.Abort(ctx, err)
	}
	ep.AgentStarted()
	for ep.Next(ctx) {
		obs, err := ep.Observe(ctx)
		if err != nil {
			break
		}
		turn, err := ag.Next(ctx, obs, ep.History())
		if err != nil {
			ep.Abort(ctx, err)
			break
		}
		ep.Act(ctx, turn)
	}
	r, err := ep.Finish(ctx)
	if err == nil && r.Outcome == string(check.Error) {
		err = errors.New(r.Reason)
	}
	if err != nil {
		return fail(fmt.Errorf("%s: the environment could not be prepared: %w", t.ID, err))
	}
	if gold {
		fmt.Fprintf(stderr, "%s: gold solution replayed (%s): %s\n", t.ID, plural(r.Steps, "step"), r.Outcome)
	}
	p.ev = &episode.Evidence{Env: e, Traj: ep.Trajectory(), Suite: s, Services: svc}
	return p, nil
}

// sourceFor is the first source of the pool that serves t's environment
// type.
func sourceFor(sources []env.Source, t *task.Task) (env.Source, bool) {
	typ := t.Environment.TypeOrDefault()
	for _, src := range sources {
		if src.Type == typ || slices.Contains(src.Also, typ) {
			return src, true
		}
	}
	return env.Source{}, false
}

// readProbe reads p's value from ev with the checks' own reader, through
// a check.Recorder so that the environment is asked exactly what a check
// asks; the value is then proven equal, by an exact check and a predicate
// on its length evaluated on that record, to the value the checks
// compare. found is false, with the reason, when there is nothing to read
// or a file does not decode; err is an environment that could not be read.
func readProbe(ctx context.Context, p check.Probe, ev check.Evidence) (val string, found bool, reason string, err error) {
	rec := check.NewRecorder(ev)
	val, found, err = check.ReadProbe(ctx, p, rec)
	switch {
	case check.Undecodable(err):
		return "", false, err.Error(), nil
	case err != nil:
		return "", false, "", fmt.Errorf("%s could not be read: %v", p, err)
	case !found:
		return val, false, nothingToRead(p, val), nil
	}
	if err := sameAsChecks(ctx, p, val, rec.Recorded()); err != nil {
		return "", false, "", err
	}
	return val, true, "", nil
}

// sameAsChecks proves that val is the value the checks read for p from
// the record: an exact check (case and inner spaces counting) and a
// predicate on its length must both pass.
func sameAsChecks(ctx context.Context, p check.Probe, val string, ev check.Evidence) error {
	for _, spec := range []check.Spec{
		{Kind: check.Exact, Probe: &p, Expected: val, As: "string", CaseSense: true},
		// A predicate's len counts characters; exact ignores trailing
		// line breaks, which the length does not.
		{Kind: check.Predicate, Probe: &p, Expr: fmt.Sprintf("len(text) == %d", utf8.RuneCountInString(val))},
	} {
		c, err := check.Compile(spec)
		if err != nil {
			return fmt.Errorf("probe: %v", err)
		}
		if r := c.Evaluate(ctx, ev, nil); !r.Pass {
			return fmt.Errorf("%s: the value read here differs from the one the checks read (%s); this is a bug", p, r.Reason)
		}
	}
	return nil
}

// nothingToRead says why a probe that found nothing has no value.
func nothingToRead(p check.Probe, val string) string {
	switch {
	case p.Command != "":
		if val != "" {
			return "nothing to read: the command exited with a non-zero status (a check fails); its output was:\n" + val
		}
		return "nothing to read: the command exited with a non-zero status (a check fails)"
	case p.File != "":
		return "nothing to read: the file does not exist (a check fails; not_contains and not_exists pass)"
	case p.Answer:
		return "nothing to read: the trajectory gave no answer (replay the gold solution with --gold)"
	case p.Element != nil:
		return "nothing to read: no element matches (a check fails)"
	}
	return "nothing to read"
}
