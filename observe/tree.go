// Package observe models what an agent observes besides the screenshot:
// the accessibility tree, its filtered and linearised form for models, the
// set-of-mark overlay, and the description of the element under a click.
package observe

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/action"
)

// Node is one accessibility element.
type Node struct {
	App string `json:"app,omitempty"` // the application's name (top-level nodes)
	PID int    `json:"pid,omitempty"` // the application's process (top-level nodes)
	// WindowRelative marks an application whose boxes are relative to
	// their top-level windows (GTK 4), to be placed on the screen.
	WindowRelative bool `json:"-"`
	// ID names the element for as long as it lives, where the environment
	// can (a browser's DOM node); 0 where it cannot (the desktop).
	ID       int64      `json:"id,omitempty"`
	Role     string     `json:"role"`
	Name     string     `json:"name,omitempty"`
	Text     string     `json:"text,omitempty"` // text content or value
	States   []string   `json:"states,omitempty"`
	Box      action.Box `json:"box"`
	Children []*Node    `json:"children,omitempty"`
	// Offscreen marks a window that is not on the screen now (on another
	// workspace, minimised, or unmapped): Filter, At and the set-of-mark
	// overlay pass over it and its descendants; checks still read it.
	Offscreen bool `json:"offscreen,omitempty"`
}

// Has reports whether the node has the state.
func (n *Node) Has(state string) bool { return slices.Contains(n.States, state) }

// Tree is the accessibility tree of a desktop: one root per application.
type Tree struct {
	Apps []*Node `json:"apps"`
	// Errors lists the nodes that could not be read (they are skipped).
	Errors []string `json:"errors,omitempty"`
}

// Walk calls fn for every node, depth first, with the node's application;
// fn returns false to skip the node's children.
func (t *Tree) Walk(fn func(app string, n *Node) bool) {
	var walk func(app string, n *Node)
	walk = func(app string, n *Node) {
		if !fn(app, n) {
			return
		}
		for _, c := range n.Children {
			walk(app, c)
		}
	}
	for _, a := range t.Apps {
		walk(a.App, a)
	}
}

// Shift moves the node and its descendants by (dx, dy).
func (n *Node) Shift(dx, dy int) {
	n.Box.X += dx
	n.Box.Y += dy
	for _, c := range n.Children {
		c.Shift(dx, dy)
	}
}

// Count is the number of nodes.
func (t *Tree) Count() int {
	n := 0
	t.Walk(func(string, *Node) bool { n++; return true })
	return n
}

// Find returns the nodes matching role (empty: any; in any spelling, as
// SameRole compares them), name and text (empty: any; exact unless
// contains, names compared as SameName does) in app (empty: any).
func (t *Tree) Find(app, role, name, text string, contains bool) []Located {
	eq := func(want, got string) bool {
		if want == "" {
			return true
		}
		if contains {
			return strings.Contains(strings.ToLower(got), strings.ToLower(want))
		}
		return got == want
	}
	var out []Located
	t.Walk(func(a string, n *Node) bool {
		if (app == "" || strings.EqualFold(app, a)) && (role == "" || SameRole(role, n.Role)) &&
			(eq(name, n.Name) || !contains && SameName(name, n.Name)) && eq(text, n.Text) {
			out = append(out, Located{App: a, Node: n})
		}
		return true
	})
	return out
}

// Located is a node with its application and, below the application, its
// top-level window (Filter sets it).
type Located struct {
	App    string
	Window *Node `json:"-"`
	*Node
}

// Interactive roles: what a person can click, type into or select.
var interactiveRoles = map[string]bool{
	"push button": true, "toggle button": true, "check box": true, "radio button": true,
	"menu item": true, "check menu item": true, "radio menu item": true, "menu": true,
	"combo box": true, "text": true, "entry": true, "password text": true, "spin button": true,
	"slider": true, "link": true, "page tab": true, "list item": true, "table cell": true,
	"tree item": true, "icon": true, "editbar": true, "terminal": true, "document text": true,
	"button": true, "tool bar item": true, "split button": true, "tab": true, "scroll bar": true,
	"paragraph": true, "document web": true, "text box": true, "check button": true, "switch": true,
	"search box": true, "menu button": true, "list box": true, "combo box text": true,
}

