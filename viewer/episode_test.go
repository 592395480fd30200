package viewer

import (
	"bytes"
	"encoding/json"
	"image/gif"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/proctor-eval/proctor/store"
)

// An episode exports as an animated GIF: a frame for each step's
// screenshot, then the screen after the last action, scaled to 640 wide.
func TestEpisodeGIF(t *testing.T) {
	h := (&Server{Root: twoRuns(t)}).Handler()
	code, body := get(t, h, "/run/run-a/episode.gif?task=sort-rows&repeat=0&delay=0.5")
	if code != http.StatusOK {
		t.Fatalf("gif = %d: %s", code, body)
	}
	g, err := gif.DecodeAll(bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	// sort-rows has 5 steps in run-a, each with a screenshot, and a final screen.
	if len(g.Image) != 6 {
		t.Fatalf("%d frames, want 6 (5 steps and the final screen)", len(g.Image))
	}
	if b := g.Image[0].Bounds(); b.Dx() != 640 || b.Dy() != 360 {
		t.Errorf("frame size %v, want 640x360", b)
	}
	if g.Delay[0] != 50 || g.Delay[5] != 150 || g.LoopCount != 0 {
		t.Errorf("delays %v, loop %d", g.Delay, g.LoopCount)
	}
	// The click of step 1 is drawn: a red ring around (320, 180).
	var red int
	for x := 300; x < 340; x++ {
		r, gg, b, _ := g.Image[0].At(x, 168).RGBA()
		if r>>8 > 200 && gg>>8 < 120 && b>>8 < 120 {
			red++
		}
	}
	if red == 0 {
		t.Error("no red ring where step 1 clicked")
	}
	for _, bad := range []string{"delay=0", "delay=x", "delay=11"} {
		if code, _ := get(t, h, "/run/run-a/episode.gif?task=sort-rows&repeat=0&"+bad); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
	if code, _ := get(t, h, "/run/run-a/episode.gif?task=nope&repeat=0"); code != http.StatusNotFound {
		t.Errorf("a missing task: %d", code)
	}
}

// The episode page's filmstrip shows every step and jumps to one; Play
// steps through the trajectory by itself.
func TestViewerFilmstripAndPlay(t *testing.T) {
	srv := httptest.NewServer((&Server{Root: twoRuns(t)}).Handler())
	defer srv.Close()
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/run/run-a/episode?task=sort-rows&repeat=0"),
		chromedp.WaitVisible(chromedp.CSS("#filmstrip")),
	); err != nil {
		t.Fatal(err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#filmstrip li").length`))
	if err != nil || n != 5 {
		t.Fatalf("%d thumbnails (%v), want 5", n, err)
	}
	signs, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("#filmstrip li:nth-child(3) .icons svg.icon")].
		map(s => s.getAttribute("aria-label") + (s.getBoundingClientRect().width > 8 ? "" : " (not drawn)")).join(" ")`))
	if err != nil || signs != "type hotkey" || text(t, ctx, "#filmstrip li:nth-child(3) .icons") != "3 " {
		t.Errorf("step 3's signs %q (%v), want the icons of the typing and the hotkey", signs, err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#filmstrip a[data-index="3"]`)), snap("11-filmstrip")); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#position"); s != "Step 4 of 5" {
		t.Errorf("after a click on the fourth thumbnail: %q", s)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#play")), chromedp.Sleep(2500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#position"); s != "Step 5 of 5" {
		t.Errorf("after playing: %q", s)
	}
	if s := text(t, ctx, "#play"); s != "Play" {
		t.Errorf("play stops at the end: the button says %q", s)
	}
	if href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("gif").getAttribute("href")`)); err != nil || !strings.Contains(href, "episode.gif?") {
		t.Errorf("gif link %q, %v", href, err)
	}
	// The run page, found in the steps' thoughts and sorted by steps.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/run/run-a?q=step+2+of&in=steps&sort=steps&desc=1"),
		chromedp.WaitVisible(chromedp.CSS("#episodes")),
		snap("12-run-find-sort"),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#matching"); !strings.HasPrefix(s, "2 episodes") {
		t.Errorf("found %q, want both episodes (each has a step 2)", s)
	}
}

// A review may say why the episode failed; the run page counts the
// categories and splits the disagreements by which side passed.
func TestReviewCategories(t *testing.T) {
	root := twoRuns(t)
	h := (&Server{Root: root, Token: "tok"}).Handler()
	review := func(task, verdict, category string) int {
		return post(t, h, "/run/run-a/review", url.Values{"task": {task}, "repeat": {"0"}, "verdict": {verdict},
			"reviewer": {"ann"}, "category": {category}, "token": {"tok"}}, "")
	}
	if code := review("sort-rows", "fail", "no-such-category"); code != http.StatusBadRequest {
		t.Errorf("an unknown category: %d, want 400", code)
	}
	// write-note succeeded by the checks, sort-rows failed.
	if review("write-note", "fail", "checker-wrong") != http.StatusSeeOther || review("sort-rows", "fail", "grounding-miss") != http.StatusSeeOther {
		t.Fatal("reviews refused")
	}
	_, body := get(t, h, "/run/run-a")
	for _, w := range []string{`<span id="checks-passed-reviewer-failed">1</span> the checks passed and the reviewer failed`,
		`<span id="checks-failed-reviewer-passed">0</span> the reverse`, `<span id="categories">grounding-miss 1, checker-wrong 1</span>`} {
		if !strings.Contains(body, w) {
			t.Errorf("the run page lacks %q", w)
		}
	}
	_, body = get(t, h, "/run/run-a/episode?task=sort-rows&repeat=0")
	if !strings.Contains(body, "Marked <strong>fail</strong> (grounding-miss) by ann") || !strings.Contains(body, `<option value="grounding-miss" selected>`) {
		t.Errorf("the episode page does not show the category")
	}
}

// The episode page charts each step's time (model, environment, settle)
// and tokens (in, out).
func TestStepCharts(t *testing.T) {
	h := (&Server{Root: twoRuns(t)}).Handler()
	_, body := get(t, h, "/run/run-a/episode?task=sort-rows&repeat=0")
	for _, w := range []string{`aria-label="Time per step"`, `aria-label="Tokens per step"`, "<title>step 1: model 0.9s, environment 0.04s, settle 0s</title>",
		"<title>step 5: input 1k, output 50</title>", ">environment</text>", ">settle</text>",
		"What the model was given <small>(2 messages)</small>", `<pre class="msg-text">You operate a Linux desktop. Do sort-rows.</pre>`,
		"[image: png 640x360, 12 KB; the step's screenshot]",
		`<tr><td>planner</td><td>m-1</td><td class="n">3000</td><td class="n">150</td><td class="n">$0.0060</td></tr>`,
		`<tr><td>grounder</td><td>g-1</td><td class="n">2000</td><td class="n">100</td><td class="n">$0.0040</td></tr>`} {
		if !strings.Contains(body, w) {
			t.Errorf("the episode page lacks %q", w)
		}
	}
	for _, tc := range []struct{ in, want float64 }{{0.3, 0.5}, {1.2, 2}, {3, 5}, {7, 10}, {250, 500}, {0, 1}} {
		if got := niceStep(tc.in); got != tc.want {
			t.Errorf("niceStep(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// The run page filters episodes by outcome, level and app, finds text in
// the results and, when asked, in the steps' thoughts and actions, and
// sorts by any column, each link keeping the rest of the query.
func TestRunPageFindsAndSorts(t *testing.T) {
	h := (&Server{Root: twoRuns(t)}).Handler()
	order := func(target string) []string {
		t.Helper()
		code, body := get(t, h, target)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", target, code)
		}
		var tasks []string
		for _, part := range strings.Split(body, `<td><a href="/run/run-a/episode?`)[1:] {
			_, rest, _ := strings.Cut(part, `">`)
			name, _, _ := strings.Cut(rest, "</a>")
			tasks = append(tasks, name)
		}
		return tasks
	}
	for _, tc := range []struct {
		target string
		want   string
	}{
		{"/run/run-a?sort=steps", "write-note,sort-rows"},
		{"/run/run-a?sort=steps&desc=1", "sort-rows,write-note"},
		{"/run/run-a?sort=cost&desc=1", "sort-rows,write-note"},
		{"/run/run-a?outcome=success", "write-note"},
		{"/run/run-a?level=bronze", "sort-rows"},
		{"/run/run-a?app=mousepad&sort=task", "sort-rows,write-note"},
		{"/run/run-a?app=gimp", ""},
		{"/run/run-a?q=value+%2241%22", "sort-rows"}, // the reason
		{"/run/run-a?q=step+4+of", ""},
		{"/run/run-a?q=step+4+of&in=steps", "sort-rows"}, // a thought
		{"/run/run-a?q=HELLO+WORLD&in=steps&sort=task", "sort-rows,write-note"},
	} {
		if got := strings.Join(order(tc.target), ","); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.target, got, tc.want)
		}
	}
	for _, bad := range []string{"/run/run-a?sort=colour", "/run/run-a?outcome=great"} {
		if code, _ := get(t, h, bad); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
	_, body := get(t, h, "/run/run-a?outcome=failure&q=sort&sort=steps")
	if !strings.Contains(body, `href="/run/run-a?desc=1&amp;outcome=failure&amp;q=sort&amp;sort=steps" class="sort sorted-up"`) {
		t.Errorf("the sorted column's link does not turn the order round, keeping the filters")
	}
	if !strings.Contains(body, `href="/run/run-a?outcome=failure&amp;q=sort&amp;show=unreviewed&amp;sort=steps"`) {
		t.Errorf("the show links do not keep the filters and the order")
	}
}

