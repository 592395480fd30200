package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/mem"
	"github.com/proctor-eval/proctor/env/xdesktop"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/proctor-eval/proctor/usage"
)

// TestMain lets this test binary serve as the watchdog of the desktops
// its tests start.
func TestMain(m *testing.M) {
	xdesktop.Watchdog()
	os.Exit(m.Run())
}

func need(t testing.TB) {
	t.Helper()
	for _, b := range []string{"Xvfb", "dbus-daemon", "openbox", "yad", "mousepad"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
}

// suite is the runner's test suite, for the in-memory desktop: the
// runner's tests need no X server.
func suite(t *testing.T) *task.Suite { return load(t, "../testdata/mem") }

func load(t *testing.T, dir string) *task.Suite {
	s, ps := task.Load(dir)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	return s
}

func newDesktop(ctx context.Context) (env.Env, error) {
	return xdesktop.Start(ctx, xdesktop.Config{})
}

// newMem starts an in-memory desktop at the tasks' default size.
func newMem(context.Context) (env.Env, error) {
	return mem.New(mem.WithSize(action.Size{W: 1920, H: 1080}))
}

func config(t *testing.T, s *task.Suite, f agent.Factory) Config {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return Config{Suite: s, Tasks: s.Tasks, Agent: f, Parallel: 2, NewEnv: newMem, Store: st, Backoff: 10 * time.Millisecond}
}

func outcomes(rs []store.Result) map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		out[r.Task] = r.Outcome
	}
	return out
}

// TestReplayPassesNoopFails: the gold solutions pass and doing nothing
// fails, on the in-memory desktop and on real X11 desktops.
func TestReplayPassesNoopFails(t *testing.T) {
	for _, tc := range []struct {
		name, dir, editor string
		newEnv            func(context.Context) (env.Env, error)
		steps             int
	}{
		{"mem", "../testdata/mem", "editor-save", newMem, 4},
		{"x11", "../testdata/runner", "editor-type", newDesktop, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "x11" {
				need(t)
			}
			s := load(t, tc.dir)
			ctx := context.Background()
			replay, _ := agent.Lookup("replay")
			cfg := config(t, s, replay)
			cfg.NewEnv = tc.newEnv
			rs, err := Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != len(s.Tasks) {
				t.Fatalf("%d results for %d tasks", len(rs), len(s.Tasks))
			}
			for _, r := range rs {
				if r.Outcome != "success" {
					t.Errorf("replay of %s: %s (%s)", r.Task, r.Outcome, r.Reason)
				}
			}
			// The editor task is a process task: the click on the text area was
			// recorded on the trajectory, and every step has a screenshot.
			steps, _ := cfg.Store.Turns(tc.editor, 0)
			if len(steps) != tc.steps || steps[0].Shot == "" || !strings.Contains(string(steps[0].Done), `"element":"text`) {
				t.Fatalf("%s steps: %d, first %+v", tc.editor, len(steps), steps[0])
			}
			noop, _ := agent.Lookup("noop")
			cfg = config(t, s, noop)
			cfg.NewEnv = tc.newEnv
			rs, err = Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if r.Outcome == "success" {
					t.Errorf("noop passed %s", r.Task)
				}
			}
		})
	}
}

// scriptedAgent plays a fixed function of the step.
type scriptedAgent struct {
	next func(step int) (agent.Turn, error)
}

func (a *scriptedAgent) Start(context.Context, agent.Task) error { return nil }
func (a *scriptedAgent) Next(_ context.Context, o agent.Observation, _ []agent.Turn) (agent.Turn, error) {
	return a.next(o.Step)
}
func (a *scriptedAgent) Stop(context.Context) error { return nil }

func scripted(next func(step int) (agent.Turn, error)) agent.Factory {
	return func() (agent.Agent, error) { return &scriptedAgent{next: next}, nil }
}

// thenWrite is an agent whose first turn is a mistake: the action bad,
// which the environment must refuse with an error containing want. The
// agent must hear that error at its second step, and it then solves
// shell-write.
func thenWrite(bad action.Action, want string) agent.Factory {
	return thenWriteAll([]action.Action{bad}, want)
}

func thenWriteAll(bad []action.Action, want string) agent.Factory {
	return func() (agent.Agent, error) {
		return &feedbackAgent{bad: bad, want: want}, nil
	}
}

type feedbackAgent struct {
	bad  []action.Action
	want string
}

func (a *feedbackAgent) Start(context.Context, agent.Task) error { return nil }
func (a *feedbackAgent) Stop(context.Context) error              { return nil }
func (a *feedbackAgent) Next(_ context.Context, o agent.Observation, _ []agent.Turn) (agent.Turn, error) {
	switch {
	case o.Step == 1:
		return agent.Turn{Actions: a.bad}, nil
	case !strings.Contains(o.Feedback, a.want):
		return agent.Turn{}, fmt.Errorf("step %d: feedback %q does not say %q", o.Step, o.Feedback, a.want)
	}
	return agent.Turn{Actions: []action.Action{{Kind: action.Fail}}}, nil
}

func only(s *task.Suite, id string) *task.Suite {
	t, _ := s.Task(id)
	c := *s
	c.Tasks = []*task.Task{t}
	return &c
}

