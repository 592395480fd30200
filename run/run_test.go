package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/xdesktop"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

func need(t testing.TB) {
	t.Helper()
	for _, b := range []string{"Xvfb", "dbus-daemon", "openbox", "yad", "mousepad"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
}

func suite(t *testing.T) *task.Suite {
	s, ps := task.Load("../testdata/runner")
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	return s
}

func newDesktop(ctx context.Context) (env.Env, error) {
	return xdesktop.Start(ctx, xdesktop.Config{})
}

func config(t *testing.T, s *task.Suite, f agent.Factory) Config {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return Config{Suite: s, Tasks: s.Tasks, Agent: f, Parallel: 2, NewEnv: newDesktop, Store: st, Backoff: 10 * time.Millisecond}
}

func outcomes(rs []store.Result) map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		out[r.Task] = r.Outcome
	}
	return out
}

func TestReplayPassesNoopFails(t *testing.T) {
	need(t)
	s := suite(t)
	ctx := context.Background()
	replay, _ := agent.Lookup("replay")
	cfg := config(t, s, replay)
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
	steps, _ := cfg.Store.Steps("editor-type", 0)
	if len(steps) != 5 || steps[0].Shot == "" || !strings.Contains(string(steps[0].Done), `"element":"text`) {
		t.Fatalf("editor-type steps: %d, first %+v", len(steps), steps[0])
	}

	noop, _ := agent.Lookup("noop")
	rs, err = Run(ctx, config(t, s, noop))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Outcome == "success" {
			t.Errorf("noop passed %s", r.Task)
		}
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

func only(s *task.Suite, id string) *task.Suite {
	t, _ := s.Task(id)
	c := *s
	c.Tasks = []*task.Task{t}
	return &c
}

func TestOutcomesOfFaultsAndBudgets(t *testing.T) {
	need(t)
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
		{"repeated actions stop early", "shell-write", scripted(func(int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{click}}, nil
		}), 0, "early_stopped", "repeated"},
		{"step budget", "count-lines", scripted(func(step int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{{Kind: action.Click, Point: action.At(float64(step), 5)}}}, nil
		}), 0, "uncompleted", "budget"},
		{"cost budget", "dialog-later", scripted(func(step int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{{Kind: action.Wait, Duration: 0.01 * float64(step)}}, Usage: agent.Usage{Cost: 0.4}}, nil
		}), 1.0, "uncompleted", "budget"},
		{"malformed replies then a right answer", "count-lines", scripted(func(step int) (agent.Turn, error) {
			if step < 3 {
				return agent.Turn{Raw: "I think it is three", ParseError: "no code block"}, nil
			}
			return agent.Turn{Actions: []action.Action{{Kind: action.Answer, Text: "3"}}}, nil
		}), 0, "success", "all checks"},
		{"model API down", "shell-write", scripted(func(int) (agent.Turn, error) {
			calls.Add(1)
			return agent.Turn{}, agent.Transient(errors.New("503 overloaded"))
		}), 0, "error", "infrastructure fault after 3 attempts"},
		{"agent refuses", "shell-write", scripted(func(int) (agent.Turn, error) {
			return agent.Turn{}, errors.New("400 bad request")
		}), 0, "error", "the agent failed"},
		{"missing element is the agent's mistake", "shell-write", scripted(func(step int) (agent.Turn, error) {
			if step == 1 {
				return agent.Turn{Actions: []action.Action{{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "Nowhere"}}}}, nil
			}
			return agent.Turn{Actions: []action.Action{{Kind: action.Code, Text: "printf hello > ~/out.txt"}, {Kind: action.Done}}}, nil
		}), 0, "success", "all checks"},
		{"FAIL on an infeasible task", "impossible-printer", scripted(func(int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{{Kind: action.Fail}}}, nil
		}), 0, "success", "all checks"},
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
		})
	}
	if n := calls.Load(); n < 6 {
		t.Fatalf("the failing model API was called %d times: transient faults were not retried", n)
	}
}

// TestDesktopDeathIsAnError kills the desktop's X server in the middle of
// an episode: the episode is retried, then recorded as an error, not as
// the agent's failure.
func TestDesktopDeathIsAnError(t *testing.T) {
	need(t)
	s := only(suite(t), "shell-write")
	var d *xdesktop.Desktop
	killer := scripted(func(step int) (agent.Turn, error) {
		if step == 1 { // kill this desktop's X server, and only it
			for _, pid := range xdesktop.Processes(d.ID()) {
				if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "Xvfb" {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		return agent.Turn{Actions: []action.Action{{Kind: action.Click, Point: action.At(5, 5)}}}, nil
	})
	cfg := config(t, s, killer)
	cfg.Parallel = 1
	cfg.NewEnv = func(ctx context.Context) (env.Env, error) {
		var err error
		d, err = xdesktop.Start(ctx, xdesktop.Config{})
		return d, err
	}
	rs, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Outcome != "error" || rs[0].Attempts != 3 || !strings.Contains(rs[0].Reason, "environment closed") {
		b, _ := json.Marshal(rs)
		t.Fatalf("results %s: want an error after 3 attempts naming the closed environment", b)
	}
}

func TestGUIOnlyRefusesCommands(t *testing.T) {
	acts := []action.Action{
		{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "OK"}},
		{Kind: action.Code, Text: "touch ~/x"},
		{Kind: action.Type, Text: "after"},
	}
	tests := []struct {
		iface   string
		kept    int
		refused bool
	}{
		{"gui", 1, true},
		{"gui+cli", 3, false},
		{"cli", 3, false},
		{"", 3, false},
	}
	for _, tc := range tests {
		got, err := guiOnly(&task.Task{Interface: tc.iface}, acts)
		if len(got) != tc.kept || (err != nil) != tc.refused {
			t.Errorf("interface %q: kept %d, err %v; want %d kept, refused %v", tc.iface, len(got), err, tc.kept, tc.refused)
		}
		if err != nil && !errors.Is(err, env.ErrForbidden) {
			t.Errorf("interface %q: error %v is not ErrForbidden", tc.iface, err)
		}
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
