package pagetree

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// axNode is the part of an accessibility.Node that the tree needs. Reading
// only these fields skips the name sources, most of the reply's bytes.
type axNode struct {
	NodeID           accessibility.NodeID   `json:"nodeId"`
	Ignored          bool                   `json:"ignored"`
	Role             *axValue               `json:"role"`
	Name             *axValue               `json:"name"`
	Value            *axValue               `json:"value"`
	Properties       []axProperty           `json:"properties"`
	ParentID         accessibility.NodeID   `json:"parentId"`
	ChildIDs         []accessibility.NodeID `json:"childIds"`
	BackendDOMNodeID cdp.BackendNodeID      `json:"backendDOMNodeId"`
}

// axValue is an accessibility.Value's JSON value.
type axValue struct {
	Value jsonv2.Value `json:"value"`
}

// axProperty is an accessibility.Property.
type axProperty struct {
	Name  accessibility.PropertyName `json:"name"`
	Value *axValue                   `json:"value"`
}

// axTree is the reply of Accessibility.getFullAXTree.
type axTree struct {
	Nodes []*axNode `json:"nodes"`
}

// getFullAXTree is Accessibility.getFullAXTree, answered as an axTree.
var getFullAXTree = cdp.Command[accessibility.GetFullAXTreeParams, axTree]{Method: accessibility.CommandGetFullAXTree}

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
	if v == nil {
		return false
	}
	s := string(v.Value)
	return s == "true" || s == `"true"`
}

// str is the value as a string, "" when it is not one.
func (v *axValue) str() string {
	if v == nil || len(v.Value) < 2 || v.Value[0] != '"' {
		return ""
	}
	raw := v.Value[1 : len(v.Value)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var s string
	if json.Unmarshal(v.Value, &s) != nil {
		return ""
	}
	return s
}

// text is the value as text: a string as it is, a number or a boolean
// written out.
func (v *axValue) text() string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	switch s := string(v.Value); {
	case v.Value[0] == '"':
		return v.str()
	case s == "true" || s == "false":
		return s
	default:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	return ""
}