func TestOutcomesOfFaultsAndBudgets(t *testing.T) {
	s := suite(t)
	click := action.Action{Kind: action.Click, Point: action.At(5, 5)}
	var calls atomic.Int32
	tests := []struct {
		name    string
		task    string
		agent   agent.Factory
		budget  float64
		outcome string
		reason  string
	}{
		{"repeated actions stop early", "impossible-printer", scripted(func(int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{click}}, nil
		}), 0, "early_stopped", "repeated"},
		{"step budget", "count-lines", scripted(func(step int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{{Kind: action.Click, Point: action.At(float64(step), 5)}}}, nil
		}), 0, "uncompleted", "budget"},
		{"cost budget", "count-lines", scripted(func(step int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{{Kind: action.Wait, Duration: 0.01 * float64(step)}}, Usage: usage.Usage{Cost: 0.4}}, nil
		}), 1.0, "uncompleted", "budget"},
		{"malformed replies then a right answer", "count-lines", scripted(func(step int) (agent.Turn, error) {
			if step < 3 {
				return agent.Turn{Raw: "I think it is three", ParseError: "no code block"}, nil
			}
			return agent.Turn{Actions: []action.Action{{Kind: action.Answer, Text: "3"}}}, nil
		}), 0, "success", "all checks"},
		{"model API down", "impossible-printer", scripted(func(int) (agent.Turn, error) {
			calls.Add(1)
			return agent.Turn{}, agent.Transient(errors.New("503 overloaded"))
		}), 0, "error", "infrastructure fault after 3 attempts"},
		{"agent refuses", "impossible-printer", scripted(func(int) (agent.Turn, error) {
			return agent.Turn{}, errors.New("400 bad request")
		}), 0, "error", "the agent failed"},
		{"missing element is the agent's mistake", "impossible-printer", scripted(func(step int) (agent.Turn, error) {
			if step == 1 {
				return agent.Turn{Actions: []action.Action{{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "Nowhere"}}}}, nil
			}
			return agent.Turn{Actions: []action.Action{{Kind: action.Fail}}}, nil
		}), 0, "success", "all checks"},
		{"FAIL on an infeasible task", "impossible-printer", scripted(func(int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{{Kind: action.Fail}}}, nil
		}), 0, "success", "all checks"},
		{"click off the screen is the agent's mistake", "impossible-printer", thenWrite(action.Action{Kind: action.Click, Point: action.At(99999, 5)}, "is outside the 1920x1080 screen"), 0, "success", "all checks"},
		{"negative click is the agent's mistake", "impossible-printer", thenWrite(action.Action{Kind: action.Click, Point: action.At(-3, 5)}, "outside"), 0, "success", "all checks"},
		{"huge scroll is refused", "impossible-printer", thenWrite(action.Action{Kind: action.Scroll, Point: action.At(5, 5), DY: 1e9}, "over the limit of 100"), 0, "success", "all checks"},
		{"huge wait is refused", "impossible-printer", thenWrite(action.Action{Kind: action.Wait, Duration: 1e9}, "over the limit of 300"), 0, "success", "all checks"},
		{"a reply of 250,000 actions is refused whole", "impossible-printer", thenWriteAll(slices.Repeat([]action.Action{{Kind: action.Move, Point: action.At(5, 5)}}, 250000), "holds 250000 actions; at most 100"), 0, "success", "all checks"},
		{"huge typing is refused", "impossible-printer", thenWrite(action.Action{Kind: action.Type, Text: strings.Repeat("x", 1e6)}, "text length"), 0, "success", "all checks"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(t, only(s, tc.task), tc.agent)
			cfg.Parallel, cfg.CostBudget = 1, tc.budget
			rs, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 || rs[0].Outcome != tc.outcome || !strings.Contains(rs[0].Reason, tc.reason) {
				t.Fatalf("results %+v, want %s with %q", rs, tc.outcome, tc.reason)
			}
			if tc.outcome != "error" && rs[0].Attempts != 1 {
				t.Fatalf("%d attempts: the agent's mistake was taken for an infrastructure fault", rs[0].Attempts)
			}
		})
	}
	if n := calls.Load(); n < 6 {
		t.Fatalf("the failing model API was called %d times: transient faults were not retried", n)
	}
}

