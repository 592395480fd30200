package episode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/mem"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/proctor-eval/proctor/usage"
)

// countLines is a question task on the in-memory desktop: its answer is 3.
func countLines(t *testing.T) (*task.Suite, *task.Task) {
	t.Helper()
	s, ps := task.Load("../testdata/mem")
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	tk, ok := s.Task("count-lines")
	if !ok {
		t.Fatal("testdata/mem has no count-lines")
	}
	return s, tk
}

func start(t *testing.T, cfg Config, tk *task.Task, faults ...mem.Fault) *Episode {
	t.Helper()
	e, err := mem.New(mem.WithFault(faults...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg.Store, cfg.Settle = st, -1
	ep, err := Start(context.Background(), e, nil, cfg, tk, 0)
	if err != nil {
		t.Fatal(err)
	}
	ep.AgentStarted()
	return ep
}

func turn(acts ...action.Action) agent.Turn { return agent.Turn{Actions: acts} }

var (
	click  = action.Action{Kind: action.Click, Point: action.At(5, 5)}
	answer = action.Action{Kind: action.Answer, Text: "3"}
)

// TestEndConditions plays turns on the in-memory desktop until Next says
// the episode ended, and checks each end condition of the one list, its
// outcome and reason.
func TestEndConditions(t *testing.T) {
	s, base := countLines(t)
	tests := []struct {
		name    string
		cfg     Config
		limit   time.Duration // the task's wall time; 0: its own
		turn    func(step int) agent.Turn
		how     How
		end     check.End
		outcome check.Outcome
		reason  string
		steps   int
	}{
		{name: "terminal action", turn: func(int) agent.Turn { return turn(answer) },
			end: check.EndAgent, outcome: check.Success, reason: "all checks passed", steps: 1},
		{name: "early stop", cfg: Config{EarlyStop: 3}, turn: func(int) agent.Turn { return turn(click) },
			end: check.EndEarlyStop, outcome: check.EarlyStopped, reason: "repeated", steps: 3},
		{name: "step budget", turn: func(step int) agent.Turn {
			return turn(action.Action{Kind: action.Click, Point: action.At(float64(step), 5)})
		},
			end: check.EndBudget, outcome: check.Uncompleted, reason: "the step budget of 5 steps was used up", steps: 5},
		{name: "cost budget", cfg: Config{CostBudget: 1}, turn: func(step int) agent.Turn {
			tr := turn(action.Action{Kind: action.Click, Point: action.At(float64(step), 5)})
			tr.Usage = usage.Usage{Cost: 0.4}
			return tr
		}, end: check.EndBudget, outcome: check.Uncompleted, reason: "the cost budget of $1 was spent ($1.2)", steps: 3},
		// A wait past the limit: the wall time ends the episode in its first
		// step, whatever part of it a loaded machine is in then (steps: -1,
		// not compared).
		{name: "wall time", limit: time.Second, turn: func(step int) agent.Turn {
			return turn(action.Action{Kind: action.Wait, Duration: 5})
		}, end: check.EndBudget, outcome: check.Uncompleted, reason: "the wall-time limit of 1s was reached", steps: -1},
		{name: "a refused action is fed back, then the answer", turn: func(step int) agent.Turn {
			if step == 1 {
				return turn(action.Action{Kind: action.Click, Point: action.At(99999, 5)}, answer)
			}
			return turn(answer)
		}, end: check.EndAgent, outcome: check.Success, reason: "all checks passed", steps: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := *base
			if tc.limit > 0 {
				tk.TimeLimit = duration.Duration(tc.limit)
			}
			cfg := tc.cfg
			cfg.Suite = s
			ep := start(t, cfg, &tk)
			ctx := context.Background()
			for ep.Next(ctx) {
				obs, err := ep.Observe(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if obs.Step == 2 && strings.HasPrefix(tc.name, "a refused") && !strings.Contains(obs.Feedback, "outside") {
					t.Fatalf("feedback %q does not tell of the refused click", obs.Feedback)
				}
				if err := ep.Act(ctx, tc.turn(obs.Step)); err != nil && !errors.Is(err, ErrWallTime) {
					t.Fatal(err) // Act's error means the episode ended, by the wall time alone here
				}
			}
			end, ok := ep.Ending()
			if !ok || end.How != tc.how || end.End != tc.end {
				t.Fatalf("ending %+v, want %v %v", end, tc.how, tc.end)
			}
			res, err := ep.Finish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != string(tc.outcome) || !strings.Contains(res.Reason, tc.reason) || tc.steps >= 0 && res.Steps != tc.steps {
				t.Fatalf("result %s %q after %d steps, want %s %q after %d", res.Outcome, res.Reason, res.Steps, tc.outcome, tc.reason, tc.steps)
			}
		})
	}
}

// TestAbortMapsErrors: each kind of error ends the episode as Abort's
// table says.
func TestAbortMapsErrors(t *testing.T) {
	_, base := countLines(t)
	tests := []struct {
		name    string
		started bool
		limit   time.Duration
		wait    time.Duration // before the error comes
		err     error
		how     How
		reason  string
	}{
		{name: "the agent's start fails", err: errors.New("refused"), how: ByInfrastructure, reason: "agent start: refused"},
		{name: "the agent's turn fails transiently", started: true, err: agent.Transient(errors.New("503")), how: ByInfrastructure, reason: "step 1: agent:"},
		{name: "the agent's turn fails", started: true, err: errors.New("400 bad request"), how: ByAgentFault, reason: "step 1: the agent failed: 400 bad request"},
		{name: "the agent thinks past the wall time", started: true, limit: 3 * time.Second, wait: 3500 * time.Millisecond,
			err: context.DeadlineExceeded, how: ByChecks, reason: "the wall-time limit of 3s was reached while the agent was thinking (step 1)"},
		{name: "an infrastructure fault", started: true, err: infra(errors.New("disk full")), how: ByInfrastructure, reason: "disk full"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := *base
			if tc.limit > 0 {
				tk.TimeLimit = duration.Duration(tc.limit)
			}
			ep := start(t, Config{}, &tk)
			ep.started = tc.started
			ctx := context.Background()
			if tc.started {
				if !ep.Next(ctx) {
					t.Fatal("the episode ended before its first step")
				}
				if _, err := ep.Observe(ctx); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(tc.wait)
			ep.Abort(ctx, tc.err)
			if ep.Next(ctx) {
				t.Fatal("Next after Abort says the episode goes on")
			}
			end, _ := ep.Ending()
			if end.How != tc.how || !strings.Contains(end.Reason, tc.reason) {
				t.Fatalf("ending %+v, want %v with %q", end, tc.how, tc.reason)
			}
			res, err := ep.Finish(ctx)
			switch tc.how {
			case ByInfrastructure:
				if !errors.Is(err, ErrInfrastructure) {
					t.Fatalf("Finish = %v, want an infrastructure fault", err)
				}
			case ByAgentFault:
				if err != nil || res.Outcome != string(check.Error) {
					t.Fatalf("Finish = %s, %v; want the agent's error", res.Outcome, err)
				}
			case ByChecks:
				if err != nil || res.Outcome != string(check.Uncompleted) {
					t.Fatalf("Finish = %s, %v; want uncompleted", res.Outcome, err)
				}
			}
		})
	}
}

// TestObserveFaultIsInfrastructure: an environment that fails while
// observed, with the wall time left, ends the episode as a fault of the
// infrastructure, run again by the runner.
func TestObserveFaultIsInfrastructure(t *testing.T) {
	_, tk := countLines(t)
	ep := start(t, Config{Obs: ObsScreenshot}, tk, mem.Fault{Method: "Screenshot", Call: 1, Err: errors.New("X server gone")})
	ctx := context.Background()
	if !ep.Next(ctx) {
		t.Fatal("ended before its first step")
	}
	if _, err := ep.Observe(ctx); !errors.Is(err, ErrInfrastructure) {
		t.Fatalf("Observe = %v, want an infrastructure fault", err)
	}
	if _, err := ep.Finish(ctx); !errors.Is(err, ErrInfrastructure) || !strings.Contains(err.Error(), "step 1: observe:") {
		t.Fatalf("Finish = %v, want the observation's fault", err)
	}
}

// TestProblemsCounted: replies that could not be used and actions refused
// are counted in the result, with their first reasons, so that a report
// can explain a bad agent.
func TestProblemsCounted(t *testing.T) {
	_, tk := countLines(t)
	ep := start(t, Config{}, tk)
	turns := []agent.Turn{
		{ParseError: "no action found in the reply"},
		turn(action.Action{Kind: action.Click, Point: action.At(5000, 5)}), // off the screen
		{ParseError: "unknown key \"Hyperr\""},
		turn(answer),
	}
	for i := 0; ep.Next(context.Background()); i++ {
		if _, err := ep.Observe(context.Background()); err != nil {
			t.Fatal(err)
		}
		ep.Act(context.Background(), turns[i])
	}
	res, err := ep.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Unparsed != 2 || res.Refused != 1 {
		t.Fatalf("unparsed %d, refused %d; want 2 and 1", res.Unparsed, res.Refused)
	}
	if len(res.Problems) != 3 || !strings.Contains(res.Problems[0], "step 1: reply not usable: no action found") ||
		!strings.Contains(res.Problems[1], "step 2: refused:") || !strings.Contains(res.Problems[2], "Hyperr") {
		t.Fatalf("problems %q", res.Problems)
	}
}

// TestSlowObservationIsUncompleted: an observation that eats the wall
// time (a huge page), the environment alive, is the agent's lack of time:
// uncompleted, with the reason, not an infrastructure fault run again.
func TestSlowObservationIsUncompleted(t *testing.T) {
	_, base := countLines(t)
	tk := *base
	tk.TimeLimit = duration.Duration(time.Second)
	ep := start(t, Config{Obs: ObsScreenshot}, &tk, mem.Fault{Method: "Screenshot", Call: 1, Delay: time.Minute})
	ctx := context.Background()
	if !ep.Next(ctx) {
		t.Fatal("ended before its first step")
	}
	if _, err := ep.Observe(ctx); !errors.Is(err, ErrWallTime) {
		t.Fatalf("Observe = %v, want the wall time", err)
	}
	res, err := ep.Finish(ctx)
	if err != nil || res.Outcome != string(check.Uncompleted) || !strings.Contains(res.Reason, "while observing (step 1)") {
		t.Fatalf("Finish = %s %q, %v; want uncompleted while observing", res.Outcome, res.Reason, err)
	}
}

// TestEnvLimitIsUncompleted: an environment's own bound passed (a page's
// memory, env.ErrLimit) ends the episode uncompleted with its reason,
// whether met observing or acting.
func TestEnvLimitIsUncompleted(t *testing.T) {
	_, tk := countLines(t)
	over := fmt.Errorf("%w: the browser's pages held 2.1 GiB of memory, over the bound of 2 GiB", env.ErrLimit)
	for _, method := range []string{"Screenshot", "Do"} {
		t.Run(method, func(t *testing.T) {
			ep := start(t, Config{Obs: ObsScreenshot}, tk, mem.Fault{Method: method, Call: 1, Err: over})
			ctx := context.Background()
			for ep.Next(ctx) {
				if _, err := ep.Observe(ctx); err != nil {
					break
				}
				ep.Act(ctx, turn(click))
			}
			res, err := ep.Finish(ctx)
			if err != nil || res.Outcome != string(check.Uncompleted) || !strings.Contains(res.Reason, "over the bound of 2 GiB") || res.Attempts > 1 {
				t.Fatalf("Finish = %s %q (attempts %d), %v; want uncompleted with the bound", res.Outcome, res.Reason, res.Attempts, err)
			}
		})
	}
}