// The run page shows the run's configuration as it recorded it, its
// durations as durations (recorded in nanoseconds).
func TestRunPageShowsConfiguration(t *testing.T) {
	root := t.TempDir()
	dir := makeRun(t, root, "run-c", "openai", time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), []episode{{"write-note", "wood", "success", 1}})
	st, err := store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Run()
	info.SuiteHash, info.PromptHash = "5a1c0ffee", "9b7"
	info.Config = json.RawMessage(`{"agent":"openai","model":{"model":"gpt-5","format":"pyautogui","temperature":0.5,"top_p":0.9,"history":3},"judge":{"models":["gpt-5-mini"],"timeout":90000000000},"max_cost":0.5,"agent_timeout":20000000000}`)
	if err := st.SetRun(info); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, body := get(t, (&Server{Root: root}).Handler(), "/run/run-c")
	for _, w := range []string{"<th>suite hash</th><td><code>5a1c0ffee</code>", "<th>model.format</th><td><code>pyautogui</code>",
		"<th>model.temperature</th><td><code>0.5</code>", "<th>model.top_p</th><td><code>0.9</code>", `<th>judge.models</th><td><code>[&#34;gpt-5-mini&#34;]</code>`,
		"<th>max_cost</th><td><code>0.5</code>", "<th>model.history</th><td><code>3</code>",
		"<th>agent_timeout</th><td><code>20s</code>", "<th>judge.timeout</th><td><code>1m30s</code>"} {
		if !strings.Contains(body, w) {
			t.Errorf("the run page lacks %q", w)
		}
	}
}

