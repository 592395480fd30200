package viewer

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/store"
)

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	return rec.Code, rec.Body.String()
}

func post(t *testing.T, h http.Handler, target string, form url.Values, header string) int {
	t.Helper()
	req := httptest.NewRequest("POST", target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if header != "" {
		req.Header.Set("Authorization", header)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

func twoRuns(t *testing.T) string {
	root := t.TempDir()
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	makeRun(t, root, "run-a", "openai", day, []episode{{"write-note", "wood", "success", 3}, {"sort-rows", "bronze", "failure", 5}})
	makeRun(t, root, "run-b", "anthropic", day.Add(time.Hour), []episode{{"write-note", "wood", "failure", 2}, {"sort-rows", "bronze", "success", 4}})
	return root
}

func TestPages(t *testing.T) {
	h := (&Server{Root: twoRuns(t)}).Handler()
	tests := []struct {
		target string
		code   int
		want   []string
	}{
		{"/", 200, []string{"run-a", "run-b", "Success against cost", "Success per level", "wood", "bronze"}},
		{"/?q=anthropic", 200, []string{"run-b"}},
		{"/?by=app", 200, []string{"mousepad"}},
		{"/?by=all", 200, []string{`<th colspan="2" class="dim">level</th>`, `<th class="group" title="level: wood">wood</th>`,
			`<th colspan="1" class="dim">app</th>`, `<th class="group" title="app: mousepad">mousepad</th>`, `<th class="group" title="domain: `}},
		{"/?sort=cost&desc=0", 200, []string{`class="sorted-up">Cost / ep.</a>`}},
		{"/compare?run=run-a&run=run-b", 200, []string{"2 of 2 episodes flipped"}},
		{"/compare?run=run-a", 400, []string{"at least two runs"}},
		{"/run/run-a", 200, []string{"write-note", "sort-rows", "n/a"}},
		{"/run/run-a?show=failed", 200, []string{"sort-rows"}},
		{"/run/nope", 404, []string{"not found"}},
		{"/run/run-a/episode?task=sort-rows&repeat=0", 200, []string{"Step 1 of 5", "<h4>Thought</h4><p class=\"thought\">step 1 of sort-rows.</p>", "push button Save", "value &#34;41&#34; is not &#34;42&#34;", "read-only"}},
		{"/run/run-a/episode?task=missing&repeat=0", 404, []string{"not found"}},
		{"/run/run-a/shot/..%2Fresults.db", 400, []string{"bad screenshot name"}},
		{"/static/viewer.js", 200, []string{"ArrowRight"}},
	}
	for _, tc := range tests {
		code, body := get(t, h, tc.target)
		if code != tc.code {
			t.Errorf("GET %s = %d, want %d", tc.target, code, tc.code)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q", tc.target, w)
			}
		}
	}
	_, body := get(t, h, "/?q=anthropic")
	if strings.Contains(body, `href="/run/run-a"`) {
		t.Error("the filter kept run-a")
	}
	_, body = get(t, h, "/run/run-a?show=failed")
	if strings.Contains(body, ">write-note<") {
		t.Error("the failed filter kept a success")
	}
}

func TestPagination(t *testing.T) {
	root := t.TempDir()
	var eps []episode
	for i := range 25 {
		eps = append(eps, episode{task: "task-" + string(rune('a'+i)), level: "paper", outcome: "success", steps: 1})
	}
	makeRun(t, root, "big", "replay", time.Now(), eps)
	h := (&Server{Root: root, PageSize: 10}).Handler()
	_, body := get(t, h, "/run/big?page=3")
	if !strings.Contains(body, "page 3 of 3") || !strings.Contains(body, "task-u") || strings.Contains(body, ">task-a<") || !strings.Contains(body, `rel="prev"`) {
		t.Errorf("page 3 of the run is wrong:\n%s", body)
	}
	_, body = get(t, h, "/run/big?page=99")
	if !strings.Contains(body, "page 3 of 3") {
		t.Error("a page past the end is not the last page")
	}
}

func TestReviews(t *testing.T) {
	root := twoRuns(t)
	form := url.Values{"task": {"sort-rows"}, "repeat": {"0"}, "verdict": {"pass"}, "reviewer": {"ann"}, "note": {"fine"}}
	readOnly := (&Server{Root: root}).Handler()
	if code := post(t, readOnly, "/run/run-a/review", form, "Bearer x"); code != http.StatusForbidden {
		t.Errorf("review on a read-only viewer = %d, want 403", code)
	}
	h := (&Server{Root: root, Token: "tok"}).Handler()
	if code := post(t, h, "/run/run-a/review", form, ""); code != http.StatusUnauthorized {
		t.Errorf("review without a token = %d, want 401", code)
	}
	if code := post(t, h, "/run/run-a/review", form, "Bearer nope"); code != http.StatusUnauthorized {
		t.Errorf("review with a wrong token = %d, want 401", code)
	}
	bad := url.Values{"task": {"sort-rows"}, "repeat": {"0"}, "verdict": {"maybe"}, "reviewer": {"ann"}, "token": {"tok"}}
	if code := post(t, h, "/run/run-a/review", bad, ""); code != http.StatusBadRequest {
		t.Errorf("review with verdict maybe = %d, want 400", code)
	}
	ghost := url.Values{"task": {"ghost"}, "repeat": {"0"}, "verdict": {"pass"}, "reviewer": {"ann"}, "token": {"tok"}}
	if code := post(t, h, "/run/run-a/review", ghost, ""); code != http.StatusNotFound {
		t.Errorf("review of a missing episode = %d, want 404", code)
	}
	if code := post(t, h, "/run/run-a/review", form, "Bearer tok"); code != http.StatusSeeOther {
		t.Fatalf("review with the token = %d, want 303", code)
	}
	_, body := get(t, h, "/run/run-a")
	if !strings.Contains(body, "1 episode reviewed, 1 disagree") || !strings.Contains(body, "100.0%") {
		t.Errorf("run page after a disagreeing review:\n%s", body)
	}
	form.Set("verdict", "fail")
	form.Set("token", "tok")
	if code := post(t, h, "/run/run-a/review", form, ""); code != http.StatusSeeOther {
		t.Fatalf("second review = %d", code)
	}
	_, body = get(t, h, "/run/run-a?show=unreviewed")
	if !strings.Contains(body, "0.0%") || !strings.Contains(body, "write-note") || strings.Contains(body, ">sort-rows<") {
		t.Errorf("after the agreeing review, or the unreviewed filter:\n%s", body)
	}
	_, body = get(t, h, "/run/run-a/episode?task=sort-rows&repeat=0")
	if !strings.Contains(body, "Marked <strong>fail</strong> by ann") || !strings.Contains(body, "1 earlier review<") ||
		!strings.Contains(body, "<strong>pass</strong> by ann") {
		t.Errorf("episode page should show the current review and the earlier one:\n%s", body)
	}
	st, _ := store.Open(root + "/run-a")
	defer st.Close()
	rv, _ := st.Reviews()
	if r := rv[store.ReviewKey{Task: "sort-rows"}]; r.Reviewer != "ann" || r.Pass || r.At.IsZero() {
		t.Errorf("stored review = %+v", r)
	}
}

func TestEpisodeZip(t *testing.T) {
	h := (&Server{Root: twoRuns(t)}).Handler()
	code, body := get(t, h, "/run/run-a/episode.zip?task=sort-rows&repeat=0")
	if code != 200 {
		t.Fatalf("zip = %d: %s", code, body)
	}
	zr, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var shots []string
	var traj struct {
		Steps []store.Turn `json:"steps"`
	}
	finished := time.Date(2026, 11, 22, 9, 1, 0, 0, time.UTC) // the episode's end in twoRuns
	for _, f := range zr.File {
		if !f.Modified.Equal(finished) {
			t.Errorf("%s is dated %v, want %v (when the episode finished)", f.Name, f.Modified, finished)
		}
		if strings.HasPrefix(f.Name, "shots/") {
			shots = append(shots, f.Name)
		}
		if f.Name == "trajectory.json" {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			if err := json.Unmarshal(b, &traj); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := "shots/step-001.png shots/step-002.png shots/step-003.png shots/step-004.png shots/step-005.png"
	if len(traj.Steps) != 5 || strings.Join(shots, " ") != want {
		t.Errorf("zip holds %d steps and screenshots %v, want 5 and %s", len(traj.Steps), shots, want)
	}
	if len(traj.Steps) > 2 && traj.Steps[2].Shot != "shots/step-003.png" {
		t.Errorf("step 3 of trajectory.json names its screenshot %q, want shots/step-003.png", traj.Steps[2].Shot)
	}
}

func TestOverlay(t *testing.T) {
	mk := func(acts []action.Action, done string) store.Turn {
		b, _ := json.Marshal(acts)
		return store.Turn{Actions: b, Done: json.RawMessage(done)}
	}
	tests := []struct {
		name  string
		step  store.Turn
		kinds []string
		first mark
	}{
		{"click where it landed", mk(nil, `[{"action":{"kind":"click","target":{"role":"push button","name":"OK"}},"element":"push button OK","at":[10,20]}]`),
			[]string{"click"}, mark{Kind: "click", X: 10, Y: 20, Label: "click: push button OK"}},
		{"click asked in thousandths", mk([]action.Action{{Kind: action.Click, Point: &action.Point{X: 500, Y: 500, Unit: action.Thousand}}}, ""),
			[]string{"click"}, mark{Kind: "click", X: 320, Y: 180, Label: "click"}},
		{"set-of-mark tag", mk([]action.Action{{Kind: action.Click, Target: &action.Target{Tag: 7}}}, ""),
			[]string{"text"}, mark{Kind: "text", X: 16, Y: 40, Label: "click tag_7"}},
		{"drag", mk([]action.Action{{Kind: action.Drag, Point: &action.Point{X: 1, Y: 2}, To: &action.Point{X: 30, Y: 40}}}, ""),
			[]string{"drag"}, mark{Kind: "drag", X: 1, Y: 2, X2: 30, Y2: 40, Label: "drag"}},
		{"scroll down", mk([]action.Action{{Kind: action.Scroll, Point: &action.Point{X: 100, Y: 100}, DY: 3}}, ""),
			[]string{"drag"}, mark{Kind: "drag", X: 100, Y: 100, X2: 100, Y2: 136, Label: "scroll +3"}},
		{"typing and keys", mk([]action.Action{{Kind: action.Type, Text: "hi"}, {Kind: action.Hotkey, Keys: []string{"ctrl", "s"}}}, ""),
			[]string{"text", "text"}, mark{Kind: "text", X: 16, Y: 40, Label: `type "hi"`}},
		{"answer", mk([]action.Action{{Kind: action.Answer, Text: "42"}}, ""),
			[]string{"text"}, mark{Kind: "text", X: 16, Y: 40, Label: `answer "42"`}},
	}
	for _, tc := range tests {
		marks, _, _ := overlay(tc.step, 640, 360)
		var kinds []string
		for _, m := range marks {
			kinds = append(kinds, m.Kind)
		}
		if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") || marks[0] != tc.first {
			t.Errorf("%s: marks %+v, want kinds %v and first %+v", tc.name, marks, tc.kinds, tc.first)
		}
	}
	svg := string(overlaySVG([]mark{{Kind: "text", X: 1, Y: 2, Label: `<script>alert(1)</script>`}}, 10, 10, "1"))
	if strings.Contains(svg, "<script>") {
		t.Errorf("a label is not escaped: %s", svg)
	}
}

func TestSortedGroups(t *testing.T) {
	all := []score.Dimension{score.ByLevel, score.ByApp, score.ByDomain}
	tests := []struct {
		set  []string
		dims []score.Dimension
		want string
	}{
		{[]string{"gold", "paper", "wood"}, []score.Dimension{score.ByLevel}, "paper|wood|gold"},
		{[]string{"xterm", "gimp"}, []score.Dimension{score.ByApp}, "gimp|xterm"},
		{[]string{"app: xterm", "domain: office", "level: silver", "level: bronze", "app: gimp"}, all,
			"level: bronze|level: silver|app: gimp|app: xterm|domain: office"},
	}
	for _, tc := range tests {
		set := map[string]bool{}
		for _, g := range tc.set {
			set[g] = true
		}
		if got := strings.Join(sortedGroups(set, tc.dims), "|"); got != tc.want {
			t.Errorf("sortedGroups(%v) = %s, want %s", tc.set, got, tc.want)
		}
	}
}

// Runs of different task sets are compared over the tasks both attempted;
// the others are listed apart, not counted as flipped.
func TestCompareDifferentTasks(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	makeRun(t, root, "run-a", "openai", day, []episode{
		{"write-note", "wood", "success", 1}, {"sort-rows", "bronze", "failure", 1}, {"only-a", "wood", "success", 1},
	})
	makeRun(t, root, "run-b", "anthropic", day.Add(time.Hour), []episode{
		{"write-note", "wood", "success", 1}, {"sort-rows", "bronze", "success", 1},
		{"only-b-1", "wood", "failure", 1}, {"only-b-2", "wood", "success", 1},
	})
	h := (&Server{Root: root}).Handler()
	code, body := get(t, h, "/compare?run=run-a&run=run-b")
	if code != 200 {
		t.Fatalf("compare = %d", code)
	}
	for _, want := range []string{
		"1 of 2 episodes flipped", // sort-rows; only-a and only-b-* are not shared
		"only in run-a: 1 task<", "only in run-b: 2 tasks<",
		"1/2 shared · 50.0%", // run-a over the shared tasks (its own rate is 2/3)
		"2/2 shared · 100.0%",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("comparison lacks %q:\n%s", want, body)
		}
	}
	_, body = get(t, h, "/compare?run=run-a&run=run-b&flipped=1")
	if strings.Count(body, `class="flipped"`) != 1 || !strings.Contains(body, "sort-rows") {
		t.Errorf("the flipped filter should keep sort-rows only:\n%s", body)
	}
}

// The small wording and state defects: an empty filter result, the search
// text across the show filters, singular counts, a bad repeat, and the
// counts behind the breakdown percentages.
func TestWordingAndState(t *testing.T) {
	h := (&Server{Root: twoRuns(t)}).Handler()
	_, body := get(t, h, "/?q=nobody")
	if strings.Contains(body, "No runs here yet") || !strings.Contains(body, "No run matches the filter <q>nobody</q>") ||
		!strings.Contains(body, `id="clear-filter"`) || !strings.Contains(body, `href="/?by=level&amp;sort=weighted"`) {
		t.Errorf("an empty filter result:\n%s", body)
	}
	_, body = get(t, h, "/run/run-a?q=sort")
	for _, show := range []string{"unreviewed", "disagree", "failed"} {
		if !strings.Contains(body, `href="/run/run-a?q=sort&amp;show=`+show+`"`) {
			t.Errorf("the %s filter link drops the search text", show)
		}
	}
	if !strings.Contains(body, `href="/run/run-a?q=sort"`) {
		t.Error("the all filter link drops the search text")
	}
	if !strings.Contains(body, ">1 episode · page 1 of 1") {
		t.Errorf("one matching episode is not counted in the singular:\n%s", body)
	}
	code, body := get(t, h, "/run/run-a/episode?task=sort-rows&repeat=first")
	if code != http.StatusBadRequest || !strings.Contains(body, "the valid repeats of task &#34;sort-rows&#34; are 0") {
		t.Errorf("a bad repeat = %d:\n%s", code, body)
	}
	code, body = get(t, h, "/run/run-a/episode?task=sort-rows&repeat=3")
	if code != http.StatusNotFound || !strings.Contains(body, "are 0") {
		t.Errorf("a missing repeat = %d:\n%s", code, body)
	}
	if code, _ := get(t, h, "/run/run-a/episode.zip?task=sort-rows&repeat=x"); code != http.StatusBadRequest {
		t.Errorf("a bad repeat in the zip = %d, want 400", code)
	}
	if code, _ := get(t, h, "/run/run-a/episode?task=sort-rows"); code != 200 {
		t.Errorf("an episode without repeat = %d, want its first repeat", code)
	}
	_, body = get(t, h, "/?by=level")
	if !strings.Contains(body, `<td class="n group">100% <small>1/1</small></td>`) || !strings.Contains(body, `<td class="n group">0% <small>0/1</small></td>`) {
		t.Errorf("breakdown cells lack their counts:\n%s", body)
	}
}

// The episode page shows each step's accessibility tree, escaped, and the
// parse error where no action could be parsed.
func TestEpisodeTreeAndParseError(t *testing.T) {
	root := twoRuns(t)
	st, err := store.Open(root + "/run-a")
	if err != nil {
		t.Fatal(err)
	}
	steps, err := st.Turns("sort-rows", 0)
	if err != nil {
		t.Fatal(err)
	}
	steps[0].Tree = "[window] Mousepad\n  [push button] <Save> & close\n"
	steps[1].Actions, steps[1].ParseError = json.RawMessage("null"), "no Action: line in the reply"
	for _, s := range steps[:2] {
		if err := st.SaveTurn(s); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	h := (&Server{Root: root}).Handler()
	_, body := get(t, h, "/run/run-a/episode?task=sort-rows&repeat=0")
	if !strings.Contains(body, `<summary>Accessibility tree <small>(2 lines)</small></summary><pre class="tree">[window] Mousepad`+"\n"+`  [push button] &lt;Save&gt; &amp; close`) {
		t.Errorf("step 1's accessibility tree is not shown, escaped:\n%s", body)
	}
	if strings.Count(body, `<details class="tree">`) != 1 {
		t.Error("a tree block is shown for a step without a tree")
	}
	if !strings.Contains(body, `<pre class="actions fail">no actions: the output could not be parsed: no Action: line in the reply</pre>`) {
		t.Errorf("the parsed actions box of step 2 lacks its parse error:\n%s", body)
	}
}

// A refused review answers with the episode's page and the form as typed
// (never the token); the page links the next unreviewed episode and has
// the script that remembers the reviewer and token in the browser.
func TestRefusedReviewKeepsForm(t *testing.T) {
	h := (&Server{Root: twoRuns(t), Token: "tok"}).Handler()
	form := url.Values{"task": {"sort-rows"}, "repeat": {"0"}, "verdict": {"fail"}, "reviewer": {"ann"},
		"note": {"the <total> is off by one"}, "token": {"xyzzy"}}
	req := httptest.NewRequest("POST", "/run/run-a/review", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body := rec.Body.String()
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("review with a wrong token = %d, want 401", rec.Code)
	}
	for _, want := range []string{`id="error"`, "401 Unauthorized: the review token is missing or wrong",
		`value="the &lt;total&gt; is off by one"`, `value="ann"`, `value="fail" checked`, "data-token-refused"} {
		if !strings.Contains(body, want) {
			t.Errorf("the refused review's page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "xyzzy") {
		t.Error("the refused page gives the token back")
	}
	form.Set("token", "tok")
	if code := post(t, h, "/run/run-a/review", form, ""); code != http.StatusSeeOther {
		t.Fatalf("review = %d", code)
	}
	// run-a's episodes are sort-rows (now reviewed) and write-note.
	_, body = get(t, h, "/run/run-a/episode?task=sort-rows&repeat=0")
	if !strings.Contains(body, `<p id="next-unreviewed"><a href="/run/run-a/episode?repeat=0&amp;task=write-note">`) {
		t.Errorf("no link to the next unreviewed episode:\n%s", body)
	}
	_, body = get(t, h, "/run/run-a/episode?task=write-note&repeat=0")
	if !strings.Contains(body, "No other episode of this run awaits review.") {
		t.Errorf("write-note's page should say every other episode is reviewed:\n%s", body)
	}
	_, js := get(t, h, "/static/viewer.js")
	if !strings.Contains(js, "localStorage") || !strings.Contains(js, "proctor.token") {
		t.Error("viewer.js does not remember the reviewer and token")
	}
}

// The leaderboard and the cost plot show the mean cost of an episode,
// not the run's total, which the run page keeps; time per episode leaves
// out the reset and setup, which the run page shows apart.
func TestPerEpisodeCostAndTime(t *testing.T) {
	root := twoRuns(t)
	st, err := store.Open(root + "/run-a")
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := st.Results()
	for _, r := range rs {
		r.Setup = 10 * time.Second
		if err := st.SaveResult(r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	h := (&Server{Root: root}).Handler()
	// run-a: write-note 3 steps and sort-rows 5, at $0.002 and 0.8 s a
	// step: $0.008 and 3.2 s per episode, $0.016 in all.
	_, body := get(t, h, "/?q=run-a")
	for _, want := range []string{">Cost / ep.</a>", `<td class="n">$0.0080</td>`, `<td class="n">3.2s</td>`, "mean cost per episode (USD)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the leaderboard lacks %q", want)
		}
	}
	if strings.Contains(body, "$0.0160") || strings.Contains(body, "13.2s") {
		t.Error("the leaderboard shows the total cost, or counts the setup in the time per episode")
	}
	_, body = get(t, h, "/run/run-a")
	for _, want := range []string{`<dd id="cost-per-episode">$0.0080</dd>`, `<dd id="total-cost">$0.0160</dd>`,
		`<dd id="time-per-episode">3.2s <small>(and 10s of reset and setup)</small></dd>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	_, body = get(t, h, "/run/run-a/episode?task=sort-rows&repeat=0")
	if !strings.Contains(body, `· 5 steps · 4s <small id="setup-time">(after 10s of reset and setup)</small> ·`) {
		t.Error("the episode page does not show the setup apart from the episode's time")
	}
}

// The set-of-mark table the agent was shown is listed beside the step's
// tree, escaped; a step without marks has none.
func TestEpisodeMarksTable(t *testing.T) {
	root := twoRuns(t)
	st, err := store.Open(root + "/run-a")
	if err != nil {
		t.Fatal(err)
	}
	steps, err := st.Turns("sort-rows", 0)
	if err != nil {
		t.Fatal(err)
	}
	steps[0].Marks = json.RawMessage(`[{"tag":1,"app":"mousepad","role":"push button","name":"Save","box":{"x":10,"y":20,"w":80,"h":24}},` +
		`{"tag":2,"role":"text","text":"<out.txt>","box":{"x":0,"y":50,"w":300,"h":20}}]`)
	if err := st.SaveTurn(steps[0]); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, body := get(t, (&Server{Root: root}).Handler(), "/run/run-a/episode?task=sort-rows&repeat=0")
	for _, want := range []string{`<summary>Set-of-mark table <small>(2 marks)</small></summary>`,
		`<tr><td class="n">1</td><td>push button</td><td>Save</td><td>mousepad</td><td class="n">10, 20, 80×24</td></tr>`,
		`<tr><td class="n">2</td><td>text</td><td>&lt;out.txt&gt;</td><td></td><td class="n">0, 50, 300×20</td></tr>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the episode page lacks %q:\n%s", want, body[strings.Index(body, "the harness"):][:600])
		}
	}
	if n := strings.Count(body, `<details class="marks"`); n != 1 {
		t.Errorf("%d mark tables, want 1 (only step 1 has marks)", n)
	}
}

// TestValidationIsNotRanked: the folder proctor validate keeps (gold,
// do-nothing and wrong trajectories) is left off the leaderboard, whose
// success rate would mean nothing; its own page still opens.
func TestValidationIsNotRanked(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	makeRun(t, root, "run-a", "openai", day, []episode{{"write-note", "wood", "success", 3}})
	dir := makeRun(t, root, "proof-1", "replay", day.Add(time.Hour), []episode{{"write-note", "wood", "failure", 1}})
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetRun(store.Run{ID: "proof-1", Started: day.Add(time.Hour), Harness: "test", Suite: "suites/desktop", Agent: "replay", Kind: store.RunValidation}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	h := (&Server{Root: root}).Handler()
	code, body := get(t, h, "/")
	if code != 200 || !strings.Contains(body, "run-a") || strings.Contains(body, "proof-1") {
		t.Fatalf("leaderboard (%d) should rank run-a and leave the validation proof-1 off:\n%s", code, body)
	}
	if code, _ := get(t, h, "/run/proof-1"); code != 200 {
		t.Fatalf("the validation's own page: %d", code)
	}
}

// TestErrorsLeftOut: the leaderboard, the run page and the comparison
// leave infrastructure errors out of every rate and count them in a
// column of their own; a run that decided nothing shows n/a, not 0 %.
func TestErrorsLeftOut(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	makeRun(t, root, "run-down", "http", day, []episode{{"write-note", "wood", "error", 0}, {"sort-rows", "bronze", "error", 0}})
	makeRun(t, root, "run-mixed", "http", day.Add(time.Hour), []episode{{"write-note", "wood", "success", 1}, {"sort-rows", "bronze", "error", 0}})
	h := (&Server{Root: root}).Handler()
	code, body := get(t, h, "/")
	if code != 200 {
		t.Fatalf("leaderboard = %d", code)
	}
	row := func(id string) string {
		at := strings.Index(body, `value="`+id+`"`)
		if at < 0 {
			t.Fatalf("no row for %s:\n%s", id, body)
		}
		return body[at : at+strings.Index(body[at:], "</tr>")]
	}
	for _, tc := range []struct {
		id   string
		want []string
	}{
		{"run-down", []string{`<td class="n errors">2</td>`, `<td class="n strong">n/a</td>`, `<td class="n">n/a</td>`, "n/a <small>0/0</small> <small>1 err.</small>"}},
		{"run-mixed", []string{`<td class="n errors">1</td>`, `<td class="n strong">100.0%</td>`, "100% <small>1/1</small>", "n/a <small>0/0</small> <small>1 err.</small>"}},
	} {
		r := row(tc.id)
		for _, w := range tc.want {
			if !strings.Contains(r, w) {
				t.Errorf("%s's leaderboard row lacks %q:\n%s", tc.id, w, r)
			}
		}
		if tc.id == "run-down" && strings.Contains(r, "%") {
			t.Errorf("%s's row gives a rate though nothing was decided:\n%s", tc.id, r)
		}
	}
	for _, w := range []string{">Errors</a>", ">Env.</a>", `<td class="env">-</td>`} {
		if !strings.Contains(body, w) {
			t.Errorf("the leaderboard lacks %q", w)
		}
	}
	_, body = get(t, h, "/run/run-down")
	for _, w := range []string{`<dd id="run-success">n/a of 0 <small>(2 infrastructure errors left out, of 2)</small>`, `<dd id="run-errors">2</dd>`, `<dd id="run-env">-</dd>`} {
		if !strings.Contains(body, w) {
			t.Errorf("the run page lacks %q", w)
		}
	}
	_, body = get(t, h, "/compare?run=run-down&run=run-mixed")
	for _, w := range []string{"0/0 shared · n/a · 2 errors left out", "1/1 shared · 100.0% · 1 error left out", "0 of 2 episodes flipped"} {
		if !strings.Contains(body, w) {
			t.Errorf("the comparison lacks %q:\n%s", w, body)
		}
	}
}

// The harness's turn after the agent (a task's after section) shows as
// the harness's, with its steps, not as a model's output.
func TestEpisodeHarnessTurn(t *testing.T) {
	root := twoRuns(t)
	st, err := store.Open(root + "/run-a")
	if err != nil {
		t.Fatal(err)
	}
	steps, err := st.Turns("sort-rows", 0)
	if err != nil {
		t.Fatal(err)
	}
	last := steps[len(steps)-1].Index
	err = st.SaveTurn(store.Turn{Task: "sort-rows", Index: last + 1, By: "harness", Raw: `after the agent: keys ctrl+s; close "data.txt"`,
		Steps: json.RawMessage(`[{"keys":"ctrl+s"},{"close":{"title":"data.txt"}}]`), EnvError: `after[1] close: no window's title holds "data.txt"`})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, body := get(t, (&Server{Root: root}).Handler(), "/run/run-a/episode?task=sort-rows&repeat=0")
	for _, want := range []string{
		fmt.Sprintf("<h3>Step %d: the harness, after the agent</h3>", last+1),
		`<pre class="raw">after the agent: keys ctrl&#43;s; close &#34;data.txt&#34;</pre>`,
		`environment: after[1] close: no window&#39;s title holds &#34;data.txt&#34;`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the episode page lacks %q:\n%s", want, body[strings.Index(body, "the harness"):][:600])
		}
	}
	if n := strings.Count(body, "<h4>Model output</h4>"); n != len(steps) {
		t.Errorf("%d model outputs for %d agent steps", n, len(steps))
	}
}
