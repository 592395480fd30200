package setup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// recEnv is an environment that records the calls the executor makes of
// it. A command's result is what answer returns for it (exit 0 with no
// output when answer is nil). Elements first returns the errors of
// elemErrs in turn, then finds the element asked for once the clock has
// passed appear (never when appear is zero); looks counts its calls.
type recEnv struct {
	mu       sync.Mutex
	calls    []string
	files    map[string]string
	answer   func(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error)
	appear   time.Time
	elemErrs []error // returned by Elements in turn, before it looks
	looks    int
}

func (e *recEnv) record(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, fmt.Sprintf(format, args...))
}

func (e *recEnv) Calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

func (e *recEnv) Run(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error) {
	e.record("run %q %s", cmd, timeout)
	if e.answer == nil {
		return observe.CommandResult{}, ctx.Err()
	}
	return e.answer(ctx, cmd, timeout)
}

func (e *recEnv) WriteFile(ctx context.Context, path string, data []byte) error {
	e.record("write %s %q", path, data)
	if e.files == nil {
		e.files = map[string]string{}
	}
	e.files[path] = string(data)
	return ctx.Err()
}

func (e *recEnv) Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	e.mu.Lock()
	e.looks++
	var err error
	if len(e.elemErrs) > 0 {
		err, e.elemErrs = e.elemErrs[0], e.elemErrs[1:]
	}
	there := !e.appear.IsZero() && time.Now().After(e.appear)
	e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if there {
		return []observe.Element{{Role: q.Role, Name: q.Name}}, nil
	}
	return nil, ctx.Err()
}

func (e *recEnv) Info(context.Context) (env.Info, error) { return env.Info{Kind: "recording"}, nil }
func (e *recEnv) Screenshot(context.Context, env.ShotOptions) (env.Shot, error) {
	return env.Shot{}, errors.New("recEnv: no screen")
}
func (e *recEnv) Tree(context.Context) (*observe.Tree, error) {
	return nil, errors.New("recEnv: no tree")
}
func (e *recEnv) Do(context.Context, []action.Action) ([]action.Step, error) {
	return nil, errors.New("recEnv: no input")
}
func (e *recEnv) ReadFile(_ context.Context, path string) ([]byte, error) {
	if s, ok := e.files[path]; ok {
		return []byte(s), nil
	}
	return nil, observe.ErrNotFound
}
func (e *recEnv) Windows(context.Context) ([]env.Window, error) { return nil, nil }
func (e *recEnv) Clipboard(context.Context) (string, error)     { return "", nil }
func (e *recEnv) Reset(context.Context, env.Setup) error        { return errors.New("recEnv: no reset") }
func (e *recEnv) Close() error                                  { return nil }

// fakeHook records the backend kinds it is handed, with their timeouts,
// and fails those named in fail. It offers modes, background starts and
// one network, "private".
type fakeHook struct {
	e    *recEnv // where it records
	fail map[string]error
}

func (h fakeHook) Launch(_ context.Context, s env.Setup, st task.Launch) error {
	if _, ok := s.App(st.App); !ok {
		return fmt.Errorf("unknown app %q", st.App)
	}
	h.e.record("launch %s %q %s", st.App, st.WaitWindow, time.Duration(st.Timeout))
	return h.fail["launch"]
}

func (h fakeHook) Open(_ context.Context, _ env.Setup, st task.Open) error {
	h.e.record("open %s%s", st.URL, st.Path)
	return h.fail["open"]
}

func (h fakeHook) WaitWindow(_ context.Context, st task.WaitWindow) error {
	h.e.record("wait_window %q %s", st.Title, time.Duration(st.Timeout))
	return h.fail["wait_window"]
}

func (h fakeHook) Focus(_ context.Context, st task.Focus) error {
	h.e.record("focus %q %s", st.Title, time.Duration(st.Timeout))
	return h.fail["focus"]
}

func (h fakeHook) WriteFileMode(_ context.Context, path string, data []byte, mode fs.FileMode) error {
	h.e.record("write %s %q %o", path, data, mode)
	return nil
}

func (h fakeHook) Start(_ context.Context, command, network string) error {
	h.e.record("start %q %q", command, network)
	return nil
}

func (h fakeHook) RunIn(ctx context.Context, network, command string, timeout time.Duration) (observe.CommandResult, error) {
	if network != task.NetworkPrivate {
		return observe.CommandResult{}, fmt.Errorf("no network %q", network)
	}
	h.e.record("run in %s %q %s", network, command, timeout)
	return observe.CommandResult{}, nil
}