// A comparison opens an episode of both runs side by side, and the two
// trajectories step together; the shorter one says where it ended.
func TestSideBySide(t *testing.T) {
	srv := httptest.NewServer((&Server{Root: twoRuns(t)}).Handler())
	defer srv.Close()
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/compare?run=run-a&run=run-b"),
		chromedp.WaitVisible(chromedp.CSS("#comparison")),
		chromedp.Click(chromedp.CSS(`a.side-link[href*="task=sort-rows"]`)),
		chromedp.WaitVisible(chromedp.CSS("#side")),
	); err != nil {
		t.Fatal(err)
	}
	cols, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".side-col").length`))
	if err != nil || cols != 2 {
		t.Fatalf("%d columns (%v), want 2", cols, err)
	}
	for range 4 {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#next"))); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, snap("14-side-by-side")); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#position"); s != "Step 5 of 5" {
		t.Errorf("position %q", s)
	}
	// run-a took 5 steps and shows its fifth; run-b took 4 and has ended.
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".side-col")].map(c => {
		const s = [...c.querySelectorAll("article.side-step")].find(a => !a.hidden);
		const ended = !c.querySelector(".side-ended").hidden;
		return (s ? s.querySelector(".side-acts strong").textContent : "") + (ended ? " ended" : "");
	})`))
	if err != nil || len(shown) != 2 || shown[0] != "Step 5" || shown[1] != "Step 4 ended" {
		t.Errorf("columns show %q (%v), want [Step 5, Step 4 ended]", shown, err)
	}
	// Episodes found across both runs, from the leaderboard's link.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(chromedp.CSS("#search-link")),
		chromedp.WaitVisible(chromedp.CSS("#search-form")),
		chromedp.SendKeys(chromedp.CSS(`#search-form input[name="q"]`), "sort"),
		chromedp.Click(chromedp.CSS(`#search-form button`)),
		chromedp.WaitVisible(chromedp.CSS("#results")),
		snap("16-search-across-runs"),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#found"); s != "2 episodes found." {
		t.Errorf("found %q", s)
	}
	h := (&Server{Root: twoRuns(t)}).Handler()
	if code, _ := get(t, h, "/side?run=run-a&task=sort-rows&repeat=0"); code != http.StatusBadRequest {
		t.Errorf("one run side by side: %d", code)
	}
}

