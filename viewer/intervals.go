package viewer

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	plottext "gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/stats"
)

// The score plots show each score with its confidence interval as a
// whisker with caps: the percentile bootstrap of proctor report, with its
// default seed, confidence and resamples (the server analyses each run it
// loads with report.DefaultStatOptions), so that a run's interval reads
// the same here and in the report. Each bar's and point's tooltip says the
// interval in the report's words.

// manyRuns is the most runs a bar plot shows as columns with a legend;
// with more, each run gets a row of its own, named beside its bar.
const manyRuns = 6

// Row layout sizes, in SVG user units.
const (
	rowH       = 15
	rowsMargin = 72 // the title, the value axis and its label
)

var whiskerInk = color.RGBA{0x1f, 0x1f, 0x1f, 0xff}

// scopeOf is the run's intervals for a scope of the report's statistics
// ("all", "level: wood", "app: gedit"); false when the run was not
// analysed or has no such scope.
func scopeOf(r *run, scope string) (report.ScopeIntervals, bool) {
	if r.Report.Stats == nil {
		return report.ScopeIntervals{}, false
	}
	for _, s := range r.Report.Stats.Intervals {
		if s.Scope == scope {
			return s, true
		}
	}
	return report.ScopeIntervals{}, false
}

// scopeName is the report's name of a group's scope: "level: wood",
// "app: -" for the results of no app.
func scopeName(d score.Dimension, key string) string {
	if key == "" {
		key = "-"
	}
	return string(d) + ": " + key
}

// confText is the interval's confidence as the report writes it: "95%".
func confText(iv stats.Interval) string { return fmt.Sprintf("%g%%", 100*iv.Confidence) }

// rateTitle is a rate with its interval as proctor report writes it, and
// the confidence: "50.0% [31.2%, 68.8%] (95% CI)"; the rate alone when
// there is no interval.
func rateTitle(v float64, iv stats.Interval) string {
	if !iv.OK() {
		return fmt.Sprintf("%.1f%%", 100*v)
	}
	s := report.RateText(iv)
	if iv.Groups > 1 {
		s += " (" + confText(iv) + " CI)"
	}
	return s
}

// meanTitle is a milestone average with its interval as proctor report
// writes it: "0.500 [0.312, 0.688] (95% CI)".
func meanTitle(v float64, iv stats.Interval) string {
	if !iv.OK() {
		return fmt.Sprintf("%.3f", v)
	}
	s := report.MeanText(iv)
	if iv.Groups > 1 {
		s += " (" + confText(iv) + " CI)"
	}
	return s
}

// decidedNote counts a scope's decided episodes and its errors left out.
func decidedNote(s score.Summary) string {
	n := plural(s.Decided, "decided episode")
	if s.Errors > 0 {
		n += ", " + plural(s.Errors, "error") + " left out"
	}
	return n
}

// hit is a region of a plot with a tooltip, in the canvas' points (the
// origin at the bottom left).
type hit struct {
	min, max vg.Point
	title    string
}

// whisker is a plotter that draws an interval [Lo, Hi] as a line with
// caps across a bar or a point, and records the region of the bar or
// point with its tooltip. At is the bar's place on the category axis (a
// point's x), Offset the bar's offset from it and Width its width;
// Horizontal bars lie along x. A zero interval (Show false) draws no
// whisker but keeps the tooltip.
type whisker struct {
	At         float64
	Offset     vg.Length
	Width      vg.Length
	Lo, Hi     float64
	Show       bool
	Horizontal bool
	// Point is a scatter point's value, for the region around it.
	Point *float64
	Title string
	hits  *[]hit
}

// Plot implements plot.Plotter.
func (w *whisker) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	trCat, trVal := trX, trY
	valAxis := &plt.Y
	if w.Horizontal {
		trCat, trVal = trY, trX
		valAxis = &plt.X
	}
	at := trCat(w.At) + w.Offset
	// pt makes a point of a place on the category axis and one on the
	// value axis.
	pt := func(cat, val vg.Length) vg.Point {
		if w.Horizontal {
			return vg.Point{X: val, Y: cat}
		}
		return vg.Point{X: cat, Y: val}
	}
	if w.Show {
		style := draw.LineStyle{Color: whiskerInk, Width: vg.Points(1.2)}
		capW := min(vg.Points(4), max(vg.Points(2), w.Width/3))
		lo, hi := trVal(w.Lo), trVal(w.Hi)
		c.StrokeLine2(style, pt(at, lo).X, pt(at, lo).Y, pt(at, hi).X, pt(at, hi).Y)
		for _, v := range []vg.Length{lo, hi} {
			a, b := pt(at-capW, v), pt(at+capW, v)
			c.StrokeLine2(style, a.X, a.Y, b.X, b.Y)
		}
	}
	if w.hits == nil {
		return
	}
	half := max(w.Width/2, vg.Points(2))
	lo, hi := trVal(valAxis.Min), trVal(valAxis.Max)
	if w.Point != nil { // a point: its glyph and its whisker
		v := trVal(*w.Point)
		lo, hi = v-vg.Points(7), v+vg.Points(7)
		if w.Show {
			lo, hi = min(lo, trVal(w.Lo)), max(hi, trVal(w.Hi))
		}
	}
	a, b := pt(at-half, lo), pt(at+half, hi)
	*w.hits = append(*w.hits, hit{min: vg.Point{X: min(a.X, b.X), Y: min(a.Y, b.Y)}, max: vg.Point{X: max(a.X, b.X), Y: max(a.Y, b.Y)}, title: w.Title})
}

