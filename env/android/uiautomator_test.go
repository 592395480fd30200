package android

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

func settingsTree(t testing.TB) *observe.Tree {
	t.Helper()
	b, err := os.ReadFile("testdata/settings.xml")
	if err != nil {
		t.Fatal(err)
	}
	// uiautomator dump /dev/tty prints a line after the XML.
	tr, err := ParseDump(append(b, "UI hierchary dumped to: /dev/tty\n"...))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func find(tr *observe.Tree, match func(*observe.Node) bool) *observe.Node {
	var out *observe.Node
	tr.Walk(func(_ string, n *observe.Node) bool {
		if out == nil && match(n) {
			out = n
		}
		return out == nil
	})
	return out
}

func TestParseDump(t *testing.T) {
	tr := settingsTree(t)
	if len(tr.Apps) != 2 || tr.Apps[0].App != "com.android.settings" || tr.Apps[1].App != "com.android.systemui" || len(tr.Errors) != 0 {
		t.Fatalf("apps %d (%v), errors %v", len(tr.Apps), tr.Apps, tr.Errors)
	}
	if b := tr.Apps[0].Box; b != (action.Box{X: 0, Y: 0, W: 1080, H: 2340}) {
		t.Errorf("the settings app's box %+v", b)
	}
	for _, tc := range []struct {
		name, role, text string
		box              action.Box
		states           []string
		not              []string
	}{
		{name: "Search settings", role: "push button", box: action.Box{X: 42, Y: 415, W: 996, H: 154},
			states: []string{"enabled", "visible", "showing", "focusable", "clickable"}, not: []string{"checked", "editable"}},
		{name: "Network & internet", role: "label", box: action.Box{X: 210, Y: 670, W: 410, H: 59}},
		{name: "switchWidget", role: "switch", states: []string{"checkable", "checked", "clickable"}, box: action.Box{X: 880, Y: 900, W: 137, H: 115}},
		{name: "filter_icon", role: "push button", box: action.Box{X: 900, Y: 1100, W: 117, H: 100}},
		{name: "search_src_text", role: "text box", states: []string{"editable", "focused", "long-clickable"}, box: action.Box{X: 42, Y: 1250, W: 996, H: 130}},
		{name: "Back", role: "image", states: []string{"clickable"}},
		{name: "recycler_view", role: "list", states: []string{"scrollable", "focusable"}},
	} {
		n := find(tr, func(n *observe.Node) bool {
			return n.Name == tc.name && n.Role == tc.role && (tc.text == "" || n.Text == tc.text)
		})
		if n == nil {
			t.Errorf("no %s %q %q", tc.role, tc.name, tc.text)
			continue
		}
		if tc.box != (action.Box{}) && n.Box != tc.box {
			t.Errorf("%s %q: box %+v, want %+v", tc.role, tc.name, n.Box, tc.box)
		}
		for _, s := range tc.states {
			if !n.Has(s) {
				t.Errorf("%s %q lacks the state %s (%v)", tc.role, tc.name, s, n.States)
			}
		}
		for _, s := range tc.not {
			if n.Has(s) {
				t.Errorf("%s %q has the state %s", tc.role, tc.name, s)
			}
		}
	}
}

// The model's table lists what a person sees and can act on.
func TestDumpFiltersAndLinearizes(t *testing.T) {
	tr := settingsTree(t)
	text := observe.Linearize(tr.Filter(observe.Options{Screen: action.Size{W: 1080, H: 2340}}), 0)
	for _, w := range []string{"push button\tSearch settings\t\t42\t415\t996\t154", "label\tNetwork & internet\t\t210\t670",
		"switch\tswitchWidget", "text box\tsearch_src_text", "image\tBack\t\t95\t2209"} {
		if !strings.Contains(text, w) {
			t.Errorf("the linearised tree lacks %q:\n%s", w, text)
		}
	}
}

// ProBench's Algorithm 1: the smallest clickable node under a click
// describes it; a node without text or description is named by its
// resource id, then its children's texts.
func TestElementUnderClick(t *testing.T) {
	tr := settingsTree(t)
	for _, tc := range []struct {
		x, y int
		want string
	}{
		{400, 700, "panel Network & internet Mobile, Wi‑Fi, hotspot"}, // the row: its children's texts
		{950, 950, "switch switchWidget"},                             // the switch inside the row, smaller
		{950, 1150, "push button filter_icon"},
		{500, 480, "push button Search settings"},
		{200, 2300, "image Back"},
		{500, 300, ""}, // the title is not clickable
	} {
		got := ""
		if n := tr.At(tc.x, tc.y); n != nil {
			got = observe.Describe(n.Node)
		}
		if got != tc.want {
			t.Errorf("At(%d, %d) = %q, want %q", tc.x, tc.y, got, tc.want)
		}
	}
}

func TestRole(t *testing.T) {
	for class, want := range map[string]string{
		"android.widget.Button": "push button", "androidx.appcompat.widget.AppCompatEditText": "text box",
		"com.google.android.material.switchmaterial.SwitchMaterial": "switch", "android.widget.TextView": "label",
		"androidx.recyclerview.widget.RecyclerView": "list", "com.example.Weird": "panel", "": "panel",
		"android.webkit.WebView": "document web", "android.widget.CheckBox": "check box", "Outer$InnerButton": "push button",
	} {
		if got := Role(class); got != want {
			t.Errorf("Role(%q) = %q, want %q", class, got, want)
		}
	}
}

func TestParseDumpErrors(t *testing.T) {
	deep := "<hierarchy>" + strings.Repeat(`<node bounds="[0,0][1,1]">`, maxDepth+1) + strings.Repeat("</node>", maxDepth+1) + "</hierarchy>"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "no <hierarchy>"},
		{"an error message", "ERROR: null root node returned by UiTestAutomationBridge.", "no <hierarchy>"},
		{"cut short", `<hierarchy rotation="0"><node bounds="[0,0][1,1]">`, "cut short"},
		{"bad XML", `<hierarchy><node bounds="[0,0][1,1]"></hierarchy>`, ErrDump.Error()},
		{"too deep", deep, "nest more than"},
	} {
		_, err := ParseDump([]byte(tc.in))
		if !errors.Is(err, ErrDump) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// Bad bounds are kept as errors of the tree; the node stays, boxless.
	tr, err := ParseDump([]byte(`<hierarchy><node class="android.widget.Button" package="p" content-desc="OK" bounds="[9,9][1,1]"/></hierarchy>`))
	if err != nil || len(tr.Errors) != 1 || !strings.Contains(tr.Errors[0], "end before they start") {
		t.Fatalf("%v %v", tr, err)
	}
	empty, err := ParseDump([]byte(`<?xml version='1.0' ?><hierarchy rotation="1"/>`))
	if err != nil || len(empty.Apps) != 0 {
		t.Errorf("an empty hierarchy: %v %v", empty, err)
	}
}

func FuzzParseDump(f *testing.F) {
	b, err := os.ReadFile("testdata/settings.xml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`<hierarchy rotation="0"/>`))
	f.Add([]byte(`<hierarchy><node bounds="[0,0][10,10]" clickable="true"><node bounds="[-5,2][3,4]"/></node></hierarchy>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ParseDump(b)
		if err != nil {
			if !errors.Is(err, ErrDump) {
				t.Fatalf("an error that is not ErrDump: %v", err)
			}
			return
		}
		tr.Walk(func(_ string, n *observe.Node) bool {
			if n.Box.W < 0 || n.Box.H < 0 || slices.Contains(n.States, "") {
				t.Fatalf("node %+v", n)
			}
			return true
		})
		tr.Filter(observe.Options{})
		tr.At(1, 1)
	})
}