// Document reports whether a role is a web page's document, which a
// desktop's tree (and a page's, see package pagetree) counts as
// clickable, as its whole area takes clicks.
func Document(role string) bool {
	return role == "document web" || role == "document" || role == "document frame"
}

// Named reports whether a person pointing at the node would name it: it
// has a name or text, and a role of its own rather than a text run, a
// filler or a container of the layout.
func Named(n *Node) bool {
	if strings.TrimSpace(n.Name) == "" && strings.TrimSpace(n.Text) == "" {
		return false
	}
	switch n.Role {
	case "static", "text", "filler", "panel", "section", "generic", "none", "application", "window", "frame",
		"scroll pane", "viewport", "redundant object", "unknown", "":
		return false
	}
	return !Document(n.Role)
}

// Interactive reports whether a person can act on the node.
func (n *Node) Interactive() bool {
	if interactiveRoles[n.Role] {
		return true
	}
	return n.Has("focusable") || n.Has("editable") || n.Has("checkable") || n.Has("selectable") || n.Has("clickable")
}

// Options of Filter.
type Options struct {
	MaxDepth int // 0: 64
	MaxNodes int // 0: 2000
	Screen   action.Size
}

// Filter keeps the nodes a model needs, as OSWorld and ScienceBoard do:
// showing and visible, enabled (or editable, expandable, checkable), with a
// box of positive size on the screen, and either interactive or carrying a
// name or text. It returns them flattened in document order with their
// application, within the depth and size limits.
func (t *Tree) Filter(o Options) []Located {
	if o.MaxDepth == 0 {
		o.MaxDepth = 64
	}
	if o.MaxNodes == 0 {
		o.MaxNodes = 2000
	}
	var out []Located
	var walk func(app string, win, n *Node, depth int, showing bool)
	walk = func(app string, win, n *Node, depth int, showing bool) {
		if depth > o.MaxDepth || len(out) >= o.MaxNodes {
			return
		}
		if depth == 1 {
			win = n
		}
		hidden := showing && !n.Has("showing") || !n.Has("visible")
		if n.Offscreen || depth >= 2 && hidden {
			return // hidden subtrees: closed menus, other tabs, hidden panes
		}
		if !hidden && keep(n, o.Screen) {
			out = append(out, Located{App: app, Window: win, Node: n})
		}
		for _, c := range n.Children {
			walk(app, win, c, depth+1, showing)
		}
	}
	for _, a := range t.Apps {
		walk(a.App, nil, a, 0, reportsShowing(a))
	}
	return out
}

// reportsShowing tells whether an application's toolkit sets the showing
// state below its windows (GTK 3 and Qt do; GTK 4 sets it on windows only,
// so there visible is all there is to go by).
func reportsShowing(app *Node) bool {
	for _, w := range app.Children {
		for _, c := range w.Children {
			if c.Has("showing") {
				return true
			}
		}
	}
	return false
}

func keep(n *Node, screen action.Size) bool {
	if !(n.Has("enabled") || n.Has("sensitive") || n.Has("editable") || n.Has("expandable") || n.Has("checkable")) {
		return false
	}
	b := n.Box
	if b.W <= 0 || b.H <= 0 || b.X+b.W <= 0 || b.Y+b.H <= 0 {
		return false
	}
	if screen.W > 0 && (b.X >= screen.W || b.Y >= screen.H) {
		return false
	}
	return n.Interactive() || strings.TrimSpace(n.Name) != "" || strings.TrimSpace(n.Text) != ""
}

// Linearize renders nodes as a tab-separated table for a model: role,
// name, text, x, y, w, h. A role is written as targets write it
// (CanonicalRole: "toggle button"), so that a row's role and name copied
// into a target find the element. Texts are cut at maxText runes (0: 100)
// and stripped of tabs and newlines.
func Linearize(nodes []Located, maxText int) string {
	if maxText == 0 {
		maxText = 100
	}
	clean := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		if r := []rune(s); len(r) > maxText {
			s = string(r[:maxText]) + "…"
		}
		return s
	}
	var b strings.Builder
	b.WriteString("role\tname\ttext\tx\ty\tw\th\n")
	for _, n := range nodes {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%d\t%d\t%d\t%d\n", CanonicalRole(n.Role), clean(n.Name), clean(n.Text),
			n.Box.X, n.Box.Y, n.Box.W, n.Box.H)
	}
	return b.String()
}

