package viewer

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"html"
	"html/template"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/proctor-eval/proctor/score"
)

// The run-level plots (success against cost and time, success per level)
// are drawn by gonum.org/v1/plot: axes, round ticks, legends and text
// placement are the library's. They are rendered as SVG on the server
// and put in the page as it is, without embedded fonts.

// Plot sizes in SVG user units (the page shows them at 1:1).
const (
	plotW     = 520
	plotAreaH = 300
	legendRow = 16
)

var (
	// plotFont is the plots' typeface, Liberation Sans (its metrics lay
	// the text out; the browser falls back to another sans-serif).
	plotFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	ink      = color.RGBA{0x44, 0x44, 0x44, 0xff}
	gridInk  = color.RGBA{0xe6, 0xe6, 0xe6, 0xff}
)

// runColour is a run's colour on the plots, derived from its name so
// that it stays the same whatever runs are shown beside it.
func runColour(id string) color.RGBA {
	h := fnv.New32a()
	h.Write([]byte(id))
	sum := h.Sum32()
	// Hues a little apart (24 of them), and two shades, so that runs
	// whose names are alike are still told apart.
	hue := float64((sum % 24) * 15)
	light := float64(38+12*((sum/24)%2)) / 100
	return hsl(hue, 0.7, light)
}

// hsl converts a hue (degrees), saturation and lightness (0..1) to RGB.
func hsl(h, s, l float64) color.RGBA {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := l - c/2
	var r, g, b float64
	switch {
	case h < 60:
		r, g, b = c, x, 0
	case h < 120:
		r, g, b = x, c, 0
	case h < 180:
		r, g, b = 0, c, x
	case h < 240:
		r, g, b = 0, x, c
	case h < 300:
		r, g, b = x, 0, c
	default:
		r, g, b = c, 0, x
	}
	to := func(v float64) uint8 { return uint8(math.Round(255 * (v + m))) }
	return color.RGBA{to(r), to(g), to(b), 0xff}
}

// hexColour writes a colour as the plots' SVG does: #RRGGBB.
func hexColour(c color.RGBA) string { return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B) }

func runLabel(r *run) string {
	l := r.Report.Run.Agent
	if r.Report.Run.Model != "" {
		l += " " + r.Report.Run.Model
	}
	return l + " (" + r.ID + ")"
}

// newPlot is a plot in the viewer's style: sans-serif text, a y axis of
// success from 0 to 100 % in quarters, and light grid lines.
func newPlot(title, xLabel string) *plot.Plot {
	p, _ := styledPlot(title, xLabel)
	return p
}

// styledPlot is newPlot with its grid, whose lines a plot can turn.
func styledPlot(title, xLabel string) (*plot.Plot, *plotter.Grid) {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(plotFont, 13)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = xLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(plotFont, 11)
		a.Label.TextStyle.Color = ink
		a.Tick.Label.Font = font.From(plotFont, 10)
		a.Tick.Label.Color = ink
		a.Color, a.Tick.Color = ink, ink
		a.Tick.Length = vg.Points(4)
	}
	p.Y.Label.Text = "success"
	p.Y.Min, p.Y.Max = 0, 1
	var ticks []plot.Tick
	for _, y := range []float64{0, 0.25, 0.5, 0.75, 1} {
		ticks = append(ticks, plot.Tick{Value: y, Label: fmt.Sprintf("%.0f%%", 100*y)})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color = gridInk
	grid.Horizontal.Dashes = nil
	grid.Vertical.Dashes = nil
	p.Add(grid)
	return p, grid
}

// roundTicks are the library's ticks (round numbers, within the axis),
// labelled with a unit.
type roundTicks struct{ prefix, suffix string }

func (t roundTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = t.prefix + ticks[i].Label + t.suffix
		}
	}
	return ticks
}

// legendItem names a run under a plot.
type legendItem struct {
	label string
	thumb plot.Thumbnailer
}

// renderPlot draws p with a legend of its runs under it, in two columns,
// and returns the SVG as it goes in a page.
func renderPlot(title string, p *plot.Plot, items []legendItem) template.HTML {
	return renderFigure(title, p, items, plotAreaH, nil)
}

