package viewer

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/proctor-eval/proctor/store"
)

// wideRuns writes three runs whose episodes span every level, eight apps
// and four domains: the leaderboard by all dimensions has 17 breakdown
// columns.
func wideRuns(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	levels := []string{"paper", "wood", "bronze", "silver", "gold"}
	apps := []string{"mousepad", "libreoffice-calc", "libreoffice-writer", "gimp", "chromium", "thunderbird", "kcalc", "xterm"}
	domains := []string{"office", "graphics", "web", "system"}
	for i, id := range []string{"run-with-a-rather-long-name-a", "run-b", "run-c"} {
		var eps []episode
		for j := range 16 {
			outcome := "failure"
			if (i+j)%3 == 0 {
				outcome = "success"
			}
			eps = append(eps, episode{fmt.Sprintf("task-%02d", j), levels[j%5], outcome, 1})
		}
		dir := makeRun(t, root, id, "agent-"+id, day.Add(time.Duration(i)*time.Hour), eps)
		st, err := store.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := st.Results()
		for j, r := range rs {
			r.Apps, r.Domain = []string{apps[j%len(apps)]}, domains[j%len(domains)]
			if err := st.SaveResult(r); err != nil {
				t.Fatal(err)
			}
		}
		st.Close()
	}
	return root
}