func TestProgressBar(t *testing.T) {
	for _, tc := range []struct {
		done, total int
		want        string
	}{
		{0, 10, "[----------]"}, {5, 10, "[#####-----]"}, {10, 10, "[##########]"}, {3, 0, "[----------]"}, {12, 10, "[##########]"},
	} {
		if got := bar(tc.done, tc.total, 10); got != tc.want {
			t.Errorf("bar(%d, %d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
}

// sleeper ignores its context and sleeps before it answers with the
// right actions: thinking past the wall time.
type sleeper struct{ d time.Duration }

func (a sleeper) Start(context.Context, agent.Task) error { return nil }
func (a sleeper) Stop(context.Context) error              { return nil }
func (a sleeper) Next(context.Context, agent.Observation, []agent.Turn) (agent.Turn, error) {
	time.Sleep(a.d)
	return agent.Turn{Actions: []action.Action{{Kind: action.Fail}}}, nil
}

// TestWallTimeBoundsEveryCall gives shell-write a 2 s wall time: an agent
// that thinks for 4 s, a wait that outlasts the limit, and an agent that
// never answers all end as uncompleted with the reason, at the first
// attempt, never as a success.
func TestWallTimeBoundsEveryCall(t *testing.T) {
	s := only(suite(t), "impossible-printer")
	short := *s.Tasks[0]
	short.TimeLimit = duration.Duration(2 * time.Second)
	s.Tasks = []*task.Task{&short}
	tests := []struct {
		name   string
		agent  agent.Factory
		reason string
	}{
		{"thinking past the limit", func() (agent.Agent, error) { return sleeper{4 * time.Second}, nil },
			"wall-time limit of 2s was reached while the agent was thinking (step 1)"},
		{"a wait past the limit", scripted(func(step int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{{Kind: action.Wait, Duration: 200}, {Kind: action.Code, Text: "printf hello > ~/out.txt"}, {Kind: action.Done}}}, nil
		}), "wall-time limit of 2s was reached while acting (step 1)"},
		{"an agent that never answers", func() (agent.Agent, error) { return sleeper{time.Hour}, nil },
			"wall-time limit of 2s was reached while the agent was thinking"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(t, s, tc.agent)
			cfg.Parallel = 1
			rs, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 || rs[0].Outcome != "uncompleted" || !strings.Contains(rs[0].Reason, tc.reason) || rs[0].Attempts != 1 {
				t.Fatalf("results %+v, want uncompleted at the first attempt with %q", rs, tc.reason)
			}
		})
	}
}

// TestAgentTimeoutIsTransient: an agent that does not answer within the
// agent timeout is a transient fault, retried, then an error; it does not
// wait for the task's wall time.
func TestAgentTimeoutIsTransient(t *testing.T) {
	s := only(suite(t), "impossible-printer")
	cfg := config(t, s, func() (agent.Agent, error) { return sleeper{time.Hour}, nil })
	cfg.Parallel, cfg.AgentTimeout, cfg.Retries = 1, 200*time.Millisecond, -1
	rs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Outcome != "error" || !strings.Contains(rs[0].Reason, "no answer within the agent timeout of 200ms") {
		t.Fatalf("results %+v, want an error naming the agent timeout", rs)
	}
}

// killerThenSolver kills its desktop's X server during every episode of
// shell-write, and answers count-lines right.
type killerThenSolver struct {
	task string
	kill func()
}

func (a *killerThenSolver) Start(_ context.Context, t agent.Task) error {
	a.task = t.ID
	return nil
}
func (a *killerThenSolver) Stop(context.Context) error { return nil }
func (a *killerThenSolver) Next(context.Context, agent.Observation, []agent.Turn) (agent.Turn, error) {
	if a.task == "impossible-printer" {
		a.kill()
		return agent.Turn{Actions: []action.Action{{Kind: action.Click, Point: action.At(5, 5)}}}, nil
	}
	return agent.Turn{Actions: []action.Action{{Kind: action.Answer, Text: "3"}}}, nil
}

// TestDeadDesktopIsReplaced kills the desktop in the middle of
// an episode, at every attempt: that episode is an error after 3 attempts,
// each on a new desktop, and the next episode of the same pool slot
// succeeds on a new desktop.
func TestDeadDesktopIsReplaced(t *testing.T) {
	full := suite(t)
	s := only(full, "impossible-printer")
	cl, _ := full.Task("count-lines")
	s.Tasks = append(s.Tasks, cl)
	var d *mem.Env
	var started atomic.Int32
	kill := func() { d.Kill() }
	cfg := config(t, s, func() (agent.Agent, error) { return &killerThenSolver{kill: kill}, nil })
	cfg.Parallel = 1
	cfg.NewEnv = func(ctx context.Context) (env.Env, error) {
		started.Add(1)
		var err error
		d, err = mem.New(mem.WithSize(action.Size{W: 1920, H: 1080}))
		return d, err
	}
	var progress strings.Builder
	cfg.Progress = &syncWriter{w: &progress}
	var lost []store.Lost
	cfg.Lost = func(l store.Lost) { lost = append(lost, l) }
	rs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Each death is recorded, with the episode it killed, as the place's
	// environment lost and started again.
	if len(lost) != 3 {
		t.Errorf("%d lost environments recorded, want one per death (3): %+v", len(lost), lost)
	}
	for _, l := range lost {
		if l.Name != "local 1" || l.Task != "impossible-printer" || l.Repeat != 0 || l.At.IsZero() ||
			!strings.HasPrefix(l.Reason, "while running impossible-printer") || !strings.HasSuffix(l.Reason, "(started again)") {
			t.Errorf("lost environment %+v: want local 1, the episode it died under (task and repeat), when, and that it started again", l)
		}
	}
	got := outcomes(rs)
	if got["impossible-printer"] != "error" || got["count-lines"] != "success" {
		b, _ := json.Marshal(rs)
		t.Fatalf("results %s: want shell-write an error and count-lines a success on a new desktop", b)
	}
	for _, r := range rs {
		if r.Task == "impossible-printer" && (r.Attempts != 3 || !strings.Contains(r.Reason, "environment closed")) {
			t.Fatalf("shell-write: %d attempts, %q: want 3 attempts naming the closed environment", r.Attempts, r.Reason)
		}
	}
	if n := started.Load(); n != 4 {
		t.Fatalf("%d desktops started, want 4 (the first and one after each of 3 deaths)", n)
	}
	if !strings.Contains(progress.String(), "environment local 1 died") {
		t.Fatalf("the progress does not say the environment died:\n%s", progress.String())
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// TestResumeRerunsErrors records an episode that ended in an
// infrastructure error, then runs again on the same store: that episode
// is run again (and now succeeds), the successful one is not.
func TestResumeRerunsErrors(t *testing.T) {
	full := suite(t)
	s := only(full, "impossible-printer")
	cl, _ := full.Task("count-lines")
	s.Tasks = append(s.Tasks, cl)
	flaky := func() (agent.Agent, error) {
		return &scriptedAgent{next: func(int) (agent.Turn, error) { return agent.Turn{}, agent.Transient(errors.New("503")) }}, nil
	}
	var first agent.Factory = func() (agent.Agent, error) { return &byTask{shell: flaky}, nil }
	cfg := config(t, s, first)
	cfg.Parallel, cfg.Retries = 1, -1
	rs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(rs); got["impossible-printer"] != "error" || got["count-lines"] != "success" {
		t.Fatalf("first run: %v", got)
	}
	kept := map[string]time.Time{}
	for _, r := range rs {
		kept[r.Task] = r.Finished
	}
	replay, _ := agent.Lookup("replay")
	cfg.Agent = replay
	var progress strings.Builder
	cfg.Progress = &syncWriter{w: &progress}
	rs, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(rs); got["impossible-printer"] != "success" || got["count-lines"] != "success" {
		t.Fatalf("second run: %v; want the error run again and now a success", got)
	}
	for _, r := range rs {
		if r.Task == "count-lines" && !r.Finished.Equal(kept[r.Task]) {
			t.Fatalf("count-lines succeeded before and was run again")
		}
	}
	if !strings.Contains(progress.String(), "1 that ended in an error run again") {
		t.Fatalf("progress does not say an error is run again:\n%s", progress.String())
	}
}

// byTask fails shell-write through shell and answers count-lines.
type byTask struct {
	shell agent.Factory
	a     agent.Agent
}

func (b *byTask) Start(ctx context.Context, t agent.Task) error {
	if t.ID == "impossible-printer" {
		b.a, _ = b.shell()
	} else {
		b.a = &scriptedAgent{next: func(int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{{Kind: action.Answer, Text: "3"}}}, nil
		}}
	}
	return b.a.Start(ctx, t)
}
func (b *byTask) Next(ctx context.Context, o agent.Observation, h []agent.Turn) (agent.Turn, error) {
	return b.a.Next(ctx, o, h)
}
func (b *byTask) Stop(ctx context.Context) error { return b.a.Stop(ctx) }

// stuckEnv is a desktop whose actions never return, whatever their
// context says, until the environment is closed.
type stuckEnv struct {
	env.Env
	closed chan struct{}
	once   sync.Once
	acting chan struct{}
}

func (e *stuckEnv) Do(ctx context.Context, acts []action.Action) ([]action.Step, error) {
	if len(acts) == 0 {
		return nil, nil
	}
	close(e.acting)
	<-e.closed
	return nil, env.ErrClosed
}

func (e *stuckEnv) Close() error {
	e.once.Do(func() { close(e.closed) })
	return e.Env.Close()
}

// TestInterruptStopsAStuckRun cancels a run whose environment is stuck in
// an action that ignores its context: Run closes the environment under it
// and returns, recording nothing for that episode.
func TestInterruptStopsAStuckRun(t *testing.T) {
	s := only(suite(t), "impossible-printer")
	acting := make(chan struct{})
	cfg := config(t, s, scripted(func(int) (agent.Turn, error) {
		return agent.Turn{Actions: []action.Action{{Kind: action.Click, Point: action.At(5, 5)}}}, nil
	}))
	cfg.Parallel, cfg.StopGrace = 1, 500*time.Millisecond
	cfg.NewEnv = func(ctx context.Context) (env.Env, error) {
		d, err := newMem(ctx)
		return &stuckEnv{Env: d, closed: make(chan struct{}), acting: acting}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := Run(ctx, cfg)
		errc <- err
	}()
	<-acting
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return within 5 s of the interrupt")
	}
	if rs, _ := cfg.Store.Results(); len(rs) != 0 {
		t.Fatalf("an interrupted episode was recorded: %+v", rs)
	}
}

// sizeAgent records the screen it is told of and the size of the
// screenshot it sees, then answers.
type sizeAgent struct {
	mu    *sync.Mutex
	seen  map[string]string
	task  string
	start action.Size
}

func (a *sizeAgent) Start(_ context.Context, t agent.Task) error {
	a.task, a.start = t.ID, t.Screen
	return nil
}
func (a *sizeAgent) Stop(context.Context) error { return nil }
func (a *sizeAgent) Next(_ context.Context, o agent.Observation, _ []agent.Turn) (agent.Turn, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(o.Screenshot))
	if err != nil {
		return agent.Turn{}, err
	}
	a.mu.Lock()
	a.seen[a.task] = fmt.Sprintf("%dx%d shot %dx%d", a.start.W, a.start.H, cfg.Width, cfg.Height)
	a.mu.Unlock()
	return agent.Turn{Actions: []action.Action{{Kind: action.Fail}}}, nil
}

