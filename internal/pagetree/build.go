package pagetree

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

// frameTree is one frame's AX nodes by id, with its root.
type frameTree struct {
	byID map[accessibility.NodeID]*axNode
	root *axNode
}

// builder joins the AX trees of the frames with the DOM snapshot.
type builder struct {
	lay    *layout
	frames map[cdp.FrameID]*frameTree
	owned  map[cdp.BackendNodeID]cdp.FrameID // iframe element → its frame
	seen   map[int64]bool                    // IDs given out, to keep them unique
	errors []string
}

// build turns the browser's answers into the tab's tree.
func build(r *raw) *observe.Tree {
	b := &builder{
		lay:    r.lay,
		frames: r.frames,
		owned:  map[cdp.BackendNodeID]cdp.FrameID{},
		seen:   map[int64]bool{},
	}
	for f, id := range b.lay.owners {
		b.owned[id] = f
	}
	app := &observe.Node{App: App, Role: "application", States: []string{"visible", "showing", "enabled", "sensitive"}}
	if ft := b.frames[r.main]; ft != nil && ft.root != nil {
		app.Name = ft.root.Name.str()
		app.Children = b.document(ft)
		if len(app.Children) > 0 {
			app.Box = app.Children[0].Box
		}
	}
	return &observe.Tree{Apps: []*observe.Node{app}, Errors: append(r.errors, b.errors...)}
}

// newFrameTree indexes a frame's AX nodes; its root is the node without a
// parent.
func newFrameTree(nodes []*axNode) *frameTree {
	ft := &frameTree{byID: make(map[accessibility.NodeID]*axNode, len(nodes))}
	for _, n := range nodes {
		ft.byID[n.NodeID] = n
		if ft.root == nil && n.ParentID == "" {
			ft.root = n
		}
	}
	return ft
}

// document converts a frame's tree. Its document node's box is the
// frame's viewport, and it shows whatever its nodes say.
func (b *builder) document(ft *frameTree) []*observe.Node {
	out := b.convert(ft, ft.root)
	for _, d := range out {
		if d.Role == "document" {
			d.States = addState(d.States, "visible", "showing")
		}
	}
	return out
}

// convert turns an AX node into the nodes that take its place: itself, or
// its children when it is ignored or plain structure.
func (b *builder) convert(ft *frameTree, n *axNode) []*observe.Node {
	if n == nil || dropped[n.role()] {
		return nil
	}
	var kids []*observe.Node
	for _, c := range n.ChildIDs {
		kids = append(kids, b.convert(ft, ft.byID[c])...)
	}
	dom := b.lay.nodes[n.BackendDOMNodeID]
	if n.Ignored || b.hoist(n, dom) {
		return kids
	}
	if n.role() == "Iframe" {
		kids = append(kids, b.frameDocument(n.BackendDOMNodeID)...)
	}
	node := &observe.Node{Role: role(n, dom != nil && dom.password), Name: n.Name.str(), Children: kids}
	if id := int64(n.BackendDOMNodeID); id != 0 && !b.seen[id] {
		b.seen[id] = true
		node.ID = id
	}
	node.Text = n.Value.text()
	if node.Role == "static" && node.Text == "" {
		node.Text = node.Name
	}
	visible := false
	switch {
	case dom != nil && dom.laidOut:
		node.Box = toBox(dom.box)
		visible = !dom.hidden
	default: // no box of its own (display: contents, an option of a closed select): its children's
		node.Box, visible = union(kids)
	}
	node.States = states(n, visible)
	if len(kids) == 1 && kids[0].Role == "static" && len(kids[0].Children) == 0 &&
		(kids[0].Name == node.Name || kids[0].Name == node.Text) {
		node.Children = nil // the text that names its parent, or is its value, says nothing more
	}
	if node.Text == "" && textHolders[node.Role] && len(node.Children) > 0 {
		// A paragraph, heading or cell holds its text, as the desktop's
		// do: its text children fold into it, so that the element probe
		// of a status line reads it and the table shows it once.
		var parts []string
		for _, k := range node.Children {
			if k.Role != "static" || len(k.Children) > 0 {
				parts = nil
				break
			}
			parts = append(parts, k.Text)
		}
		if parts != nil {
			node.Text = strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
			node.Children = nil
		}
	}
	return []*observe.Node{node}
}

// hoist reports whether a node is plain structure that its children can
// replace: a generic role, no name, nothing to focus or click.
func (b *builder) hoist(n *axNode, dom *domNode) bool {
	return plain[n.role()] && n.Name.str() == "" &&
		!n.is(accessibility.PropertyNameFocusable) && (dom == nil || !dom.clickable)
}

// frameDocument converts the document of the frame that the iframe element
// holds. A frame that the page's process does not hold (an out-of-process
// iframe, when site isolation is on) has no tree here: it is named in the
// errors.
func (b *builder) frameDocument(iframe cdp.BackendNodeID) []*observe.Node {
	f, ok := b.owned[iframe]
	ft := b.frames[f]
	if !ok || ft == nil || ft.root == nil {
		b.errors = append(b.errors, fmt.Sprintf("iframe %d: its document is not in the page's process", iframe))
		return nil
	}
	return b.document(ft)
}

// union is the box around the visible nodes, and whether there is one.
func union(nodes []*observe.Node) (action.Box, bool) {
	var u action.Box
	found := false
	for _, n := range nodes {
		if !n.Has("visible") || n.Box.W <= 0 && n.Box.H <= 0 {
			continue
		}
		if !found {
			u, found = n.Box, true
			continue
		}
		x0, y0 := min(u.X, n.Box.X), min(u.Y, n.Box.Y)
		x1, y1 := max(u.X+u.W, n.Box.X+n.Box.W), max(u.Y+u.H, n.Box.Y+n.Box.H)
		u = action.Box{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
	}
	return u, found
}

// toBox rounds a box's edges to the nearest pixels (halves up).
func toBox(r rect) action.Box {
	round := func(f float64) float64 { return math.Floor(f + 0.5) }
	x, y := round(r.x), round(r.y)
	return action.Box{X: int(x), Y: int(y), W: int(round(r.x+r.w) - x), H: int(round(r.y+r.h) - y)}
}

// addState adds the states a node lacks.
func addState(s []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(s, a) {
			s = append(s, a)
		}
	}
	return s
}
