package imports

import (
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/task"
)

// TestStatusAndCounts: a task with a reason that leaves it imported is
// blocked, one with another is not imported, and the counts say so in
// words.
func TestStatusAndCounts(t *testing.T) {
	ok := &Task{ID: "a", Task: &task.Task{}}
	web := &Task{ID: "b", Task: &task.Task{}}
	web.Block(LiveWeb, "opens %s", "https://example.com")
	fetch := &Task{ID: "c", Task: &task.Task{Origin: &task.Origin{Fetch: []task.OriginFile{{URL: "https://x", Asset: "x"}}}}}
	fetch.Block(NotFetched, "https://x")
	no := &Task{ID: "d", Task: &task.Task{}}
	no.Block(LiveWeb, "opens a page")
	no.Block(NotSupported, "evaluator compare_pdfs")
	none := &Task{ID: "e"}
	none.Block(NotSupported, "a file that does not parse")
	tests := []struct {
		t       *Task
		status  Status
		offline bool
	}{
		{ok, Runnable, true}, {web, Blocked, false}, {fetch, Blocked, false}, {no, NotImported, false}, {none, NotImported, false},
	}
	for _, tc := range tests {
		if s := tc.t.Status(); s != tc.status || tc.t.Offline() != tc.offline {
			t.Errorf("%s: %s offline %v, want %s offline %v", tc.t.ID, s, tc.t.Offline(), tc.status, tc.offline)
		}
	}
	c := Count([]*Task{ok, web, fetch, no, none})
	if c.Mapped != 3 || c.Offline != 1 || c.ByBlocker[LiveWeb] != 2 || c.ByBlocker[NotSupported] != 2 {
		t.Fatalf("counts %+v", c)
	}
	sum := c.Summary()
	for _, want := range []string{"5 tasks: 1 runnable here, 2 imported but blocked, 2 not imported", "mapped 3 of 5", "  file not fetched     1 task\n"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}