// TestTaskResolutionIsHonoured runs a task that asks for 1280x800 and
// one at the default size on one local place: each runs on a desktop of
// its size.
func TestTaskResolutionIsHonoured(t *testing.T) {
	full := suite(t)
	small := *full.Tasks[0]
	small.ID, small.Environment.Resolution = "small", "1280x800"
	big := *full.Tasks[0]
	big.ID = "big"
	s := *full
	s.Tasks = []*task.Task{&small, &big}
	var mu sync.Mutex
	seen := map[string]string{}
	cfg := config(t, &s, func() (agent.Agent, error) { return &sizeAgent{mu: &mu, seen: seen}, nil })
	cfg.Sources = []env.Source{{Name: "local 1", Type: "x11", Start: func(ctx context.Context, size action.Size) (env.Env, error) {
		return mem.New(mem.WithSize(size))
	}}}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if seen["small"] != "1280x800 shot 1280x800" || seen["big"] != "1920x1080 shot 1920x1080" {
		t.Fatalf("screens seen: %v; want small at 1280x800 and big at 1920x1080", seen)
	}
}

// fewCaps is a desktop that says it offers only a screen and windows.
type fewCaps struct{ env.Env }

func (e fewCaps) Info(ctx context.Context) (env.Info, error) {
	i, err := e.Env.Info(ctx)
	i.Caps = []task.Capability{task.CapWindows}
	return i, err
}

// TestPreflightRefusesWhatThePoolCannotRun: a task of a type the pool
// lacks, a size no fixed-size place has, and a check that needs a
// capability the environment lacks are each refused by name before any
// episode is recorded.
func TestPreflightRefusesWhatThePoolCannotRun(t *testing.T) {
	full := suite(t)
	vnc := *full.Tasks[0]
	vnc.ID, vnc.Environment.Type = "on-vnc", "vnc"
	small := *full.Tasks[0]
	small.ID, small.Environment.Resolution = "small", "1280x800"
	sw, _ := full.Task("editor-save")
	local := func(ctx context.Context, size action.Size) (env.Env, error) {
		d, err := newMem(ctx)
		return fewCaps{d}, err
	}
	fixed := env.Source{Name: "guest https://10.0.0.5:7400", Type: "x11", Size: action.Size{W: 1920, H: 1080}, Start: local}
	tests := []struct {
		name  string
		tasks []*task.Task
		want  string
	}{
		{"type", []*task.Task{&vnc}, "task on-vnc needs a vnc environment of 1920x1080; the pool has guest https://10.0.0.5:7400 (x11, 1920x1080)"},
		{"size", []*task.Task{&small}, "task small needs an x11 environment of 1280x800; the pool has guest https://10.0.0.5:7400 (x11, 1920x1080)"},
		{"capability", []*task.Task{sw}, `task editor-save: check "exact on file ~/note.txt" needs files, which guest https://10.0.0.5:7400 does not offer`},
		{"observation", []*task.Task{sw}, `observation mode som needs tree, which guest https://10.0.0.5:7400 does not offer`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := *full
			s.Tasks = tc.tasks
			cfg := config(t, &s, scripted(func(int) (agent.Turn, error) { return agent.Turn{}, errors.New("never asked") }))
			cfg.Sources = []env.Source{fixed}
			cfg.Obs = ObsMarks
			_, err := Run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want pre-flight refusing with %q", err, tc.want)
			}
			if rs, _ := cfg.Store.Results(); len(rs) != 0 {
				t.Fatalf("episodes recorded: %+v", rs)
			}
		})
	}
}