// renderFigure draws p in an area areaH high with a legend of its runs
// under it, in two columns, and over it the regions its plotters recorded
// in hits (drawn by then), each with its tooltip.
func renderFigure(title string, p *plot.Plot, items []legendItem, areaH vg.Length, hits *[]hit) template.HTML {
	rows := (len(items) + 1) / 2
	legendH := vg.Length(legendRow*rows + 8)
	h := areaH + legendH
	c := vgsvg.NewWith(vgsvg.UseWH(plotW, h))
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.BackgroundColor = nil
	p.Draw(draw.Crop(dc, 4, -8, legendH, -4))
	half := vg.Length(plotW-24) / 2
	for col := range 2 {
		l := plot.NewLegend()
		l.Top, l.Left = true, true
		l.TextStyle.Font = font.From(plotFont, 11)
		l.TextStyle.Color = ink
		l.ThumbnailWidth = vg.Points(10)
		l.Padding = vg.Points(legendRow - 12)
		for i := col; i < len(items); i += 2 {
			l.Add(shorten(items[i].label, 38), items[i].thumb)
		}
		area := draw.Crop(dc, 12+vg.Length(col)*half, 0, 4, 0)
		area.Max.X = area.Min.X + half
		area.Max.Y = area.Min.Y + legendH - 4
		l.Draw(area)
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return template.HTML(`<p class="error-message">` + html.EscapeString(err.Error()) + `</p>`)
	}
	doc := inlineSVG(b.String(), title)
	if hits != nil && len(*hits) > 0 {
		if i := strings.LastIndex(doc, "</svg>"); i >= 0 {
			doc = doc[:i] + hitsSVG(*hits, h) + doc[i:]
		}
	}
	return template.HTML(doc)
}

