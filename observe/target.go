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

// sameRole reports whether a target's role names a node's, in any
// spelling (SameRole: "toggle-button" is "toggle button"). A web page's
// document is "document web" on the desktop (AT-SPI) and "document" in
// the browser environment's tree: either name matches both, so that one
// trajectory targets a page's frame in both environments.
func sameRole(want, got string) bool {
	want, got = CanonicalRole(want), CanonicalRole(got)
	if want == got {
		return true
	}
	doc := func(r string) bool { return r == "document" || r == "document web" }
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
	// Inside is set when the showing element lies wholly inside what holds
	// it (not cut by the page's or a list's edge), or is taller than that.
	Inside bool
	// X and Y are where a wheel turned brings the element nearer: the
	// middle of the deepest region on the screen that still holds it (the
	// list that scrolls inside a page, or the page), else the screen's
	// middle. Down is set when the element lies below that region's
	// middle, so that the wheel turns down.
	X, Y int
	Down bool
	// Region is that region, the screen where there is none.
	Region action.Box
	// Reveal is set where that region is the visible part of a list that
	// reaches past the screen towards the element: a turn at RevealX,
	// RevealY, beside the list, scrolls what holds it (the page) to bring
	// the list into view first.
	Reveal           bool
	RevealX, RevealY int
}

// FindText finds the first element whose name or text holds text: a
// showing one if any, else one scrolled out of view, with where a wheel
// must turn to bring it in (see TextSpot).
func (t *Tree) FindText(text string, screen action.Size) TextSpot {
	whole := action.Box{W: screen.W, H: screen.H}
	spot := TextSpot{X: screen.W / 2, Y: screen.H / 2, Down: true, Region: whole}
	for _, n := range t.Filter(Options{Screen: screen, MaxNodes: 1 << 20}) {
		if strings.Contains(n.Node.Name, text) || strings.Contains(n.Node.Text, text) {
			shown := TextSpot{Found: true, Showing: true, Box: n.Node.Box, X: spot.X, Y: spot.Y, Region: whole}
			// Whether its ancestors show it whole, else where to nudge it.
			path := t.pathTo(n.Node)
			clip, ok := clipOf(whole, path[:max(len(path)-1, 0)])
			b := n.Node.Box
			shown.Inside = ok && (b.Y >= clip.Y && b.Y+b.H <= clip.Y+clip.H || b.H >= clip.H)
			if ok {
				shown.X, shown.Y = clip.Center()
				shown.Region = clip
				_, cy := b.Center()
				shown.Down = cy > shown.Y
			}
			return shown
		}
	}
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
		placeSpot(&spot, path[1:len(path)-1], n.Box, whole)
		return spot
	}
	return spot
}

// placeSpot chooses where the wheel turns to bring an element (box) that
// its ancestors hide into view. The list that holds it is the innermost
// ancestor whose box does not hold the element's middle: the wheel turns
// over the part of that list on the screen. Where the list itself reaches
// past the visible part of what holds it (a list at the foot of the page),
// the page is turned first (Reveal), over a point of it beside the list,
// so that the list comes into view whole.
func placeSpot(spot *TextSpot, ancestors []*Node, box action.Box, whole action.Box) {
	_, cy := box.Center()
	outer := whole
	list := -1
	for i, p := range ancestors {
		if p.Box.W <= 0 || p.Box.H <= 0 {
			continue
		}
		if cy < p.Box.Y || cy >= p.Box.Y+p.Box.H {
			list = i
		}
	}
	if list >= 0 {
		outer, _ = clipOf(whole, ancestors[:list])
		ancestors = ancestors[:list+1]
	}
	clip, _ := clipOf(whole, ancestors)
	spot.X, spot.Y = clip.Center()
	spot.Region = clip
	spot.Down = cy > spot.Y
	if list < 0 {
		return
	}
	// The band of the outer region above or below the list, towards the
	// element, where a turn scrolls the page and not the list.
	lb := ancestors[list].Box
	const room = 16
	switch {
	case spot.Down && lb.Y+lb.H > outer.Y+outer.H && lb.Y-outer.Y >= room:
		spot.Reveal, spot.RevealX, spot.RevealY = true, outer.X+outer.W/2, (outer.Y+lb.Y)/2
	case !spot.Down && lb.Y < outer.Y && outer.Y+outer.H-(lb.Y+lb.H) >= room:
		spot.Reveal, spot.RevealX, spot.RevealY = true, outer.X+outer.W/2, (lb.Y+lb.H+outer.Y+outer.H)/2
	}
}

// clipOf is the part of the screen (whole) that all the nodes' boxes
// share, nodes without a box left out. Where they share none, ok is false
// and clip is what the nodes before the one that left nothing share.
func clipOf(whole action.Box, nodes []*Node) (clip action.Box, ok bool) {
	clip = whole
	for _, p := range nodes {
		if p.Box.W <= 0 || p.Box.H <= 0 {
			continue
		}
		in, ok := intersect(clip, p.Box)
		if !ok {
			return clip, false
		}
		clip = in
	}
	return clip, true
}

// pathTo lists the nodes from an application's root down to n.
func (t *Tree) pathTo(n *Node) []*Node {
	var path []*Node
	var walk func(c *Node) bool
	walk = func(c *Node) bool {
		path = append(path, c)
		if c == n {
			return true
		}
		for _, k := range c.Children {
			if walk(k) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	for _, a := range t.Apps {
		path = path[:0]
		if walk(a) {
			return path
		}
	}
	return nil
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
