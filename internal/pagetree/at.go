package pagetree

import (
	"context"

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
// "" means no interactive element is there.
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
		for seen := 0; n != nil && seen < len(tree.Nodes); seen++ {
			if !n.Ignored && !dropped[n.role()] {
				node := &observe.Node{Role: role(n, false), Name: n.Name.str(), Text: n.Value.text(), States: states(n, true)}
				if node.Role == "static" && node.Text == "" {
					node.Text = node.Name
				}
				if node.Interactive() {
					return observe.Describe(node), nil
				}
			}
			n = byID[n.ParentID]
		}
		return "", nil
	})
}

func ptr[T any](v T) *T { return &v }