// The leaderboard by every dimension stays within two screens, and its
// run column stays on screen when the table is scrolled sideways.
func TestLeaderboardByAllKeepsRunColumn(t *testing.T) {
	srv := httptest.NewServer((&Server{Root: wideRuns(t)}).Handler())
	defer srv.Close()
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/?by=all"),
		chromedp.WaitVisible(chromedp.CSS("#leaderboard")),
		snap("20-by-all"),
	); err != nil {
		t.Fatal(err)
	}
	geom, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(function () {
		var s = document.querySelector("#leaderboard").closest(".scroll");
		return [s.scrollWidth, s.clientWidth, window.innerWidth];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if geom[0] > 2*geom[2] {
		t.Errorf("the table is %.0f pixels wide in a window of %.0f: more than two screens", geom[0], geom[2])
	}
	if geom[0] <= geom[1] {
		t.Fatalf("the table (%.0f) fits its box (%.0f): nothing to scroll; the test needs a wider table", geom[0], geom[1])
	}
	// Scroll to the far right: the link of the first run is still where it
	// can be seen and clicked, not under another cell.
	seen, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(function () {
		var s = document.querySelector("#leaderboard").closest(".scroll");
		s.scrollLeft = s.scrollWidth;
		var box = s.getBoundingClientRect();
		var a = document.querySelector("#leaderboard tbody tr:first-child .run-link");
		var r = a.getBoundingClientRect();
		var top = document.elementFromPoint(r.left + 4, r.top + r.height / 2);
		return [s.scrollLeft, r.left - box.left, box.right - r.right, top === a || a.contains(top) ? 1 : 0];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, snap("21-by-all-scrolled")); err != nil {
		t.Fatal(err)
	}
	if seen[0] < 100 {
		t.Fatalf("the table scrolled only %.0f pixels", seen[0])
	}
	if seen[1] < 0 || seen[2] < 0 || seen[3] != 1 {
		t.Errorf("scrolled %.0f pixels right, the run link is %.0f from the box's left and %.0f from its right, on top: %v; want it inside and on top",
			seen[0], seen[1], seen[2], seen[3] == 1)
	}
}

// pagesRoot writes the runs the page tour needs: run-a and run-b with
// different task sets, a review with a failure category, a step that
// could not be parsed, a set-of-mark table, a recorded configuration
// and a receipt, run-l still in progress, and run-r with three repeats.
func pagesRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	a := makeRun(t, root, "run-a", "openai", day, []episode{
		{"write-note", "wood", "success", 3}, {"sort-rows", "bronze", "failure", 5}, {"only-a", "wood", "success", 2}})
	makeRun(t, root, "run-b", "anthropic", day.Add(time.Hour), []episode{
		{"write-note", "wood", "failure", 2}, {"sort-rows", "bronze", "success", 4}, {"only-b", "silver", "failure", 2}})
	st, err := store.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Run()
	info.SuiteHash = "5a1c0ffee"
	info.Config = json.RawMessage(`{"model":{"model":"gpt-5","format":"pyautogui","temperature":0.5}}`)
	if err := st.SetRun(info); err != nil {
		t.Fatal(err)
	}
	steps, _ := st.Turns("sort-rows", 0)
	steps[0].Marks = json.RawMessage(`[{"tag":1,"app":"mousepad","role":"push button","name":"Save","box":{"x":10,"y":20,"w":80,"h":24}},` +
		`{"tag":2,"role":"text","text":"out.txt","box":{"x":0,"y":50,"w":300,"h":20}}]`)
	steps[1].Actions, steps[1].ParseError = json.RawMessage("null"), "no Action: line in the reply"
	for _, s := range steps[:2] {
		if err := st.SaveTurn(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, rv := range []store.Review{{Task: "write-note", Pass: false, Category: "checker-wrong", Reviewer: "ann", At: day},
		{Task: "sort-rows", Pass: false, Category: "grounding-miss", Reviewer: "ann", At: day}} {
		if err := st.SaveReview(rv); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	l := makeRun(t, root, "run-l", "openai", day.Add(2*time.Hour), []episode{{"write-note", "wood", "success", 2}})
	if st, err = store.OpenRun(l); err != nil {
		t.Fatal(err)
	}
	info, _ = st.Run()
	info.Planned, info.Parallel = 3, 1
	if err := st.SetRun(info); err != nil {
		t.Fatal(err)
	}
	ls, _ := st.Turns("write-note", 0)
	ls[0].Task, ls[0].Thought = "sort-rows", "opening the sheet"
	if err := st.SaveTurn(ls[0]); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// run-r: three repeats of three tasks, one of them flaky.
	rr := makeRun(t, root, "run-r", "anthropic", day.Add(3*time.Hour), []episode{
		{"write-note", "wood", "success", 2}, {"sort-rows", "bronze", "failure", 3}, {"only-a", "wood", "success", 2}})
	if st, err = store.OpenRun(rr); err != nil {
		t.Fatal(err)
	}
	rs, _ := st.Results()
	for rep, flip := range []string{"failure", "success"} {
		for _, r := range rs {
			r.Repeat = rep + 1
			if r.Task == "write-note" {
				r.Outcome = flip
			}
			if err := st.SaveResult(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	st.Close()
	// run-a has a receipt.
	if st, err = store.OpenRun(a); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveReceipt(store.Receipt{Harness: "v1.0.0", Suite: "suites/desktop", SuiteHash: "5a1c0ffee", Agent: "openai", Model: "gpt-5", Obs: "som",
		Tasks: []store.TaskReceipt{{ID: "write-note", File: "write-note.yaml", FileHash: "ab12cd34ef56ab12", Hash: "0123456789abcdef", Resolution: "1280x800",
			Assets: []store.AssetReceipt{{Name: "note.txt", Hash: "fedcba9876543210"}}}},
		Packages: map[string]string{"xvfb": "2:21.1.7-3", "mousepad": "0.5.10-2", "chromium": ""},
		Places:   []store.PlaceReceipt{{Name: "local 1", Types: []string{"x11", "browser"}}},
		Seen:     []store.SeenEnv{{Place: "local 1", Kind: "x11", Screen: "1280x800", Display: ":99", Versions: map[string]string{"x11": "X.Org 21.1.7"}}},
		Machine:  store.Machine{OS: "linux", Arch: "amd64", Kernel: "6.1.0", Cores: 16, Memory: 64 << 30, Go: "go1.26.0"},
		Repeat:   1, Parallel: 2, Started: day, Finished: day.Add(20 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	return root
}

// Every kind of page in real Chromium, each saved as a PNG: the live page,
// an error page, a comparison of runs of different tasks, an empty filter
// result, an episode with a parse error and a set-of-mark table, the
// review categories, the run's configuration and the step charts, the
// flip rate and pass^k of runs with repeats, and a run's receipt.
func TestPagesInChromium(t *testing.T) {
	srv := httptest.NewServer((&Server{Root: pagesRoot(t)}).Handler())
	defer srv.Close()
	ctx := browser(t)
	tests := []struct {
		name, target, wait string
		do                 []chromedp.Action[chromedp.Void]
		check              string // a script that returns "" when the page is right, else what is wrong
	}{
		{name: "30-live", target: "/run/run-l/live", wait: "#in-flight", check: `
			document.querySelector("#progress").textContent.includes("1 of 3 episodes recorded") &&
			document.querySelector("#in-flight").textContent.includes("opening the sheet") &&
			document.querySelector("#in-flight img").complete ? "" : document.querySelector("main").textContent`},
		{name: "31-error-bad-repeat", target: "/run/run-a/episode?task=sort-rows&repeat=first", wait: "#error", check: `
			document.querySelector("#error").textContent.startsWith("400") &&
			document.querySelector(".error-message").textContent.includes("the valid repeats of task") ? "" : document.querySelector("main").textContent`},
		{name: "32-compare-different-tasks", target: "/compare?run=run-a&run=run-b", wait: "#comparison", check: `
			document.querySelector("#flip-summary").textContent.startsWith("2 of 2 episodes flipped") &&
			document.querySelector("#not-shared").textContent.includes("only in run-a: 1 task; only in run-b: 1 task") &&
			document.querySelector("main").textContent.includes("only-b") ? "" : document.querySelector("main").textContent`},
		{name: "33-empty-filter", target: "/?q=nobody", wait: "#no-match", check: `
			!document.body.textContent.includes("No runs here yet") && document.querySelector("#clear-filter") ? "" : document.querySelector("main").textContent`},
		{name: "34-episode-parse-error-marks", target: "/run/run-a/episode?task=sort-rows&repeat=0", wait: "#step-1 details.marks table", check: `
			document.querySelectorAll("#step-1 table.marks tbody tr").length === 2 &&
			document.querySelector("#step-1 table.marks").getBoundingClientRect().height > 0 ? "" : "no mark table of two rows on screen"`},
		{name: "35-episode-parse-error", target: "/run/run-a/episode?task=sort-rows&repeat=0", wait: "#step-1",
			do: []chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS("#next")), chromedp.WaitVisible(chromedp.CSS("#step-2 pre.actions.fail"))}, check: `
			document.querySelector("#step-2 pre.actions.fail").textContent.includes("no Action: line in the reply") ? "" : document.querySelector("#step-2").textContent`},
		{name: "36-review-categories", target: "/run/run-a", wait: "#categories", check: `
			document.querySelector("#categories").textContent === "grounding-miss 1, checker-wrong 1" &&
			document.querySelector("#checks-passed-reviewer-failed").textContent === "1" ? "" : document.querySelector("#agreement").textContent`},
		{name: "37-run-configuration", target: "/run/run-a", wait: "#config",
			do: []chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS("#config summary")), chromedp.WaitVisible(chromedp.CSS("#config table"))}, check: `
			document.querySelector("#config").textContent.includes("pyautogui") &&
			document.querySelector("#config").textContent.includes("5a1c0ffee") ? "" : document.querySelector("#config").textContent`},
		{name: "39-leaderboard-repeats", target: "/?sort=flips", wait: "#leaderboard", check: `
			(function () {
				var rows = [...document.querySelectorAll("#leaderboard tbody tr")];
				var r = rows.find(tr => tr.querySelector(".run-link").textContent === "run-r");
				var a = rows.find(tr => tr.querySelector(".run-link").textContent === "run-a");
				var heads = [...document.querySelectorAll("#leaderboard thead th")].map(th => th.textContent.trim());
				if (!heads.some(h => h.startsWith("Flips")) || !heads.some(h => h.startsWith("pass^k"))) return "no Flips and pass^k columns: " + heads.join(" | ");
				if (rows[0] !== r) return "sorted by flips, run-r is not first";
				if (r.querySelector(".flips").textContent !== "33.3%") return "run-r's flip rate: " + r.querySelector(".flips").textContent;
				if (r.querySelector(".passk").textContent !== "33.3% k=3") return "run-r's pass^k: " + r.querySelector(".passk").textContent;
				return a.querySelector(".flips").textContent === "–" && a.querySelector(".passk").textContent === "–" ? "" : "run-a, without repeats, shows figures over repeats";
			})()`},
		{name: "40-run-repeats", target: "/run/run-r", wait: "#run-repeats", check: `
			document.querySelector("#run-repeats").textContent.startsWith("flip rate 33.3% (1 of 3 tasks tried twice or more), pass^3 33.3%") &&
			document.querySelector("#flaky").textContent === "write-note" ? "" : document.querySelector("#run-repeats").textContent`},
		{name: "41-run-receipt", target: "/run/run-a", wait: "#receipt",
			do: []chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS("#receipt summary")), chromedp.WaitVisible(chromedp.CSS("#receipt pre")),
				chromedp.ScrollIntoView(chromedp.CSS("#receipt"))}, check: `
			(function () {
				var t = document.querySelector("#receipt pre").textContent;
				if (document.querySelector("#receipt-line").textContent !== "1 task hashed, 3 packages, 16 cores") return document.querySelector("#receipt-line").textContent;
				return ["Receipt of run run-a", "write-note.yaml", "ab12cd34ef56", "note.txt", "fedcba987654", "mousepad  0.5.10-2", "chromium  not installed",
					"local 1  x11   1280x800", "16 cores, 64.0 GiB memory"].every(s => t.includes(s)) &&
					document.querySelector("#receipt pre").getBoundingClientRect().height > 200 ? "" : t;
			})()`},
		{name: "42-run-without-receipt", target: "/run/run-b", wait: "#receipt", check: `
			document.querySelector("#receipt").textContent === "No receipt: the run was made before receipts were kept." &&
			!document.querySelector("#run-repeats") ? "" : document.querySelector("#receipt").textContent`},
		{name: "38-step-charts", target: "/run/run-a/episode?task=sort-rows&repeat=0", wait: "#step-charts",
			do: []chromedp.Action[chromedp.Void]{chromedp.ScrollIntoView(chromedp.CSS("#step-charts"))}, check: `
			["Time per step", "Tokens per step", "Cost per step"].every(l => {
				var s = document.querySelector('#step-charts svg[aria-label="' + l + '"]');
				return s && s.getBoundingClientRect().width > 200 && s.querySelectorAll("rect.bar").length >= 5;
			}) ? "" : "the three step charts are not all drawn"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acts := []chromedp.Action[chromedp.Void]{chromedp.Navigate(srv.URL + tc.target), chromedp.WaitVisible(chromedp.CSS(tc.wait))}
			acts = append(acts, tc.do...)
			acts = append(acts, snap(tc.name))
			if err := chromedp.Do(ctx, acts...); err != nil {
				t.Fatal(err)
			}
			got, err := chromedp.Run(ctx, chromedp.Evaluate[string](tc.check))
			if err != nil {
				t.Fatal(err)
			}
			if got != "" {
				t.Errorf("%s: %s", tc.target, got)
			}
		})
	}
}
