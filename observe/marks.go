package observe

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"strconv"

	"github.com/proctor-eval/proctor/action"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Mark is one numbered element of a set-of-mark screenshot.
type Mark struct {
	Tag  int        `json:"tag"`
	App  string     `json:"app,omitempty"`
	Role string     `json:"role"`
	Name string     `json:"name,omitempty"`
	Text string     `json:"text,omitempty"`
	Box  action.Box `json:"box"`
	// ID is the element's id where its environment gives one (Node.ID).
	ID int64 `json:"id,omitempty"`
}

// Center is the point a click on the mark lands on.
func (m Mark) Center() (int, int) { return m.Box.Center() }

// Marks numbers the interactive nodes from 1, in order.
func Marks(nodes []Located) []Mark {
	var out []Mark
	for _, n := range nodes {
		if !n.Interactive() {
			continue
		}
		out = append(out, Mark{Tag: len(out) + 1, App: n.App, Role: n.Role, Name: n.Name, Text: n.Text, Box: n.Box, ID: n.ID})
	}
	return out
}

// Lookup returns the mark with the tag.
func Lookup(marks []Mark, tag int) (Mark, bool) {
	if tag >= 1 && tag <= len(marks) && marks[tag-1].Tag == tag {
		return marks[tag-1], true
	}
	for _, m := range marks {
		if m.Tag == tag {
			return m, true
		}
	}
	return Mark{}, false
}

// LookupTarget returns the mark a target's tag or index names (an index
// is browser-use's number of an element, the mark's tag). Its error says
// which and matches ErrNotFound.
func LookupTarget(marks []Mark, t action.Target) (Mark, error) {
	tag := t.Tag
	if t.Index != nil {
		tag = *t.Index
	}
	m, ok := Lookup(marks, tag)
	if !ok {
		return Mark{}, fmt.Errorf("%w: no mark %s among the %d of the last observation", ErrNotFound, t, len(marks))
	}
	return m, nil
}

// Elements are the nodes of the tree a query names, as the environment
// contract answers them.
func (t *Tree) Elements(q ElementQuery) []Element {
	var out []Element
	for _, n := range t.Find(q.App, q.Role, q.Name, q.Text, q.Contains) {
		out = append(out, Element{App: n.App, Role: n.Role, Name: n.Name, Text: n.Text, Box: n.Box, States: n.States})
	}
	return out
}

var markColors = []color.RGBA{
	{230, 25, 75, 255}, {60, 180, 75, 255}, {0, 130, 200, 255}, {245, 130, 48, 255},
	{145, 30, 180, 255}, {0, 128, 128, 255}, {170, 110, 40, 255}, {128, 0, 0, 255},
}

// DrawMarks outlines each mark's box on img and writes its tag in a filled
// label at the box's top-left corner.
func DrawMarks(img draw.Image, marks []Mark) {
	face := basicfont.Face7x13
	bounds := img.Bounds()
	for _, m := range marks {
		c := markColors[(m.Tag-1)%len(markColors)]
		r := image.Rect(m.Box.X, m.Box.Y, m.Box.X+m.Box.W, m.Box.Y+m.Box.H).Intersect(bounds)
		if r.Empty() {
			continue
		}
		for _, edge := range []image.Rectangle{
			image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+2), image.Rect(r.Min.X, r.Max.Y-2, r.Max.X, r.Max.Y),
			image.Rect(r.Min.X, r.Min.Y, r.Min.X+2, r.Max.Y), image.Rect(r.Max.X-2, r.Min.Y, r.Max.X, r.Max.Y),
		} {
			draw.Draw(img, edge.Intersect(bounds), &image.Uniform{c}, image.Point{}, draw.Src)
		}
		label := strconv.Itoa(m.Tag)
		lw := font.MeasureString(face, label).Ceil() + 4
		lr := image.Rect(r.Min.X, r.Min.Y, r.Min.X+lw, r.Min.Y+face.Height+2)
		if lr.Min.Y-lr.Dy() >= bounds.Min.Y {
			lr = lr.Sub(image.Pt(0, lr.Dy())) // above the box when there is room
		}
		lr = lr.Intersect(bounds)
		draw.Draw(img, lr, &image.Uniform{c}, image.Point{}, draw.Src)
		d := font.Drawer{Dst: img, Src: image.White, Face: face,
			Dot: fixed.P(lr.Min.X+2, lr.Min.Y+face.Ascent+1)}
		d.DrawString(label)
	}
}
