package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/store"
)

func results() []store.Result {
	mk := func(task string, rep int, level string, w float64, outcome string, cost float64) store.Result {
		return store.Result{Task: task, Repeat: rep, Level: level, Weight: w, Kind: "state", Apps: []string{"mousepad"},
			Outcome: outcome, Steps: 4, Duration: 2 * time.Second, InputTokens: 1000, OutputTokens: 100, Cost: cost}
	}
	return []store.Result{
		mk("a", 0, "wood", 1, "success", 0.01), mk("b", 0, "gold", 8, "failure", 0.02),
		mk("a", 1, "wood", 1, "success", 0.01), mk("b", 1, "gold", 8, "success", 0.02),
	}
}

func TestMakeAndWrite(t *testing.T) {
	r := Make("runs/x", store.Run{ID: "x", Agent: "openai", ObsMode: "som"}, results())
	if r.Summary.N != 4 || r.Summary.Passed != 3 || r.Means.TotalCost != 0.06 || r.Means.Steps != 4 {
		t.Fatalf("summary %+v means %+v", r.Summary, r.Means)
	}
	// Repeat 0 passes a (weight 1) of 1+8; repeat 1 passes both.
	if len(r.Repeats.Runs) != 2 || r.Repeats.Weighted.Mean != (1.0/9+1)/2 {
		t.Fatalf("repeats %+v", r.Repeats)
	}
	other := Make("runs/y", store.Run{ID: "y", Agent: "noop"}, results()[:1])
	tests := []struct {
		format string
		want   []string
	}{
		{"text", []string{"success rate", "75.0%", "failure", "1 (25.0%)", "By level", "gold", "1/2 50.0%", "success over repeats", "±"}},
		{"markdown", []string{"| metric | x | y |", "| success rate | 75.0% | 100.0% |", "### By app"}},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		if err := Write(&b, []*Report{r, other}, tc.format); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s report lacks %q:\n%s", tc.format, w, b.String())
			}
		}
	}
	var b bytes.Buffer
	if err := Write(&b, []*Report{r}, "json"); err != nil {
		t.Fatal(err)
	}
	var back []Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back[0].Summary.Passed != 3 {
		t.Fatalf("json: %v", err)
	}
	if err := Write(&b, []*Report{r}, "pdf"); err == nil {
		t.Fatal("an unknown format was accepted")
	}
}

// TestLevelsInOrder: the text and Markdown breakdowns list levels from
// paper to gold, not by name.
func TestLevelsInOrder(t *testing.T) {
	var rs []store.Result
	for i, l := range []string{"gold", "bronze", "paper", "wood", "silver"} {
		rs = append(rs, store.Result{Task: l, Repeat: i, Level: l, Weight: 1, Outcome: "success"})
	}
	r := Make("runs/x", store.Run{ID: "x"}, rs)
	for _, format := range []string{"text", "markdown"} {
		var b bytes.Buffer
		if err := Write(&b, []*Report{r}, format); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		at := strings.Index(out, "By level")
		last := -1
		for _, l := range []string{"paper", "wood", "bronze", "silver", "gold"} {
			i := strings.Index(out[at:], l)
			if i < 0 || i < last {
				t.Fatalf("%s: %s out of order in:\n%s", format, l, out[at:])
			}
			last = i
		}
	}
}

func TestEnvironments(t *testing.T) {
	for _, tc := range []struct {
		envs []string
		want string
	}{
		{nil, "-"},
		{[]string{"browser", "browser"}, "browser"},
		{[]string{"x11", "browser", ""}, "-, browser, x11"},
	} {
		r := &Report{}
		for _, e := range tc.envs {
			r.Results = append(r.Results, store.Result{Env: e})
		}
		if got := r.Environments(); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.envs, got, tc.want)
		}
	}
}

// TestDifferentTasks: reports side by side say when their runs hold
// different tasks, and how many each holds.
func TestDifferentTasks(t *testing.T) {
	run := func(id string, tasks ...string) *Report {
		r := &Report{Run: store.Run{ID: id}}
		for _, task := range tasks {
			r.Results = append(r.Results, store.Result{Task: task, Outcome: "success"})
		}
		return r
	}
	for _, tc := range []struct {
		name string
		rs   []*Report
		want string
	}{
		{"one run", []*Report{run("a", "t1", "t2")}, ""},
		{"the same tasks, repeated differently", []*Report{run("a", "t1", "t2"), run("b", "t2", "t1", "t1")}, ""},
		{"a subset", []*Report{run("dom", "t1", "t2", "t3"), run("pixels", "t1")}, "the runs hold different tasks (dom 3, pixels 1; 1 in common), so their rates compare different sets"},
		{"three runs", []*Report{run("a", "t1", "t2"), run("b", "t2", "t3"), run("c", "t2")}, "the runs hold different tasks (a 2, b 2, c 1; 1 in common), so their rates compare different sets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := differentTasks(tc.rs); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
			var b strings.Builder
			if err := Write(&b, tc.rs, "text"); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(b.String(), "Note: the runs hold different tasks") != (tc.want != "") {
				t.Errorf("the text report's note:\n%s", b.String())
			}
		})
	}
}

