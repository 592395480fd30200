package viewer

import (
	"encoding/xml"
	"errors"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/store"
)

// svgNode is an element of a plot's SVG, in document order.
type svgNode struct {
	name  string
	attr  map[string]string
	text  string
	depth int
}

// parseSVG reads a plot as XML: it must be well formed.
func parseSVG(t *testing.T, h template.HTML) []svgNode {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(string(h)))
	var out []svgNode
	var open []int
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the plot is not well-formed SVG: %v\n%s", err, h)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			n := svgNode{name: x.Name.Local, attr: map[string]string{}, depth: len(open)}
			for _, a := range x.Attr {
				n.attr[a.Name.Local] = a.Value
			}
			out = append(out, n)
			open = append(open, len(out)-1)
		case xml.CharData:
			if len(open) > 0 {
				out[open[len(open)-1]].text += string(x)
			}
		case xml.EndElement:
			open = open[:len(open)-1]
		}
	}
	if len(open) != 0 || len(out) == 0 || out[0].name != "svg" {
		t.Fatalf("the plot is not one svg element:\n%s", h)
	}
	return out
}

// texts are the plot's words, in order.
func texts(nodes []svgNode) []string {
	var out []string
	for _, n := range nodes {
		if n.name == "text" {
			out = append(out, strings.TrimSpace(n.text))
		}
	}
	return out
}

// legendColours pairs each legend entry (a text that names a run) with
// the fill of the shape drawn just before it, its thumbnail.
func legendColours(nodes []svgNode, labels ...string) map[string]string {
	out := map[string]string{}
	for i, n := range nodes {
		if n.name != "text" {
			continue
		}
		for _, l := range labels {
			if strings.TrimSpace(n.text) != l {
				continue
			}
			for j := i - 1; j >= 0; j-- {
				if f := nodes[j].attr["fill"]; nodes[j].name == "path" && f != "" && f != "none" {
					out[l] = f
					break
				}
			}
		}
	}
	return out
}

// count counts the elements whose attribute key has the value.
func count(nodes []svgNode, key, value string) int {
	n := 0
	for _, x := range nodes {
		if x.attr[key] == value {
			n++
		}
	}
	return n
}

// ticks reads the x axis' tick labels that start with prefix and end
// with suffix as numbers.
func ticks(t *testing.T, nodes []svgNode, prefix, suffix string) []float64 {
	t.Helper()
	var out []float64
	for _, s := range texts(nodes) {
		if !strings.HasPrefix(s, prefix) || !strings.HasSuffix(s, suffix) || strings.Contains(s, " (") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(s, prefix), suffix), 64)
		if err == nil {
			out = append(out, v)
		}
	}
	return out
}

// round reports whether ticks are evenly spaced by 1, 2, 2.5 or 5 times a
// power of ten, from a multiple of that step.
func round(ts []float64) bool {
	if len(ts) < 2 {
		return false
	}
	step := ts[1] - ts[0]
	mag := math.Pow(10, math.Floor(math.Log10(step)))
	ok := false
	for _, m := range []float64{1, 2, 2.5, 5} {
		ok = ok || math.Abs(step/mag-m) < 1e-9
	}
	for i, v := range ts {
		ok = ok && math.Abs(v-ts[0]-float64(i)*step) < 1e-9*math.Max(1, v) && math.Abs(v/step-math.Round(v/step)) < 1e-6
	}
	return ok
}

func plotRun(id string, cost, success float64, took time.Duration, levels map[string]float64) *run {
	var gs []score.Group
	for _, k := range []string{"paper", "wood", "bronze", "silver", "gold"} {
		if v, ok := levels[k]; ok {
			gs = append(gs, score.Group{Key: k, Summary: score.Summary{N: 2, Decided: 2, SuccessRate: v}})
		}
	}
	return &run{ID: id, Report: &report.Report{Run: store.Run{ID: id, Agent: "agent-" + id},
		Means: report.Means{Cost: cost, TotalCost: 4 * cost, Duration: took}, Summary: score.Summary{N: 4, Decided: 4, SuccessRate: success},
		Breakdowns: map[score.Dimension][]score.Group{score.ByLevel: gs}}}
}

