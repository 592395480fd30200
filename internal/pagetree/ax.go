package pagetree

import (
	"fmt"
	"strconv"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/proctor-eval/proctor/internal/cdpcbor"
)

// axNode is the part of an accessibility.Node that the tree needs. Reading
// only these fields skips the name sources, most of the reply's bytes.
type axNode struct {
	NodeID           accessibility.NodeID
	Ignored          bool
	Role             *axValue
	Name             *axValue
	Value            *axValue
	Properties       []axProperty
	ParentID         accessibility.NodeID
	ChildIDs         []accessibility.NodeID
	BackendDOMNodeID cdp.BackendNodeID
}

// axValue is the value of an accessibility.Value: a string, or the JSON
// text of a number or a boolean. A null value is neither.
type axValue struct {
	s     string // the value when it is a string
	other string // the JSON text of a number, true or false
}

// axProperty is an accessibility.Property.
type axProperty struct {
	Name  accessibility.PropertyName
	Value *axValue
}

// axTree is the reply of Accessibility.getFullAXTree (and of
// getPartialAXTree, whose reply has the same shape).
type axTree struct {
	Nodes []*axNode
}

// getFullAXTree is Accessibility.getFullAXTree, answered as an axTree.
var getFullAXTree = cdp.Command[accessibility.GetFullAXTreeParams, axTree]{Method: accessibility.CommandGetFullAXTree}

// UnmarshalJSON reads the reply when the JSON package decodes it: on a
// browser that cdppipe did not start, whose replies come as JSON. It
// converts the JSON to the browser's CBOR for DecodeCBOR, the one decoder
// of the reply.
func (t *axTree) UnmarshalJSON(b []byte) error {
	c, err := cdpcbor.AppendCBOR(nil, b)
	if err != nil {
		return fmt.Errorf("AX tree: %w", err)
	}
	return t.DecodeCBOR(c)
}

// DecodeCBOR reads the reply from the CBOR the browser sent, checking it
// (cdppipe.CBORResult): where cdppipe started the browser, the reply
// reaches the tree with no JSON in between.
func (t *axTree) DecodeCBOR(b []byte) error {
	d := cdpcbor.NewDecoder(b)
	t.Nodes = []*axNode{}
	if d.Null() { // as the JSON package reads null: no nodes
		return d.End()
	}
	err := d.Map(func(key []byte) error {
		if string(key) != "nodes" || d.Null() {
			return nil
		}
		all := make([]axNode, 0, 1024)
		if err := d.Array(func() error {
			all = append(all, axNode{})
			n := &all[len(all)-1]
			if d.Null() {
				return nil
			}
			if err := n.decode(d); err != nil {
				return fmt.Errorf("node %d: %w", len(all)-1, err)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("nodes: %w", err)
		}
		t.Nodes = make([]*axNode, len(all))
		for i := range all {
			t.Nodes[i] = &all[i]
		}
		return nil
	})
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return fmt.Errorf("AX tree: %w", err)
	}
	return nil
}

// decode reads one AX node's fields from CBOR; it skips the others.
func (n *axNode) decode(d *cdpcbor.Decoder) error {
	return d.Map(func(k []byte) error {
		var err error
		switch string(k) {
		case "nodeId":
			n.NodeID, err = stringOfCBOR[accessibility.NodeID](d)
		case "ignored":
			if !d.Null() {
				n.Ignored, err = d.Bool()
			}
		case "role":
			n.Role, err = valueOfCBOR(d)
		case "name":
			n.Name, err = valueOfCBOR(d)
		case "value":
			n.Value, err = valueOfCBOR(d)
		case "parentId":
			n.ParentID, err = stringOfCBOR[accessibility.NodeID](d)
		case "backendDOMNodeId":
			if !d.Null() {
				var id int64
				id, err = d.Int()
				n.BackendDOMNodeID = cdp.BackendNodeID(id)
			}
		case "childIds":
			if d.Null() {
				break
			}
			n.ChildIDs = []accessibility.NodeID{}
			err = d.Array(func() error {
				id, err := stringOfCBOR[accessibility.NodeID](d)
				n.ChildIDs = append(n.ChildIDs, id)
				return err
			})
		case "properties":
			if d.Null() {
				break
			}
			n.Properties = []axProperty{}
			err = d.Array(func() error {
				n.Properties = append(n.Properties, axProperty{})
				if d.Null() {
					return nil
				}
				return n.Properties[len(n.Properties)-1].decode(d)
			})
		default:
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		return nil
	})
}

// decode reads an accessibility.Property from CBOR.
func (p *axProperty) decode(d *cdpcbor.Decoder) error {
	return d.Map(func(k []byte) error {
		var err error
		switch string(k) {
		case "name":
			if p.Name, err = stringOfCBOR[accessibility.PropertyName](d); err != nil {
				return fmt.Errorf("name: %w", err)
			}
		case "value":
			if p.Value, err = valueOfCBOR(d); err != nil {
				return fmt.Errorf("value: %w", err)
			}
		}
		return nil
	})
}

// valueOfCBOR reads an accessibility.Value, a map whose "value" is the
// value; nil for a null one.
func valueOfCBOR(d *cdpcbor.Decoder) (*axValue, error) {
	if d.Null() {
		return nil, nil
	}
	out := &axValue{}
	err := d.Map(func(k []byte) error {
		if string(k) != "value" {
			return nil
		}
		var err error
		switch d.Kind() {
		case cdpcbor.String:
			out.s, err = d.String()
		case cdpcbor.Int, cdpcbor.Float, cdpcbor.Bool:
			var b []byte
			b, err = d.AppendJSON(nil)
			out.other = string(b)
		}
		return err
	})
	return out, err
}

// stringOfCBOR reads a string; a null one is "".
func stringOfCBOR[S ~string](d *cdpcbor.Decoder) (S, error) {
	if d.Null() {
		return "", nil
	}
	s, err := d.String()
	return S(s), err
}

// role is the node's AX role.
func (n *axNode) role() string { return n.Role.str() }

// prop is the value of the node's property, or nil.
func (n *axNode) prop(name accessibility.PropertyName) *axValue {
	for _, p := range n.Properties {
		if p.Name == name {
			return p.Value
		}
	}
	return nil
}

// is reports whether the node's property is true.
func (n *axNode) is(name accessibility.PropertyName) bool { return n.prop(name).isTrue() }

// isTrue reports whether the value is true: a boolean, or the token "true"
// of a tristate.
func (v *axValue) isTrue() bool {
	return v != nil && (v.other == "true" || v.s == "true")
}

// str is the value as a string, "" when it is not one.
func (v *axValue) str() string {
	if v == nil {
		return ""
	}
	return v.s
}

// text is the value as text: a string as it is, a number or a boolean
// written out.
func (v *axValue) text() string {
	switch {
	case v == nil:
		return ""
	case v.other == "":
		return v.s
	case v.other == "true" || v.other == "false":
		return v.other
	}
	if f, err := strconv.ParseFloat(v.other, 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return ""
}
