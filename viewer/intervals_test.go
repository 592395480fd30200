package viewer

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/store"
)

// scoreRun writes a run folder of results only: 16 tasks (8 of them
// instances of four templates) over three levels and three apps, the outcomes drawn from
// the run's number (a run i succeeds more often the larger i), a
// milestone share on each, and one infrastructure error.
func scoreRun(t testing.TB, root string, i int, started time.Time) string {
	t.Helper()
	id := fmt.Sprintf("run-%02d", i)
	dir := filepath.Join(root, id)
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetRun(store.Run{ID: id, Started: started.Add(time.Duration(i) * time.Minute), Harness: "test", Suite: "suites/desktop",
		Agent: "agent", Model: fmt.Sprintf("model-%d", i), ObsMode: "screenshot", Parallel: 1, Repeat: 1}); err != nil {
		t.Fatal(err)
	}
	levels := []string{"wood", "bronze", "silver"}
	weights := map[string]float64{"wood": 1, "bronze": 2, "silver": 3}
	apps := []string{"mousepad", "gnumeric", "chromium"}
	for k := range 16 {
		level, app := levels[k%3], apps[(k/2)%3]
		outcome := "failure"
		if (k*7+i*5)%16 < 4+i { // more successes for later runs
			outcome = "success"
		}
		if k == 15 && i%2 == 0 {
			outcome = "error"
		}
		ms := float64((k+i)%4) / 3
		if outcome == "success" {
			ms = 1
		}
		tpl := ""
		if k < 8 {
			tpl = fmt.Sprintf("tpl-%d", k%4)
		}
		if err := st.SaveResult(store.Result{Task: fmt.Sprintf("task-%02d", k), Template: tpl, Level: level,
			Weight: weights[level], Apps: []string{app}, Outcome: outcome, Reason: "checked", Milestone: ms, Steps: 3,
			Duration: 4 * time.Second, Cost: 0.01 * float64(i+1), Attempts: 1, Finished: started.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// scoreRuns writes n such runs under a new folder.
func scoreRuns(t testing.TB, n int) string {
	t.Helper()
	root := t.TempDir()
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	for i := range n {
		scoreRun(t, root, i, day)
	}
	return root
}

// hitTitles are the tooltips of a page's plots: each bar's and point's.
func hitTitles(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<rect class="hit"[^>]*><title>([^<]*)</title>`).FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// The score plots (scores, level, app, and the success of the cost and
// time plots) draw each score's interval as a whisker with caps, and say
// it in the bar's or point's tooltip; a run without an interval (a single
// group) has no whisker but its tooltip.
func TestScorePlotsShowIntervals(t *testing.T) {
	root := scoreRuns(t, 3)
	srv := &Server{Root: root}
	runs, err := srv.runs()
	if err != nil {
		t.Fatal(err)
	}
	ink := hexColour(whiskerInk)
	for _, tc := range []struct {
		name   string
		draw   func([]*run) string
		groups int
		words  string
	}{
		{"scores", func(rs []*run) string { return string(scorePlot(rs)) }, 3, "success rate "},
		{"level", func(rs []*run) string { return string(levelPlot(rs)) }, 3, "level wood: success "},
		{"app", func(rs []*run) string { return string(appPlot(rs)) }, 3, "app gnumeric: success "},
		{"cost", func(rs []*run) string { return string(costPlot(rs)) }, 1, "$0.0"},
		{"time", func(rs []*run) string { return string(timePlot(rs)) }, 1, "4.0 s per episode"},
	} {
		doc := tc.draw(runs)
		nodes := parseSVG(t, template.HTML(doc))
		titles := hitTitles(doc)
		if len(titles) != tc.groups*len(runs) {
			t.Errorf("%s: %d tooltips, want one per run and group (%d): %q", tc.name, len(titles), tc.groups*len(runs), titles)
		}
		// A whisker is its line and two caps, in the whiskers' ink.
		if n := count(nodes, "stroke", ink); n != 3*tc.groups*len(runs) {
			t.Errorf("%s: %d strokes of whiskers, want 3 (a line and two caps) for each of %d bars", tc.name, n, tc.groups*len(runs))
		}
		iv := regexp.MustCompile(`\d+\.\d% \[\d+\.\d%, \d+\.\d%\] \(95% CI\)`)
		for _, r := range runs {
			found := false
			for _, tt := range titles {
				if strings.HasPrefix(tt, runLabel(r)+" · ") && strings.Contains(tt, tc.words) {
					found = true
					if !iv.MatchString(tt) {
						t.Errorf("%s: tooltip %q says no interval", tc.name, tt)
					}
				}
			}
			if !found {
				t.Errorf("%s: no tooltip of %s with %q: %q", tc.name, r.ID, tc.words, titles)
			}
		}
		// The regions lie within the picture.
		vb := strings.Fields(nodes[0].attr["viewBox"])
		w, _ := strconv.ParseFloat(vb[2], 64)
		h, _ := strconv.ParseFloat(vb[3], 64)
		for _, n := range nodes {
			if n.attr["class"] != "hit" {
				continue
			}
			x, _ := strconv.ParseFloat(n.attr["x"], 64)
			y, _ := strconv.ParseFloat(n.attr["y"], 64)
			rw, _ := strconv.ParseFloat(n.attr["width"], 64)
			rh, _ := strconv.ParseFloat(n.attr["height"], 64)
			if x < 0 || y < 0 || rw <= 0 || rh <= 0 || x+rw > w || y+rh > h {
				t.Errorf("%s: a tooltip's region %v lies outside the plot %vx%v", tc.name, n.attr, w, h)
			}
		}
	}

	// A run of one task has one group: no interval, no whisker, and its
	// tooltip says the rate alone, as the report does.
	one := t.TempDir()
	makeRun(t, one, "run-one", "openai", time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), []episode{{"write-note", "wood", "success", 1}})
	rs, err := (&Server{Root: one}).runs()
	if err != nil {
		t.Fatal(err)
	}
	doc := string(scorePlot(rs))
	if n := count(parseSVG(t, template.HTML(doc)), "stroke", ink); n != 0 {
		t.Errorf("a run of one group has %d whisker strokes, want none", n)
	}
	if titles := hitTitles(doc); len(titles) != 3 || !strings.Contains(titles[0], "success rate 100.0% [n/a: 1 group]") {
		t.Errorf("tooltips of a run of one group: %q", titles)
	}
}

// The viewer's intervals are proctor report's for the same run: each
// scope's interval, as the report's text writes it with its default
// settings, is the one in the viewer's tooltips, on the leaderboard and
// on the run page. Another seed would give other intervals, so the
// agreement is not by chance.
func TestIntervalsAgreeWithReport(t *testing.T) {
	root := scoreRuns(t, 2)
	h := (&Server{Root: root}).Handler()
	_, board := get(t, h, "/")
	_, page := get(t, h, "/run/run-01")
	rep, err := report.Load(filepath.Join(root, "run-01"))
	if err != nil {
		t.Fatal(err)
	}
	rep.Analyse(report.DefaultStatOptions())
	var text bytes.Buffer
	if err := report.Write(&text, []*report.Report{rep}, "text"); err != nil {
		t.Fatal(err)
	}
	// Other settings: the zero ones (seed 0), and the next seed.
	var others []*report.Report
	for _, seed := range []uint64{0, report.DefaultSeed + 1} {
		o := report.DefaultStatOptions()
		o.Seed = seed
		x, _ := report.Load(filepath.Join(root, "run-01"))
		x.Analyse(o)
		others = append(others, x)
	}
	label := "agent model-1 (run-01) · "
	differs := make([]bool, len(others))
	for k, sc := range rep.Stats.Intervals {
		line := ""
		for l := range strings.Lines(text.String()) {
			if strings.HasPrefix(l, sc.Scope+" ") {
				line = l
			}
		}
		wants := []string{report.RateText(sc.Success)}
		var tips []string
		switch {
		case sc.Scope == "all":
			wants = append(wants, report.RateText(sc.Weighted), report.MeanText(sc.Milestone))
			tips = []string{"success rate " + wants[0], "weighted score " + wants[1], "milestone average " + wants[2], "success " + wants[0]}
		case strings.HasPrefix(sc.Scope, "level: "), strings.HasPrefix(sc.Scope, "app: "):
			kind, key, _ := strings.Cut(sc.Scope, ": ")
			tips = []string{kind + " " + key + ": success " + wants[0]}
		default:
			continue
		}
		for _, w := range wants {
			if !strings.Contains(line, w) {
				t.Errorf("the report's line of %q does not say %q:\n%s", sc.Scope, w, line)
			}
		}
		for i, tip := range tips {
			for name, body := range map[string]string{"leaderboard": board, "run page": page} {
				if i == 3 && name == "run page" {
					continue // the cost and time plots are the leaderboard's
				}
				if !strings.Contains(strings.Join(hitTitles(body), "\n"), label+tip) {
					t.Errorf("%s: no tooltip %q", name, label+tip)
				}
			}
		}
		for i, x := range others {
			differs[i] = differs[i] || report.RateText(x.Stats.Intervals[k].Success) != report.RateText(sc.Success)
		}
	}
	for i, d := range differs {
		if !d {
			t.Errorf("seed %d gives the same intervals: the agreement says nothing", others[i].Stats.Options.Seed)
		}
	}
}

// With many runs, a bar plot gives each run a row of its own under each
// group, named by its id beside its bar (no legend of colours to match,
// which twelve runs' colours could not be told apart by), the plot
// growing downwards; a few runs keep the columns and the legend.
func TestBarPlotOfManyRuns(t *testing.T) {
	root := scoreRuns(t, 12)
	runs, err := (&Server{Root: root}).runs()
	if err != nil {
		t.Fatal(err)
	}
	height := func(nodes []svgNode) float64 {
		v, _ := strconv.ParseFloat(strings.Fields(nodes[0].attr["viewBox"])[3], 64)
		return v
	}
	for _, tc := range []struct {
		name  string
		draw  func([]*run) template.HTML
		heads []string
	}{
		{"level", levelPlot, []string{"wood", "bronze", "silver"}},
		{"app", appPlot, []string{"chromium", "gnumeric", "mousepad"}},
		{"scores", scorePlot, []string{"success rate", "weighted score", "milestone average"}},
	} {
		nodes := parseSVG(t, tc.draw(runs))
		words := texts(nodes)
		// The headings in order, each followed by a row per run.
		at := 0
		for _, hd := range tc.heads {
			i := slices.Index(words[at:], hd)
			if i < 0 {
				t.Fatalf("%s: no heading %q after %q", tc.name, hd, words[:at])
			}
			at += i + 1
		}
		for _, r := range runs {
			if n := countText(words, r.ID); n != len(tc.heads) {
				t.Errorf("%s: %s is named %d times, want once under each of %d groups", tc.name, r.ID, n, len(tc.heads))
			}
			if n := countText(words, runLabel(r)); n != 0 {
				t.Errorf("%s: a legend names %s", tc.name, runLabel(r))
			}
		}
		// Rows are apart: the run names' baselines differ by a row.
		var ys []float64
		for _, n := range nodes {
			if n.name == "text" && strings.HasPrefix(strings.TrimSpace(n.text), "run-") {
				y, _ := strconv.ParseFloat(n.attr["y"], 64)
				ys = append(ys, y)
			}
		}
		slices.Sort(ys)
		for i := 1; i < len(ys); i++ {
			if ys[i]-ys[i-1] < rowH-0.5 {
				t.Errorf("%s: two rows %.1f apart, closer than a row (%d)", tc.name, ys[i]-ys[i-1], rowH)
				break
			}
		}
		if h, want := height(nodes), float64(rowH*len(tc.heads)*(len(runs)+1)); h < want {
			t.Errorf("%s: %v high, want at least %v for %d rows", tc.name, h, want, len(tc.heads)*(len(runs)+1))
		}
		if n := len(hitTitles(string(tc.draw(runs)))); n != len(runs)*len(tc.heads) {
			t.Errorf("%s: %d tooltips, want %d", tc.name, n, len(runs)*len(tc.heads))
		}
	}
	few := parseSVG(t, levelPlot(runs[:manyRuns]))
	for _, r := range runs[:manyRuns] {
		if n := countText(texts(few), runLabel(r)); n != 1 {
			t.Errorf("%d runs: %s is in the legend %d times, want once", manyRuns, r.ID, n)
		}
	}
	if h := height(few); h > plotAreaH+legendRow*manyRuns {
		t.Errorf("%d runs: %v high, want a plot of columns", manyRuns, h)
	}
}

func countText(words []string, s string) int {
	n := 0
	for _, w := range words {
		if w == s {
			n++
		}
	}
	return n
}
