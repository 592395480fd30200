package viewer

import (
	"fmt"
	"image/color"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/proctor-eval/proctor/store"
)

// harnessVersion is a version as go build stamps it on a checkout with
// changes.
const harnessVersion = "v0.3.1-0.20261122090000-5a1c0ffee123+dirty"

// newcomerRuns writes what new users' first runs look like: three runs
// of every level with long model names and the harness version a build
// from a checkout has, one with personas and long reasons, and run-phone,
// a run on an Android phone (1080x2400) and a desktop (1920x1080).
func newcomerRuns(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	day := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	levels := []string{"paper", "wood", "bronze", "silver", "gold"}
	for i, id := range []string{"2026-11-25-qwen2.5-vl-72b", "2026-11-25-ui-tars-1.5-7b", "2026-11-25-gpt-5-som"} {
		var eps []episode
		for j := range 10 {
			outcome := []string{"success", "failure", "error"}[(i+j)%3]
			eps = append(eps, episode{fmt.Sprintf("enterprise-task-%02d", j), levels[j%5], outcome, 1})
		}
		dir := makeRun(t, root, id, "openai-compatible", day.Add(time.Duration(i)*time.Hour), eps)
		st, err := store.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		info, _ := st.Run()
		info.Harness, info.Model, info.ObsMode = harnessVersion, "Qwen/Qwen2.5-VL-72B-Instruct-AWQ", "screenshot+a11y"
		if err := st.SetRun(info); err != nil {
			t.Fatal(err)
		}
		rs, _ := st.Results()
		for j, r := range rs {
			r.Env, r.Persona = []string{"x11", "browser"}[j%2], []string{"hr-manager", "new-employee", "it-admin"}[j%3]
			r.Apps = []string{[]string{"odoo", "rocketchat", "nextcloud-files"}[j%3]}
			r.Reason = "exact on sql row SELECT state FROM hr_leave WHERE employee_id = 7: value \"draft\" is not \"validate\""
			if err := st.SaveResult(r); err != nil {
				t.Fatal(err)
			}
		}
		st.Close()
	}
	dir := makeRun(t, root, "run-phone", "ui-tars", day.Add(4*time.Hour), []episode{{"set-alarm", "wood", "success", 3}})
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, _ := st.Run()
	info.Resolution = "1920x1080, 1080x2400"
	if err := st.SetRun(info); err != nil {
		t.Fatal(err)
	}
	phone, err := st.PutShot(shotPNG(t, 1080, 2400, color.RGBA{220, 240, 220, 255}), "png")
	if err != nil {
		t.Fatal(err)
	}
	steps, _ := st.Turns("set-alarm", 0)
	for _, s := range steps {
		s.Shot = phone
		if err := st.SaveTurn(s); err != nil {
			t.Fatal(err)
		}
	}
	rs, _ := st.Results()
	rs[0].FinalShot = phone
	if err := st.SaveResult(rs[0]); err != nil {
		t.Fatal(err)
	}
	return root
}