// clickable reports whether a click on the node does something.
func clickable(n *Node) bool {
	return n.Has("visible") && n.Interactive() && n.Box.W > 0 && n.Box.H > 0
}

// At returns the smallest clickable node whose box holds (x, y), or nil
// (ProBench's Algorithm 1, on the desktop's tree). Nodes that are not on
// the screen are passed over as Filter passes them over: a closed menu's
// items keep boxes that lie under the point. Where the only clickable node
// there is a web page's document, the smallest Named node under the point
// is returned instead: a click on a heading is a click on the heading,
// not on the whole page.
func (t *Tree) At(x, y int) *Located { return t.at(x, y, nil) }

// AtIn is At among the elements of a popup whose window is area: the
// smallest clickable element inside area that lies in a menu or a combo
// box's list, rather than the widget beneath the popup. Toolkits that
// give an open menu no top-level of its own (Qt, GTK 3's menu bar menus)
// hang its items under the menu's title. Without such an element under
// the point it is At.
func (t *Tree) AtIn(x, y int, area action.Box) *Located {
	const slack = 2 // an item may reach the popup's border
	inPopup := func(b action.Box, inMenu bool) bool {
		return inMenu && b.X >= area.X-slack && b.Y >= area.Y-slack && b.X+b.W <= area.X+area.W+slack && b.Y+b.H <= area.Y+area.H+slack
	}
	if n := t.at(x, y, inPopup); n != nil {
		return n
	}
	return t.At(x, y)
}

// at is the smallest clickable showing node under (x, y) that keep, if
// given, accepts; keep learns whether the node lies under a menu or a
// combo box.
func (t *Tree) at(x, y int, keep func(b action.Box, inMenu bool) bool) *Located {
	var best, named *Located
	size := func(n *Node) int { return n.Box.W * n.Box.H }
	var walk func(app string, n *Node, depth int, showing, inMenu bool)
	walk = func(app string, n *Node, depth int, showing, inMenu bool) {
		if n.Offscreen || depth >= 2 && (showing && !n.Has("showing") || !n.Has("visible")) {
			return
		}
		if clickable(n) && n.Box.Contains(x, y) && (keep == nil || keep(n.Box, inMenu)) && (best == nil || size(n) < size(best.Node)) {
			best = &Located{App: app, Node: n}
		}
		if keep == nil && Named(n) && n.Has("visible") && n.Box.W > 0 && n.Box.H > 0 && n.Box.Contains(x, y) && (named == nil || size(n) < size(named.Node)) {
			named = &Located{App: app, Node: n}
		}
		inMenu = inMenu || n.Role == "menu" || n.Role == "popup menu" || n.Role == "combo box"
		for _, c := range n.Children {
			walk(app, c, depth+1, showing, inMenu)
		}
	}
	for _, a := range t.Apps {
		walk(a.App, a, 0, reportsShowing(a), false)
	}
	if best != nil && named != nil && Document(best.Node.Role) && size(named.Node) < size(best.Node) {
		return named
	}
	return best
}

// Describe names a node for a person and for process checks: its role and
// its name or text; for a node with neither, the texts of its children.
func Describe(n *Node) string {
	label := strings.TrimSpace(n.Name)
	if label == "" {
		label = strings.TrimSpace(n.Text)
	}
	if label == "" {
		var parts []string
		var walk func(c *Node, depth int)
		walk = func(c *Node, depth int) {
			if depth > 3 || len(parts) >= 5 {
				return
			}
			if s := strings.TrimSpace(c.Name); s != "" {
				parts = append(parts, s)
			} else if s := strings.TrimSpace(c.Text); s != "" {
				parts = append(parts, s)
			}
			for _, cc := range c.Children {
				walk(cc, depth+1)
			}
		}
		for _, c := range n.Children {
			walk(c, 1)
		}
		label = strings.Join(parts, " ")
	}
	label = strings.Join(strings.Fields(label), " ")
	if len([]rune(label)) > 80 {
		label = string([]rune(label)[:80]) + "…"
	}
	if label == "" {
		return n.Role
	}
	return n.Role + " " + label
}