// bareHook offers only the four kinds of its fakeHook, no optional
// interface.
type bareHook struct{ f fakeHook }

func (h bareHook) Launch(ctx context.Context, s env.Setup, st task.Launch) error {
	return h.f.Launch(ctx, s, st)
}
func (h bareHook) Open(ctx context.Context, s env.Setup, st task.Open) error {
	return h.f.Open(ctx, s, st)
}
func (h bareHook) WaitWindow(ctx context.Context, st task.WaitWindow) error {
	return h.f.WaitWindow(ctx, st)
}
func (h bareHook) Focus(ctx context.Context, st task.Focus) error { return h.f.Focus(ctx, st) }

func dur(d time.Duration) duration.Duration   { return duration.Duration(d) }
func durp(d time.Duration) *duration.Duration { return new(duration.Duration(d)) }

const def = task.DefaultStepTimeout

// TestSteps runs each kind of step, and the ways each one fails, on the
// recording env and the fake hook.
func TestSteps(t *testing.T) {
	exit := func(code int, stderr, stdout string) func(context.Context, string, time.Duration) (observe.CommandResult, error) {
		return func(context.Context, string, time.Duration) (observe.CommandResult, error) {
			return observe.CommandResult{ExitCode: code, Stderr: stderr, Stdout: stdout}, nil
		}
	}
	untilAfter := func(n int) func(context.Context, string, time.Duration) (observe.CommandResult, error) {
		tries := 0
		return func(_ context.Context, cmd string, _ time.Duration) (observe.CommandResult, error) {
			if cmd != "probe" {
				return observe.CommandResult{}, nil
			}
			if tries++; tries < n {
				return observe.CommandResult{ExitCode: 1, Stderr: "not yet"}, nil
			}
			return observe.CommandResult{}, nil
		}
	}
	base := env.Setup{
		Apps:   map[string]task.AppSpec{"notes": {Command: "notes"}},
		Assets: map[string][]byte{"data.csv": []byte("a,b\n")},
	}
	for _, tc := range []struct {
		name   string
		steps  []task.Step
		hook   Hook // nil: fakeHook
		noHook bool
		never  bool // no element ever shows
		answer func(context.Context, string, time.Duration) (observe.CommandResult, error)
		calls  []string
		err    string // "" for none
		is     error  // the error wraps it, when set
	}{
		{name: "write",
			steps: []task.Step{{Write: &task.Write{Path: "~/a.txt", Content: "hi"}}},
			calls: []string{`write ~/a.txt "hi"`}},
		{name: "write with a mode",
			steps: []task.Step{{Write: &task.Write{Path: "~/run.sh", Content: "#!/bin/sh\n", Mode: "0750"}}},
			calls: []string{`write ~/run.sh "#!/bin/sh\n" 750`}},
		{name: "write with a mode that is not octal",
			steps: []task.Step{{Write: &task.Write{Path: "~/x", Mode: "rwx"}}},
			err:   `setup[0] write: mode "rwx" is not octal`},
		{name: "write with a mode, a backend without modes",
			steps: []task.Step{{Write: &task.Write{Path: "~/x", Mode: "0600"}}},
			hook:  bareHook{}, err: "setup[0] write: ", is: env.ErrBadAction},
		{name: "copy",
			steps: []task.Step{{Copy: &task.Copy{Asset: "data.csv", To: "~/d.csv"}}},
			calls: []string{`write ~/d.csv "a,b\n"`}},
		{name: "copy of an asset that is not there",
			steps: []task.Step{{Sleep: durp(time.Millisecond)}, {Copy: &task.Copy{Asset: "absent.csv", To: "~/x.csv"}}},
			err:   `setup[1] copy: the suite has no asset "absent.csv"`},
		{name: "run with the default timeout",
			steps: []task.Step{{Run: &task.Run{Command: "make"}}},
			calls: []string{fmt.Sprintf(`run "make" %s`, def)}},
		{name: "run with its own timeout",
			steps: []task.Step{{Run: &task.Run{Command: "make", Timeout: dur(90 * time.Second)}}},
			calls: []string{`run "make" 1m30s`}},
		{name: "run that exits other than 0",
			steps:  []task.Step{{Write: &task.Write{Path: "~/ok", Content: "x"}}, {Run: &task.Run{Command: "exit 7"}}},
			answer: exit(7, "oops\n", "Failure [X]\n"),
			calls:  []string{`write ~/ok "x"`, fmt.Sprintf(`run "exit 7" %s`, def)},
			err:    "setup[1] run: `exit 7` exited 7: oops; Failure [X]"},
		{name: "run that cannot run",
			steps: []task.Step{{Run: &task.Run{Command: "x"}}},
			answer: func(context.Context, string, time.Duration) (observe.CommandResult, error) {
				return observe.CommandResult{}, fmt.Errorf("%w: no shell", env.ErrBadAction)
			},
			calls: []string{fmt.Sprintf(`run "x" %s`, def)},
			err:   "setup[0] run: `x`: action not possible: no shell", is: env.ErrBadAction},
		{name: "run in the background through the hook",
			steps: []task.Step{{Run: &task.Run{Command: "serve", Background: true}}},
			calls: []string{`start "serve" ""`}},
		{name: "run in the background without a starter",
			steps: []task.Step{{Run: &task.Run{Command: "serve 'x'", Background: true}}},
			hook:  bareHook{},
			calls: []string{fmt.Sprintf(`run "nohup sh -c 'serve '\\''x'\\''' >/dev/null 2>&1 &" %s`, def)}},
		{name: "run until a probe succeeds",
			steps:  []task.Step{{Run: &task.Run{Command: "serve", Background: true, Until: "probe", Timeout: dur(10 * time.Second)}}},
			answer: untilAfter(3),
			calls:  []string{`start "serve" ""`, `run "probe" 5s`, `run "probe" 5s`, `run "probe" 5s`}},
		{name: "run until a probe that never succeeds",
			steps:  []task.Step{{Run: &task.Run{Command: "true", Until: "probe", Timeout: dur(250 * time.Millisecond)}}},
			answer: untilAfter(1 << 30),
			err:    "setup[0] run: gave up waiting for `probe` to succeed after 250ms (last: exited 1: not yet)", is: observe.ErrNotFound},
		{name: "run in the private network",
			steps: []task.Step{{Run: &task.Run{Command: "init", Until: "probe", Network: task.NetworkPrivate}}},
			calls: []string{fmt.Sprintf(`run in private "init" %s`, def), `run in private "probe" 5s`}},
		{name: "run in the background in the private network",
			steps: []task.Step{{Run: &task.Run{Command: "serve", Background: true, Network: task.NetworkPrivate}}},
			calls: []string{`start "serve" "private"`}},
		{name: "run in a network the backend has not",
			steps: []task.Step{{Run: &task.Run{Command: "init", Network: task.NetworkPrivate}}},
			hook:  bareHook{}, err: "setup[0] run: ", is: env.ErrBadAction},
		{name: "sleep",
			steps: []task.Step{{Sleep: durp(20 * time.Millisecond)}}},
		{name: "wait for an element that shows",
			steps: []task.Step{{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Role: "push button", Name: "OK"}}}}},
		{name: "wait for an element that does not show",
			steps: []task.Step{{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Role: "push button", Name: "Never"}, Timeout: dur(200 * time.Millisecond)}}},
			never: true,
			err:   `setup[0] wait_element: gave up waiting for element push button "Never" after 200ms`, is: observe.ErrNotFound},
		{name: "launch with the default timeout",
			steps: []task.Step{{Launch: &task.Launch{App: "notes", WaitWindow: "Notes"}}},
			calls: []string{fmt.Sprintf(`launch notes "Notes" %s`, def)}},
		{name: "launch with its own timeout",
			steps: []task.Step{{Launch: &task.Launch{App: "notes", Timeout: dur(time.Minute)}}},
			calls: []string{`launch notes "" 1m0s`}},
		{name: "launch of an app the hook does not know",
			steps: []task.Step{{Launch: &task.Launch{App: "ghost"}}},
			err:   `setup[0] launch: unknown app "ghost"`},
		{name: "open",
			steps: []task.Step{{Open: &task.Open{URL: "https://example.org/"}}, {Open: &task.Open{Path: "~/a.txt"}}},
			calls: []string{"open https://example.org/", "open ~/a.txt"}},
		{name: "wait for a window",
			steps: []task.Step{{WaitWindow: &task.WaitWindow{Title: "Notes"}}},
			calls: []string{fmt.Sprintf(`wait_window "Notes" %s`, def)}},
		{name: "focus",
			steps: []task.Step{{Focus: &task.Focus{Title: "Notes", Timeout: dur(5 * time.Second)}}},
			calls: []string{`focus "Notes" 5s`}},
		{name: "a failing backend step names its index and kind",
			steps: []task.Step{{Open: &task.Open{URL: "https://example.org/"}}, {Focus: &task.Focus{Title: "Nowhere"}}},
			hook:  fakeHook{fail: map[string]error{"focus": errors.New("no window titled nowhere")}},
			calls: []string{"open https://example.org/", fmt.Sprintf(`focus "Nowhere" %s`, def)},
			err:   "setup[1] focus: no window titled nowhere"},
		{name: "a step with no kind",
			steps: []task.Step{{Sleep: durp(time.Millisecond)}, {}},
			err:   "setup[1]: a step needs exactly one kind"},
		{name: "a step with two kinds",
			steps: []task.Step{{Sleep: durp(time.Millisecond), Open: &task.Open{URL: "https://example.org/"}}},
			err:   "setup[0]: a step needs exactly one kind"},
		{name: "the backend kinds without a hook",
			steps:  []task.Step{{Sleep: durp(time.Millisecond)}, {Launch: &task.Launch{App: "notes"}}},
			noHook: true, err: "setup[1] launch: action not possible: this environment offers no launch steps", is: env.ErrBadAction},
		{name: "a kind refused with the backend's reason",
			steps: []task.Step{{WaitWindow: &task.WaitWindow{Title: "x"}}},
			hook:  struct{ Refuse }{Refuse{Why: "a browser has tabs, not windows"}},
			err:   "setup[0] wait_window: action not possible: a browser has tabs, not windows", is: env.ErrBadAction},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &recEnv{answer: tc.answer, appear: time.Now().Add(150 * time.Millisecond)}
			if tc.never {
				e.appear = time.Time{}
			}
			x := Executor{Env: e}
			switch h := tc.hook.(type) {
			case nil:
				if !tc.noHook {
					x.Hook = fakeHook{e: e}
				}
			case fakeHook:
				h.e = e
				x.Hook = h
			case bareHook:
				h.f.e = e
				x.Hook = h
			default:
				x.Hook = h
			}
			err := x.Run(context.Background(), env.Setup{Steps: tc.steps, Apps: base.Apps, Assets: base.Assets})
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Run = %v", err)
			case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
				t.Fatalf("Run = %v, want an error starting %q", err, tc.err)
			case tc.is != nil && !errors.Is(err, tc.is):
				t.Fatalf("Run = %v, want it to wrap %v", err, tc.is)
			}
			if tc.calls != nil && !slices.Equal(e.Calls(), tc.calls) {
				t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(e.Calls(), "\n"), strings.Join(tc.calls, "\n"))
			}
		})
	}
}

