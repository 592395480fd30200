// Package setup runs a task's setup steps on an environment, the same way
// for every backend. The steps that mean the same everywhere (write, copy,
// run, wait_element, sleep) it runs itself through the operations every
// env.Env has: WriteFile, Run and Elements. The steps each backend does its
// own way (launch, open, wait_window, focus) it hands to the backend's Hook,
// and a few optional interfaces of the hook (ModeWriter, Starter,
// NetworkRunner, Transient, Still) cover what else differs.
//
// Timeouts: a run, launch, wait_window, focus or wait_element step that
// names no timeout is given task.DefaultStepTimeout, on every backend. A
// run step's command has its timeout, and its until probe, polled after
// it, has the same timeout again; each try of the probe is cut at
// UntilTry. The steps a Hook receives have their timeout filled in.
//
// An error names the step by its index and kind: "setup[3] run: ...". The
// steps after the agent (task.Task.After) run the same way, named
// "after[1] keys: ..." (Executor.After).
package setup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/input"
	"github.com/proctor-eval/proctor/internal/english"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// PollEvery is how often a wait looks again, unless the Executor says
// otherwise.
const PollEvery = 100 * time.Millisecond

// UntilTry bounds one try of a run step's until probe.
const UntilTry = 5 * time.Second

// Hook runs the setup steps whose meaning depends on the backend. Each
// step it receives has its timeout filled in (task.DefaultStepTimeout
// where the task named none). A backend that does not offer a kind
// returns Refuse's error for it (embed Refuse to refuse every kind the
// hook does not define).
type Hook interface {
	// Launch starts an application of the setup's (s.App) and, with
	// WaitWindow set, waits for its window.
	Launch(ctx context.Context, s env.Setup, st task.Launch) error
	// Open opens a file or URL, with its default application or st.App.
	Open(ctx context.Context, s env.Setup, st task.Open) error
	// WaitWindow waits until a window whose title holds st.Title shows.
	WaitWindow(ctx context.Context, st task.WaitWindow) error
	// Focus waits for a window whose title holds st.Title and makes it
	// the active one.
	Focus(ctx context.Context, st task.Focus) error
}

// ModeWriter is implemented by a hook whose backend's files have modes: a
// write step with a mode writes through it. Without it such a step is
// refused.
type ModeWriter interface {
	WriteFileMode(ctx context.Context, path string, data []byte, mode fs.FileMode) error
}

// Starter is implemented by a hook whose backend starts a background run
// step's command itself (as one of its applications, say, so that a reset
// ends it), in network when that is set. Without it the command is started
// through env.Run, under nohup, and is not waited for.
type Starter interface {
	Start(ctx context.Context, command, network string) error
}

// NetworkRunner is implemented by a hook whose backend has networks of
// its own (task.NetworkPrivate): a run step that names a network runs its
// command and its until probe through it. Without it such a step is
// refused.
type NetworkRunner interface {
	RunIn(ctx context.Context, network, command string, timeout time.Duration) (observe.CommandResult, error)
}

// Transient is implemented by a hook whose backend's element reads fail
// for a moment while the screen changes: a wait_element step looks again
// after an error for which Transient is true, rather than failing.
type Transient interface {
	Transient(err error) bool
}

// Still is implemented by a hook whose backend changes only when it is
// acted on (an in-memory desktop, say): where Still reports true, waiting
// cannot bring about what a wait waits for, so a wait_element step, and a
// run step's until probe, look once and fail at once (an element not
// there with an error wrapping observe.ErrNotFound) rather than looking
// again until their timeout.
type Still interface {
	Still() bool
}

// Closer is implemented by a hook whose backend can ask a window to close
// (task.Close) as its close button would, and wait until it is gone;
// without it a close step is refused.
type Closer interface {
	Close(ctx context.Context, st task.Close) error
}

// Refuse is a Hook that refuses every kind, an error wrapping
// env.ErrBadAction. A backend's hook embeds it and defines the kinds it
// offers; Why, when set, says what the backend offers instead.
type Refuse struct {
	Why string
}

func (r Refuse) refuse(kind string) error {
	if r.Why != "" {
		return fmt.Errorf("%w: %s", env.ErrBadAction, r.Why)
	}
	return fmt.Errorf("%w: this environment offers no %s steps", env.ErrBadAction, kind)
}

// Launch refuses.
func (r Refuse) Launch(context.Context, env.Setup, task.Launch) error {
	return r.refuse(task.Launch{}.Kind())
}

// Open refuses.
func (r Refuse) Open(context.Context, env.Setup, task.Open) error {
	return r.refuse(task.Open{}.Kind())
}

