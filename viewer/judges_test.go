package viewer

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/usage"
)

// TestViewerShowsJudgeAgreement: a run whose judge checks two judges
// decided, and a person reviewed, shows each judge's agreement with the
// person and with the rule-based checks, and the disagreeing episodes.
func TestViewerShowsJudgeAgreement(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	dir := makeRun(t, root, "run-j", "openai", day, []episode{
		{"write-note", "wood", "success", 2}, {"sort-rows", "bronze", "failure", 3}, {"draw-square", "gold", "success", 2}, {"fill-form", "wood", "failure", 2},
	})
	st, err := store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	judged := func(name string, passes map[string]bool) {
		for task, pass := range passes {
			ev := check.FinalScreenshot
			if task == "sort-rows" {
				ev = check.ExpectedFlow
			}
			if err := st.SaveJudgement(store.Judgement{Task: task, Judge: name, At: day, Source: store.JudgedLater,
				Checks: []check.Result{{Name: "the screen shows it", Kind: check.JudgeKind, Pass: pass, Reason: "seen",
					Judge: &check.JudgeDetail{Judge: name, Evidence: ev}}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Judge a agrees with the rules everywhere; judge b passes a failure.
	judged("openai:judge-a", map[string]bool{"write-note": true, "sort-rows": false, "draw-square": true, "fill-form": false})
	judged("anthropic:judge-b", map[string]bool{"write-note": true, "sort-rows": true, "draw-square": true, "fill-form": false})
	// The person fails draw-square, which the checks and both judges pass.
	for task, pass := range map[string]bool{"write-note": true, "sort-rows": false, "draw-square": false} {
		if err := st.SaveReview(store.Review{Task: task, Pass: pass, Reviewer: "ana", At: day}); err != nil {
			t.Fatal(err)
		}
	}
	// draw-square's verdict holds a judge check with criteria.
	rs, err := st.Results()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Task != "draw-square" {
			continue
		}
		score := 0.75
		v := check.Verdict{Outcome: check.Success, Reason: "all checks passed", MilestoneScore: 1, Checks: []check.Result{
			{Name: "file_equal ~/canvas.png", Kind: check.FileEqual, Pass: true, Reason: "0.0010 of the pixels differ"},
			{Name: "drawn in GIMP, not pasted", Kind: check.JudgeKind, Pass: true, Reason: "the square was drawn with the selection tool", Score: &score,
				Judge: &check.JudgeDetail{Judge: "openai:judge-a", Model: "judge-a-2026", Evidence: check.ExpectedFlow, Images: 4, Score: 0.75,
					Criteria: []judgment.CriterionVerdict{{ID: "select", Pass: true, Reason: "a rectangle selection is made at step 2"}, {ID: "export", Pass: false, Reason: "no export is seen"}},
					Votes: []check.Vote{{Model: "judge-a-2026", Pass: true, Score: 1, Reason: "drawn with the selection tool"},
						{Model: "judge-c-2026", Pass: true, Score: 0.5, Reason: "a square is on the canvas"},
						{Model: "judge-d-2026", Pass: false, Score: 0, Reason: "the square looks pasted"}},
					Usage: usage.Usage{InputTokens: 4200, OutputTokens: 90, Cost: 0.0123}}}}}
		r.Verdict, _ = json.Marshal(v)
		r.JudgeInputTokens, r.JudgeOutputTokens, r.JudgeCost = 4200, 90, 0.0123
		if err := st.SaveResult(r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	srv := httptest.NewServer((&Server{Root: root, Token: "s3cret"}).Handler())
	defer srv.Close()
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/run/run-j"),
		chromedp.WaitVisible(chromedp.CSS("#judge-agreement")),
		snap("09-run-judges"),
	); err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#judge-agreement tbody tr")].map(r => [...r.cells].map(c => c.textContent.trim()).join("|"))`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"anthropic:judge-b|all|people|3|33.3%|0.00|2|0|1|0",
		"anthropic:judge-b|all|rules|4|75.0%|0.50|1|0|2|1",
		"anthropic:judge-b|final_screenshot|people|2|50.0%|0.00|1|0|1|0",
		"anthropic:judge-b|final_screenshot|rules|3|100.0%|1.00|0|0|2|1",
		"anthropic:judge-b|expected_flow|people|1|0.0%|0.00|1|0|0|0",
		"anthropic:judge-b|expected_flow|rules|1|0.0%|0.00|1|0|0|0",
		"openai:judge-a|all|people|3|66.7%|0.40|1|0|1|1",
		"openai:judge-a|all|rules|4|100.0%|1.00|0|0|2|2",
	}
	got := strings.Join(rows, "\n")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("the judges table lacks the row %s; it has:\n%s", w, got)
		}
	}
	list := text(t, ctx, "#judge-disagreements")
	for _, w := range []string{"openai:judge-a against people: draw-square: the judge says pass, people fail",
		"anthropic:judge-b against rules: sort-rows: the judge says pass, rules fail"} {
		if !strings.Contains(list, w) {
			t.Errorf("the disagreements lack %q:\n%s", w, list)
		}
	}
	// The episode shows the screen its checks judged, after the last action.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/run/run-j/episode?task=draw-square&repeat=0"),
		chromedp.WaitVisible(chromedp.CSS("#final-screen img")),
		snap("10-episode-final-screen"),
	); err != nil {
		t.Fatal(err)
	}
	src, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#final-screen img").getAttribute("src")`))
	if err != nil || !strings.Contains(src, "/run/run-j/shot/") {
		t.Errorf("final screen %q, %v", src, err)
	}
	// and what the judge decided, criterion by criterion, and spent.
	checks := text(t, ctx, "section.checks")
	for _, w := range []string{"judged by openai:judge-a (judge-a-2026) on expected_flow with 4 screens · score 75.0%",
		"select — a rectangle selection is made at step 2", "export — no export is seen", "4200+90 tokens · $0.0123"} {
		if !strings.Contains(checks, w) {
			t.Errorf("the episode's checks lack %q:\n%s", w, checks)
		}
	}
	marks, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("section.checks ul.criteria li")].
		map(li => li.querySelector("svg.icon").getAttribute("aria-label") + " " + li.textContent.trim().split(" ")[0]).join(", ")`))
	if err != nil || !strings.Contains(marks, "passed select, failed export") {
		t.Errorf("the criteria's marks %q (%v), want select passed and export failed", marks, err)
	}
	// A panel's votes are listed, one a judge, in the panel's order.
	votes, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("section.checks ul.votes li")].map(li => li.className + "|" + li.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pass|judge-a-2026: pass — drawn with the selection tool", "pass|judge-c-2026: pass — a square is on the canvas",
		"fail|judge-d-2026: fail — the square looks pasted"}; strings.Join(votes, "\n") != strings.Join(want, "\n") {
		t.Errorf("the votes shown:\n%s\nwant:\n%s", strings.Join(votes, "\n"), strings.Join(want, "\n"))
	}
	if head := text(t, ctx, "main p:nth-of-type(2)"); !strings.Contains(head, "judge 4200+90 tokens, $0.0123") {
		t.Errorf("the episode's header does not show the judge's spending apart: %q", head)
	}
}