// fakeHook offers the optional interfaces but Transient.
var (
	_ ModeWriter    = fakeHook{}
	_ Starter       = fakeHook{}
	_ NetworkRunner = fakeHook{}
)

// An unknown StepSpec, one the executor has no case for, is refused.
type oddStep struct{}

func (oddStep) Kind() string               { return "teleport" }
func (oddStep) Validate(*task.Suite) error { return nil }

func TestUnknownKindIsRefused(t *testing.T) {
	e := &recEnv{}
	err := Executor{Env: e, Hook: fakeHook{e: e}}.step(context.Background(), env.Setup{}, oddStep{})
	if !errors.Is(err, env.ErrBadAction) || !strings.Contains(err.Error(), "a teleport step") {
		t.Fatalf("step = %v, want a refusal naming the kind", err)
	}
	if len(e.Calls()) != 0 {
		t.Errorf("calls %q", e.Calls())
	}
}

// A wait looks again after an error the hook calls transient, and fails
// at once on any other.
func TestWaitElementErrors(t *testing.T) {
	flaky := errors.New("the screen is changing")
	broken := errors.New("the tree is gone")
	q := task.Step{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Name: "OK"}, Timeout: dur(5 * time.Second)}}
	for _, tc := range []struct {
		name      string
		transient bool
		errs      []error
		err       error // nil: found
		looks     int
	}{
		{"a transient error is looked past", true, []error{flaky, flaky}, nil, 3},
		{"another error ends the wait", true, []error{broken}, broken, 1},
		{"without Transient every error ends it", false, []error{flaky}, flaky, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &recEnv{elemErrs: tc.errs, appear: time.Now()}
			var h Hook = bareHook{fakeHook{e: e}}
			if tc.transient {
				h = transientHook{fakeHook{e: e}, flaky}
			}
			err := Executor{Env: e, Hook: h, PollEvery: time.Millisecond}.Run(context.Background(), env.Setup{Steps: []task.Step{q}})
			if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("Run = %v, want %v", err, tc.err)
			}
			if tc.err != nil && !strings.HasPrefix(err.Error(), `setup[0] wait_element: waiting for element "OK": `) {
				t.Errorf("Run = %v", err)
			}
			if e.looks != tc.looks {
				t.Errorf("looked %d times, want %d", e.looks, tc.looks)
			}
		})
	}
}