// The plots are gonum's SVG: well formed, styled by attributes (the
// page's Content-Security-Policy drops style attributes), a run's colour
// from its name, not its place, runs named in a legend and not by labels
// beside the points, round ticks, an all-zero cost axis that spans a cent
// and says so, and a level without tasks told apart from a 0 % bar.
func TestPlots(t *testing.T) {
	a := plotRun("run-a", 0, 0.5, 2*time.Second, map[string]float64{"wood": 0.5, "bronze": 0})
	b := plotRun("run-b", 0, 0.75, 3*time.Second, map[string]float64{"wood": 1, "bronze": 0.5, "silver": 0.25})
	c := plotRun("run-c", 0, 0.25, 4*time.Second, map[string]float64{"wood": 0, "silver": 1})
	la, lb, lc := "agent-run-a (run-a)", "agent-run-b (run-b)", "agent-run-c (run-c)"

	one, two := parseSVG(t, costPlot([]*run{a, b, c})), parseSVG(t, costPlot([]*run{c, b}))
	for _, nodes := range [][]svgNode{one, two} {
		if root := nodes[0]; root.attr["class"] != "plot" || root.attr["role"] != "img" || root.attr["aria-label"] != "Success against cost" {
			t.Errorf("the plot's svg element: %v", root.attr)
		}
		if n := count(nodes, "style", ""); n != len(nodes) {
			t.Errorf("%d elements have a style attribute, which the page's policy drops", len(nodes)-n)
		}
	}
	c1, c2 := legendColours(one, la, lb, lc), legendColours(two, lb, lc)
	if c1[lb] == "" || c1[lb] != c2[lb] || c1[lc] != c2[lc] {
		t.Errorf("a run's colour changes with its place: %v then %v", c1, c2)
	}
	if c1[la] == c1[lb] || c1[lb] == c1[lc] {
		t.Errorf("runs share a colour: %v", c1)
	}
	if c1[lb] != hexColour(runColour("run-b")) {
		t.Errorf("run-b is drawn in %s, not its own colour %s", c1[lb], hexColour(runColour("run-b")))
	}
	for _, l := range []string{la, lb, lc} {
		// Its point and its legend thumbnail.
		if n := count(one, "fill", c1[l]); n != 2 {
			t.Errorf("%s's colour fills %d shapes, want 2 (the point and the legend's)", l, n)
		}
		if n := strings.Count(strings.Join(texts(one), "\n")+"\n", l+"\n"); n != 1 {
			t.Errorf("%s is written %d times, want once (in the legend, not beside its point)", l, n)
		}
	}
	xs := ticks(t, one, "$", "")
	if len(xs) < 2 || slices.Max(xs) > 0.01 || slices.Max(xs) < 0.005 || !round(xs) {
		t.Errorf("an all-zero cost axis should span a cent in round ticks: %v", xs)
	}
	if !slices.ContainsFunc(texts(one), func(s string) bool { return strings.Contains(s, "every run cost $0") }) {
		t.Errorf("an all-zero cost axis does not say so: %q", texts(one))
	}
	if !slices.Contains(texts(one), "mean cost per episode (USD): every run cost $0") {
		t.Errorf("the cost axis is not per episode: %q", texts(one))
	}

	paid := parseSVG(t, costPlot([]*run{plotRun("run-a", 0.37, 0.5, 0, nil), plotRun("run-b", 0.12, 0.2, 0, nil)}))
	if slices.ContainsFunc(texts(paid), func(s string) bool { return strings.Contains(s, "every run cost $0") }) {
		t.Error("runs that cost something are said to cost $0")
	}
	if xs := ticks(t, paid, "$", ""); !round(xs) || slices.Max(xs) < 0.3 || slices.Max(xs) > 0.4 {
		t.Errorf("cost ticks %v, want round ones up to about $0.37", xs)
	}
	times := parseSVG(t, timePlot([]*run{plotRun("run-a", 0, 0.5, 13700*time.Millisecond, nil), plotRun("run-b", 0, 0.5, 41*time.Second, nil)}))
	if xs := ticks(t, times, "", " s"); !round(xs) || slices.Max(xs) < 40 {
		t.Errorf("time ticks %v, want round ones up to 40 s", xs)
	}

	bars := parseSVG(t, levelPlot([]*run{a, b, c}))
	if lc := legendColours(bars, la, lb, lc); len(lc) != 3 {
		t.Errorf("the level plot's legend names %d runs, want 3: %v", len(lc), lc)
	}
	// run-a has no silver task, run-c no bronze one: "no tasks" there,
	// and no bar; every other cell, 0 % included, is a bar outlined in
	// the run's colour.
	if n := strings.Count(strings.Join(texts(bars), "|"), "no tasks"); n != 2 {
		t.Errorf(`"no tasks" is written %d times, want 2: %q`, n, texts(bars))
	}
	for _, tc := range []struct {
		r    *run
		bars int
	}{{a, 2}, {b, 3}, {c, 2}} {
		col := hexColour(runColour(tc.r.ID))
		outlined := 0
		for _, n := range bars {
			if n.attr["stroke"] == col {
				if w, _ := strconv.ParseFloat(n.attr["stroke-width"], 64); w >= 1 {
					outlined++
				}
			}
		}
		if outlined != tc.bars+1 { // and the legend's thumbnail
			t.Errorf("%s: %d outlined bars, want %d and the legend's", tc.r.ID, outlined-1, tc.bars)
		}
	}
}

