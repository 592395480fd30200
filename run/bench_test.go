package run

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/env/xdesktop"
	"github.com/proctor-eval/proctor/guest/guesttest"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// BenchmarkStepOverhead measures the harness's time per step with an
// agent that answers at once (a pointer move), at 1920x1080 with an editor
// open: observe (screenshot; with som also the tree and the marks), ask,
// act, record the step and its screenshot.
func BenchmarkStepOverhead(b *testing.B) {
	need(b)
	benchSteps(b, map[string]func(context.Context) (env.Env, error){"local": newDesktop})
}

// BenchmarkStepOverheadTLSGuest is BenchmarkStepOverhead through a guest
// daemon served over TLS on loopback (pinned certificate, bearer token),
// against a local desktop in the same run: what the daemon adds per step.
func BenchmarkStepOverheadTLSGuest(b *testing.B) {
	need(b)
	tlsGuest := func(ctx context.Context) (env.Env, error) {
		d, err := xdesktop.Start(ctx, xdesktop.Config{})
		if err != nil {
			return nil, err
		}
		g := guesttest.Serve(b, d)
		c, err := remote.Dial(ctx, g.Target, g.Token)
		if err != nil {
			d.Close()
			return nil, err
		}
		return closeAll{c, func() { g.Close(); d.Close() }}, nil
	}
	benchSteps(b, map[string]func(context.Context) (env.Env, error){"local": newDesktop, "tls-guest": tlsGuest})
}

// closeAll is an environment whose Close also ends what serves it.
type closeAll struct {
	env.Env
	end func()
}

func (c closeAll) Close() error {
	err := c.Env.Close()
	c.end()
	return err
}

// benchSteps runs a 40-step task with an editor on screen (real pixels
// and a real tree) and an agent that answers at once (a pointer move), on
// each kind of environment, in each observation mode, and reports the
// median harness time per step.
func benchSteps(b *testing.B, envs map[string]func(context.Context) (env.Env, error)) {
	s, ps := task.Load("../testdata/runner")
	if len(ps) > 0 {
		b.Fatal(ps)
	}
	base, _ := s.Task("editor-type")
	long := *base
	long.MaxStepsValue = 40
	long.ID = "overhead"
	instant := func() (agent.Agent, error) {
		return &scriptedAgent{next: func(step int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{{Kind: action.Move, Point: action.At(float64(step%50), 7)}}}, nil
		}}, nil
	}
	names := make([]string, 0, len(envs))
	for n := range envs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, mode := range []ObsMode{ObsScreenshot, ObsMarks} {
			sub := string(mode)
			if len(envs) > 1 {
				sub = name + "/" + sub
			}
			benchMode(b, sub, s, &long, instant, mode, envs[name])
		}
	}
}

func benchMode(b *testing.B, sub string, s *task.Suite, long *task.Task, instant agent.Factory, mode ObsMode, newEnv func(context.Context) (env.Env, error)) {
	b.Run(sub, func(b *testing.B) {
		var perStep, envPerStep []float64
		for b.Loop() {
			st, err := store.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			cfg := Config{Suite: s, Tasks: []*task.Task{long}, Agent: instant, Obs: mode, Parallel: 1,
				NewEnv: newEnv, Store: st, EarlyStop: -1}
			rs, err := Run(context.Background(), cfg)
			if err != nil || len(rs) != 1 || rs[0].Steps != 40 {
				b.Fatalf("%+v %v", rs, err)
			}
			perStep = append(perStep, float64(rs[0].Duration)/float64(rs[0].Steps)/float64(time.Millisecond))
			// The environment's share of each step (observe and act),
			// without the episode's reset and checks.
			steps, err := st.Turns(long.ID, 0)
			st.Close()
			if err != nil || len(steps) == 0 {
				b.Fatalf("steps: %v", err)
			}
			var sum time.Duration
			for _, s := range steps {
				sum += s.EnvLatency
			}
			envPerStep = append(envPerStep, float64(sum)/float64(len(steps))/float64(time.Millisecond))
		}
		b.ReportMetric(median(perStep), "ms/step")
		b.ReportMetric(median(envPerStep), "env-ms/step")
	})
}

// BenchmarkTasksPerMinute runs the runnable suite twice over with the
// replay agent on 1, 2 and 4 desktops, desktop start-up included.
func BenchmarkTasksPerMinute(b *testing.B) {
	need(b)
	s, ps := task.Load("../testdata/runner")
	if len(ps) > 0 {
		b.Fatal(ps)
	}
	replay, _ := agent.Lookup("replay")
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("parallel-%d", n), func(b *testing.B) {
			var rates []float64
			for b.Loop() {
				st, err := store.Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				rs, err := Run(context.Background(), Config{Suite: s, Tasks: s.Tasks, Agent: replay, Obs: ObsMarks,
					Parallel: n, Repeat: 2, NewEnv: newDesktop, Store: st})
				st.Close()
				if err != nil || len(rs) != 2*len(s.Tasks) {
					b.Fatalf("%d results, %v", len(rs), err)
				}
				for _, r := range rs {
					if r.Outcome != "success" {
						b.Fatalf("%s: %s %s", r.Task, r.Outcome, r.Reason)
					}
				}
				rates = append(rates, float64(len(rs))/time.Since(start).Minutes())
			}
			b.ReportMetric(median(rates), "tasks/min")
		})
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