// TestPersonas gives SCUBA's metrics per persona: milestone score,
// success, time, steps, tokens and cost; a run without personas has no
// such table.
func TestPersonas(t *testing.T) {
	mk := func(task, persona, outcome string, milestone float64, steps int, d time.Duration, in, out int, cost float64) store.Result {
		return store.Result{Task: task, Level: "bronze", Weight: 2, Kind: "state", Persona: persona, Outcome: outcome,
			Milestone: milestone, Steps: steps, Duration: d, InputTokens: in, OutputTokens: out, Cost: cost}
	}
	rs := []store.Result{
		mk("lead-convert", "sales-rep", "success", 1, 6, 30*time.Second, 9000, 300, 0.05),
		mk("quote-lines", "sales-rep", "failure", 0.5, 10, 50*time.Second, 15000, 500, 0.09),
		mk("ticket-resolve", "service-agent", "success", 1, 4, 20*time.Second, 6000, 200, 0.03),
		mk("calc", "", "failure", 0, 2, 10*time.Second, 1000, 100, 0.01),
	}
	r := Make("runs/x", store.Run{ID: "x", Agent: "openai"}, rs)
	if len(r.Personas) != 3 || r.Personas[0].Name != "sales-rep" || r.Personas[1].Name != "service-agent" || r.Personas[2].Name != "-" {
		t.Fatalf("personas %+v", r.Personas)
	}
	s := r.Personas[0]
	if s.Summary.N != 2 || s.Summary.Passed != 1 || s.Summary.MilestoneAvg != 0.75 || s.Means.Duration != 40*time.Second ||
		s.Means.Steps != 8 || s.Means.InputTokens != 12000 || s.Means.OutputTokens != 400 || s.Means.TotalCost != 0.14 {
		t.Fatalf("sales-rep %+v", s)
	}
	var b bytes.Buffer
	if err := Write(&b, []*Report{r}, "text"); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"By persona", "milestone score", "sales-rep", "1/2 50.0%", "0.750", "40s", "8.0", "12000 / 400", "$0.0700 / $0.1400",
		"service-agent", "1/1 100.0%"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("the report lacks %q:\n%s", w, b.String())
		}
	}
	b.Reset()
	if err := Write(&b, []*Report{Make("runs/y", store.Run{ID: "y"}, results())}, "text"); err != nil || strings.Contains(b.String(), "By persona") {
		t.Fatalf("a run without personas: %v\n%s", err, b.String())
	}
}

// The mean time per episode is the agent's: the reset and setup before
// each episode (Setup) are averaged apart; runs without Setup have none.
func TestMeansKeepSetupApart(t *testing.T) {
	rs := results()
	for i := range rs {
		rs[i].Setup = time.Duration(i+1) * time.Second // 1 to 4 s: 2.5 s on average
	}
	tests := []struct {
		name      string
		rs        []store.Result
		took, set time.Duration
	}{
		{"with setup", rs, 2 * time.Second, 2500 * time.Millisecond},
		{"an older run", results(), 2 * time.Second, 0},
	}
	for _, tc := range tests {
		m := Make("runs/x", store.Run{ID: "x"}, tc.rs).Means
		if m.Duration != tc.took || m.Setup != tc.set {
			t.Errorf("%s: time per episode %s, setup %s; want %s and %s", tc.name, m.Duration, m.Setup, tc.took, tc.set)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update to rewrite it):\n%s", path, got)
	}
}

