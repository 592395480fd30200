package xdesktop

import (
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

// TestTargetPrefersTheModalDialog opens mousepad's search bar, which has
// a Close button, then its About dialog, modal, with a Close of its own:
// "Close" must close the dialog, not the search bar behind it (the first
// in document order). Narrowed by window title, it closes the search bar.
func TestTargetPrefersTheModalDialog(t *testing.T) {
	need(t, "mousepad")
	d := start(t)
	launch(t, d, "mousepad", "Mousepad")
	click := func(role, name string) {
		t.Helper()
		waitFor(t, d, role+" "+name, showing(role, name))
		if _, err := d.Do(ctx(t), []action.Action{byName(role, name)}); err != nil {
			t.Fatal(err)
		}
	}
	click("menu", "Search")
	click("menu item", "Find")
	click("menu", "Help")
	click("menu item", "About")
	closes := func(tr *observe.Tree) []observe.Located {
		var out []observe.Located
		for _, n := range tr.Filter(observe.Options{}) {
			if n.Role == "push button" && n.Name == "Close" {
				out = append(out, n)
			}
		}
		return out
	}
	waitFor(t, d, "two Close buttons", func(tr *observe.Tree) bool { return len(closes(tr)) == 2 })
	steps, err := d.Do(ctx(t), []action.Action{byName("push button", "Close")})
	if err != nil {
		t.Fatal(err)
	}
	if steps[0].Ambiguous != 0 {
		t.Errorf("the modal dialog's Close was recorded as ambiguous among %d", steps[0].Ambiguous)
	}
	var editor string
	waitFor(t, d, "the About dialog closed and the search bar's Close left", func(tr *observe.Tree) bool {
		left := closes(tr)
		if len(left) != 1 || left[0].Window.Role == "dialog" {
			return false
		}
		editor = left[0].Window.Name
		return true
	})
	narrowed := action.Action{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "Close", Window: editor}}
	if _, err := d.Do(ctx(t), []action.Action{narrowed}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, d, "the search bar closed", func(tr *observe.Tree) bool { return len(closes(tr)) == 0 })
}
