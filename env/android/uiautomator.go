// Package android is Proctor's environment for Android devices, driven
// over ADB. This file turns the window hierarchy that `uiautomator dump`
// writes into Proctor's tree model, so that filtering, linearisation,
// set-of-mark and the element under each click work as on a desktop.
package android

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

// MaxDump bounds a window hierarchy dump; a device's dump is outside
// input.
const MaxDump = 16 << 20

// maxDepth bounds how deeply a dump's nodes nest.
const maxDepth = 256

// roles maps Android widget classes to the roles of Proctor's tree model
// (the desktop's names, so targets and filters read alike). A class not
// listed takes the role of the nearest listed class its name ends with,
// else "panel".
var roles = map[string]string{
	"Button":                    "push button",
	"ImageButton":               "push button",
	"FloatingActionButton":      "push button",
	"MaterialButton":            "push button",
	"CompoundButton":            "toggle button",
	"ToggleButton":              "toggle button",
	"CheckBox":                  "check box",
	"CheckedTextView":           "check box",
	"RadioButton":               "radio button",
	"Switch":                    "switch",
	"SwitchCompat":              "switch",
	"SwitchMaterial":            "switch",
	"EditText":                  "text box",
	"AutoCompleteTextView":      "text box",
	"MultiAutoCompleteTextView": "text box",
	"SearchView":                "search box",
	"TextView":                  "label",
	"ImageView":                 "image",
	"Spinner":                   "combo box",
	"SeekBar":                   "slider",
	"RatingBar":                 "slider",
	"ProgressBar":               "progress bar",
	"ListView":                  "list",
	"GridView":                  "list",
	"RecyclerView":              "list",
	"ScrollView":                "scroll pane",
	"HorizontalScrollView":      "scroll pane",
	"NestedScrollView":          "scroll pane",
	"ViewPager":                 "page tab list",
	"TabWidget":                 "page tab list",
	"TabLayout":                 "page tab list",
	"WebView":                   "document web",
	"Toolbar":                   "tool bar",
	"ActionBar":                 "tool bar",
	"FrameLayout":               "panel",
	"LinearLayout":              "panel",
	"RelativeLayout":            "panel",
	"ConstraintLayout":          "panel",
	"ViewGroup":                 "panel",
	"View":                      "panel",
	"Image":                     "image",
}

// Role is the tree model's role for an Android widget class, such as
// android.widget.Button ("push button").
func Role(class string) string {
	short := class[strings.LastIndexAny(class, ".$")+1:]
	if r, ok := roles[short]; ok {
		return r
	}
	// Subclasses keep their base's name at the end: AppCompatEditText.
	best, role := 0, "panel"
	for k, r := range roles {
		if len(k) > best && strings.HasSuffix(short, k) {
			best, role = len(k), r
		}
	}
	return role
}

// dumpNode is a node of the XML hierarchy.
type dumpNode struct {
	Text          string     `xml:"text,attr"`
	ResourceID    string     `xml:"resource-id,attr"`
	Class         string     `xml:"class,attr"`
	Package       string     `xml:"package,attr"`
	ContentDesc   string     `xml:"content-desc,attr"`
	Checkable     string     `xml:"checkable,attr"`
	Checked       string     `xml:"checked,attr"`
	Clickable     string     `xml:"clickable,attr"`
	Enabled       string     `xml:"enabled,attr"`
	Focusable     string     `xml:"focusable,attr"`
	Focused       string     `xml:"focused,attr"`
	Scrollable    string     `xml:"scrollable,attr"`
	LongClickable string     `xml:"long-clickable,attr"`
	Password      string     `xml:"password,attr"`
	Selected      string     `xml:"selected,attr"`
	Visible       string     `xml:"visible-to-user,attr"`
	Bounds        string     `xml:"bounds,attr"`
	Nodes         []dumpNode `xml:"node"`
}

type hierarchy struct {
	XMLName  xml.Name   `xml:"hierarchy"`
	Rotation string     `xml:"rotation,attr"`
	Nodes    []dumpNode `xml:"node"`
}

var boundsRE = regexp.MustCompile(`^\[(-?\d{1,6}),(-?\d{1,6})\]\[(-?\d{1,6}),(-?\d{1,6})\]$`)

// parseBounds reads "[x1,y1][x2,y2]".
func parseBounds(s string) (action.Box, error) {
	m := boundsRE.FindStringSubmatch(s)
	if m == nil {
		return action.Box{}, fmt.Errorf("bounds %q are not [x1,y1][x2,y2]", s)
	}
	var v [4]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	if v[2] < v[0] || v[3] < v[1] {
		return action.Box{}, fmt.Errorf("bounds %q end before they start", s)
	}
	return action.Box{X: v[0], Y: v[1], W: v[2] - v[0], H: v[3] - v[1]}, nil
}

// ErrDump is a window hierarchy that cannot be read.
var ErrDump = errors.New("unreadable window hierarchy")