// TestPreflightKeepsLocalServicesLocal: a task that uses a command
// service (started on this machine's loopback) is refused, naming the
// service and the place, when only a place on another machine could run
// it; a place on this machine's loopback serves it.
func TestPreflightKeepsLocalServicesLocal(t *testing.T) {
	full := suite(t)
	uses := *full.Tasks[0]
	uses.ID, uses.Instruction = "uses-db", "Open {{services.db}} and look."
	start := func(ctx context.Context, size action.Size) (env.Env, error) {
		return newMem(ctx)
	}
	s := *full
	s.Tasks = []*task.Task{&uses}
	s.Services = []task.Service{{Name: "db", Command: []string{"sleep", "60", "{{port}}"}}}
	cfg := config(t, &s, scripted(func(int) (agent.Turn, error) { return agent.Turn{}, errors.New("never asked") }))
	cfg.Sources = []env.Source{{Name: "guest https://10.0.0.5:7400", Type: "x11", Remote: true, Start: start}}
	want := "task uses-db uses the service(s) db, which Proctor starts on this machine's loopback; guest https://10.0.0.5:7400 runs on another machine and cannot reach them"
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run = %v, want pre-flight refusing with %q", err, want)
	}
	if rs, _ := cfg.Store.Results(); len(rs) != 0 {
		t.Fatalf("episodes recorded: %+v", rs)
	}
	// The same task without the service is served by the remote place.
	plain := *full.Tasks[0]
	j := job{t: &plain, local: localServices(&s, &plain)}
	p := &place{src: cfg.Sources[0]}
	if !p.serves(j) {
		t.Fatalf("a remote place refuses %s, which uses no service", plain.ID)
	}
	if j := (job{t: &uses, local: localServices(&s, &uses)}); p.serves(j) || !(&place{src: env.Source{Type: "x11", Start: start}}).serves(j) {
		t.Fatalf("job %+v: a remote place serves it, or a local one refuses it", j.local)
	}
}

// TestQueueKeepsWorkersForReturningJobs: a worker with nothing to take
// waits while a job is in flight, and takes it when its place gives it
// back; once nothing is queued or in flight, every worker stops.
func TestQueueKeepsWorkersForReturningJobs(t *testing.T) {
	q := newQueue([]job{{repeat: 7}})
	every := func(job) bool { return true }
	a, ok := q.pop("", every)
	if !ok {
		t.Fatal("the first worker got nothing")
	}
	got := make(chan job, 1)
	go func() {
		if j, ok := q.pop("", every); ok {
			got <- j
			q.done()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("the second worker took a job while none was queued")
	case <-time.After(100 * time.Millisecond):
	}
	q.back(a) // the first worker's place died
	if j, ok := <-got; !ok || j.repeat != 7 {
		t.Fatalf("the second worker got %+v, %v; want the job given back", j, ok)
	}
	if _, ok := q.pop("", every); ok {
		t.Fatal("a job was handed out twice")
	}
}

// waiters returns how many workers of kind wait in pop.
func (q *queue) waiters(kind string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting[kind]
}

// TestQueueLetsIdleWorkersGo: once nothing is queued, a worker waits only
// while fewer workers of its kind wait than there are episodes in flight
// (each may come back); the others are let go at once, so that their
// places are given back before the run ends. A worker of another kind
// does not stand in for one.
func TestQueueLetsIdleWorkersGo(t *testing.T) {
	q := newQueue([]job{{repeat: 1}, {repeat: 2}})
	every := func(job) bool { return true }
	a, _ := q.pop("pod", every)
	if _, ok := q.pop("pod", every); !ok {
		t.Fatal("the second worker got nothing")
	}
	// Two in flight: a third and a fourth worker of the kind wait.
	got := make(chan job, 2)
	for range 2 {
		go func() {
			if j, ok := q.pop("pod", every); ok {
				got <- j
				q.done()
			}
		}()
	}
	for q.waiters("pod") < 2 {
		time.Sleep(time.Millisecond)
	}
	// A worker of another kind waits too: it cannot take their jobs.
	other := make(chan bool, 1)
	go func() {
		_, ok := q.pop("desktop", func(job) bool { return false })
		other <- ok
	}()
	for q.waiters("desktop") < 1 {
		time.Sleep(time.Millisecond)
	}
	// A fifth of the kind is not needed: it goes at once.
	if _, ok := q.pop("pod", every); ok {
		t.Fatal("the fifth worker got a job")
	}
	q.done()  // the second job ends: one in flight, two waiting
	q.back(a) // the first job's place is lost: a waiting worker takes it
	if j := <-got; j.repeat != 1 {
		t.Fatalf("a waiting worker got %+v, want the job given back", j)
	}
	if ok := <-other; ok {
		t.Fatal("the worker of another kind got a job")
	}
}

// countingSleeper ignores its context, as a broken agent may; it counts
// the calls it gets.
type countingSleeper struct {
	next, stop *atomic.Int32
}

func (a countingSleeper) Start(context.Context, agent.Task) error { return nil }
func (a countingSleeper) Stop(context.Context) error {
	a.stop.Add(1)
	return nil
}
func (a countingSleeper) Next(context.Context, agent.Observation, []agent.Turn) (agent.Turn, error) {
	a.next.Add(1)
	time.Sleep(time.Hour)
	return agent.Turn{}, nil
}

// TestAbandonedAgentIsNotCalledAgain: an agent that does not return when
// its call times out may still be running it, so it is neither asked
// again nor stopped; the episode is an infrastructure fault.
func TestAbandonedAgentIsNotCalledAgain(t *testing.T) {
	s := only(suite(t), "impossible-printer")
	var next, stop atomic.Int32
	cfg := config(t, s, func() (agent.Agent, error) { return countingSleeper{&next, &stop}, nil })
	cfg.Parallel, cfg.AgentTimeout, cfg.Retries = 1, 200*time.Millisecond, -1
	rs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Outcome != "error" || !strings.Contains(rs[0].Reason, "did not return") {
		t.Fatalf("results %+v, want an error saying the agent did not return", rs)
	}
	if next.Load() != 1 || stop.Load() != 0 {
		t.Fatalf("Next called %d times and Stop %d; want 1 and 0", next.Load(), stop.Load())
	}
}

// TestSlowAgentIsUncompleted: an HTTP agent that thinks past the
// task's wall time is uncompleted at its first attempt, with the reason,
// and is not retried as an infrastructure fault.
func TestSlowAgentIsUncompleted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the server sees the caller hang up
		if r.URL.Path == "/step" {
			select { // thinks until the caller gives up
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
			return
		}
		w.Write([]byte("{}"))
	}))
	defer srv.Close()
	s := only(suite(t), "count-lines")
	short := *s.Tasks[0]
	short.TimeLimit = duration.Duration(3 * time.Second) // ample for the first observation on a loaded machine
	s.Tasks = []*task.Task{&short}
	cfg := config(t, s, func() (agent.Agent, error) { return &agent.HTTP{URL: srv.URL}, nil })
	cfg.Parallel = 1
	rs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Outcome != "uncompleted" || rs[0].Attempts != 1 || !strings.Contains(rs[0].Reason, "wall-time limit of 3s was reached while the agent was thinking (step 1)") {
		t.Fatalf("results %+v, want uncompleted at the first attempt, naming the wall time", rs)
	}
}

