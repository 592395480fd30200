package rollout

import (
	"context"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/episode"
	"github.com/proctor-eval/proctor/rollout/api"
)

// BenchmarkStepOverhead compares a step through the service's HTTP API
// (parse, perform, record, observe, answer) with the same work called on
// the environment directly (perform and observe): their difference is the
// service's overhead per step. The environment is an in-memory desktop,
// so that its own work is small beside the overhead.
func BenchmarkStepOverhead(b *testing.B) {
	clicks := [][]action.Action{{{Kind: action.Click, Point: action.At(100, 100)}}, {{Kind: action.Click, Point: action.At(101, 100)}}}
	b.Run("direct", func(b *testing.B) {
		f := newFixture(b, options{})
		sl := f.s.pool.slots[0]
		ctx := context.Background()
		for i := range b.N {
			if _, err := sl.e.Do(ctx, clicks[i%2]); err != nil {
				b.Fatal(err)
			}
			if _, err := episode.Observation(ctx, sl.e, episode.ObsScreenshot, sl.info.Screen); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("service", func(b *testing.B) {
		f := newFixture(b, options{})
		ro := f.create(api.CreateRequest{Task: "editor-save"})
		b.ResetTimer()
		for i := range b.N {
			sr := f.step(ro.ID, api.StepRequest{Actions: clicks[i%2]})
			if sr.Done {
				b.StopTimer()
				ro = f.create(api.CreateRequest{Task: "editor-save"})
				b.StartTimer()
			}
		}
	})
}