// ParseDump turns a `uiautomator dump` into a tree: one application node
// per package, in the order the packages first appear, holding that
// package's top nodes. Android's attributes become the model's states
// (enabled, focusable, focused, checkable, checked, selected, clickable,
// scrollable, editable for text fields; visible and showing unless
// visible-to-user says false). A node's name is its content description,
// else its text (what TalkBack reads: a button's caption), its text the
// text beside a description; a node one can act on with neither takes its
// resource id's name (the part after ":id/"), as ProBench's description
// of a click does.
// Text before the XML (uiautomator prints "UI hierchary dumped to: ..."
// after it when dumping to /dev/tty) is skipped.
func ParseDump(b []byte) (*observe.Tree, error) {
	if len(b) > MaxDump {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrDump, len(b), MaxDump)
	}
	start := bytes.Index(b, []byte("<hierarchy"))
	if start < 0 {
		return nil, fmt.Errorf("%w: no <hierarchy> element in %q", ErrDump, clip(b))
	}
	end := bytes.LastIndex(b, []byte("</hierarchy>"))
	if end < start {
		if bytes.HasSuffix(bytes.TrimSpace(b[start:]), []byte("/>")) {
			end = len(b) - len("</hierarchy>") // an empty <hierarchy .../>
		} else {
			return nil, fmt.Errorf("%w: the dump is cut short (no </hierarchy>)", ErrDump)
		}
	}
	body := b[start:min(len(b), end+len("</hierarchy>"))]
	if err := checkDepth(body); err != nil {
		return nil, err
	}
	var h hierarchy
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = true
	if err := dec.Decode(&h); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %v", ErrDump, err)
	}
	t := &observe.Tree{}
	apps := map[string]*observe.Node{}
	for _, dn := range h.Nodes {
		n := convert(dn, t)
		app := apps[dn.Package]
		if app == nil {
			app = &observe.Node{App: dn.Package, Role: "application", Name: dn.Package, States: []string{"enabled", "visible", "showing"}, Box: n.Box}
			apps[dn.Package] = app
			t.Apps = append(t.Apps, app)
		}
		app.Children = append(app.Children, n)
		app.Box = union(app.Box, n.Box)
	}
	return t, nil
}

// checkDepth refuses a dump nested deeper than maxDepth before it is
// decoded (the decoder would recurse).
func checkDepth(b []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(b))
	depth := 0
	for {
		tok, err := dec.RawToken()
		if err != nil {
			return nil // the decoder reports what is wrong
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxDepth {
				return fmt.Errorf("%w: nodes nest more than %d deep", ErrDump, maxDepth)
			}
		case xml.EndElement:
			depth--
		}
	}
}

func convert(dn dumpNode, t *observe.Tree) *observe.Node {
	n := &observe.Node{Role: Role(dn.Class), Name: strings.TrimSpace(dn.ContentDesc), Text: dn.Text}
	acts := dn.Clickable == "true" || dn.Focusable == "true" || dn.Checkable == "true" || dn.LongClickable == "true"
	switch {
	case n.Name == "" && strings.TrimSpace(n.Text) != "":
		// A button's caption, a label's words: what TalkBack reads.
		n.Name, n.Text = strings.TrimSpace(n.Text), ""
	case n.Name == "" && dn.ResourceID != "" && acts:
		n.Name = dn.ResourceID[strings.LastIndex(dn.ResourceID, "/")+1:]
	}
	box, err := parseBounds(dn.Bounds)
	if err != nil {
		t.Errors = append(t.Errors, fmt.Sprintf("%s %q: %v", dn.Class, n.Name, err))
	}
	n.Box = box
	add := func(attr, state string) {
		if attr == "true" {
			n.States = append(n.States, state)
		}
	}
	add(dn.Enabled, "enabled")
	add(dn.Enabled, "sensitive")
	if dn.Visible != "false" {
		n.States = append(n.States, "visible", "showing")
	}
	add(dn.Focusable, "focusable")
	add(dn.Focused, "focused")
	add(dn.Checkable, "checkable")
	add(dn.Checked, "checked")
	add(dn.Selected, "selected")
	add(dn.Clickable, "clickable")
	add(dn.LongClickable, "long-clickable")
	add(dn.Scrollable, "scrollable")
	add(dn.Password, "password")
	if n.Role == "text box" || n.Role == "search box" {
		n.States = append(n.States, "editable")
	}
	for _, c := range dn.Nodes {
		n.Children = append(n.Children, convert(c, t))
	}
	return n
}

func union(a, b action.Box) action.Box {
	if a.W == 0 && a.H == 0 {
		return b
	}
	if b.W == 0 && b.H == 0 {
		return a
	}
	x, y := min(a.X, b.X), min(a.Y, b.Y)
	return action.Box{X: x, Y: y, W: max(a.X+a.W, b.X+b.W) - x, H: max(a.Y+a.H, b.Y+b.H) - y}
}

func clip(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}
