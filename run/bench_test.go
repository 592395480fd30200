package run

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// BenchmarkStepOverhead measures the harness's time per step with an
// agent that answers at once (a pointer move), at 1920x1080 with an editor
// open: observe (screenshot; with som also the tree and the marks), ask,
// act, record the step and its screenshot.
func BenchmarkStepOverhead(b *testing.B) {
	need(b)
	s, ps := task.Load("../testdata/runner")
	if len(ps) > 0 {
		b.Fatal(ps)
	}
	base, _ := s.Task("editor-type") // an editor on screen: real pixels and a real tree
	long := *base
	long.MaxStepsValue = 40
	long.ID = "overhead"
	instant := func() (agent.Agent, error) {
		return &scriptedAgent{next: func(step int) (agent.Turn, error) {
			return agent.Turn{Actions: []action.Action{{Kind: action.Move, Point: action.At(float64(step%50), 7)}}}, nil
		}}, nil
	}
	for _, mode := range []ObsMode{ObsScreenshot, ObsMarks} {
		b.Run(string(mode), func(b *testing.B) {
			var perStep []float64
			for b.Loop() {
				st, err := store.Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				cfg := Config{Suite: s, Tasks: []*task.Task{&long}, Agent: instant, Obs: mode, Parallel: 1,
					NewEnv: newDesktop, Store: st, EarlyStop: -1}
				rs, err := Run(context.Background(), cfg)
				st.Close()
				if err != nil || len(rs) != 1 || rs[0].Steps != 40 {
					b.Fatalf("%+v %v", rs, err)
				}
				perStep = append(perStep, float64(rs[0].Duration)/float64(rs[0].Steps)/float64(time.Millisecond))
			}
			b.ReportMetric(median(perStep), "ms/step")
		})
	}
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
