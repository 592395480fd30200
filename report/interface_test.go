package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/store"
)

// TestInterfaceBreakdown: a run of tasks that name their interface is
// broken down by it (ScienceBoard's gui against gui+cli); a run whose
// results name none shows no such table.
func TestInterfaceBreakdown(t *testing.T) {
	mk := func(task, level, iface, outcome string, milestone float64) store.Result {
		return store.Result{Task: task, Level: level, Weight: 1, Apps: []string{"pymol"}, Domain: "biochemistry", Kind: "state",
			Interface: iface, Env: "x11", Outcome: outcome, Milestone: milestone, Steps: 4, Duration: 2 * time.Second}
	}
	science := Make("runs/science", store.Run{ID: "science", Agent: "openai", Model: "gpt-5"}, []store.Result{
		mk("pymol-color", "paper", "gui", "success", 1), mk("pymol-count", "paper", "gui", "failure", 0.5),
		mk("pymol-align", "wood", "gui+cli", "success", 1), mk("pymol-rmsd", "wood", "gui+cli", "success", 1),
		mk("pymol-fetch", "wood", "gui+cli", "failure", 0), mk("pymol-save", "gold", "gui", "error", 0)})
	want := []score.Group{{Key: "gui"}, {Key: "gui+cli"}}
	got := science.Breakdowns[score.ByInterface]
	if len(got) != len(want) {
		t.Fatalf("interface breakdown %+v", got)
	}
	for i, g := range got {
		if g.Key != want[i].Key {
			t.Errorf("group %d is %q, want %q", i, g.Key, want[i].Key)
		}
	}
	if s := got[0].Summary; s.Decided != 2 || s.Passed != 1 || s.Errors != 1 {
		t.Errorf("gui: %+v", s)
	}
	if s := got[1].Summary; s.Decided != 3 || s.Passed != 2 {
		t.Errorf("gui+cli: %+v", s)
	}
	old := Make("runs/old", store.Run{ID: "old", Agent: "noop"}, []store.Result{{Task: "a", Level: "paper", Weight: 1, Outcome: "failure"}})
	for _, format := range []string{"text", "markdown"} {
		var b bytes.Buffer
		if err := Write(&b, []*Report{science}, format); err != nil {
			t.Fatal(err)
		}
		golden(t, "interface."+format, b.String())
		b.Reset()
		if err := Write(&b, []*Report{old}, format); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "By interface") {
			t.Errorf("%s: a run whose results name no interface has an interface table:\n%s", format, b.String())
		}
	}
}
