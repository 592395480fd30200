package viewer

import (
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/store"
)

// mark is one action drawn over a screenshot, in screen pixels.
type mark struct {
	Kind   string // click, drag, scroll, text
	X, Y   int
	X2, Y2 int
	Label  string
}

// overlay turns a step's actions into marks: where the environment
// recorded them (the point a click landed on, the element under it), else
// as the agent asked. It also returns the clicked elements' descriptions
// and the commands' outputs.
func overlay(st store.Turn, w, h int) (marks []mark, elements, outputs []string) {
	var done []action.Step
	if len(st.Done) > 0 {
		_ = json.Unmarshal(st.Done, &done)
	}
	if len(done) == 0 && len(st.Actions) > 0 {
		var acts []action.Action
		if json.Unmarshal(st.Actions, &acts) == nil {
			for _, a := range acts {
				done = append(done, action.Step{Action: a})
			}
		}
	}
	size := action.Size{W: w, H: h}
	at := func(p *action.Step, pt *action.Point) (int, int, bool) {
		if p.At != nil {
			return p.At[0], p.At[1], true
		}
		if pt != nil {
			if x, y, err := pt.Pixels(size); err == nil {
				return x, y, true
			}
		}
		return 0, 0, false
	}
	line := 0
	text := func(label string) {
		marks = append(marks, mark{Kind: "text", X: 16, Y: 40 + 44*line, Label: label})
		line++
	}
	for i := range done {
		p := &done[i]
		a := p.Action
		if p.Element != "" {
			elements = append(elements, p.Element)
		}
		if p.Output != "" {
			outputs = append(outputs, p.Output)
		}
		switch a.Kind {
		case action.Click, action.MouseDown, action.MouseUp, action.Move:
			x, y, ok := at(p, a.Point)
			label := string(a.Kind)
			if a.Count > 1 {
				label = fmt.Sprintf("%s x%d", label, a.Count)
			}
			if a.Target != nil && a.Target.Tag > 0 {
				label += fmt.Sprintf(" tag_%d", a.Target.Tag)
			}
			if p.Element != "" {
				label += ": " + p.Element
			} else if a.Target != nil && a.Target.Tag == 0 {
				label += ": " + a.Target.String()
			}
			if !ok {
				text(label)
				continue
			}
			kind := "click"
			if a.Kind == action.Move {
				kind = "move"
			}
			marks = append(marks, mark{Kind: kind, X: x, Y: y, Label: label})
		case action.Drag:
			x1, y1, ok1 := at(&action.Step{}, a.Point)
			x2, y2, ok2 := at(&action.Step{}, a.To)
			if !ok2 && p.At != nil {
				x2, y2, ok2 = p.At[0], p.At[1], true
			}
			if !ok1 || !ok2 {
				text("drag")
				continue
			}
			marks = append(marks, mark{Kind: "drag", X: x1, Y: y1, X2: x2, Y2: y2, Label: "drag"})
		case action.Scroll:
			x, y, ok := at(p, a.Point)
			if !ok {
				x, y = w/2, h/2
			}
			dy := a.DY
			if dy == 0 && a.Pages != 0 {
				dy = int(math.Copysign(5, a.Pages))
			}
			n := max(-8, min(8, dy))
			marks = append(marks, mark{Kind: "drag", X: x, Y: y, X2: x + 12*max(-8, min(8, a.DX)), Y2: y + 12*n,
				Label: fmt.Sprintf("scroll %+d", dy)})
		case action.Type:
			text("type " + shorten(fmt.Sprintf("%q", a.Text), 60))
		case action.Key, action.Hotkey, action.KeyDown, action.KeyUp:
			sep := " "
			if a.Kind == action.Hotkey {
				sep = "+"
			}
			text(string(a.Kind) + " " + strings.Join(a.Keys, sep))
		default:
			label := string(a.Kind)
			if a.Text != "" {
				label += " " + shorten(fmt.Sprintf("%q", a.Text), 60)
			}
			text(label)
		}
	}
	return marks, elements, outputs
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// overlaySVG draws the marks as SVG over a screenshot of w x h pixels; id
// keeps the arrowhead's id unique on a page of many steps (a hidden step's
// marker would not draw).
func overlaySVG(marks []mark, w, h int, id string) template.HTML {
	id = svgID(id)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="overlay" viewBox="0 0 %d %d" preserveAspectRatio="none" aria-hidden="true">`, w, h)
	fmt.Fprintf(&b, `<defs><marker id="arrow-%s" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">`+
		`<path d="M0 0L10 5L0 10z" fill="#ff3b30"/></marker></defs>`, id)
	for i, m := range marks {
		esc := html.EscapeString(m.Label)
		switch m.Kind {
		case "click", "move":
			fmt.Fprintf(&b, `<circle class="mk-%s" cx="%d" cy="%d" r="22"/><circle class="mk-dot" cx="%d" cy="%d" r="4"/>`, m.Kind, m.X, m.Y, m.X, m.Y)
			fmt.Fprintf(&b, `<text class="mk-num" x="%d" y="%d">%d</text><title>%s</title>`, m.X+26, m.Y-12, i+1, esc)
		case "drag":
			fmt.Fprintf(&b, `<line class="mk-drag" x1="%d" y1="%d" x2="%d" y2="%d" marker-end="url(#arrow-%s)"/><circle class="mk-dot" cx="%d" cy="%d" r="5"/>`,
				m.X, m.Y, m.X2, m.Y2, id, m.X, m.Y)
			fmt.Fprintf(&b, `<text class="mk-num" x="%d" y="%d">%d %s</text>`, m.X2+10, m.Y2, i+1, esc)
		case "text":
			fmt.Fprintf(&b, `<rect class="mk-box" x="%d" y="%d" width="%d" height="34" rx="6"/><text class="mk-text" x="%d" y="%d">%d %s</text>`,
				m.X, m.Y-26, 40+len([]rune(m.Label))*15, m.X+10, m.Y, i+1, esc)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