type transientHook struct {
	fakeHook
	flaky error
}

func (h transientHook) Transient(err error) bool { return errors.Is(err, h.flaky) }

// The end of the context ends a sleep, a wait and a run at once, and no
// step starts after it.
func TestCancel(t *testing.T) {
	for _, tc := range []struct {
		name string
		step task.Step
	}{
		{"sleep", task.Step{Sleep: durp(time.Minute)}},
		{"wait_element", task.Step{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Name: "Never"}, Timeout: dur(time.Minute)}}},
		{"run", task.Step{Run: &task.Run{Command: "true", Until: "false", Timeout: dur(time.Minute)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &recEnv{answer: func(ctx context.Context, cmd string, _ time.Duration) (observe.CommandResult, error) {
				return observe.CommandResult{ExitCode: len(cmd) % 2}, nil // "false" exits 1
			}}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			steps := []task.Step{tc.step, {Write: &task.Write{Path: "~/after", Content: "x"}}}
			err := Executor{Env: e, Hook: fakeHook{e: e}}.Run(ctx, env.Setup{Steps: steps})
			if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "setup[0] "+tc.name+": ") {
				t.Fatalf("Run = %v, want the cancellation, naming the step", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Run took %s after the cancellation", d)
			}
			if _, ok := e.files["~/after"]; ok {
				t.Error("a step ran after the cancellation")
			}
		})
	}
	t.Run("before the first step", func(t *testing.T) {
		e := &recEnv{}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := Executor{Env: e}.Run(ctx, env.Setup{Steps: []task.Step{{Write: &task.Write{Path: "~/x", Content: "x"}}}})
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "setup[0] write: ") || len(e.Calls()) != 0 {
			t.Fatalf("Run = %v, calls %q", err, e.Calls())
		}
	})
}

