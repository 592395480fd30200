package viewer

import (
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
)

// The score plots with their intervals, a leaderboard of many runs, and
// the paired comparison and the matrix of tasks won and lost, in real
// Chromium, each saved as a PNG.
func TestIntervalsAndPairsInChromium(t *testing.T) {
	few := httptest.NewServer((&Server{Root: scoreRuns(t, 3)}).Handler())
	defer few.Close()
	many := httptest.NewServer((&Server{Root: scoreRuns(t, 12)}).Handler())
	defer many.Close()
	pairs := httptest.NewServer((&Server{Root: pairedRoot(t)}).Handler())
	defer pairs.Close()
	ctx := browser(t)
	// hover is a script that finds the plot with the label and reports
	// what a pointer over the middle of its first bar's region would
	// show: the tooltip must be the region's, on top of the drawing.
	hover := func(label, want string) string {
		return `(function () {
			var s = document.querySelector('svg.plot[aria-label="` + label + `"]');
			if (!s) return "no plot ` + label + `";
			s.scrollIntoView();
			var hits = s.querySelectorAll("rect.hit");
			if (hits.length === 0) return "no tooltips on ` + label + `";
			var b = hits[0].getBoundingClientRect();
			var el = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
			var title = el && el.querySelector("title") ? el.querySelector("title").textContent : "";
			return title.includes("` + want + `") && title.includes("(95% CI)") ? "" : "the pointer over ` + label + ` shows " + JSON.stringify(title);
		})()`
	}
	tests := []struct {
		name, base, target, wait string
		check                    string
	}{
		{"50-leaderboard-intervals", few.URL, "/", "#leaderboard", hover("Scores", "success rate")},
		{"51-leaderboard-level-intervals", few.URL, "/", "#leaderboard", hover("Success per level", "level wood: success")},
		{"52-leaderboard-many-runs", many.URL, "/", "#leaderboard", `(function () {
			var s = document.querySelector('svg.plot[aria-label="Success per level"]');
			s.scrollIntoView();
			var names = [...s.querySelectorAll("text")].filter(t => /^run-\d\d$/.test(t.textContent.trim()));
			if (names.length !== 36) return names.length + " run names on the level plot, want 12 under each of 3 levels";
			var ys = names.map(t => t.getBoundingClientRect().top).sort((a, b) => a - b);
			for (var i = 1; i < ys.length; i++) if (ys[i] - ys[i - 1] < 10) return "two run names overlap on screen";
			return s.getBoundingClientRect().height > 600 ? "" : "the level plot of 12 runs is " + s.getBoundingClientRect().height + " px high";
		})()`},
		{"53-run-plots", few.URL, "/run/run-01", "#run-plots", hover("Success per app", "app chromium: success")},
		{"54-compare-pair", pairs.URL, "/compare?run=run-a&run=run-b", "#paired", `
			document.querySelector("#paired-words").textContent.startsWith("run-b is better than run-a by 20.0 points (95% CI -40.0 to 80.0; 2 tasks won, 1 lost; p = 1.00)") &&
			document.querySelectorAll("#won-lost tbody tr").length === 3 &&
			document.querySelector("#won-lost tr.lost a").href.includes("/side?") ? "" : document.querySelector("#paired").textContent`},
		{"55-compare-matrix", pairs.URL, "/compare?run=run-a&run=run-b&run=run-c&run=run-d", "#matrix", `
			(function () {
				var cells = [...document.querySelectorAll("#matrix tbody tr")].map(tr => [...tr.querySelectorAll("td")].map(td => td.textContent));
				var want = [["–", "1 / 2", "0 / 4", "none in common"], ["2 / 1", "–", "1 / 3", "none in common"],
					["4 / 0", "3 / 1", "–", "none in common"], ["none in common", "none in common", "none in common", "–"]];
				return JSON.stringify(cells) === JSON.stringify(want) ? "" : JSON.stringify(cells);
			})()`},
		{"56-compare-no-common-task", pairs.URL, "/compare?run=run-a&run=run-d", "#paired", `
			document.querySelector("#paired-words").textContent === "run-a and run-d decided no task in common, so they cannot be compared." &&
			!document.querySelector("#paired-diffs") ? "" : document.querySelector("#paired").textContent`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := chromedp.Do(ctx, chromedp.Navigate(tc.base+tc.target), chromedp.WaitVisible(chromedp.CSS(tc.wait))); err != nil {
				t.Fatal(err)
			}
			got, err := chromedp.Run(ctx, chromedp.Evaluate[string](tc.check))
			if err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, snap(tc.name)); err != nil {
				t.Fatal(err)
			}
			if got != "" {
				t.Errorf("%s: %s", tc.target, got)
			}
		})
	}
}
