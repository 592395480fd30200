package observe

import (
	"errors"
	"testing"

	"github.com/proctor-eval/proctor/action"
)

func btn(name string, x int, states ...string) *Node {
	return &Node{Role: "push button", Name: name, States: append([]string{"enabled", "showing", "visible"}, states...),
		Box: action.Box{X: x, Y: 10, W: 20, H: 20}}
}

func win(role, name string, states []string, kids ...*Node) *Node {
	return &Node{Role: role, Name: name, States: append([]string{"enabled", "showing", "visible"}, states...),
		Box: action.Box{X: 0, Y: 0, W: 800, H: 600}, Children: kids}
}

func app(name string, wins ...*Node) *Node {
	return &Node{App: name, Role: "application", Name: name, Children: wins}
}

func TestResolve(t *testing.T) {
	// An editor whose search bar has a Close button, behind a modal
	// dialog with its own Close; a second application with an OK; a
	// window with two buttons of one name.
	editor := app("editor",
		win("frame", "notes.txt - Editor", nil, btn("Close", 10), btn("Save As...      ", 40), btn("Find", 70)),
		win("dialog", "About Editor", []string{"active", "modal"}, btn("Close", 100)))
	finder := app("finder",
		win("frame", "Finder", nil, btn("OK", 200), btn("OK", 230, "focusable")))
	texts := app("texts", win("frame", "Texts", nil,
		&Node{Role: "label", Name: "Total", Text: "12 items", States: []string{"enabled", "showing", "visible"}, Box: action.Box{X: 300, Y: 10, W: 20, H: 20}},
		&Node{Role: "label", Name: "Total", Text: "3 items", States: []string{"enabled", "showing", "visible"}, Box: action.Box{X: 330, Y: 10, W: 20, H: 20}},
		&Node{Role: "document web", Name: "Rich Text Editor", States: []string{"enabled", "showing", "visible"}, Box: action.Box{X: 360, Y: 10, W: 20, H: 20}},
		&Node{Role: "document", Name: "Inner page", States: []string{"enabled", "showing", "visible"}, Box: action.Box{X: 390, Y: 10, W: 20, H: 20}}))
	tree := &Tree{Apps: []*Node{editor, finder, texts}}
	for _, c := range []struct {
		name      string
		target    action.Target
		x         int // the chosen element's box
		matches   int
		ambiguous bool
		err       string
	}{
		{"the modal dialog's Close over the window's behind it", action.Target{Role: "push button", Name: "Close"}, 100, 2, false, ""},
		{"narrowed to the window by title", action.Target{Role: "push button", Name: "Close", Window: "notes.txt - Editor"}, 10, 1, false, ""},
		{"the nth match in document order", action.Target{Name: "Close", Nth: 1}, 10, 2, false, ""},
		{"the last match", action.Target{Name: "Close", Nth: -1}, 100, 2, false, ""},
		{"counted from the end", action.Target{Name: "Close", Nth: -2}, 10, 2, false, ""},
		{"nth before the first", action.Target{Name: "Close", Nth: -3}, 0, 0, false, `element "Close" (match 3 from the end): there are 2 such elements showing`},
		{"nth past the matches", action.Target{Name: "Close", Nth: 3}, 0, 0, false, `element "Close" (match 3): there are 2 such elements showing`},
		{"a padded name matches trimmed", action.Target{Role: "push button", Name: "Save As..."}, 40, 1, false, ""},
		{"padding in the target too", action.Target{Role: "push button", Name: " Find "}, 70, 1, false, ""},
		{"two in one window: ambiguous, the first taken", action.Target{Role: "push button", Name: "OK"}, 200, 2, true, ""},
		{"narrowed by application", action.Target{Name: "OK", App: "finder", Nth: 2}, 230, 2, false, ""},
		{"narrowed by text", action.Target{Role: "label", Name: "Total", Text: "3 items"}, 330, 1, false, ""},
		{"a page's document by the browser's role name on the desktop's tree", action.Target{Role: "document", Name: "Rich Text Editor"}, 360, 1, false, ""},
		{"and by the desktop's role name on the browser's", action.Target{Role: "document web", Name: "Inner page"}, 390, 1, false, ""},
		{"a role in the tree's old hyphenated spelling", action.Target{Role: "push-button", Name: "Find"}, 70, 1, false, ""},
		{"a role in capitals with underscores", action.Target{Role: "Push_Button", Name: "Find"}, 70, 1, false, ""},
		{"the document by a hyphenated role", action.Target{Role: "document-web", Name: "Inner page"}, 390, 1, false, ""},
		{"a document is no push button", action.Target{Role: "push button", Name: "Inner page"}, 0, 0, false, `no element push button "Inner page" is showing`},
		{"an application with no such element", action.Target{Name: "OK", App: "editor"}, 0, 0, false, `no element "OK" of editor is showing`},
		{"a window title with no such element", action.Target{Name: "Close", Window: "Finder"}, 0, 0, false, `no element "Close" in window "Finder" is showing`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := tree.Resolve(c.target, action.Size{W: 1920, H: 1080})
			if c.err != "" {
				if err == nil || !errors.Is(err, ErrNotFound) || err.Error() != "not found: "+c.err {
					t.Fatalf("error %v, want not found: %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Box.X != c.x || r.Matches != c.matches || r.Ambiguous != c.ambiguous {
				t.Errorf("chose the element at x=%d of %d matches (ambiguous %v), want x=%d of %d (ambiguous %v)",
					r.Box.X, r.Matches, r.Ambiguous, c.x, c.matches, c.ambiguous)
			}
		})
	}
}

func TestFindAndQueriesMatchTrimmedNames(t *testing.T) {
	tree := &Tree{Apps: []*Node{app("editor", win("frame", "Editor", nil, btn("Save As...      ", 40)))}}
	if got := tree.Find("", "push button", "Save As...", "", false); len(got) != 1 {
		t.Errorf("Find by the trimmed name found %d nodes, want 1", len(got))
	}
	q := ElementQuery{Role: "push button", Name: "Save As..."}
	if !q.Matches(Element{Role: "push button", Name: "Save As...      "}) {
		t.Error("an element query by the trimmed name does not match the padded name")
	}
	if q.Matches(Element{Role: "push button", Name: "Save As... copy"}) {
		t.Error("an element query matched a longer name")
	}
}

// TestFindText: a showing text is found where it is, whole or cut by its
// list's edge; one scrolled out of
// a list inside the page is found with the wheel over that list, turning
// towards it; one out of the page with the wheel over the page; a text
// nowhere leaves the screen's middle; hidden windows and invisible nodes
// are passed over.
func TestFindText(t *testing.T) {
	item := func(name string, y int, showing bool) *Node {
		st := []string{"visible", "enabled"}
		if showing {
			st = append(st, "showing")
		}
		return &Node{Role: "check box", Name: name, States: st, Box: action.Box{X: 110, Y: y, W: 100, H: 20}}
	}
	list := &Node{Role: "section", States: []string{"visible", "showing"}, Box: action.Box{X: 100, Y: 400, W: 300, H: 100}, Children: []*Node{
		item("Analytics", 410, true), item("Mobile App", 530, false), item("Archive", 300, false), item("Billing", 490, true),
	}}
	below := &Node{Role: "push button", Name: "Save", States: []string{"visible", "enabled"}, Box: action.Box{X: 10, Y: 900, W: 60, H: 20}}
	hidden := &Node{Role: "label", Name: "Secret", States: []string{"enabled"}, Box: action.Box{X: 10, Y: 10, W: 60, H: 20}}
	doc := &Node{Role: "document web", States: []string{"visible", "showing"}, Box: action.Box{X: 0, Y: 80, W: 800, H: 520}, Children: []*Node{list, below, hidden}}
	other := &Node{Role: "frame", Offscreen: true, States: []string{"visible"}, Box: action.Box{W: 800, H: 600}, Children: []*Node{
		{Role: "label", Name: "Elsewhere", States: []string{"visible", "showing", "enabled"}, Box: action.Box{X: 10, Y: 10, W: 60, H: 20}},
	}}
	tree := &Tree{Apps: []*Node{{App: "chromium", Role: "application", Children: []*Node{
		{Role: "frame", States: []string{"visible", "showing", "active"}, Box: action.Box{W: 800, H: 600}, Children: []*Node{doc}}, other,
	}}}}
	screen := action.Size{W: 800, H: 600}
	whole := action.Box{W: 800, H: 600}
	for _, c := range []struct {
		text string
		want TextSpot
	}{
		{"Analytics", TextSpot{Found: true, Showing: true, Inside: true, Box: action.Box{X: 110, Y: 410, W: 100, H: 20}, X: 250, Y: 450, Region: list.Box}},
		{"Billing", TextSpot{Found: true, Showing: true, Box: action.Box{X: 110, Y: 490, W: 100, H: 20}, X: 250, Y: 450, Down: true, Region: list.Box}},
		{"Mobile", TextSpot{Found: true, Box: action.Box{X: 110, Y: 530, W: 100, H: 20}, X: 250, Y: 450, Down: true, Region: list.Box}},
		{"Archive", TextSpot{Found: true, Box: action.Box{X: 110, Y: 300, W: 100, H: 20}, X: 250, Y: 450, Region: list.Box}},
		{"Save", TextSpot{Found: true, Box: action.Box{X: 10, Y: 900, W: 60, H: 20}, X: 400, Y: 340, Down: true, Region: doc.Box}},
		{"Secret", TextSpot{X: 400, Y: 300, Down: true, Region: whole}},
		{"Elsewhere", TextSpot{X: 400, Y: 300, Down: true, Region: whole}},
		{"Nowhere", TextSpot{X: 400, Y: 300, Down: true, Region: whole}},
	} {
		if got := tree.FindText(c.text, screen); got != c.want {
			t.Errorf("FindText(%q) = %+v, want %+v", c.text, got, c.want)
		}
	}
	// The list moved to the foot of the page, reaching past the screen: the
	// page is turned first, above the list.
	list.Box.Y = 560
	list.Children[1].Box.Y = 700
	got := tree.FindText("Mobile", screen)
	want := TextSpot{Found: true, Box: action.Box{X: 110, Y: 700, W: 100, H: 20}, X: 250, Y: 580, Down: true,
		Region: action.Box{X: 100, Y: 560, W: 300, H: 40}, Reveal: true, RevealX: 400, RevealY: 320}
	if got != want {
		t.Errorf("FindText in a list at the page's foot = %+v, want %+v", got, want)
	}
}

// TestAtIn: under an open popup menu that has no top-level of its own, the
// menu's item is named, not the smaller button beneath it; with no item
// of the popup under the point, At's answer stands.
func TestAtIn(t *testing.T) {
	st := []string{"visible", "showing", "enabled", "focusable"}
	button := &Node{Role: "push button", Name: "Apply", States: st, Box: action.Box{X: 110, Y: 60, W: 40, H: 20}}
	item := &Node{Role: "menu item", Name: "Open...", States: st, Box: action.Box{X: 100, Y: 50, W: 200, H: 40}}
	menu := &Node{Role: "menu", Name: "File", States: st, Box: action.Box{X: 5, Y: 5, W: 40, H: 20}, Children: []*Node{item}}
	tree := &Tree{Apps: []*Node{{App: "app", Role: "application", Children: []*Node{
		{Role: "frame", Name: "App", States: st, Box: action.Box{W: 800, H: 600}, Children: []*Node{menu, button}},
	}}}}
	popup := action.Box{X: 100, Y: 50, W: 200, H: 120}
	if got := tree.At(120, 70); got == nil || got.Node != button {
		t.Fatalf("At = %v, want the button (the smallest)", got)
	}
	if got := tree.AtIn(120, 70, popup); got == nil || got.Node != item {
		t.Errorf("AtIn = %v, want the popup's item", got)
	}
	if got := tree.AtIn(20, 10, popup); got == nil || got.Node != menu {
		t.Errorf("AtIn outside the popup = %v, want the menu bar's menu", got)
	}
}
