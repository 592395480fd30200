package viewer

import (
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/report"
)

// A generated run of 1,000 tasks with 50 steps each, made once for the
// benchmarks.
var (
	bigOnce sync.Once
	bigRoot string
)

func bigRun(b *testing.B) string {
	bigOnce.Do(func() {
		dir, err := os.MkdirTemp("", "proctor-viewer-bench-")
		if err != nil {
			b.Fatal(err)
		}
		bigRoot = dir
		levels := []string{"paper", "wood", "bronze", "silver", "gold"}
		var eps []episode
		for i := range 1000 {
			outcome := "failure"
			if i%3 == 0 {
				outcome = "success"
			}
			eps = append(eps, episode{task: fmt.Sprintf("task-%04d", i), level: levels[i%5], outcome: outcome, steps: 50})
		}
		start := time.Now()
		makeRun(b, dir, "big", "openai", time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), eps)
		makeRun(b, dir, "small", "replay", time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), eps[:10])
		b.Logf("generated a run of 1000 tasks x 50 steps in %s", time.Since(start).Round(time.Millisecond))
	})
	return bigRoot
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigRoot != "" {
		os.RemoveAll(bigRoot)
	}
	os.Exit(code)
}

func benchPage(b *testing.B, srv *Server, target string) {
	h := srv.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil)) // warm the templates
	if rec.Code != 200 {
		b.Fatalf("GET %s = %d: %s", target, rec.Code, rec.Body.String())
	}
	b.SetBytes(int64(rec.Body.Len()))
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	}
}

// BenchmarkLeaderboard renders the leaderboard of two runs, one of 1,000
// tasks, with the runs' figures cached while their databases are unchanged.
func BenchmarkLeaderboard(b *testing.B) {
	benchPage(b, &Server{Root: bigRun(b)}, "/")
}

// BenchmarkLeaderboardCold reads both runs from their databases each time.
func BenchmarkLeaderboardCold(b *testing.B) {
	root := bigRun(b)
	target := "/"
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		(&Server{Root: root}).Handler().ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkRunPage renders the first page (100 episodes) of the run of
// 1,000 tasks.
func BenchmarkRunPage(b *testing.B) {
	benchPage(b, &Server{Root: bigRun(b)}, "/run/big")
}

// BenchmarkTaskPage renders one episode of 50 steps: checks, milestones and
// every step with its overlay.
func BenchmarkTaskPage(b *testing.B) {
	benchPage(b, &Server{Root: bigRun(b)}, "/run/big/episode?task=task-0500&repeat=0")
}

// BenchmarkPlainReport is the plain alternative: proctor report's text
// for the same run.
func BenchmarkPlainReport(b *testing.B) {
	dir := bigRun(b) + "/big"
	for b.Loop() {
		r, err := report.Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := report.Write(io.Discard, []*report.Report{r}, "text"); err != nil {
			b.Fatal(err)
		}
	}
}