// TestFailingServiceIsNotTheAgentsFault: a model service that keeps
// failing until the wall time runs out is an error, not uncompleted.
func TestFailingServiceIsNotTheAgentsFault(t *testing.T) {
	s := only(suite(t), "impossible-printer")
	short := *s.Tasks[0]
	short.TimeLimit = duration.Duration(2 * time.Second)
	s.Tasks = []*task.Task{&short}
	cfg := config(t, s, scripted(func(int) (agent.Turn, error) { return agent.Turn{}, agent.Transient(errors.New("503 overloaded")) }))
	cfg.Parallel, cfg.Backoff, cfg.Retries = 1, time.Second, -1
	rs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Outcome != "error" || !strings.Contains(rs[0].Reason, "503 overloaded") {
		t.Fatalf("results %+v, want an error naming the service's failure", rs)
	}
}

// slowReset is a desktop whose reset takes a while longer, and says when
// it ended.
type slowReset struct {
	env.Env
	delay time.Duration
	ended *atomic.Int64 // UnixNano
}

func (e slowReset) Reset(ctx context.Context, s env.Setup) error {
	time.Sleep(e.delay)
	err := e.Env.Reset(ctx, s)
	e.ended.Store(time.Now().UnixNano())
	return err
}

// TestEpisodeTimeLeavesOutSetup: an episode's time (Duration) runs from
// the end of the environment's reset and setup, which is timed apart
// (Setup), so that a slow reset does not make an agent look slow.
func TestEpisodeTimeLeavesOutSetup(t *testing.T) {
	const delay = 2 * time.Second
	s := only(suite(t), "impossible-printer")
	var ended atomic.Int64
	cfg := config(t, s, scripted(func(int) (agent.Turn, error) {
		return agent.Turn{Actions: []action.Action{{Kind: action.Fail}}}, nil
	}))
	cfg.Parallel = 1
	cfg.NewEnv = func(ctx context.Context) (env.Env, error) {
		d, err := newDesktop(ctx)
		return slowReset{Env: d, delay: delay, ended: &ended}, err
	}
	rs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Outcome != "success" {
		t.Fatalf("results %+v, want one success", rs)
	}
	r := rs[0]
	// The episode ended at Finished; it cannot have lasted longer than
	// the time since the reset ended.
	sinceReset := r.Finished.Sub(time.Unix(0, ended.Load()))
	if r.Setup < delay || r.Duration > sinceReset {
		t.Errorf("setup %s, episode %s, %s from the reset's end to the finish; want a setup of at least %s and the episode within the time after it",
			r.Setup, r.Duration, sinceReset, delay)
	}
	stored, err := cfg.Store.Results()
	if err != nil || len(stored) != 1 || stored[0].Setup != r.Setup || stored[0].Duration != r.Duration {
		t.Errorf("stored %+v (%v), want the setup and episode times kept", stored, err)
	}
}

// TestMarksAreStored: in set-of-mark mode each step keeps the table of
// marks the agent was shown, for the viewer.
func TestMarksAreStored(t *testing.T) {
	s := only(suite(t), "editor-save")
	var seen atomic.Int32
	cfg := config(t, s, func() (agent.Agent, error) { return &markCounter{seen: &seen}, nil })
	cfg.Parallel, cfg.Obs = 1, ObsMarks
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	steps, err := cfg.Store.Turns("editor-save", 0)
	if err != nil || len(steps) != 1 {
		t.Fatalf("steps %+v, %v", steps, err)
	}
	var marks []struct {
		Tag  int    `json:"tag"`
		Role string `json:"role"`
	}
	if err := json.Unmarshal(steps[0].Marks, &marks); err != nil || len(marks) == 0 || len(marks) != int(seen.Load()) || marks[0].Tag != 1 {
		t.Fatalf("stored marks %s (%v); the agent was shown %d", steps[0].Marks, err, seen.Load())
	}
}

