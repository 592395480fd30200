package pagetree

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/proctor-eval/proctor/internal/cdpcbor"
	"github.com/valyala/fastjson"
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

// axParsers parse AX replies. The reply for a page of a few thousand
// elements is megabytes of JSON, mostly name sources the tree does not
// read, and it is read at every step: fastjson parses and checks it in
// about half the time that decoding it into structs with the JSON
// package takes (BenchmarkDecodeAX).
var axParsers fastjson.ParserPool

// DecodeResult reads the reply from its JSON, checking it, for
// UnmarshalJSON.
func (t *axTree) DecodeResult(b []byte) error {
	p := axParsers.Get()
	defer axParsers.Put(p)
	v, err := p.ParseBytes(b)
	if err != nil {
		return fmt.Errorf("AX tree: %w", err)
	}
	if _, err := v.Object(); err != nil {
		return fmt.Errorf("AX tree: %w", err)
	}
	nodes, err := array(v.Get("nodes"))
	if err != nil {
		return fmt.Errorf("AX tree: nodes: %w", err)
	}
	all := make([]axNode, len(nodes))
	t.Nodes = make([]*axNode, len(nodes))
	for i, nv := range nodes {
		if err := all[i].read(nv); err != nil {
			return fmt.Errorf("AX tree: node %d: %w", i, err)
		}
		t.Nodes[i] = &all[i]
	}
	return nil
}

// UnmarshalJSON reads the reply when the JSON package decodes it (a
// session other than cdppipe's, a browser reached over a WebSocket).
func (t *axTree) UnmarshalJSON(b []byte) error { return t.DecodeResult(b) }

// DecodeCBOR reads the reply from the CBOR the browser sent, checking it
// (cdppipe.CBORResult): where cdppipe started the browser, the reply
// reaches the tree with no JSON in between.
func (t *axTree) DecodeCBOR(b []byte) error {
	d := cdpcbor.NewDecoder(b)
	t.Nodes = []*axNode{}
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

// read reads one AX node's fields; it ignores the others.
func (n *axNode) read(v *fastjson.Value) error {
	if v.Type() == fastjson.TypeNull {
		return nil
	}
	o, err := v.Object()
	if err != nil {
		return err
	}
	o.Visit(func(k []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		switch string(k) {
		case "nodeId":
			n.NodeID, err = stringOf[accessibility.NodeID](v)
		case "ignored":
			n.Ignored, err = boolOf(v)
		case "role":
			n.Role, err = valueOf(v)
		case "name":
			n.Name, err = valueOf(v)
		case "value":
			n.Value, err = valueOf(v)
		case "parentId":
			n.ParentID, err = stringOf[accessibility.NodeID](v)
		case "backendDOMNodeId":
			var id int64
			if id, err = intOf(v); err == nil {
				n.BackendDOMNodeID = cdp.BackendNodeID(id)
			}
		case "childIds":
			var ids []*fastjson.Value
			if ids, err = array(v); err != nil {
				break
			}
			n.ChildIDs = make([]accessibility.NodeID, len(ids))
			for i, id := range ids {
				if n.ChildIDs[i], err = stringOf[accessibility.NodeID](id); err != nil {
					break
				}
			}
		case "properties":
			var ps []*fastjson.Value
			if ps, err = array(v); err != nil {
				break
			}
			n.Properties = make([]axProperty, len(ps))
			for i, p := range ps {
				if err = n.Properties[i].read(p); err != nil {
					break
				}
			}
		default:
			return
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", k, err)
		}
	})
	return err
}

// read reads an accessibility.Property.
func (p *axProperty) read(v *fastjson.Value) error {
	if v.Type() == fastjson.TypeNull {
		return nil
	}
	o, err := v.Object()
	if err != nil {
		return err
	}
	if p.Name, err = stringOf[accessibility.PropertyName](o.Get("name")); err != nil {
		return fmt.Errorf("name: %w", err)
	}
	if p.Value, err = valueOf(o.Get("value")); err != nil {
		return fmt.Errorf("value: %w", err)
	}
	return nil
}

// valueOf reads an accessibility.Value, an object whose "value" is the
// value; nil for a missing or null one.
func valueOf(v *fastjson.Value) (*axValue, error) {
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil, nil
	}
	o, err := v.Object()
	if err != nil {
		return nil, err
	}
	out := &axValue{}
	switch x := o.Get("value"); {
	case x == nil:
	case x.Type() == fastjson.TypeString:
		out.s = string(x.GetStringBytes())
	case x.Type() == fastjson.TypeNumber, x.Type() == fastjson.TypeTrue, x.Type() == fastjson.TypeFalse:
		out.other = string(x.MarshalTo(nil))
	}
	return out, nil
}

// errType is a JSON value of another type than the field's.
var errType = errors.New("a value of the wrong type")

// stringOf reads a string; a missing or null one is "".
func stringOf[S ~string](v *fastjson.Value) (S, error) {
	switch {
	case v == nil || v.Type() == fastjson.TypeNull:
		return "", nil
	case v.Type() != fastjson.TypeString:
		return "", errType
	}
	return S(v.GetStringBytes()), nil
}

// boolOf reads a boolean; a missing or null one is false.
func boolOf(v *fastjson.Value) (bool, error) {
	switch {
	case v == nil || v.Type() == fastjson.TypeNull:
		return false, nil
	case v.Type() == fastjson.TypeTrue:
		return true, nil
	case v.Type() == fastjson.TypeFalse:
		return false, nil
	}
	return false, errType
}

// intOf reads an integer; a missing or null one is 0.
func intOf(v *fastjson.Value) (int64, error) {
	if v == nil || v.Type() == fastjson.TypeNull {
		return 0, nil
	}
	return v.Int64()
}

// array reads an array; a missing or null one is empty.
func array(v *fastjson.Value) ([]*fastjson.Value, error) {
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil, nil
	}
	return v.Array()
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