// WaitWindow refuses.
func (r Refuse) WaitWindow(context.Context, task.WaitWindow) error {
	return r.refuse(task.WaitWindow{}.Kind())
}

// Focus refuses.
func (r Refuse) Focus(context.Context, task.Focus) error {
	return r.refuse(task.Focus{}.Kind())
}

// Executor runs setup steps on one environment.
type Executor struct {
	// Env is the environment the shared kinds use.
	Env env.Env
	// Hook runs the backend's kinds; nil refuses them.
	Hook Hook
	// PollEvery is how often a wait looks again; 0 is PollEvery.
	PollEvery time.Duration
	// Section names the steps in errors: "setup" when empty, "after" for
	// the steps after the agent.
	Section string
}

// After is x running the steps after the agent: the same kinds, with
// errors that name the step as "after[2] keys: ...".
func (x Executor) After() Executor {
	x.Section = "after"
	return x
}

// Run runs the steps of s in order and stops at the first that fails,
// with an error that names it ("setup[3] run: ...").
func (x Executor) Run(ctx context.Context, s env.Setup) error {
	section := x.Section
	if section == "" {
		section = "setup"
	}
	for i, st := range s.Steps {
		spec := st.Spec()
		if spec == nil {
			return fmt.Errorf("%s[%d]: a step needs exactly one kind", section, i)
		}
		err := ctx.Err()
		if err == nil {
			err = x.step(ctx, s, spec)
		}
		if err != nil {
			return fmt.Errorf("%s[%d] %s: %w", section, i, spec.Kind(), err)
		}
	}
	return nil
}

// timeout is a step's timeout: d, or task.DefaultStepTimeout when d is 0.
func timeout[D ~int64](d D) time.Duration {
	if d > 0 {
		return time.Duration(d)
	}
	return task.DefaultStepTimeout
}

// still reports whether the hook is Still and says so.
func (x Executor) still() bool {
	s, ok := x.Hook.(Still)
	return ok && s.Still()
}

func (x Executor) hook() Hook {
	if x.Hook == nil {
		return Refuse{}
	}
	return x.Hook
}

func (x Executor) step(ctx context.Context, s env.Setup, spec task.StepSpec) error {
	switch st := spec.(type) {
	case task.Write:
		return x.write(ctx, st)
	case task.Copy:
		b, ok := s.Assets[st.Asset]
		if !ok {
			return fmt.Errorf("the suite has no asset %q", st.Asset)
		}
		return x.Env.WriteFile(ctx, st.To, b)
	case task.Run:
		return x.run(ctx, st)
	case task.WaitElement:
		return x.waitElement(ctx, st)
	case task.Sleep:
		return input.Sleep(ctx, time.Duration(st.For))
	case task.Keys:
		a, err := action.Combo(st.Combo)
		if err != nil {
			return err
		}
		_, err = x.Env.Do(ctx, []action.Action{a})
		return err
	case task.Type:
		_, err := x.Env.Do(ctx, []action.Action{{Kind: action.Type, Text: st.Text}})
		return err
	case task.Click:
		at := st.At
		_, err := x.Env.Do(ctx, []action.Action{{Kind: action.Click, Point: &at}})
		return err
	case task.Close:
		st.Timeout = fill(st.Timeout)
		c, ok := x.hook().(Closer)
		if !ok {
			return fmt.Errorf("%w: this environment closes no windows", env.ErrBadAction)
		}
		return c.Close(ctx, st)
	case task.Launch:
		st.Timeout = fill(st.Timeout)
		return x.hook().Launch(ctx, s, st)
	case task.Open:
		return x.hook().Open(ctx, s, st)
	case task.WaitWindow:
		st.Timeout = fill(st.Timeout)
		return x.hook().WaitWindow(ctx, st)
	case task.Focus:
		st.Timeout = fill(st.Timeout)
		return x.hook().Focus(ctx, st)
	}
	return fmt.Errorf("%w: %s step (%T) is not a kind this program runs", env.ErrBadAction, english.A(string(spec.Kind())), spec)
}

// fill is a step's timeout with the default filled in.
func fill[D ~int64](d D) D { return D(timeout(d)) }

func (x Executor) write(ctx context.Context, st task.Write) error {
	if st.Mode == "" {
		return x.Env.WriteFile(ctx, st.Path, []byte(st.Content))
	}
	m, err := strconv.ParseUint(st.Mode, 8, 32)
	if err != nil {
		return fmt.Errorf("mode %q is not octal", st.Mode)
	}
	mw, ok := x.Hook.(ModeWriter)
	if !ok {
		return fmt.Errorf("%w: mode %s: this environment's files have no modes", env.ErrBadAction, st.Mode)
	}
	return mw.WriteFileMode(ctx, st.Path, []byte(st.Content), fs.FileMode(m))
}

