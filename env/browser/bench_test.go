package browser

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/task"
)

// BenchmarkReset measures a fresh episode on the page bench/playwright
// loads: a new browser context with its tab, the page opened and loaded
// (the target is 300 ms), between episodes (the next context opened in
// the background during the last episode) and back to back (opened during
// the reset); and a cold start of the browser with the page (1.5 s).
func BenchmarkReset(b *testing.B) {
	need(b)
	page, err := os.ReadFile("../../bench/playwright/page2000.html")
	if err != nil {
		b.Fatal(err)
	}
	u := site(b, map[string]string{"page": string(page)})
	setup := env.Setup{Steps: []task.Step{{Open: &task.Open{URL: u + "/page"}}}}
	b.Run("context", func(b *testing.B) {
		br := start(b)
		ctx := context.Background()
		// The first reset takes the episode Start opened and opens the
		// next one in the background, as every later reset does; then
		// the warm-ups.
		for i := range 1 + warmups {
			for i > 0 && len(br.spare) == 0 {
				time.Sleep(10 * time.Millisecond)
			}
			if err := br.Reset(ctx, setup); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		var took []time.Duration
		for range b.N {
			b.StopTimer()
			for len(br.spare) == 0 { // an episode's time
				time.Sleep(10 * time.Millisecond)
			}
			b.StartTimer()
			start := time.Now()
			if err := br.Reset(ctx, setup); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
		}
		reportMedian(b, took)
	})
	b.Run("context-back-to-back", func(b *testing.B) {
		br := start(b)
		ctx := context.Background()
		timed(b, warmups, func() {
			if err := br.Reset(ctx, setup); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("cold", func(b *testing.B) {
		ctx := context.Background()
		timed(b, 1, func() {
			br, err := Start(ctx, Config{})
			if err != nil {
				b.Fatal(err)
			}
			if err := br.Reset(ctx, setup); err != nil {
				b.Fatal(err)
			}
			br.Close()
		})
	})
}

// BenchmarkObserve measures what a step costs on the page of about 2,000
// elements that bench/playwright measures too: the screenshot, the tree,
// the observation (screenshot with set-of-mark boxes: screenshot, tree
// and marks), and a click round trip on its button (element by id,
// scrolled into view and clicked, until the page counts the click).
func BenchmarkObserve(b *testing.B) {
	br := start(b)
	page, err := os.ReadFile("../../bench/playwright/page2000.html")
	if err != nil {
		b.Fatal(err)
	}
	u := site(b, map[string]string{"page": string(page)})
	open(b, br, u+"/page")
	ctx := context.Background()
	b.Run("screenshot", func(b *testing.B) {
		timed(b, warmups, func() {
			if _, err := br.Screenshot(ctx, env.ShotOptions{}); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("tree", func(b *testing.B) {
		timed(b, warmups, func() {
			if _, err := br.Tree(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("observation", func(b *testing.B) {
		timed(b, warmups, func() {
			if _, err := br.Screenshot(ctx, env.ShotOptions{Marks: true}); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("click", func(b *testing.B) {
		tree, err := br.Tree(ctx)
		if err != nil {
			b.Fatal(err)
		}
		found := tree.Find("", "push button", "Mark reviewed", "", false)
		if len(found) != 1 || found[0].ID == 0 {
			b.Fatalf("the button: %d found", len(found))
		}
		click := []action.Action{{Kind: action.Click, Target: &action.Target{ID: found[0].ID}}}
		n := 0
		for _, err := fmt.Sscan(eval(b, br, "document.getElementById('count').textContent"), &n); err != nil; {
			b.Fatal(err)
		}
		timed(b, warmups, func() {
			if _, err := br.Do(ctx, click); err != nil {
				b.Fatal(err)
			}
			n++
			for eval(b, br, "document.getElementById('count').textContent") != fmt.Sprint(n) {
			}
		})
	})
}

// timed runs fn warm times untimed, as bench/playwright does, then as the
// benchmark's loop, and reports the median time of one run as ms-median,
// beside the mean that ns/op is: bench/browser.sh compares medians with
// Playwright's.
func timed(b *testing.B, warm int, fn func()) {
	for range warm {
		fn()
	}
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		fn()
		took = append(took, time.Since(start))
	}
	reportMedian(b, took)
}

// warmups is how many untimed runs come first, as in bench/playwright.
const warmups = 3

// reportMedian reports the median of the times as ms-median.
func reportMedian(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	m := took[len(took)/2]
	if len(took)%2 == 0 {
		m = (took[len(took)/2-1] + m) / 2
	}
	b.ReportMetric(float64(m.Microseconds())/1000, "ms-median")
}