// markCounter counts the marks it is shown, then gives up.
type markCounter struct{ seen *atomic.Int32 }

func (a *markCounter) Start(context.Context, agent.Task) error { return nil }
func (a *markCounter) Stop(context.Context) error              { return nil }
func (a *markCounter) Next(_ context.Context, o agent.Observation, _ []agent.Turn) (agent.Turn, error) {
	a.seen.Store(int32(len(o.Marks)))
	return agent.Turn{Actions: []action.Action{{Kind: action.Fail}}}, nil
}

// fakeEnv starts, resets and describes itself, and does nothing else:
// enough for episodes whose agent never starts. It needs no desktop.
type fakeEnv struct{ env.Env }

func (fakeEnv) Info(context.Context) (env.Info, error) {
	return env.Info{Kind: "fake", Screen: action.Size{W: 1920, H: 1080}, Caps: task.DesktopCapabilities}, nil
}
func (fakeEnv) Reset(context.Context, env.Setup) error { return nil }
func (fakeEnv) Close() error                           { return nil }

// refusedAgent is an agent whose service refuses every connection.
type refusedAgent struct{}

func (refusedAgent) Start(context.Context, agent.Task) error {
	return agent.Transient(errors.New("dial tcp 127.0.0.1:1: connect: connection refused"))
}
func (refusedAgent) Stop(context.Context) error { return nil }
func (refusedAgent) Next(context.Context, agent.Observation, []agent.Turn) (agent.Turn, error) {
	return agent.Turn{}, errors.New("never asked")
}

// TestRetriesAreToldAndTimed: an agent that refuses connections is
// retried, each retry one line of the progress (what failed, attempt k of
// n, the wait), with no wait after the last attempt of a call or of the
// episode; the episode then ends as an error that took the time it took.
func TestRetriesAreToldAndTimed(t *testing.T) {
	s := only(suite(t), "impossible-printer")
	cfg := config(t, s, func() (agent.Agent, error) { return refusedAgent{}, nil })
	cfg.Parallel, cfg.Repeat = 1, 1
	cfg.Sources = []env.Source{{Name: "fake 1", Type: "x11", Start: func(context.Context, action.Size) (env.Env, error) { return fakeEnv{}, nil }}}
	var out bytes.Buffer
	cfg.Progress = &syncWriter{w: &out}
	rs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Outcome != "error" || !strings.Contains(rs[0].Reason, "infrastructure fault after 3 attempts") {
		t.Fatalf("results %+v, want an error after 3 attempts", rs)
	}
	// Waits of 10, 20 and 40 ms within each of the 3 attempts, and of 10
	// and 20 ms between them: at least 240 ms were spent.
	if min := 3*70*time.Millisecond + 30*time.Millisecond; rs[0].Duration < min {
		t.Errorf("the episode lasted %s; it waited at least %s", rs[0].Duration, min)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var retries []string
	for _, l := range lines {
		if strings.HasPrefix(l, "retry: ") {
			retries = append(retries, l)
		}
	}
	tests := []struct {
		n    int
		want string
	}{
		{0, "retry: impossible-printer: agent start failed (transient failure: dial tcp 127.0.0.1:1: connect: connection refused): attempt 1 of 4, retrying in 10ms"},
		{1, "retry: impossible-printer: agent start failed (transient failure: dial tcp 127.0.0.1:1: connect: connection refused): attempt 2 of 4, retrying in 20ms"},
		{2, "retry: impossible-printer: agent start failed (transient failure: dial tcp 127.0.0.1:1: connect: connection refused): attempt 3 of 4, retrying in 40ms"},
		{3, "retry: impossible-printer: infrastructure fault (agent start: transient failure: dial tcp 127.0.0.1:1: connect: connection refused): episode attempt 1 of 3, retrying in 10ms"},
		{7, "retry: impossible-printer: infrastructure fault (agent start: transient failure: dial tcp 127.0.0.1:1: connect: connection refused): episode attempt 2 of 3, retrying in 20ms"},
	}
	// 3 lines per attempt's call, 1 per episode retry: 3+1+3+1+3.
	if len(retries) != 11 {
		t.Fatalf("%d retry lines, want 11:\n%s", len(retries), out.String())
	}
	for _, tc := range tests {
		if retries[tc.n] != tc.want {
			t.Errorf("retry line %d:\n%s\nwant\n%s", tc.n+1, retries[tc.n], tc.want)
		}
	}
	// The episode's line, then its reason.
	if last := lines[len(lines)-2]; !strings.Contains(last, "error        impossible-printer (0 steps, ") || strings.Contains(last, " 0s)") {
		t.Errorf("the episode's line %q should report the error and its time", last)
	}
	if why := lines[len(lines)-1]; !strings.HasPrefix(why, "    error: infrastructure fault after 3 attempts: agent start:") {
		t.Errorf("the last line %q should give the error's reason", why)
	}
}

// TestForbiddenSetupIsNotRetried: a task whose setup writes where its
// environment refuses is an error at its first attempt, never retried as
// an infrastructure fault.
func TestForbiddenSetupIsNotRetried(t *testing.T) {
	s := only(suite(t), "count-lines")
	bad := *s.Tasks[0]
	bad.Setup = []task.Step{{Write: &task.Write{Path: "/etc/sky.txt", Content: "blue"}}}
	s.Tasks = []*task.Task{&bad}
	replay, _ := agent.Lookup("replay")
	cfg := config(t, s, replay)
	cfg.Parallel = 1
	var progress strings.Builder
	cfg.Progress = &syncWriter{w: &progress}
	rs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Outcome != "error" || rs[0].Attempts != 1 || !strings.Contains(rs[0].Reason, "forbidden") {
		t.Fatalf("results %+v, want an error at the first attempt naming the refusal", rs)
	}
	if strings.Contains(progress.String(), "retry:") {
		t.Fatalf("the refused setup was retried:\n%s", progress.String())
	}
}

// TestValidationProgressHasNoRate: a validation's progress lines show no
// success rate (its trajectories are meant to differ); a run's do.
func TestValidationProgressHasNoRate(t *testing.T) {
	for _, validation := range []bool{false, true} {
		replay, _ := agent.Lookup("replay")
		cfg := config(t, only(suite(t), "count-lines"), replay)
		var out strings.Builder
		cfg.Progress, cfg.Validation = &syncWriter{w: &out}, validation
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "| success "); got == validation {
			t.Fatalf("validation %v: the progress shows a success rate: %v\n%s", validation, got, out.String())
		}
	}
}