// inlineSVG turns the library's document into a page's element, its
// style attributes into presentation attributes.
func TestInlineSVG(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"prolog and size go", `<?xml version="1.0"?>` + "\n<!-- x -->\n" + `<svg width="10pt" height="5pt" viewBox="0 0 10 5"` + "\n\t" + `xmlns="http://www.w3.org/2000/svg"></svg>`,
			`<svg class="plot" role="img" aria-label="A &lt;plot&gt;" viewBox="0 0 10 5"` + "\n\t" + `xmlns="http://www.w3.org/2000/svg"><title>A &lt;plot&gt;</title></svg>`},
		{"style becomes attributes", `<svg viewBox="0 0 1 1"><path d="M0,0" style="fill:none;stroke:#000000;stroke-width:0.5"/></svg>`,
			`<svg class="plot" role="img" aria-label="A &lt;plot&gt;" viewBox="0 0 1 1"><title>A &lt;plot&gt;</title><path d="M0,0" fill="none" stroke="#000000" stroke-width="0.5"/></svg>`},
		// Text is escaped by the library: its quotes are never an attribute's.
		{"on its own line, with a fallback font", `<svg viewBox="0 0 1 1"><text x="1"` + "\n\t" + `style="font-family:Liberation Sans;font-size:10px">a style=&#34;b&#34;</text></svg>`,
			`<svg class="plot" role="img" aria-label="A &lt;plot&gt;" viewBox="0 0 1 1"><title>A &lt;plot&gt;</title><text x="1"` + "\n" +
				` font-family="Liberation Sans, Arial, Helvetica, sans-serif" font-size="10px">a style=&#34;b&#34;</text></svg>`},
	}
	for _, tc := range tests {
		if got := inlineSVG(tc.in, "A <plot>"); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// The server keeps rendered plots while the runs are unchanged, and
// draws them again when a run changes.
func TestPlotsFollowTheRuns(t *testing.T) {
	root := twoRuns(t)
	h := (&Server{Root: root}).Handler()
	plotOf := func() string {
		t.Helper()
		_, body := get(t, h, "/")
		i := strings.Index(body, `aria-label="Success against cost"`)
		j := strings.Index(body[i:], "</svg>")
		if i < 0 || j < 0 {
			t.Fatalf("no cost plot:\n%s", body)
		}
		return body[i : i+j]
	}
	before := plotOf()
	if again := plotOf(); again != before {
		t.Error("the same runs drew another plot")
	}
	st, err := store.Open(root + "/run-a")
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := st.Results()
	rs[0].Cost = 5
	if err := st.SaveResult(rs[0]); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if after := plotOf(); after == before {
		t.Error("the cost plot did not change with run-a's cost")
	}
}
