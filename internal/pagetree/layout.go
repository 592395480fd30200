package pagetree

import (
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
)

// documentNode is the DOM nodeType of a document.
const documentNode = 9

// rect is a box in viewport CSS pixels.
type rect struct{ x, y, w, h float64 }

// domNode is what the snapshot says about one DOM node.
type domNode struct {
	box       rect
	laidOut   bool // it has a layout object (display is not none or contents)
	hidden    bool // visibility: hidden or collapse
	clickable bool // it reacts to clicks (a listener, a link)
	password  bool // an <input type=password>
}

// layout indexes the snapshot by backend node id. It also records, for each
// frame, the backend id of the iframe element that holds it.
type layout struct {
	nodes  map[cdp.BackendNodeID]*domNode
	owners map[cdp.FrameID]cdp.BackendNodeID // a child frame's iframe element
}

// owner is the iframe element that holds a document: its document's index
// and its own index there; doc is -1 for the main document.
type owner struct{ doc, node int }

// index reads the snapshot's documents. Boxes are moved from each
// document's coordinates to the viewport's: less the document's scroll
// offset, plus the origin of its iframe's content box.
func index(snap *domsnapshot.CaptureSnapshotResult) *layout {
	l := &layout{nodes: map[cdp.BackendNodeID]*domNode{}, owners: map[cdp.FrameID]cdp.BackendNodeID{}}
	if snap == nil || len(snap.Documents) == 0 {
		return l
	}
	docs := snap.Documents
	owners := owners(docs)
	origins := make([]*[2]float64, len(docs))
	var origin func(d int) [2]float64
	origin = func(d int) [2]float64 {
		if origins[d] == nil {
			origins[d] = &[2]float64{} // stops a cycle in a broken snapshot
			if p := owners[d]; p.doc >= 0 {
				po := origin(p.doc)
				o := contentOrigin(snap, docs[p.doc], p.node)
				origins[d] = &[2]float64{po[0] + o[0], po[1] + o[1]}
			}
		}
		return *origins[d]
	}
	for d, doc := range docs {
		l.addDocument(snap, doc, origin(d))
		if p := owners[d]; p.doc >= 0 && p.node < len(docs[p.doc].Nodes.BackendNodeID) {
			l.owners[cdp.FrameID(str(snap, doc.FrameID))] = docs[p.doc].Nodes.BackendNodeID[p.node]
		}
	}
	return l
}

// owners finds the iframe element that holds each document.
func owners(docs []*domsnapshot.DocumentSnapshot) []owner {
	out := make([]owner, len(docs))
	for i := range out {
		out[i].doc = -1
	}
	for d, doc := range docs {
		cd := doc.Nodes.ContentDocumentIndex
		if cd == nil {
			continue
		}
		for k, n := range cd.Index {
			if k < len(cd.Value) && cd.Value[k] >= 0 && int(cd.Value[k]) < len(docs) {
				out[cd.Value[k]] = owner{d, int(n)}
			}
		}
	}
	return out
}

// contentOrigin is where the content box of the iframe element n of doc
// lies in doc's viewport: its border box less doc's scroll, plus its left
// and top border and padding.
func contentOrigin(snap *domsnapshot.CaptureSnapshotResult, doc *domsnapshot.DocumentSnapshot, n int) [2]float64 {
	for j, ni := range doc.Layout.NodeIndex {
		if int(ni) != n || j >= len(doc.Layout.Bounds) || len(doc.Layout.Bounds[j]) < 2 {
			continue
		}
		b := doc.Layout.Bounds[j]
		var st domsnapshot.ArrayOfStrings
		if j < len(doc.Layout.Styles) {
			st = doc.Layout.Styles[j]
		}
		return [2]float64{
			b[0] - doc.ScrollOffsetX + px(snap, st, styleBorderLeft) + px(snap, st, stylePaddingLeft),
			b[1] - doc.ScrollOffsetY + px(snap, st, styleBorderTop) + px(snap, st, stylePaddingTop),
		}
	}
	return [2]float64{}
}

// addDocument records the nodes of one document whose origin in the
// viewport is o.
func (l *layout) addDocument(snap *domsnapshot.CaptureSnapshotResult, doc *domsnapshot.DocumentSnapshot, o [2]float64) {
	nodes := doc.Nodes
	all := make([]domNode, len(nodes.BackendNodeID))
	for i, id := range nodes.BackendNodeID {
		l.nodes[id] = &all[i]
	}
	if c := nodes.IsClickable; c != nil {
		for _, i := range c.Index {
			if i >= 0 && int(i) < len(all) {
				all[i].clickable = true
			}
		}
	}
	dx, dy := o[0]-doc.ScrollOffsetX, o[1]-doc.ScrollOffsetY
	lay := doc.Layout
	for j, ni := range lay.NodeIndex {
		if ni < 0 || int(ni) >= len(all) || all[ni].laidOut || j >= len(lay.Bounds) || len(lay.Bounds[j]) < 4 {
			continue // a node's first layout object gives its box
		}
		n, b := &all[ni], lay.Bounds[j]
		n.laidOut = true
		n.box = rect{b[0] + dx, b[1] + dy, b[2], b[3]}
		if int(ni) < len(nodes.NodeType) && nodes.NodeType[ni] == documentNode {
			n.box = rect{b[0] + o[0], b[1] + o[1], b[2], b[3]} // the frame's viewport, which does not scroll
		}
		if j < len(lay.Styles) {
			v := style(snap, lay.Styles[j], styleVisibility)
			n.hidden = v == "hidden" || v == "collapse"
		}
		if int(ni) < len(nodes.NodeName) && str(snap, nodes.NodeName[ni]) == "INPUT" && int(ni) < len(nodes.Attributes) {
			n.password = attr(snap, nodes.Attributes[ni], "type") == "password"
		}
	}
}

// str is the snapshot's string at index i.
func str(snap *domsnapshot.CaptureSnapshotResult, i domsnapshot.StringIndex) string {
	if i < 0 || int(i) >= len(snap.Strings) {
		return ""
	}
	return snap.Strings[i]
}

// style is the computed style k (an index into styles) of a layout node.
func style(snap *domsnapshot.CaptureSnapshotResult, st domsnapshot.ArrayOfStrings, k int) string {
	if k >= len(st) {
		return ""
	}
	return str(snap, domsnapshot.StringIndex(st[k]))
}

// px is a computed length style in CSS pixels ("12px"), 0 if it is not one.
func px(snap *domsnapshot.CaptureSnapshotResult, st domsnapshot.ArrayOfStrings, k int) float64 {
	f, err := strconv.ParseFloat(strings.TrimSuffix(style(snap, st, k), "px"), 64)
	if err != nil {
		return 0
	}
	return f
}

// attr is the value of an element's attribute, lower-cased.
func attr(snap *domsnapshot.CaptureSnapshotResult, attrs domsnapshot.ArrayOfStrings, name string) string {
	for k := 0; k+1 < len(attrs); k += 2 {
		if strings.EqualFold(str(snap, domsnapshot.StringIndex(attrs[k])), name) {
			return strings.ToLower(str(snap, domsnapshot.StringIndex(attrs[k+1])))
		}
	}
	return ""
}