// hitsSVG draws the regions as transparent rectangles with their
// tooltips, in the coordinates of an SVG of height h points.
func hitsSVG(hs []hit, h vg.Length) string {
	var b strings.Builder
	b.WriteString(`<g class="hits">`)
	for _, x := range hs {
		fmt.Fprintf(&b, `<rect class="hit" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="transparent"><title>%s</title></rect>`,
			x.min.X.Points(), (h - x.max.Y).Points(), (x.max.X - x.min.X).Points(), (x.max.Y - x.min.Y).Points(), template.HTMLEscapeString(x.title))
	}
	b.WriteString(`</g>`)
	return b.String()
}

// bar is a run's score in a group of a bar plot: its value and interval,
// or, where the run has none there, why (none: "no tasks").
type bar struct {
	value float64
	iv    stats.Interval
	none  string
	title string
}

// barPlot draws a score per group (a level, an app, a kind of score) and
// run, each with its interval. Up to manyRuns runs are columns of bars in
// each group with a legend of the runs; more runs, or bars too thin to
// read, are rows: each group a heading and under it a row per run, named
// by its id, the plot growing downwards.
func barPlot(title, valueLabel, groupLabel string, groups []string, runs []*run, at func(r *run, group string) bar) template.HTML {
	if len(groups) == 0 || len(runs) == 0 {
		p := newPlot(title, groupLabel)
		p.Y.Label.Text = valueLabel
		return renderPlot(title, p, nil)
	}
	slot := vg.Length(plotW-80) / vg.Length(len(groups))
	if len(runs) > manyRuns || slot*0.8/vg.Length(len(runs)) < vg.Points(5) {
		return barRows(title, valueLabel, groups, runs, at)
	}
	p := newPlot(title, groupLabel)
	p.X.Label.Text, p.Y.Label.Text = "", valueLabel
	p.NominalX(groups...)
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	var hs []hit
	var items []legendItem
	bw := slot * 0.8 / vg.Length(len(runs))
	for j, r := range runs {
		col := runColour(r.ID)
		off := bw * (vg.Length(j) - vg.Length(len(runs)-1)/2)
		var thumb plot.Thumbnailer
		for i, g := range groups {
			b := at(r, g)
			w := &whisker{At: float64(i), Offset: off, Width: bw, Title: runLabel(r) + " · " + b.title, hits: &hs}
			if b.none != "" {
				l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: float64(i), Y: 0}}, Labels: []string{b.none}})
				if err == nil {
					l.TextStyle[0] = plottext.Style{Font: font.From(plotFont, 9), Color: ink, Rotation: math.Pi / 2,
						XAlign: draw.XLeft, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
					l.Offset = vg.Point{X: off, Y: vg.Points(3)}
					p.Add(l)
				}
				p.Add(w)
				continue
			}
			bc, err := plotter.NewBarChart(plotter.Values{b.value}, bw*0.92)
			if err != nil {
				continue
			}
			bc.XMin, bc.Offset, bc.Color = float64(i), off, col
			// The outline makes a 0 % bar a thin bar of the run's colour.
			bc.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.5)}
			p.Add(bc)
			thumb = bc
			w.Lo, w.Hi, w.Show = b.iv.Lo, b.iv.Hi, b.iv.Groups > 1
			p.Add(w)
		}
		if thumb == nil {
			thumb = &plotter.BarChart{Color: col, LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1)}}
		}
		items = append(items, legendItem{runLabel(r), thumb})
	}
	p.Y.Min, p.Y.Max = 0, 1
	return renderFigure(title, p, items, plotAreaH, &hs)
}