// run runs a run step: its command (in the background, or waited for and
// required to exit 0), then its until probe until it exits 0.
func (x Executor) run(ctx context.Context, st task.Run) error {
	limit := timeout(st.Timeout)
	runIn := func(ctx context.Context, command string, timeout time.Duration) (observe.CommandResult, error) {
		return x.Env.Run(ctx, command, timeout)
	}
	if st.Network != "" {
		nr, ok := x.Hook.(NetworkRunner)
		if !ok {
			return fmt.Errorf("%w: network %s: this environment has no network of its own to run a command in", env.ErrBadAction, st.Network)
		}
		runIn = func(ctx context.Context, command string, timeout time.Duration) (observe.CommandResult, error) {
			return nr.RunIn(ctx, st.Network, command, timeout)
		}
	}
	switch sr, ok := x.Hook.(Starter); {
	case st.Background && ok:
		if err := sr.Start(ctx, st.Command, st.Network); err != nil {
			return err
		}
	case st.Background:
		line := "nohup sh -c " + shellQuote(st.Command) + " >/dev/null 2>&1 &"
		if err := exited(runIn(ctx, line, limit)); err != nil {
			return fmt.Errorf("start `%s` in the background: %w", st.Command, err)
		}
	default:
		res, err := runIn(ctx, st.Command, limit)
		if err != nil {
			return fmt.Errorf("`%s`: %w", st.Command, err)
		}
		if err := exited(res, nil); err != nil {
			return fmt.Errorf("`%s` %w", st.Command, err)
		}
	}
	if st.Until == "" {
		return nil
	}
	return x.wait(ctx, limit, "`"+st.Until+"` to succeed", "`"+st.Until+"` did not succeed", func(ctx context.Context) (bool, error) {
		try := UntilTry
		if dl, ok := ctx.Deadline(); ok {
			try = min(try, time.Until(dl))
		}
		err := exited(runIn(ctx, st.Until, try))
		return err == nil, err
	}, func(error) bool { return true })
}

// exited is the error of a command that failed to run, or that exited
// other than 0: with what it wrote to stderr, then to stdout.
func exited(res observe.CommandResult, err error) error {
	if err != nil {
		return err
	}
	if res.ExitCode == 0 {
		return nil
	}
	var said []string
	for _, out := range []string{res.Stderr, res.Stdout} {
		if out = strings.TrimSpace(out); out != "" {
			said = append(said, out)
		}
	}
	return fmt.Errorf("exited %d: %s", res.ExitCode, strings.Join(said, "; "))
}

func (x Executor) waitElement(ctx context.Context, st task.WaitElement) error {
	transient := func(error) bool { return false }
	if t, ok := x.Hook.(Transient); ok {
		transient = t.Transient
	}
	what := "element " + st.Element.Describe()
	return x.wait(ctx, timeout(st.Timeout), what, "no "+what+" is showing", func(ctx context.Context) (bool, error) {
		els, err := x.Env.Elements(ctx, st.Element)
		return err == nil && len(els) > 0, err
	}, transient)
}

// wait calls f until it reports true, within timeout. An error of f for
// which retry is false ends the wait at once; other errors are looked past,
// and the last is told when the time is up. An end of ctx ends the wait
// with ctx's error. Where the hook is Still, f is called once: absent says
// what is not there when it reports false with no error.
func (x Executor) wait(ctx context.Context, limit time.Duration, what, absent string, f func(context.Context) (bool, error), retry func(error) bool) error {
	every := x.PollEvery
	if every <= 0 {
		every = PollEvery
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var last error
	for {
		done, err := f(wctx)
		switch {
		case done:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && wctx.Err() == nil && !retry(err):
			return fmt.Errorf("waiting for %s: %w", what, err)
		case x.still():
			if err != nil {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
			return fmt.Errorf("%w: %s", observe.ErrNotFound, absent)
		case err != nil && !errors.Is(err, context.DeadlineExceeded):
			last = err
		}
		if wctx.Err() != nil {
			if last != nil {
				return fmt.Errorf("gave up waiting for %s after %s (last: %v): %w", what, limit, last, observe.ErrNotFound)
			}
			return fmt.Errorf("gave up waiting for %s after %s: %w", what, limit, observe.ErrNotFound)
		}
		_ = input.Sleep(wctx, every) // an end of wctx is seen above
	}
}

// shellQuote quotes s as one word for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
