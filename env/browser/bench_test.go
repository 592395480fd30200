package browser

import (
	"context"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
)

// BenchmarkReset measures a fresh episode: a new browser context with its
// tab (the target is 300 ms), between episodes (the next context opened
// in the background during the last episode) and back to back (opened
// during the reset); and a cold start of the browser (1.5 s).
func BenchmarkReset(b *testing.B) {
	need(b)
	b.Run("context", func(b *testing.B) {
		br := start(b)
		ctx := context.Background()
		for range b.N {
			b.StopTimer()
			for len(br.spare) == 0 { // an episode's time
				time.Sleep(10 * time.Millisecond)
			}
			b.StartTimer()
			if err := br.Reset(ctx, env.Setup{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("context-back-to-back", func(b *testing.B) {
		br := start(b)
		ctx := context.Background()
		for b.Loop() {
			if err := br.Reset(ctx, env.Setup{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		ctx := context.Background()
		for b.Loop() {
			br, err := Start(ctx, Config{})
			if err != nil {
				b.Fatal(err)
			}
			br.Close()
		}
	})
}

// BenchmarkObserve measures what a step costs on a page of about 2,000
// elements: the screenshot, the tree, the screenshot with set-of-mark
// boxes (screenshot, tree and marks), and a click round trip.
func BenchmarkObserve(b *testing.B) {
	br := start(b)
	u := site(b, map[string]string{"big": bigPage(150)})
	open(b, br, u+"/big")
	ctx := context.Background()
	b.Run("screenshot", func(b *testing.B) {
		for b.Loop() {
			if _, err := br.Screenshot(ctx, env.ShotOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tree", func(b *testing.B) {
		for b.Loop() {
			if _, err := br.Tree(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("observation", func(b *testing.B) {
		for b.Loop() {
			if _, err := br.Screenshot(ctx, env.ShotOptions{Marks: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("click", func(b *testing.B) {
		click := []action.Action{{Kind: action.Click, Point: action.At(60, 20)}}
		for b.Loop() {
			if _, err := br.Do(ctx, click); err != nil {
				b.Fatal(err)
			}
		}
	})
}
