package observe

import (
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/action"
)

// SameName reports whether an accessibility name matches the name a task
// or an agent wrote. Names are compared without the spaces around them:
// toolkits pad menu items ("Save As...      ") and the linearised tree,
// which is what authors copy from, shows them trimmed.
func SameName(want, got string) bool {
	return strings.TrimSpace(want) == strings.TrimSpace(got)
}

// Resolution is what a role and name target resolved to.
type Resolution struct {
	Located
	// Matches is how many showing elements the target matched after its
	// narrowing fields (app, window, text).
	Matches int
	// Ambiguous is set when more than one of them was left after the
	// preference for the modal and the active window, so that the element
	// was chosen by document order alone: the target should be narrowed.
	Ambiguous bool
}

// Resolve finds the showing element that a role and name target names.
// Matching elements are narrowed by the target's app, window title and
// text, then Nth picks the nth of them in document order (a negative Nth
// counts from the last). Without Nth, a
// match in a modal dialog wins over the others, then one in the active
// window: "Close" means the dialog's button, not the window's behind it.
// Where that still leaves several, the first is taken and the resolution
// is marked Ambiguous.
func (t *Tree) Resolve(tg action.Target, screen action.Size) (Resolution, error) {
	var found []Located
	for _, n := range t.Filter(Options{Screen: screen, MaxNodes: 1 << 20}) {
		if targets(tg, n) {
			found = append(found, n)
		}
	}
	if len(found) == 0 {
		return Resolution{}, fmt.Errorf("%w: no element %s is showing", ErrNotFound, tg)
	}
	if tg.Nth != 0 {
		i := tg.Nth - 1
		if tg.Nth < 0 {
			i = len(found) + tg.Nth
		}
		if i < 0 || i >= len(found) {
			return Resolution{}, fmt.Errorf("%w: element %s: there are %d such elements showing", ErrNotFound, tg, len(found))
		}
		return Resolution{Located: found[i], Matches: len(found)}, nil
	}
	best := found
	for _, prefer := range []func(Located) bool{inModal, inActive} {
		var some []Located
		for _, n := range best {
			if prefer(n) {
				some = append(some, n)
			}
		}
		if len(some) > 0 {
			best = some
		}
	}
	return Resolution{Located: best[0], Matches: len(found), Ambiguous: len(best) > 1}, nil
}

func targets(tg action.Target, n Located) bool {
	if tg.Role != "" && !sameRole(tg.Role, n.Role) {
		return false
	}
	if tg.Name != "" && !SameName(tg.Name, n.Name) || tg.Name == "" && tg.Role == "" {
		return false
	}
	if tg.App != "" && !strings.EqualFold(tg.App, n.App) {
		return false
	}
	if tg.Window != "" && (n.Window == nil || !SameName(tg.Window, n.Window.Name)) {
		return false
	}
	if tg.Text != "" && !strings.Contains(n.Text, tg.Text) {
		return false
	}
	return true
}

// sameRole reports whether a target's role names a node's. A web page's
// document is "document web" on the desktop (AT-SPI) and "document" in
// the browser environment's tree: either name matches both, so that one
// trajectory targets a page's frame in both environments.
func sameRole(want, got string) bool {
	if strings.EqualFold(want, got) {
		return true
	}
	doc := func(r string) bool { return strings.EqualFold(r, "document") || strings.EqualFold(r, "document web") }
	return doc(want) && doc(got)
}

func inModal(n Located) bool {
	return n.Window != nil && (n.Window.Has("modal") || n.Node.Has("modal") || n.Window.Role == "dialog" && n.Window.Has("active"))
}

func inActive(n Located) bool { return n.Window != nil && n.Window.Has("active") }

// TextSpot is where a text lies among a tree's elements (Tree.FindText).
type TextSpot struct {
	// Found is set when an element holds the text, showing or not (one
	// scrolled out of its page or out of a list inside it).
	Found bool
	// Showing is set when a showing element holds it; Box is then that
	// element's box, else the first element's that holds it.
	Showing bool
	Box     action.Box
	// X and Y are where a wheel turned brings the element nearer: the
	// middle of the deepest region on the screen that still holds it (the
	// list that scrolls inside a page, or the page), else the screen's
	// middle. Down is set when the element lies below that region's
	// middle, so that the wheel turns down.
	X, Y int
	Down bool
}

// FindText finds the first element whose name or text holds text: a
// showing one if any, else one scrolled out of view, with where a wheel
// must turn to bring it in (see TextSpot).
func (t *Tree) FindText(text string, screen action.Size) TextSpot {
	spot := TextSpot{X: screen.W / 2, Y: screen.H / 2, Down: true}
	for _, n := range t.Filter(Options{Screen: screen, MaxNodes: 1 << 20}) {
		if strings.Contains(n.Node.Name, text) || strings.Contains(n.Node.Text, text) {
			return TextSpot{Found: true, Showing: true, Box: n.Node.Box, X: spot.X, Y: spot.Y}
		}
	}
	whole := action.Box{W: screen.W, H: screen.H}
	var path []*Node
	var walk func(n *Node, depth int) bool
	walk = func(n *Node, depth int) bool {
		if n.Offscreen || depth >= 2 && !n.Has("visible") {
			return false
		}
		path = append(path, n)
		if depth >= 2 && (strings.Contains(n.Name, text) || strings.Contains(n.Text, text)) {
			return true
		}
		for _, c := range n.Children {
			if walk(c, depth+1) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	for _, a := range t.Apps {
		path = path[:0]
		if !walk(a, 0) {
			continue
		}
		n := path[len(path)-1]
		spot.Found, spot.Box = true, n.Box
		if n.Box.W <= 0 && n.Box.H <= 0 {
			return spot // no extents: the screen's middle, downwards
		}
		clip := whole
		for _, p := range path[1 : len(path)-1] {
			if p.Box.W <= 0 || p.Box.H <= 0 {
				continue
			}
			in, ok := intersect(clip, p.Box)
			if !ok {
				break
			}
			clip = in
		}
		spot.X, spot.Y = clip.Center()
		_, cy := n.Box.Center()
		spot.Down = cy > spot.Y
		return spot
	}
	return spot
}

// intersect is the part two boxes share, if any.
func intersect(a, b action.Box) (action.Box, bool) {
	x0, y0 := max(a.X, b.X), max(a.Y, b.Y)
	x1, y1 := min(a.X+a.W, b.X+b.W), min(a.Y+a.H, b.Y+b.H)
	if x1 <= x0 || y1 <= y0 {
		return action.Box{}, false
	}
	return action.Box{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}, true
}
