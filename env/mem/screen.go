package mem

import (
	"image"
	"image/color"
	"image/draw"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Colours of the screen.
var (
	cDesktop  = color.RGBA{0x2e, 0x4a, 0x62, 0xff}
	cBorder   = color.RGBA{0x55, 0x55, 0x55, 0xff}
	cWindow   = color.RGBA{0xf0, 0xf0, 0xf0, 0xff}
	cActive   = color.RGBA{0x35, 0x84, 0xe4, 0xff}
	cInactive = color.RGBA{0x9a, 0x9a, 0x9a, 0xff}
	cButton   = color.RGBA{0xdc, 0xdc, 0xdc, 0xff}
	cField    = color.RGBA{0xff, 0xff, 0xff, 0xff}
	cText     = color.RGBA{0x10, 0x10, 0x10, 0xff}
	cWhite    = color.RGBA{0xff, 0xff, 0xff, 0xff}
)

var face = basicfont.Face7x13

func rect(b action.Box) image.Rectangle { return image.Rect(b.X, b.Y, b.X+b.W, b.Y+b.H) }

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r.Intersect(img.Rect), &image.Uniform{c}, image.Point{}, draw.Src)
}

// frame fills r with c inside a border of one pixel.
func frame(img *image.RGBA, r image.Rectangle, border, c color.RGBA) {
	fill(img, r, border)
	fill(img, r.Inset(1), c)
}

// outline draws a border of width px inside r.
func outline(img *image.RGBA, r image.Rectangle, px int, c color.RGBA) {
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+px), c)
	fill(img, image.Rect(r.Min.X, r.Max.Y-px, r.Max.X, r.Max.Y), c)
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Min.X+px, r.Max.Y), c)
	fill(img, image.Rect(r.Max.X-px, r.Min.Y, r.Max.X, r.Max.Y), c)
}

// text writes lines from the top-left of r, inset by 6 pixels, cut at
// r's edges; centred, one line in the middle of r.
func text(img *image.RGBA, r image.Rectangle, s string, c color.RGBA, centred bool) {
	r = r.Intersect(img.Rect)
	if r.Empty() || s == "" {
		return
	}
	sub := img.SubImage(r).(*image.RGBA)
	d := font.Drawer{Dst: sub, Src: &image.Uniform{c}, Face: face}
	lines := strings.Split(s, "\n")
	y := r.Min.Y + 6 + face.Ascent
	if len(lines) == 1 || centred {
		y = r.Min.Y + (r.Dy()-face.Height)/2 + face.Ascent
	}
	for _, l := range lines {
		x := r.Min.X + 6
		if centred {
			x = r.Min.X + (r.Dx()-font.MeasureString(face, l).Ceil())/2
		}
		d.Dot = fixed.P(x, y)
		d.DrawString(l)
		y += face.Height + 1
		if y > r.Max.Y || centred {
			break
		}
	}
}

// drawLocked draws the screen: the desktop, then each window from the
// bottom up, with its title bar and its widgets.
func (e *Env) drawLocked() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, e.size.W, e.size.H))
	fill(img, img.Rect, cDesktop)
	top := e.top()
	for _, w := range e.wins {
		r := rect(w.box)
		frame(img, r, cBorder, cWindow)
		bar := cInactive
		if w == top {
			bar = cActive
		}
		tb := image.Rect(r.Min.X+1, r.Min.Y+1, r.Max.X-1, r.Min.Y+titleBar)
		fill(img, tb, bar)
		text(img, tb, w.title, cWhite, false)
		for _, c := range w.widgets {
			drawWidget(img, c, w == top && w.focus == c)
		}
	}
	return img
}

func drawWidget(img *image.RGBA, c *widget, focused bool) {
	r := rect(c.box)
	switch c.Role {
	case RoleButton:
		frame(img, r, cBorder, cButton)
		text(img, r, c.Name, cText, true)
	case RoleText, RoleComboBox:
		frame(img, r, cBorder, cField)
		text(img, r, c.Text, cText, false)
		if c.Role == RoleComboBox { // a triangle pointing down
			x, y := r.Max.X-16, r.Min.Y+r.Dy()/2-2
			for i := range 5 {
				fill(img, image.Rect(x+i, y+i, x+9-i, y+i+1), cText)
			}
		}
	case RoleCheckBox:
		box := image.Rect(r.Min.X, r.Min.Y+(r.Dy()-14)/2, r.Min.X+14, r.Min.Y+(r.Dy()-14)/2+14)
		frame(img, box, cBorder, cField)
		if c.Checked {
			fill(img, box.Inset(3), cText)
		}
		text(img, image.Rect(box.Max.X, r.Min.Y, r.Max.X, r.Max.Y), c.Name, cText, false)
	case RoleLabel:
		text(img, r, c.Name, cText, false)
	}
	if focused {
		outline(img, r, 2, cActive)
	}
}