// The live page of a run in progress shows how far it is, its running
// success rate and spend, and the episodes in flight with their latest
// screen, and reloads itself until the run is done.
func TestLivePage(t *testing.T) {
	root := t.TempDir()
	dir := makeRun(t, root, "run-l", "openai", time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), []episode{
		{"write-note", "wood", "success", 2}, {"sort-rows", "bronze", "failure", 2}})
	st, err := store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Run()
	info.Planned, info.Parallel = 4, 2
	if err := st.SetRun(info); err != nil {
		t.Fatal(err)
	}
	// Each episode took 1.6 s of the agent's time after 4 s of reset and
	// setup: the time left counts both.
	rs, _ := st.Results()
	for _, r := range rs {
		r.Setup = 4 * time.Second
		if err := st.SaveResult(r); err != nil {
			t.Fatal(err)
		}
	}
	steps, _ := st.Turns("write-note", 0)
	for i := 1; i <= 3; i++ { // carry-result is in flight, at its third step
		s := steps[0]
		s.Task, s.Index, s.Thought = "carry-result", i, "now on step "+strconv.Itoa(i)
		if err := st.SaveTurn(s); err != nil {
			t.Fatal(err)
		}
	}
	h := (&Server{Root: root}).Handler()
	_, body := get(t, h, "/run/run-l/live")
	for _, w := range []string{`<meta http-equiv="refresh" content="5">`, `<progress max="4" value="2"></progress> 2 of 4 episodes recorded`,
		`<dd id="running-success">50.0% (1 of 2)</dd>`, `<dd id="spend">$0.0080</dd>`, `<dd id="in-flight-count">1</dd>`,
		"<td>carry-result</td><td class=\"n\">3</td>", "now on step 3", `alt="the latest screen of carry-result"`, "about 6s left"} {
		if !strings.Contains(body, w) {
			t.Errorf("the live page lacks %q", w)
		}
	}
	// The episode ends, and the last one too: the run is done.
	for _, task := range []string{"carry-result", "fill-form"} {
		if err := st.SaveResult(store.Result{Task: task, Outcome: "success", Level: "wood", Weight: 1}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	_, body = get(t, h, "/run/run-l/live")
	if strings.Contains(body, `http-equiv="refresh"`) || !strings.Contains(body, "No episode is in flight.") || !strings.Contains(body, "<small>done</small>") {
		t.Errorf("the live page of a finished run still reloads, or shows flights")
	}
}

// The drawn actions can be hidden (they may cover a menu), and the
// screenshot shown at its full size, where set-of-mark tags read.
func TestEpisodeMarksAndZoom(t *testing.T) {
	srv := httptest.NewServer((&Server{Root: twoRuns(t)}).Handler())
	defer srv.Close()
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/run/run-a/episode?task=sort-rows&repeat=0"),
		chromedp.WaitVisible(chromedp.CSS("#step-1 img")),
	); err != nil {
		t.Fatal(err)
	}
	shown := func() (bool, float64) {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[getComputedStyle(document.querySelector("#step-1 svg.overlay")).display === "none" ? 0 : 1,
			document.querySelector("#step-1 img").clientWidth]`))
		if err != nil {
			t.Fatal(err)
		}
		return v[0] == 1, v[1]
	}
	marks, width := shown()
	if !marks {
		t.Fatal("the actions are not drawn at first")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#show-marks")), chromedp.Click(chromedp.CSS("#step-1 img")), snap("15-no-marks-zoomed")); err != nil {
		t.Fatal(err)
	}
	marks2, width2 := shown()
	if marks2 {
		t.Error("the actions still show after unticking them")
	}
	if width2 != 640 || width == 640 {
		t.Errorf("the screenshot is %v wide, then %v after a click; want 640 (its own size) zoomed", width, width2)
	}
}

// Episodes are found across every run by text (and in the steps),
// outcome, level and app.
func TestSearchAcrossRuns(t *testing.T) {
	h := (&Server{Root: twoRuns(t)}).Handler()
	found := func(target string) []string {
		t.Helper()
		code, body := get(t, h, target)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", target, code)
		}
		var out []string
		for _, m := range regexp.MustCompile(`href="/run/([^/"]+)/episode\?[^"]*">([^<]+)</a>`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1]+":"+m[2])
		}
		return out
	}
	for _, tc := range []struct{ target, want string }{
		{"/search?q=sort&sort=task", "run-b:sort-rows,run-a:sort-rows"},
		{"/search?outcome=success", "run-b:sort-rows,run-a:write-note"},
		{"/search?q=value+%2241%22", "run-b:write-note,run-a:sort-rows"},
		{"/search?q=step+4+of&in=steps", "run-b:sort-rows,run-a:sort-rows"},
		{"/search?q=step+4+of", ""},
		{"/search?level=wood&outcome=failure", "run-b:write-note"},
	} {
		if got := strings.Join(found(tc.target), ","); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.target, got, tc.want)
		}
	}
	if _, body := get(t, h, "/search"); !strings.Contains(body, "Give text to find") {
		t.Error("an empty search does not say what to give")
	}
	if code, _ := get(t, h, "/search?outcome=splendid"); code != http.StatusBadRequest {
		t.Errorf("a bad outcome: %d", code)
	}
}

// The cost chart sits beside the token chart: each step's cost, split by
// model where the step records the split, the rest apart; nothing when
// the episode spent nothing.
func TestCostChart(t *testing.T) {
	split := json.RawMessage(`[{"role":"planner","model":"m-1","cost":0.003},{"role":"grounder","model":"g-1","cost":0.001}]`)
	tests := []struct {
		name  string
		steps []store.Turn
		want  []string
	}{
		{"split by model", []store.Turn{{Index: 1, Cost: 0.004, Models: split}, {Index: 2, Cost: 0.004, Models: split}},
			[]string{`aria-label="Cost per step"`, "<title>step 2: planner m-1 $0.003, grounder g-1 $0.001</title>", ">planner m-1</text>", ">grounder g-1</text>"}},
		{"one model", []store.Turn{{Index: 1, Cost: 0.25}, {Index: 2, Cost: 0.5}},
			[]string{"<title>step 2: cost $0.5</title>", ">$0.4</text>", ">cost</text>"}},
		{"a step without the split", []store.Turn{{Index: 1, Cost: 0.004, Models: split}, {Index: 2, Cost: 0.002}},
			[]string{"<title>step 2: planner m-1 $0, grounder g-1 $0, cost $0.002</title>"}},
		{"nothing spent", []store.Turn{{Index: 1}, {Index: 2}}, nil},
	}
	for _, tc := range tests {
		got := string(costChart(tc.steps))
		if tc.want == nil && got != "" {
			t.Errorf("%s: a chart of nothing: %s", tc.name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the chart lacks %q:\n%s", tc.name, w, got)
			}
		}
	}
	h := (&Server{Root: twoRuns(t)}).Handler()
	_, body := get(t, h, "/run/run-a/episode?task=sort-rows&repeat=0")
	if !strings.Contains(body, `aria-label="Tokens per step"`) || !strings.Contains(body, "<title>step 1: planner m-1 $0.0012, grounder g-1 $0.0008</title>") {
		t.Error("the episode page has no cost chart beside the token chart")
	}
}
