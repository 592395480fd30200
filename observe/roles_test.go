package observe

import (
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
)

func TestCanonicalRole(t *testing.T) {
	for in, want := range map[string]string{
		"toggle button":  "toggle button",
		"toggle-button":  "toggle button",
		"Toggle_Button":  "toggle button",
		"TOGGLE  BUTTON": "toggle button",
		" push-button ":  "push button",
		"link":           "link",
		"":               "",
	} {
		if got := CanonicalRole(in); got != want {
			t.Errorf("CanonicalRole(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKnownRole(t *testing.T) {
	for r, want := range map[string]bool{
		"toggle button": true, "toggle-button": true, "push button": true, "document web": true,
		"document": true, "text box": true, "switch": true, "menu item": true, "radio menu item": true,
		"password text": true, "scroll pane": true, "window": true, "autocomplete": true,
		"toggel button": false, "pushbutton": false, "": false,
	} {
		if got := KnownRole(r); got != want {
			t.Errorf("KnownRole(%q) = %v, want %v", r, got, want)
		}
	}
}

// A row of the linearised tree, its role and name copied into a target or
// an element query, finds the element it was copied from.
func TestTreeRowRoleFindsItsElement(t *testing.T) {
	tree := &Tree{Apps: []*Node{app("editor", win("frame", "Editor", nil,
		&Node{Role: "toggle button", Name: "Bold", States: []string{"enabled", "showing", "visible", "checkable"}, Box: action.Box{X: 10, Y: 10, W: 20, H: 20}}))}}
	table := Linearize(tree.Filter(Options{}), 0)
	if !strings.HasPrefix(table, "role\tname\t") {
		t.Fatalf("the table's first column is not named role:\n%s", table)
	}
	var row []string
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Split(l, "\t"); len(f) == 7 && f[1] == "Bold" {
			row = f
		}
	}
	if row == nil || row[0] != "toggle button" {
		t.Fatalf("the Bold row is %q, want role \"toggle button\":\n%s", row, table)
	}
	if _, err := tree.Resolve(action.Target{Role: row[0], Name: row[1]}, action.Size{}); err != nil {
		t.Errorf("a target copied from the row: %v", err)
	}
	for _, role := range []string{row[0], "toggle-button", "Toggle_Button"} {
		if n := len(tree.Find("", role, "Bold", "", false)); n != 1 {
			t.Errorf("Find(%q) found %d elements, want 1", role, n)
		}
		if !(ElementQuery{Role: role, Name: "Bold"}).Matches(Element{Role: "toggle button", Name: "Bold"}) {
			t.Errorf("the element query of role %q does not match", role)
		}
	}
}