// What new users saw go wrong, at a 1400 pixel wide window: the
// leaderboard's level columns and the run page's episodes fit the
// window, the harness version stays on one line, and an Android phone's
// tall screenshots are scaled to the window's height, their drawn
// actions over them.
func TestNewcomerLayout(t *testing.T) {
	srv := httptest.NewServer((&Server{Root: newcomerRuns(t)}).Handler())
	defer srv.Close()
	ctx := browser(t)
	// fits says "" when the table's box shows all of it within the window.
	fits := func(table string) string {
		return `(function () {
			var tb = document.querySelector("` + table + `"), s = tb.closest(".scroll") || tb.parentElement;
			var r = tb.getBoundingClientRect(), w = document.documentElement.clientWidth;
			if (s.scrollWidth > s.clientWidth + 1) return "the table is " + s.scrollWidth + " pixels wide in a box of " + s.clientWidth;
			if (r.right > w + 1) return "the table ends at " + Math.round(r.right) + " in a window of " + w;
			return "";
		})()`
	}
	// oneLine says "" when the element is on one line of text.
	oneLine := func(sel string) string {
		return `(function () {
			var e = document.querySelector("` + sel + `");
			if (!e) return "no ` + sel + `";
			var n = e.getClientRects().length, h = e.getBoundingClientRect().height, lh = parseFloat(getComputedStyle(e).lineHeight) || 21;
			return n === 1 && h < 1.6 * lh ? "" : "` + sel + ` spans " + n + " boxes, " + Math.round(h) + " pixels high: " + e.textContent;
		})()`
	}
	tests := []struct {
		name, target, wait string
		checks             []string
	}{
		{"50-leaderboard-levels", "/", "#leaderboard", []string{fits("#leaderboard"), `(function () {
			var heads = [...document.querySelectorAll("#leaderboard th.group")].map(th => th.textContent);
			if (heads.join(" ") !== "paper wood bronze silver gold") return "level columns: " + heads.join(" ");
			var last = document.querySelector("#leaderboard tbody tr:first-child td:last-child").getBoundingClientRect();
			return last.right <= document.documentElement.clientWidth ? "" : "the gold column ends at " + last.right;
		})()`, oneLine("#leaderboard tbody tr:first-child .harness")}},
		{"51-run-header", "/run/2026-11-25-qwen2.5-vl-72b", "#episodes", []string{fits("#episodes"), oneLine("#run-harness"),
			`document.querySelectorAll("#episodes td.persona").length === 10 ? "" : "no persona column"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+tc.target), chromedp.WaitVisible(chromedp.CSS(tc.wait)), snap(tc.name)); err != nil {
				t.Fatal(err)
			}
			for _, c := range tc.checks {
				got, err := chromedp.Run(ctx, chromedp.Evaluate[string](c))
				if err != nil {
					t.Fatal(err)
				}
				if got != "" {
					t.Errorf("%s: %s", tc.target, got)
				}
			}
		})
	}
	// The phone's screenshots: the step's and the last screen are within
	// the window's height, at the phone's shape, and the drawn actions
	// cover the screenshot exactly.
	t.Run("52-phone-episode", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/run/run-phone/episode?task=set-alarm&repeat=0"),
			chromedp.WaitVisible(chromedp.CSS("#step-1 .shot img")), snap("52-phone-episode")); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(function () {
			var out = [], vh = window.innerHeight;
			for (var sel of ["#step-1 .shot", "#final-screen .shot"]) {
				var img = document.querySelector(sel + " img").getBoundingClientRect();
				if (img.height > vh) out.push(sel + ": the screenshot is " + Math.round(img.height) + " pixels high in a window of " + vh);
				if (Math.abs(img.width / img.height - 1080 / 2400) > 0.02) out.push(sel + ": the screenshot is " + Math.round(img.width) + "x" + Math.round(img.height) + ", not the phone's shape");
				var svg = document.querySelector(sel + " svg.overlay");
				if (svg) {
					var o = svg.getBoundingClientRect();
					if (Math.abs(o.width - img.width) > 2 || Math.abs(o.height - img.height) > 2 || Math.abs(o.left - img.left) > 2) out.push(sel + ": the drawn actions are " + Math.round(o.width) + "x" + Math.round(o.height) + " over a screenshot of " + Math.round(img.width) + "x" + Math.round(img.height));
					if (svg.getAttribute("viewBox") !== "0 0 1080 2400") out.push(sel + ": the drawn actions' space is " + svg.getAttribute("viewBox"));
				}
			}
			return out.join("; ");
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		if got != "" {
			t.Error(got)
		}
	})
	// Side by side, each column's phone screenshot is within the window's
	// height too.
	t.Run("53-phone-side-by-side", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/side?run=run-phone&run=run-phone&task=set-alarm"),
			chromedp.WaitVisible(chromedp.CSS(".side-col .shot img")), snap("53-phone-side-by-side")); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[...document.querySelectorAll(".side-col article:not([hidden]) .shot img")].
			map(i => i.getBoundingClientRect().height)`))
		if err != nil {
			t.Fatal(err)
		}
		vh, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.innerHeight`))
		if len(got) != 2 || got[0] > vh || got[1] > vh || got[0] < 100 {
			t.Errorf("the two columns' screenshots are %v pixels high in a window of %.0f", got, vh)
		}
	})
}