// stillHook is a fakeHook whose backend is Still as it says.
type stillHook struct {
	fakeHook
	still bool
}

func (h stillHook) Still() bool { return h.still }

// Where the hook is Still, a wait looks once and fails at once; where it
// says it is not, a wait looks again until what it waits for comes.
func TestStillLooksOnce(t *testing.T) {
	el := task.Step{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Name: "OK"}, Timeout: dur(time.Minute)}}
	probe := task.Step{Run: &task.Run{Command: "true", Until: "probe", Timeout: dur(time.Minute)}}
	for _, tc := range []struct {
		name   string
		still  bool
		step   task.Step
		appear time.Duration // when the element shows; 0: never
		err    string        // "" for none
		is     error
		looks  int // Elements calls; -1: not counted
	}{
		{"an element not there fails at once", true, el, 0,
			`setup[0] wait_element: not found: no element "OK" is showing`, observe.ErrNotFound, 1},
		{"an element there is found", true, el, -time.Second, "", nil, 1},
		{"an until probe is tried once", true, probe, 0,
			"setup[0] run: waiting for `probe` to succeed: exited 1: not yet", nil, -1},
		{"a hook that is not still looks again", false, el, 50 * time.Millisecond, "", nil, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &recEnv{answer: func(_ context.Context, cmd string, _ time.Duration) (observe.CommandResult, error) {
				if cmd == "probe" {
					return observe.CommandResult{ExitCode: 1, Stderr: "not yet"}, nil
				}
				return observe.CommandResult{}, nil
			}}
			if tc.appear != 0 {
				e.appear = time.Now().Add(tc.appear)
			}
			start := time.Now()
			err := Executor{Env: e, Hook: stillHook{fakeHook{e: e}, tc.still}, PollEvery: time.Millisecond}.Run(context.Background(), env.Setup{Steps: []task.Step{tc.step}})
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Run = %v", err)
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Fatalf("Run = %v, want %q", err, tc.err)
			case tc.is != nil && !errors.Is(err, tc.is):
				t.Errorf("Run = %v, want it to wrap %v", err, tc.is)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Run took %s", d)
			}
			if tc.looks >= 0 && e.looks != tc.looks {
				t.Errorf("looked %d times, want %d", e.looks, tc.looks)
			}
			if !tc.still && e.looks < 2 {
				t.Errorf("looked %d times, want more than once", e.looks)
			}
			if tc.step.Run != nil {
				if n := strings.Count(strings.Join(e.Calls(), "\n"), `run "probe"`); n != 1 {
					t.Errorf("probe run %d times, want once: %q", n, e.Calls())
				}
			}
		})
	}
}
