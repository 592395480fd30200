package run

import (
	"slices"
	"testing"

	"github.com/proctor-eval/proctor/episode"
	"github.com/proctor-eval/proctor/task"
)

// TestReach: an episode's browser may reach the suite's static services
// and what the task and suite allow.
func TestReach(t *testing.T) {
	cfg := Config{Suite: &task.Suite{Allow: []string{"https://docs.example"}},
		static: []string{"http://127.0.0.1:4000", "http://localhost:4000"}}
	tk := &task.Task{Environment: task.Environment{Type: "browser", Network: task.NetworkWeb}}
	origins, web := episode.Reach(cfg.episodeConfig(), tk, nil)
	want := []string{"http://127.0.0.1:4000", "http://localhost:4000", "https://docs.example"}
	if !slices.Equal(origins, want) || !web {
		t.Fatalf("reach = %q, %v; want %q, true", origins, web, want)
	}
	if _, web := episode.Reach(Config{}.episodeConfig(), &task.Task{}, nil); web {
		t.Fatal("the web is open to a task that does not ask for it")
	}
}