// inlineSVG makes the library's SVG document an element of a page: no
// XML prolog, no fixed size (the page's style sizes it), a title for
// screen readers, and presentation attributes instead of style
// attributes, which the viewer's Content-Security-Policy (style-src
// 'self') would drop.
func inlineSVG(doc, title string) string {
	if i := strings.Index(doc, "<svg"); i >= 0 {
		doc = doc[i:]
	}
	var b strings.Builder
	b.Grow(len(doc) + 256)
	if i := strings.Index(doc, "viewBox="); i >= 0 {
		esc := html.EscapeString(title)
		j := i + strings.Index(doc[i:], ">")
		b.WriteString(`<svg class="plot" role="img" aria-label="` + esc + `" `)
		b.WriteString(doc[i : j+1])
		b.WriteString("<title>" + esc + "</title>")
		doc = doc[j+1:]
	}
	const attr = `style="`
	for {
		i := strings.Index(doc, attr)
		if i < 0 {
			break
		}
		body := i + len(attr)
		end := strings.IndexByte(doc[body:], '"')
		if end < 0 {
			break
		}
		if i == 0 || !strings.ContainsRune(" \t\n", rune(doc[i-1])) { // not an attribute of its own
			b.WriteString(doc[:body])
			doc = doc[body:]
			continue
		}
		b.WriteString(doc[:i-1])
		for d := range strings.SplitSeq(doc[body:body+end], ";") {
			k, v, ok := strings.Cut(d, ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if k == "font-family" {
				v += ", Arial, Helvetica, sans-serif"
			}
			b.WriteString(" " + k + `="` + v + `"`)
		}
		doc = doc[body+end+1:]
	}
	b.WriteString(doc)
	return b.String()
}

// maxCachedPlots bounds the plots a server keeps.
const maxCachedPlots = 64

// plot draws a plot of the runs, or takes it from the server's cache
// while their databases are unchanged.
func (s *Server) plot(kind string, runs []*run, draw func([]*run) template.HTML) template.HTML {
	var k strings.Builder
	k.WriteString(kind)
	for _, r := range runs {
		k.WriteString("\x00" + r.ID + "\x01" + r.stamp)
	}
	key := k.String()
	s.mu.Lock()
	h, ok := s.plots[key]
	s.mu.Unlock()
	if ok {
		return h
	}
	h = draw(runs)
	s.mu.Lock()
	if s.plots == nil || len(s.plots) >= maxCachedPlots {
		s.plots = map[string]template.HTML{}
	}
	s.plots[key] = h
	s.mu.Unlock()
	return h
}

// scatterPlot draws one point per run, success upwards against x with
// its interval, and a legend of the runs; a point's tooltip says its
// success with the interval and xTip. An x axis whose values are all zero spans
// 0..zeroSpan, and its label says zeroNote.
func scatterPlot(title, xLabel string, runs []*run, x func(*run) float64, xTip func(*run) string, prefix, suffix string, zeroSpan float64, zeroNote string) template.HTML {
	maxX := 0.0
	for _, r := range runs {
		maxX = math.Max(maxX, x(r))
	}
	if maxX == 0 && len(runs) > 0 && zeroNote != "" {
		xLabel += ": " + zeroNote
	}
	p := newPlot(title, xLabel)
	p.X.Min = 0
	if maxX == 0 {
		p.X.Max = zeroSpan
	} else {
		p.X.Max = maxX * 1.08 // the rightmost point stays inside the axis
	}
	p.X.Tick.Marker = roundTicks{prefix, suffix}
	var items []legendItem
	var hs []hit
	for _, r := range runs {
		sum := r.Report.Summary
		s, err := plotter.NewScatter(plotter.XYs{{X: x(r), Y: sum.SuccessRate}})
		if err != nil {
			continue
		}
		s.GlyphStyle = draw.GlyphStyle{Color: runColour(r.ID), Radius: vg.Points(5), Shape: draw.CircleGlyph{}}
		p.Add(s)
		items = append(items, legendItem{runLabel(r), s})
		all, _ := scopeOf(r, "all")
		tip := runLabel(r) + " · success n/a, nothing decided"
		if sum.Decided > 0 {
			tip = runLabel(r) + " · success " + rateTitle(sum.SuccessRate, all.Success) + ", " + decidedNote(sum)
		}
		rate := sum.SuccessRate
		p.Add(&whisker{At: x(r), Width: vg.Points(14), Lo: all.Success.Lo, Hi: all.Success.Hi, Show: sum.Decided > 0 && all.Success.Groups > 1,
			Point: &rate, Title: tip + "; " + xTip(r), hits: &hs})
	}
	return renderFigure(title, p, items, plotAreaH, &hs)
}

// costPlot is success against the mean cost of an episode per run
// (SCUBA's Figure 4, per episode so that runs of different sizes
// compare).
func costPlot(runs []*run) template.HTML {
	return scatterPlot("Success against cost", "mean cost per episode (USD)", runs,
		func(r *run) float64 { return r.Report.Means.Cost },
		func(r *run) string { return fmt.Sprintf("$%.4f per episode", r.Report.Means.Cost) }, "$", "", 0.01, "every run cost $0")
}

// timePlot is success against the mean time of an episode per run: the
// agent's time, from the end of the environment's reset and setup.
func timePlot(runs []*run) template.HTML {
	return scatterPlot("Success against time", "mean time per episode, without setup (s)", runs,
		func(r *run) float64 { return r.Report.Means.Duration.Seconds() },
		func(r *run) string { return fmt.Sprintf("%.1f s per episode", r.Report.Means.Duration.Seconds()) }, "", " s", 1, "every episode took no time")
}

// levelPlot is success per level, one bar per run in each level
// (OSUniverse's Figure 2) with its interval, and a legend of the runs. A
// 0 % bar shows as a thin bar; a run with no task at a level has no bar
// there but the words "no tasks".
func levelPlot(runs []*run) template.HTML {
	levels := map[string]bool{}
	for _, r := range runs {
		for _, g := range r.Report.Breakdowns[score.ByLevel] {
			levels[g.Key] = true
		}
	}
	keys := sortedGroups(levels, []score.Dimension{score.ByLevel})
	return barPlot("Success per level", "success", "level", keys, runs, levelBar(score.ByLevel, "level"))
}
