package pagetree

import (
	"cmp"
	"slices"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/internal/cdpcbor"
	"github.com/proctor-eval/proctor/observe"
)

// val is an AX value read from its JSON text.
func val(json string) *axValue {
	c, err := cdpcbor.AppendCBOR(nil, []byte(`{"type":"x","value":`+cmp.Or(json, "null")+`}`))
	if err != nil {
		panic(err)
	}
	v, err := valueOfCBOR(cdpcbor.NewDecoder(c))
	if err != nil {
		panic(err)
	}
	return v
}

func TestRole(t *testing.T) {
	for _, tc := range []struct {
		ax       string
		password bool
		props    []axProperty
		want     string
	}{
		{"button", false, nil, "push button"},
		{"button", false, []axProperty{{accessibility.PropertyNamePressed, val(`"false"`)}}, "toggle button"},
		{"textbox", false, nil, "entry"},
		{"textbox", true, nil, "password text"},
		{"searchbox", false, nil, "entry"},
		{"checkbox", false, nil, "check box"},
		{"StaticText", false, nil, "static"},
		{"RootWebArea", false, nil, "document"},
		{"Iframe", false, nil, "frame"},
		{"option", false, nil, "list item"},
		{"tab", false, nil, "page tab"},
		{"SomethingNew", false, nil, "somethingnew"},
	} {
		n := &axNode{Role: val(`"` + tc.ax + `"`), Properties: tc.props}
		if got := role(n, tc.password); got != tc.want {
			t.Errorf("role(%s, password %v) = %q, want %q", tc.ax, tc.password, got, tc.want)
		}
	}
}

func TestStates(t *testing.T) {
	p := func(name accessibility.PropertyName, json string) axProperty { return axProperty{name, val(json)} }
	for _, tc := range []struct {
		name    string
		props   []axProperty
		visible bool
		want    []string
	}{
		{"plain", nil, true, []string{"visible", "showing", "enabled", "sensitive"}},
		{"hidden", nil, false, []string{"enabled", "sensitive"}},
		{"disabled", []axProperty{p(accessibility.PropertyNameDisabled, "true")}, true, []string{"visible", "showing"}},
		{"checked", []axProperty{p(accessibility.PropertyNameChecked, `"true"`), p(accessibility.PropertyNameFocusable, "true")}, true,
			[]string{"visible", "showing", "enabled", "sensitive", "focusable", "checkable", "checked"}},
		{"mixed", []axProperty{p(accessibility.PropertyNameChecked, `"mixed"`)}, true,
			[]string{"visible", "showing", "enabled", "sensitive", "checkable", "indeterminate"}},
		{"collapsed", []axProperty{p(accessibility.PropertyNameExpanded, "false")}, true,
			[]string{"visible", "showing", "enabled", "sensitive", "expandable"}},
		{"text field", []axProperty{p(accessibility.PropertyNameEditable, `"plaintext"`), p(accessibility.PropertyNameFocused, "true"),
			p(accessibility.PropertyNameMultiline, "false")}, true,
			[]string{"visible", "showing", "enabled", "sensitive", "focused", "editable", "single line"}},
		{"option", []axProperty{p(accessibility.PropertyNameSelected, "true")}, true,
			[]string{"visible", "showing", "enabled", "sensitive", "selectable", "selected"}},
	} {
		got := states(&axNode{Properties: tc.props}, tc.visible)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: states = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestValueText(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`"Ada"`, "Ada"}, {`"a \"b\" \u00e9"`, `a "b" é`}, {`30`, "30"}, {`2.5`, "2.5"}, {`true`, "true"}, {`null`, ""}, {``, ""},
	} {
		if got := val(tc.json).text(); got != tc.want {
			t.Errorf("text(%s) = %q, want %q", tc.json, got, tc.want)
		}
	}
	if got := (*axValue)(nil).text(); got != "" {
		t.Errorf("nil value's text = %q", got)
	}
}

func TestToBox(t *testing.T) {
	for _, tc := range []struct {
		r    rect
		want action.Box
	}{
		{rect{10, 20, 30, 40}, action.Box{X: 10, Y: 20, W: 30, H: 40}},
		{rect{10.6, 20.4, 47.8, 21}, action.Box{X: 11, Y: 20, W: 47, H: 21}},
		{rect{-5.5, -300, 10, 10}, action.Box{X: -5, Y: -300, W: 10, H: 10}},
	} {
		if got := toBox(tc.r); got != tc.want {
			t.Errorf("toBox(%v) = %v, want %v", tc.r, got, tc.want)
		}
	}
}

func TestUnion(t *testing.T) {
	vis := []string{"visible"}
	nodes := []*observe.Node{
		{Box: action.Box{X: 10, Y: 10, W: 10, H: 10}, States: vis},
		{Box: action.Box{X: 0, Y: 0, W: 500, H: 500}}, // not visible: left out
		{Box: action.Box{X: 30, Y: 5, W: 10, H: 10}, States: vis},
	}
	got, ok := union(nodes)
	if want := (action.Box{X: 10, Y: 5, W: 30, H: 15}); !ok || got != want {
		t.Errorf("union = %v, %v; want %v", got, ok, want)
	}
	if _, ok := union(nodes[1:2]); ok {
		t.Error("union of hidden nodes found a box")
	}
}