// barRows is barPlot's layout of rows: the value across, a row per run in
// each group (a row per group for a single run), each row named.
func barRows(title, valueLabel string, groups []string, runs []*run, at func(r *run, group string) bar) template.HTML {
	p, grid := styledPlot(title, "")
	p.X.Label.Text, p.Y.Label.Text = valueLabel, ""
	p.X.Min, p.X.Max = 0, 1
	p.X.Tick.Marker = p.Y.Tick.Marker
	grid.Vertical.Color, grid.Horizontal.Color = gridInk, nil
	type row struct {
		label, heading string
		r              *run
		group          string
	}
	var rows []row
	for _, g := range groups {
		if len(runs) == 1 {
			rows = append(rows, row{label: shorten(g, 28), r: runs[0], group: g})
			continue
		}
		rows = append(rows, row{heading: g})
		for _, r := range runs {
			rows = append(rows, row{label: shorten(r.ID, 28), r: r, group: g})
		}
	}
	n := len(rows)
	y := func(i int) float64 { return float64(n - 1 - i) } // the first row on top
	var ticks []plot.Tick
	var hs []hit
	bw := vg.Length(rowH) * 0.7
	heading := plottext.Style{Font: font.From(font.Font{Typeface: plotFont.Typeface, Variant: plotFont.Variant, Weight: xfont.WeightBold}, 10),
		Color: ink, XAlign: draw.XLeft, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
	note := plottext.Style{Font: font.From(plotFont, 9), Color: ink, XAlign: draw.XLeft, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
	label := func(at float64, s string, st plottext.Style) {
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 0, Y: at}}, Labels: []string{s}})
		if err == nil {
			l.TextStyle[0] = st
			l.Offset = vg.Point{X: vg.Points(3)}
			p.Add(l)
		}
	}
	for i, rw := range rows {
		ticks = append(ticks, plot.Tick{Value: y(i), Label: rw.label})
		if rw.r == nil {
			label(y(i), rw.heading, heading)
			continue
		}
		b := at(rw.r, rw.group)
		w := &whisker{At: y(i), Width: bw, Horizontal: true, Title: runLabel(rw.r) + " · " + b.title, hits: &hs}
		if b.none != "" {
			label(y(i), b.none, note)
			p.Add(w)
			continue
		}
		col := runColour(rw.r.ID)
		bc, err := plotter.NewBarChart(plotter.Values{b.value}, bw)
		if err != nil {
			continue
		}
		bc.Horizontal, bc.XMin, bc.Color = true, y(i), col
		bc.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(1.5)}
		p.Add(bc)
		w.Lo, w.Hi, w.Show = b.iv.Lo, b.iv.Hi, b.iv.Groups > 1
		p.Add(w)
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = 0
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	return renderFigure(title, p, nil, vg.Length(rowsMargin+rowH*n), &hs)
}

// levelBar is a run's success at a level: "no tasks" where it has none,
// "errors only" where it decided none.
func levelBar(d score.Dimension, noun string) func(r *run, key string) bar {
	return func(r *run, key string) bar {
		for _, g := range r.Report.Breakdowns[d] {
			if g.Key != key || g.Summary.N == 0 {
				continue
			}
			where := noun + " " + orDash(key)
			if g.Summary.Decided == 0 {
				return bar{none: "errors only", title: where + ": n/a, " + plural(g.Summary.Errors, "error") + " and nothing decided"}
			}
			sc, _ := scopeOf(r, scopeName(d, key))
			return bar{value: g.Summary.SuccessRate, iv: sc.Success,
				title: where + ": success " + rateTitle(g.Summary.SuccessRate, sc.Success) + ", " + decidedNote(g.Summary)}
		}
		return bar{none: "no tasks", title: noun + " " + orDash(key) + ": no tasks"}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// appPlot is success per app, one bar per run in each app, with
// intervals.
func appPlot(runs []*run) template.HTML {
	apps := map[string]bool{}
	for _, r := range runs {
		for _, g := range r.Report.Breakdowns[score.ByApp] {
			apps[g.Key] = true
		}
	}
	keys := sortedGroups(apps, []score.Dimension{score.ByApp})
	return barPlot("Success per app", "success", "app", keys, runs, levelBar(score.ByApp, "app"))
}

// The scores of the scores plot.
const (
	scoreSuccess   = "success rate"
	scoreWeighted  = "weighted score"
	scoreMilestone = "milestone average"
)

// scorePlot is each run's success rate, level-weighted score and
// milestone average (on a scale of 0 to 100 %), with their intervals.
func scorePlot(runs []*run) template.HTML {
	return barPlot("Scores", "score", "", []string{scoreSuccess, scoreWeighted, scoreMilestone}, runs, func(r *run, g string) bar {
		s := r.Report.Summary
		if s.Decided == 0 {
			return bar{none: "n/a", title: g + ": n/a, nothing decided"}
		}
		all, _ := scopeOf(r, "all")
		switch g {
		case scoreWeighted:
			return bar{value: s.Weighted, iv: all.Weighted, title: g + " " + rateTitle(s.Weighted, all.Weighted) + ", " + decidedNote(s)}
		case scoreMilestone:
			return bar{value: s.MilestoneAvg, iv: all.Milestone, title: g + " " + meanTitle(s.MilestoneAvg, all.Milestone) + ", " + decidedNote(s)}
		}
		return bar{value: s.SuccessRate, iv: all.Success, title: g + " " + rateTitle(s.SuccessRate, all.Success) + ", " + decidedNote(s)}
	})
}
