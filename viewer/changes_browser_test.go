package viewer

import (
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
)

// The episode page's "what changed" in real Chromium: the link at the
// top leads to it, the violations are drawn apart from the allowed
// changes (a red and a green rule), the text diffs' added and deleted
// lines are coloured, and the noise is collapsed until opened; each
// state saved as a PNG.
func TestWhatChangedInChromium(t *testing.T) {
	root := t.TempDir()
	changedRun(t, root)
	srv := httptest.NewServer((&Server{Root: root}).Handler())
	defer srv.Close()
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/run/run-c/episode?task=free-space&repeat=0"),
		chromedp.WaitVisible(chromedp.CSS("#changes-link"))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, do, check string
	}{
		{"60-what-changed", `document.querySelector("#changes-link").click()`, `(function () {
			var sec = document.querySelector("#changes").getBoundingClientRect();
			if (sec.top < -1 || sec.top > 40) return "the link did not lead to what changed (its top at " + sec.top + ")";
			var rule = sel => getComputedStyle(document.querySelector(sel)).borderLeftColor;
			if (rule("#violations li") !== "rgb(179, 38, 30)") return "a violation's rule is " + rule("#violations li");
			if (rule("#allowed li") !== "rgb(19, 115, 51)") return "an allowed change's rule is " + rule("#allowed li");
			if (document.querySelectorAll("#violations > li").length !== 4 || document.querySelectorAll("#allowed > li").length !== 2)
				return "the lists hold " + document.querySelectorAll("#violations > li").length + " and " + document.querySelectorAll("#allowed > li").length;
			var add = [...document.querySelectorAll("#allowed .d-add")].find(s => s.textContent === "+butter");
			if (!add || getComputedStyle(add).backgroundColor !== "rgb(230, 255, 236)") return "the added line is not drawn as added";
			var del = document.querySelector("#violations .d-del");
			if (!del || getComputedStyle(del).backgroundColor !== "rgb(255, 235, 233)") return "a deleted line is not drawn as deleted";
			var noise = document.querySelector("#filtered li");
			return !noise.checkVisibility() && !document.querySelector("#filtered").open ? "" : "the noise is not collapsed";
		})()`},
		{"61-what-changed-noise-open", `document.querySelector("#filtered summary").click()`, `(function () {
			var items = [...document.querySelectorAll("#filtered li")];
			return items.length === 2 && items.every(li => li.checkVisibility()) &&
				items[1].textContent.includes("the recent-file list") ? "" : "the opened noise shows " + items.map(li => li.textContent).join(" | ");
		})()`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](tc.do)); err != nil {
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
				t.Error(got)
			}
		})
	}
}