// TestErrorsLeftOut: infrastructure errors are never the agent's
// failure. A run whose agent server answers 500 every time decides
// nothing (n/a, not 0 %); a mixed run's rates are over the decided
// episodes, with the errors counted beside them.
func TestErrorsLeftOut(t *testing.T) {
	mk := func(task string, rep int, level string, w float64, outcome string, milestone float64) store.Result {
		return store.Result{Task: task, Repeat: rep, Level: level, Weight: w, Apps: []string{"mousepad"}, Kind: "state",
			Env: "x11", Outcome: outcome, Milestone: milestone, Steps: 3, Duration: time.Second}
	}
	e500 := func(r store.Result, step int) store.Result {
		r.Reason = fmt.Sprintf("step %d: agent: agent at http://127.0.0.1:9/step: 500 Internal Server Error: boom", step)
		return r
	}
	down := Make("runs/down", store.Run{ID: "down", Agent: "http"}, []store.Result{
		e500(mk("a", 0, "wood", 1, "error", 0), 1), e500(mk("b", 0, "gold", 8, "error", 0), 3), e500(mk("a", 1, "wood", 1, "error", 0), 1)})
	mixed := Make("runs/mixed", store.Run{ID: "mixed", Agent: "http"}, []store.Result{
		mk("a", 0, "wood", 1, "success", 1), mk("b", 0, "gold", 8, "error", 0), mk("c", 0, "gold", 8, "failure", 0.5),
		mk("a", 1, "wood", 1, "error", 0)})
	if s := down.Summary; s.HasRates() || s.Errors != 3 || s.Decided != 0 {
		t.Fatalf("all errors: %+v", s)
	}
	// Decided: a (wood, success) and c (gold, failure).
	if s := mixed.Summary; s.Errors != 2 || s.Decided != 2 || s.SuccessRate != 0.5 || s.Weighted != 1.0/9 || s.MilestoneAvg != 0.75 {
		t.Fatalf("mixed: %+v", s)
	}
	for _, format := range []string{"text", "markdown"} {
		var b bytes.Buffer
		if err := Write(&b, []*Report{down, mixed}, format); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, w := range []string{"errors (left out)", "n/a", "50.0%", "0/0 n/a +2 errors", "0/1 0.0% +1 error",
			"Why episodes went wrong (down)", "agent: agent at http://127.0.0.1:9/step: 500 Internal Server Error: boom"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s report lacks %q:\n%s", format, w, out)
			}
		}
		for _, re := range []string{`success rate\s*\|?\s*n/a\s*\|?\s*50\.0%`, `weighted score\s*\|?\s*n/a\s*\|?\s*11\.1%`,
			`milestone average\s*\|?\s*n/a\s*\|?\s*0\.750`, `errors \(left out\)\s*\|?\s*3\s*\|?\s*2`} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("%s report does not match %s:\n%s", format, re, out)
			}
		}
		golden(t, "errors."+format, out)
	}
}

// TestAgentProblems: a run of malformed replies explains itself: the
// replies not usable and actions refused are counted, and their reasons
// listed, grouped across steps and episodes, most frequent first.
func TestAgentProblems(t *testing.T) {
	mk := func(task string, rep, unparsed, refused int, problems ...string) store.Result {
		return store.Result{Task: task, Repeat: rep, Level: "wood", Weight: 1, Kind: "state", Outcome: "uncompleted",
			Reason: "the step budget of 5 steps was used up", Steps: 5, Unparsed: unparsed, Refused: refused, Problems: problems}
	}
	r := Make("runs/bad", store.Run{ID: "bad", Agent: "http"}, []store.Result{
		mk("a", 0, 5, 0, "step 1: reply not usable: no action found", "step 2: reply not usable: no action found", "step 3: reply not usable: no action found"),
		mk("b", 0, 4, 1, "step 1: reply not usable: no action found", "step 2: refused: action 1 (click (5000,5)): the point is off the screen (1280x800)",
			"step 3: reply not usable: unknown key \"Hyperr\""),
		mk("c", 0, 0, 0),
	})
	if r.Agent != (AgentTotals{Unparsed: 9, Refused: 1, Episodes: 2}) {
		t.Fatalf("totals %+v", r.Agent)
	}
	want := []Problem{
		{Kind: "reply", Reason: "no action found", Count: 4, Episodes: 2, First: "a#0"},
		{Kind: "refused", Reason: "action 1 (click (5000,5)): the point is off the screen (1280x800)", Count: 1, Episodes: 1, First: "b#0"},
		{Kind: "reply", Reason: `unknown key "Hyperr"`, Count: 1, Episodes: 1, First: "b#0"},
	}
	if !reflect.DeepEqual(r.Problems, want) {
		t.Fatalf("problems\n%+v\nwant\n%+v", r.Problems, want)
	}
	var b bytes.Buffer
	if err := Write(&b, []*Report{r}, "text"); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"replies not usable           9 (in 2 of 3 episodes)", "actions refused              1 (in 2 of 3 episodes)",
		"Why episodes went wrong (bad)", "reply not usable  4      2         a#0    no action found"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("the report lacks %q:\n%s", w, b.String())
		}
	}
}
