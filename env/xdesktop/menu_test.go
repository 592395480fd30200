package xdesktop

import (
	"fmt"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

// TestMenuClickRecords clicks items of open menus in a GTK 3, a GTK 4 and
// a Qt application, twenty times each, and requires every click to be
// recorded as the item: the element under the point is read before the
// press, from the menu's own window (a popup the window manager does not
// list), never from the window that lies beneath once the menu closes.
func TestMenuClickRecords(t *testing.T) {
	const tries = 20
	cases := []struct {
		toolkit, app, window string
		// open returns the action that opens the menu before try i, the
		// item to click and what closes what the item opened.
		open  func(i int) action.Action
		item  func(i int) (role, name string)
		after []action.Action
	}{
		{
			toolkit: "GTK 3", app: "mousepad", window: "Mousepad",
			open: func(int) action.Action { return byName("menu", "File") },
			item: func(int) (string, string) { return "menu item", "Save As..." },
			// The file chooser the item opens is closed again.
			after: []action.Action{{Kind: action.Wait, Duration: 0.5}, {Kind: action.Key, Keys: []string{"escape"}}},
		},
		{
			toolkit: "GTK 4", app: "gnome-calculator", window: "Calculator",
			// The menu button is named for the mode chosen last.
			open: func(i int) action.Action { return byName("button", modeOf(i, "Basic", "Advanced")) },
			item: func(i int) (string, string) { return "menu item radio", modeOf(i+1, "Basic", "Advanced") },
		},
		{
			toolkit: "Qt", app: "kcalc", window: "KCalc",
			open: func(int) action.Action { return byName("menu item", "Settings") },
			item: func(i int) (string, string) { return "menu item", modeOf(i+1, "Simple Mode", "Science Mode") },
		},
	}
	for _, c := range cases {
		t.Run(c.toolkit, func(t *testing.T) {
			need(t, c.app)
			d := start(t)
			// The test waits for what it needs itself (waitFor): the
			// turns need not wait for the screen to settle.
			if err := d.SetSettle(Settle{Off: true}); err != nil {
				t.Fatal(err)
			}
			launch(t, d, c.app, c.window)
			right := 0
			var wrong []string
			for i := range tries {
				open := c.open(i)
				waitFor(t, d, fmt.Sprint("the menu opener ", open.Target), showing(open.Target.Role, open.Target.Name))
				role, name := c.item(i)
				// A GTK 4 menu button now and then lets a click pass
				// while its last popover is still going: the opener is
				// clicked again, up to three times, as a person would.
				for again := 0; ; again++ {
					if _, err := d.Do(ctx(t), []action.Action{open}); err != nil {
						t.Fatalf("try %d: open the menu: %v", i+1, err)
					}
					if again == 2 || seen(t, d, 30, showing(role, name)) {
						break
					}
				}
				waitFor(t, d, fmt.Sprintf("the menu item %q", name), showing(role, name))
				steps, err := d.Do(ctx(t), []action.Action{byName(role, name)})
				if err != nil {
					t.Fatalf("try %d: click %q: %v", i+1, name, err)
				}
				if got, want := steps[0].Element, role+" "+name; got == want {
					right++
				} else {
					wrong = append(wrong, fmt.Sprintf("try %d: recorded %q, want %q", i+1, got, want))
				}
				// The next try opens the menu again only once this one has
				// closed (GTK 4 animates its popover away).
				waitFor(t, d, fmt.Sprintf("the menu item %q gone", name), func(tr *observe.Tree) bool { return !showing(role, name)(tr) })
				if len(c.after) > 0 {
					if _, err := d.Do(ctx(t), c.after); err != nil {
						t.Fatal(err)
					}
				}
			}
			t.Logf("%s: %d of %d clicks on menu items recorded right", c.toolkit, right, tries)
			if right != tries {
				t.Errorf("%d of %d recorded right:\n%s", right, tries, strings.Join(wrong, "\n"))
			}
		})
	}
}

// modeOf alternates between two names: a for even i, b for odd.
func modeOf(i int, a, b string) string {
	if i%2 == 0 {
		return a
	}
	return b
}

// showing reports whether an element with the role and name is on the
// screen.
func showing(role, name string) func(*observe.Tree) bool {
	return func(tr *observe.Tree) bool {
		for _, n := range tr.Filter(observe.Options{}) {
			if n.Role == role && strings.TrimSpace(n.Name) == name {
				return true
			}
		}
		return false
	}
}
