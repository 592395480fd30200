package observe

import (
	"flag"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var visible = []string{"enabled", "sensitive", "showing", "visible"}

func box(x, y, w, h int) action.Box { return action.Box{X: x, Y: y, W: w, H: h} }

// sample is a small GTK-3-like tree: a window with a menu (one item
// hidden), a text area, a button with a label inside, an unnamed icon
// button and an off-screen node.
func sample() *Tree {
	return &Tree{Apps: []*Node{{
		App: "editor", Role: "application", Name: "editor",
		Children: []*Node{{
			Role: "frame", Name: "notes.txt - Editor", States: visible, Box: box(100, 100, 600, 400),
			Children: []*Node{
				{Role: "menu", Name: "File", States: visible, Box: box(100, 120, 40, 20), Children: []*Node{
					{Role: "menu item", Name: "Save", States: []string{"enabled", "visible"}, Box: box(100, 140, 80, 20)},
				}},
				{Role: "text", States: append([]string{"editable", "focusable"}, visible...), Text: "Hello\tworld\nagain", Box: box(100, 150, 600, 300)},
				{Role: "push button", Name: "", States: append([]string{"focusable"}, visible...), Box: box(600, 460, 80, 30), Children: []*Node{
					{Role: "label", Name: "Close", States: visible, Box: box(610, 465, 60, 20)},
				}},
				{Role: "push button", States: append([]string{"focusable"}, visible...), Box: box(560, 460, 30, 30)},
				{Role: "push button", Name: "Ghost", States: visible, Box: box(-500, -500, 10, 10)},
				{Role: "filler", States: visible, Box: box(100, 100, 600, 400)},
			},
		}},
	}}}
}

func TestFilterAndLinearize(t *testing.T) {
	got := Linearize(sample().Filter(Options{Screen: action.Size{W: 1920, H: 1080}}), 0)
	golden := filepath.Join("testdata", "linear.tsv")
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("Linearize =\n%s\nwant\n%s", got, want)
	}
}

func TestFilterWithoutShowingStates(t *testing.T) {
	// GTK 4 sets showing on windows only: children count when visible.
	tr := &Tree{Apps: []*Node{{App: "calc", Children: []*Node{{
		Role: "window", Name: "Calculator", States: []string{"showing", "visible", "sensitive"}, Box: box(0, 0, 300, 300),
		Children: []*Node{{Role: "group", States: []string{"visible", "sensitive"}, Box: box(0, 0, 300, 300), Children: []*Node{
			{Role: "button", Name: "7", States: []string{"visible", "sensitive", "focusable"}, Box: box(10, 10, 40, 40)},
			{Role: "button", Name: "hidden", States: []string{"sensitive"}, Box: box(10, 60, 40, 40)},
		}}},
	}}}}}
	var names []string
	for _, n := range tr.Filter(Options{}) {
		names = append(names, n.Role+":"+n.Name)
	}
	if len(names) != 2 || names[1] != "button:7" {
		t.Fatalf("kept %v, want the window and button 7", names)
	}
}

func TestAtAndDescribe(t *testing.T) {
	tr := sample()
	tests := []struct {
		x, y int
		want string
	}{
		{620, 470, "push button Close"},      // a button named by its label child
		{570, 470, "push button"},            // an unnamed button with no text
		{300, 300, "text Hello world again"}, // the text area, by its text
		{110, 125, "menu File"},              // the menu title
		{50, 50, ""},                         // nothing there
	}
	for _, tc := range tests {
		got := ""
		if n := tr.At(tc.x, tc.y); n != nil {
			got = Describe(n.Node)
		}
		if got != tc.want {
			t.Errorf("At(%d, %d) = %q, want %q", tc.x, tc.y, got, tc.want)
		}
	}
}

// TestAtOnAPage: on a web page, whose document takes clicks anywhere, a
// click on a heading or an image is on that element; a click on a link in
// the heading is on the link, and on the page's bare background on the
// document.
func TestAtOnAPage(t *testing.T) {
	focusable := append([]string{"focusable"}, visible...)
	for _, doc := range []string{"document web", "document"} {
		tr := &Tree{Apps: []*Node{{App: "chromium", Role: "application", States: visible, Box: box(0, 0, 800, 600), Children: []*Node{
			{Role: doc, Name: "Help desk", States: focusable, Box: box(0, 0, 800, 600), Children: []*Node{
				{Role: "heading", Name: "Open tickets", States: visible, Box: box(10, 10, 400, 30), Children: []*Node{
					{Role: "static", Text: "Open tickets", States: visible, Box: box(10, 10, 120, 30)},
					{Role: "link", Name: "all", States: focusable, Box: box(200, 10, 30, 30)},
				}},
				{Role: "image", Name: "Logo", States: visible, Box: box(500, 10, 50, 50)},
				{Role: "section", Name: "Queue", States: visible, Box: box(0, 100, 800, 400), Children: []*Node{
					{Role: "static", Text: "No tickets", States: visible, Box: box(10, 110, 100, 20)},
				}},
			}},
		}}}}
		for _, tc := range []struct {
			x, y int
			want string
		}{
			{20, 20, "heading Open tickets"},  // its text, inside the heading
			{300, 20, "heading Open tickets"}, // beside the text, in the heading's box
			{210, 20, "link all"},             // a link inside it
			{520, 20, "image Logo"},
			{20, 115, "document Help desk"},  // text in a section: no element of its own
			{700, 580, "document Help desk"}, // the background
		} {
			got := ""
			if n := tr.At(tc.x, tc.y); n != nil {
				got = Describe(n.Node)
			}
			if want := strings.Replace(tc.want, "document ", doc+" ", 1); got != want {
				t.Errorf("%s: At(%d, %d) = %q, want %q", doc, tc.x, tc.y, got, want)
			}
		}
	}
}

func TestFind(t *testing.T) {
	tr := sample()
	if n := tr.Find("editor", "menu", "File", "", false); len(n) != 1 {
		t.Fatalf("Find menu File: %d", len(n))
	}
	if n := tr.Find("", "", "", "again", true); len(n) != 1 || n[0].Role != "text" {
		t.Fatalf("Find text containing again: %+v", n)
	}
	if n := tr.Find("other", "", "", "", false); len(n) != 0 {
		t.Fatal("Find in another app matched")
	}
}

func TestMarks(t *testing.T) {
	nodes := sample().Filter(Options{Screen: action.Size{W: 1920, H: 1080}})
	marks := Marks(nodes)
	if len(marks) == 0 {
		t.Fatal("no marks")
	}
	for i, m := range marks {
		if m.Tag != i+1 {
			t.Fatalf("mark %d has tag %d", i, m.Tag)
		}
		if got, ok := Lookup(marks, m.Tag); !ok || got != m {
			t.Fatalf("Lookup(%d) = %+v", m.Tag, got)
		}
	}
	if _, ok := Lookup(marks, len(marks)+1); ok {
		t.Fatal("Lookup found a tag past the end")
	}
	img := image.NewRGBA(image.Rect(0, 0, 800, 600))
	DrawMarks(img, marks)
	first := marks[0]
	if img.RGBAAt(first.Box.X, first.Box.Y+first.Box.H/2) != markColors[0] {
		t.Fatalf("the first mark's left edge is not drawn in its colour")
	}
	inside := img.RGBAAt(first.Box.X+first.Box.W/2, first.Box.Y+first.Box.H/2)
	if inside != (color.RGBA{}) {
		t.Fatalf("the mark's inside was painted: %v", inside)
	}
}
