package viewer

import (
	"archive/zip"
	"bytes"
	"encoding/json"
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
		{"/?by=all", 200, []string{`<th class="group">level: wood</th>`, `<th class="group">app: mousepad</th>`, `<th class="group">domain: `}},
		{"/?sort=cost&desc=0", 200, []string{"▲"}},
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
	if !strings.Contains(body, "1 episodes reviewed, 1 disagree") || !strings.Contains(body, "100.0%") {
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
	var shots int
	var traj struct {
		Steps []store.Step `json:"steps"`
	}
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "shots/") {
			shots++
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
	if len(traj.Steps) != 5 || shots != 3 {
		t.Errorf("zip holds %d steps and %d screenshots, want 5 and 3 (each stored once)", len(traj.Steps), shots)
	}
}

func TestOverlay(t *testing.T) {
	mk := func(acts []action.Action, done string) store.Step {
		b, _ := json.Marshal(acts)
		return store.Step{Actions: b, Done: json.RawMessage(done)}
	}
	tests := []struct {
		name  string
		step  store.Step
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
