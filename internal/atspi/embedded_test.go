package atspi

import (
	"testing"

	"github.com/proctor-eval/proctor/observe"
)

// TestEmbedded: a web page's combo box, whose AT-SPI text is one object
// character per child, reads as the option it shows; a native select's
// list gives its selected item, not every option.
func TestEmbedded(t *testing.T) {
	native := &observe.Node{Role: "combo box", Text: "\uFFFC", Children: []*observe.Node{{Role: "menu", Text: "\uFFFC\uFFFC", Children: []*observe.Node{
		{Role: "menu item", Name: "Billing"}, {Role: "menu item", Name: "IT Helpdesk", States: []string{"selected"}}}}}}
	styled := &observe.Node{Role: "combo box", Text: "\uFFFC \uFFFC", Children: []*observe.Node{
		{Role: "section", Text: ""}, {Role: "section", Text: "\uFFFC", Children: []*observe.Node{{Role: "static", Name: "IT Helpdesk"}}}}}
	for _, c := range []struct {
		n    *observe.Node
		want string
	}{{native, "IT Helpdesk"}, {styled, "IT Helpdesk"}} {
		if !onlyObjects(c.n.Text) {
			t.Fatalf("%q: not only objects", c.n.Text)
		}
		if got := embedded(c.n); got != c.want {
			t.Errorf("embedded = %q, want %q", got, c.want)
		}
	}
	if onlyObjects("Total \uFFFC") || onlyObjects("") {
		t.Error("a text with words, or none, counted as only objects")
	}
}
