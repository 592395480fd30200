package viewer

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/score"
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
func overlay(st store.Step, w, h int) (marks []mark, elements, outputs []string) {
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

// point is one run on a scatter plot.
type point struct {
	Label, Colour string
	X, Y          float64
}

// runColour is a run's colour on the plots, derived from its name so
// that it stays the same whatever runs are shown beside it.
func runColour(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	sum := h.Sum32()
	// Hues a little apart (24 of them), and two shades, so that runs
	// whose names are alike are still told apart.
	hue := (sum % 24) * 15
	light := 38 + 12*((sum/24)%2)
	return fmt.Sprintf("hsl(%d, 70%%, %d%%)", hue, light)
}

// legend draws the plot's runs under its area, from y downwards, in two
// columns of 18-pixel rows.
func legend(b *strings.Builder, y, width int, labels, colours []string) {
	const row, left = 18, 12
	col := (width - 2*left) / 2
	for i, l := range labels {
		x := left + col*(i%2)
		yy := y + row*(i/2)
		fmt.Fprintf(b, `<g class="legend-item"><circle cx="%d" cy="%d" r="5" fill="%s"/><text class="legend" x="%d" y="%d">%s</text></g>`,
			x+5, yy-4, colours[i], x+14, yy, html.EscapeString(shorten(l, 38)))
	}
}

// scatter draws a plot of points, success (0..1) upwards, with a legend
// of the runs below it. An x axis whose values are all zero spans
// 0..zeroSpan and says so with zeroNote.
func scatter(title, xLabel string, pts []point, format func(float64) string, zeroSpan float64, zeroNote string) template.HTML {
	const W, plotH, L, R, T, B = 520, 310, 60, 20, 46, 50
	legendTop := plotH + 8
	H := legendTop + 18*((len(pts)+1)/2) + 6
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" viewBox="0 0 %d %d" role="img" aria-label="%s"><title>%s</title>`, W, H, html.EscapeString(title), html.EscapeString(title))
	fmt.Fprintf(&b, `<text class="pt-title" x="%d" y="18">%s</text>`, L, html.EscapeString(title))
	maxX := 0.0
	for _, p := range pts {
		maxX = math.Max(maxX, p.X)
	}
	allZero := maxX == 0 && len(pts) > 0
	if maxX == 0 {
		maxX = zeroSpan
	} else {
		maxX *= 1.08 // the rightmost point stays inside the axis
	}
	px := func(x float64) float64 { return L + (W-L-R)*x/maxX }
	py := func(y float64) float64 { return plotH - B - (plotH-T-B)*y }
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/><line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, L, plotH-B, W-R, plotH-B, L, T, L, plotH-B)
	for _, y := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`,
			L, py(y), W-R, py(y), L-6, py(y)+4, 100*y)
	}
	for _, x := range []float64{0, 0.5, 1} {
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, px(x*maxX), plotH-B+16, html.EscapeString(format(x*maxX)))
	}
	fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="middle">%s</text>`, (L+W-R)/2, plotH-14, html.EscapeString(xLabel))
	if allZero && zeroNote != "" {
		fmt.Fprintf(&b, `<text class="pt-note" x="%d" y="34">%s</text>`, L, html.EscapeString(zeroNote))
	}
	var labels, colours []string
	for _, p := range pts {
		fmt.Fprintf(&b, `<circle class="pt" cx="%.1f" cy="%.1f" r="6" fill="%s"><title>%s: %.1f%%, %s</title></circle>`,
			px(p.X), py(p.Y), p.Colour, html.EscapeString(p.Label), 100*p.Y, html.EscapeString(format(p.X)))
		labels, colours = append(labels, p.Label), append(colours, p.Colour)
	}
	legend(&b, legendTop+12, W, labels, colours)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func runLabel(r *run) string {
	l := r.Report.Run.Agent
	if r.Report.Run.Model != "" {
		l += " " + r.Report.Run.Model
	}
	return l + " (" + r.ID + ")"
}

// costPlot is success against total cost per run (SCUBA's Figure 4).
func costPlot(runs []*run) template.HTML {
	var pts []point
	for _, r := range runs {
		pts = append(pts, point{runLabel(r), runColour(r.ID), r.Report.Means.TotalCost, r.Report.Summary.SuccessRate})
	}
	return scatter("Success against cost", "total cost (USD)", pts, func(f float64) string {
		if f > 0 && f < 1 {
			return fmt.Sprintf("$%.3f", f)
		}
		return fmt.Sprintf("$%.2f", f)
	}, 0.01, "every run cost $0")
}

// timePlot is success against mean episode time per run.
func timePlot(runs []*run) template.HTML {
	var pts []point
	for _, r := range runs {
		pts = append(pts, point{runLabel(r), runColour(r.ID), r.Report.Means.Duration.Seconds(), r.Report.Summary.SuccessRate})
	}
	return scatter("Success against time", "mean time per episode (s)", pts, func(f float64) string {
		if f > 0 && f < 10 {
			return fmt.Sprintf("%.1fs", f)
		}
		return fmt.Sprintf("%.0fs", f)
	}, 1, "every episode took no time")
}

// levelPlot is success per level, one bar per run in each level
// (OSUniverse's Figure 2), with a legend of the runs.
func levelPlot(runs []*run) template.HTML {
	levels := map[string]bool{}
	for _, r := range runs {
		for _, g := range r.Report.Breakdowns[score.ByLevel] {
			levels[g.Key] = true
		}
	}
	keys := sortedGroups(levels, []score.Dimension{score.ByLevel})
	const W, plotH, L, B, T = 520, 310, 60, 50, 46
	legendTop := plotH + 8
	H := legendTop + 18*((len(runs)+1)/2) + 6
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" viewBox="0 0 %d %d" role="img" aria-label="Success per level"><title>Success per level</title>`, W, H)
	fmt.Fprintf(&b, `<text class="pt-title" x="%d" y="18">Success per level</text>`, L)
	py := func(y float64) float64 { return plotH - B - (plotH-T-B)*y }
	for _, y := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`,
			L, py(y), W-10, py(y), L-6, py(y)+4, 100*y)
	}
	if len(keys) > 0 && len(runs) > 0 {
		slot := float64(W-L-10) / float64(len(keys))
		bw := math.Max(2, (slot-12)/float64(len(runs)))
		for i, k := range keys {
			x0 := float64(L) + slot*float64(i) + 6
			for j, r := range runs {
				rate := 0.0
				for _, g := range r.Report.Breakdowns[score.ByLevel] {
					if g.Key == k {
						rate = g.Summary.SuccessRate
					}
				}
				fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s, %s: %.1f%%</title></rect>`,
					x0+bw*float64(j), py(rate), bw-1, py(0)-py(rate), runColour(r.ID), html.EscapeString(runLabel(r)), html.EscapeString(k), 100*rate)
			}
			fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, x0+slot/2-6, plotH-B+16, html.EscapeString(k))
		}
	}
	var labels, colours []string
	for _, r := range runs {
		labels, colours = append(labels, runLabel(r)), append(colours, runColour(r.ID))
	}
	legend(&b, legendTop+12, W, labels, colours)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
