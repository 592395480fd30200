package pagetree

import (
	"context"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"

	"github.com/proctor-eval/proctor/observe"
)

// getPartialAXTree is Accessibility.getPartialAXTree, answered as an axTree.
var getPartialAXTree = cdp.Command[accessibility.GetPartialAXTreeParams, axTree]{Method: accessibility.CommandGetPartialAXTree}

// At describes, as observe.Describe does, the smallest element a person
// can act on under the viewport point (x, y): the DOM node hit there, or
// the nearest of its ancestors that is interactive. It asks two questions
// of the page (a hit test and the node's accessibility ancestors) instead
// of reading the whole tree, so that the record of each click is cheap.
// "" means no interactive element is there. Where that ancestor is the
// page's document, the element named nearest the hit is described
// instead, as observe.Tree.At does: a click on a heading is on the
// heading.
func At(ctx context.Context, x, y int) (string, error) {
	return chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) (string, error) {
		hit, err := cdp.Call(ctx, t, dom.GetNodeForLocation, dom.GetNodeForLocationParams{X: int64(x), Y: int64(y), IgnorePointerEventsNone: ptr(true)})
		if err != nil {
			return "", err
		}
		tree, err := cdp.Call(ctx, t, getPartialAXTree, accessibility.GetPartialAXTreeParams{BackendNodeID: hit.BackendNodeID, FetchRelatives: ptr(true)})
		if err != nil {
			return "", err
		}
		byID := map[accessibility.NodeID]*axNode{}
		var n *axNode
		for _, a := range tree.Nodes {
			byID[a.NodeID] = a
			if a.BackendDOMNodeID == hit.BackendNodeID && (n == nil || n.Ignored) {
				n = a
			}
		}
		var named *observe.Node // the first element with a name of its own, from the hit up
		for seen := 0; n != nil && seen < len(tree.Nodes); seen++ {
			if !n.Ignored && !dropped[n.role()] {
				node := &observe.Node{Role: role(n, false), Name: n.Name.str(), Text: n.Value.text(), States: states(n, true)}
				if node.Role == "static" && node.Text == "" {
					node.Text = node.Name
				}
				if node.Text == "" && textHolders[node.Role] {
					node.Text = heldText(n, byID)
				}
				if node.Role == "entry" && password(ctx, t, n.BackendDOMNodeID) {
					node.Role = "password text"
				}
				if named == nil && observe.Named(node) {
					named = node
				}
				if node.Interactive() {
					if observe.Document(node.Role) && named != nil {
						return observe.Describe(named), nil
					}
					return observe.Describe(node), nil
				}
			}
			n = byID[n.ParentID]
		}
		return "", nil
	})
}

func ptr[T any](v T) *T { return &v }

// password reports whether a DOM node is a password field, which the tree
// names "password text" (build reads it from the DOM snapshot).
func password(ctx context.Context, t *chromedp.Target, id cdp.BackendNodeID) bool {
	if id == 0 {
		return false
	}
	d, err := cdp.Call(ctx, t, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: id})
	if err != nil || d.Node == nil || !strings.EqualFold(d.Node.LocalName, "input") {
		return false
	}
	for i := 0; i+1 < len(d.Node.Attributes); i += 2 {
		if strings.EqualFold(d.Node.Attributes[i], "type") {
			return strings.EqualFold(d.Node.Attributes[i+1], "password")
		}
	}
	return false
}

// heldText is the text a paragraph, heading or cell holds, as build folds
// it in: its children's, when they are all text runs; "" otherwise.
func heldText(n *axNode, byID map[accessibility.NodeID]*axNode) string {
	var parts []string
	for _, id := range n.ChildIDs {
		k := byID[id]
		switch {
		case k == nil:
			return ""
		case k.Ignored || dropped[k.role()]:
			continue
		case role(k, false) != "static":
			return ""
		}
		parts = append(parts, k.Name.str())
	}
	return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
}