// TestProgressLines: the running success rate leaves errors out (n/a
// while nothing was decided), and an error's line is followed by its
// reason, so that a run whose episodes all fail alike says why.
func TestProgressLines(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, 3, 0, 0)
	p.done(store.Result{Task: "a", Outcome: "error", Reason: "step 1: agent: agent at http://127.0.0.1:9/step: 500 Internal Server Error"})
	p.done(store.Result{Task: "b", Outcome: "success"})
	p.done(store.Result{Task: "c", Outcome: "failure"})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for i, want := range []string{"success n/a", "error: step 1: agent: agent at http://127.0.0.1:9/step: 500 Internal Server Error", "success 100.0%", "success 50.0%"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d %q lacks %q", i+1, lines[i], want)
		}
	}
}

// killableEnv is an in-memory desktop that dies at a click while kills
// are left.
type killableEnv struct {
	*mem.Env
	kills *atomic.Int32
}

func (e killableEnv) Do(ctx context.Context, acts []action.Action) ([]action.Step, error) {
	if len(acts) > 0 && acts[0].Kind == action.Click && e.kills.Add(-1) >= 0 {
		e.Env.Kill()
	}
	return e.Env.Do(ctx, acts)
}

// TestLostPlaceCountsItsAttempts: a guest that dies in the middle of an
// episode leaves the pool, named with the episode it was running; the
// episode reruns on another guest, or ends as an error when none is left,
// and its Attempts count the attempt on the lost guest too.
func TestLostPlaceCountsItsAttempts(t *testing.T) {
	tests := []struct {
		name     string
		kills    int32
		outcome  string
		attempts []int // of the two repeats, in order
		lost     int
	}{
		{"one guest lost", 1, "success", []int{1, 2}, 1},
		{"both guests lost", 2, "error", []int{1, 1}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var kills atomic.Int32
			kills.Store(tc.kills)
			cfg := config(t, only(suite(t), "count-lines"), scripted(func(step int) (agent.Turn, error) {
				if step == 1 {
					return agent.Turn{Actions: []action.Action{{Kind: action.Click, Point: action.At(5, 5)}}}, nil
				}
				return agent.Turn{Actions: []action.Action{{Kind: action.Answer, Text: "3"}}}, nil
			}))
			cfg.Repeat, cfg.Retries = 2, -1 // no rerun on the same guest: only on another
			for _, name := range []string{"guest 1", "guest 2"} {
				cfg.Sources = append(cfg.Sources, env.Source{Name: name, Type: "x11", Once: true, Start: func(_ context.Context, size action.Size) (env.Env, error) {
					d, err := mem.New(mem.WithSize(size))
					return killableEnv{Env: d, kills: &kills}, err
				}})
			}
			var lost []store.Lost
			var mu sync.Mutex
			cfg.Lost = func(l store.Lost) {
				mu.Lock()
				defer mu.Unlock()
				lost = append(lost, l)
			}
			rs, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var attempts []int
			for _, r := range rs {
				if r.Outcome != tc.outcome {
					t.Errorf("repeat %d: %s (%s), want %s", r.Repeat, r.Outcome, r.Reason, tc.outcome)
				}
				attempts = append(attempts, r.Attempts)
			}
			slices.Sort(attempts)
			if !slices.Equal(attempts, tc.attempts) {
				t.Errorf("attempts %v, want %v", attempts, tc.attempts)
			}
			if len(lost) != tc.lost {
				t.Fatalf("lost %+v, want %d guests", lost, tc.lost)
			}
			for _, l := range lost {
				if l.Task != "count-lines" || !strings.Contains(l.Reason, fmt.Sprintf("while running count-lines (repeat %d of 2)", l.Repeat+1)) {
					t.Errorf("lost %+v does not name the episode it was running", l)
				}
			}
		})
	}
}

// TestIdlePlacesAreGivenBack: three episodes on three places; once two
// have ended and nothing is queued, one of their places stays ready in
// case the third's place is lost, and the other is closed and released
// while the third still runs (a pod on a cluster goes back then, not at
// the run's end). Every place is released when it is not needed.
func TestIdlePlacesAreGivenBack(t *testing.T) {
	var mu sync.Mutex
	released := map[string]bool{}
	first := make(chan struct{})
	var calls atomic.Int32
	cfg := config(t, only(suite(t), "count-lines"), scripted(func(step int) (agent.Turn, error) {
		if calls.Add(1) == 3 {
			select {
			case <-first:
			case <-time.After(time.Minute):
				return agent.Turn{}, errors.New("no idle place was released while the last episode ran")
			}
		}
		return agent.Turn{Actions: []action.Action{{Kind: action.Answer, Text: "3"}}}, nil
	}))
	cfg.Repeat = 3
	for _, name := range []string{"pod 1", "pod 2", "pod 3"} {
		cfg.Sources = append(cfg.Sources, env.Source{Name: name, Type: "x11", Remote: true,
			Start: func(_ context.Context, size action.Size) (env.Env, error) { return mem.New(mem.WithSize(size)) },
			Release: func() {
				mu.Lock()
				defer mu.Unlock()
				if len(released) == 0 {
					close(first)
				}
				released[name] = true
			}})
	}
	rs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Outcome != "success" {
			t.Errorf("repeat %d: %s (%s)", r.Repeat, r.Outcome, r.Reason)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(rs) != 3 || len(released) != 3 {
		t.Fatalf("%d results, released %v; want 3 and every place", len(rs), released)
	}
}
