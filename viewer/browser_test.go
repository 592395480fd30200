package viewer

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// outputDir keeps the screenshots of the pages the browser test saw.
const outputDir = "../test-output/viewer"

// browser starts Debian's headless Chromium for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (scripts/test.sh installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("user-data-dir", t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// snap saves a PNG of the whole page under outputDir.
func snap(name string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		buf, err := chromedp.FullScreenshot(90)(ctx, t)
		if err != nil {
			return chromedp.Void{}, err
		}
		if err := os.MkdirAll(outputDir, 0o755); err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.Void{}, os.WriteFile(filepath.Join(outputDir, name+".png"), buf, 0o644)
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func TestViewerInChromium(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	makeRun(t, root, "run-a", "openai", day, []episode{
		{"write-note", "wood", "success", 3}, {"sort-rows", "bronze", "failure", 5}, {"carry-result", "silver", "failure", 4},
	})
	makeRun(t, root, "run-b", "anthropic", day.Add(time.Hour), []episode{
		{"write-note", "wood", "success", 2}, {"sort-rows", "bronze", "success", 4}, {"carry-result", "silver", "failure", 6},
	})
	srv := httptest.NewServer((&Server{Root: root, Token: "s3cret"}).Handler())
	defer srv.Close()
	ctx := browser(t)

	// The leaderboard lists both runs, best weighted score first, and plots.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#leaderboard")),
		snap("01-leaderboard"),
	); err != nil {
		t.Fatal(err)
	}
	plots, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg.plot").length`))
	if err != nil {
		t.Fatal(err)
	}
	if first := text(t, ctx, "#leaderboard tbody tr:first-child .run-link"); first != "run-b" {
		t.Errorf("first run on the leaderboard = %q, want run-b (higher weighted score)", first)
	}
	if plots != 5 {
		t.Errorf("%d plots on the leaderboard, want 5 (scores, cost, time, level, app)", plots)
	}

	// Comparing the two runs shows the one task that flipped.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[value="run-a"]`)),
		chromedp.Click(chromedp.CSS(`input[value="run-b"]`)),
		chromedp.Click(chromedp.CSS("#compare")),
		chromedp.WaitVisible(chromedp.CSS("#comparison")),
		snap("02-compare"),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#flip-summary"); !strings.HasPrefix(s, "1 of 3 episodes flipped") {
		t.Errorf("comparison summary = %q", s)
	}

	// The run page, then an episode: checks, milestones, the trajectory.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/run/run-a"),
		chromedp.WaitVisible(chromedp.CSS("#episodes")),
		snap("03-run"),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#disagreement-rate"); s != "n/a" {
		t.Errorf("disagreement rate before any review = %q, want n/a", s)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#episodes a[href*="task=carry-result"]`)),
		chromedp.WaitVisible(chromedp.CSS("#trajectory")),
		snap("04-episode-step1"),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#position"); s != "Step 1 of 4" {
		t.Fatalf("position = %q, want Step 1 of 4", s)
	}
	if s := text(t, ctx, ".checks"); !strings.Contains(s, "computed") || !strings.Contains(s, "nothing to read") {
		t.Errorf("checks section lacks the milestones: %q", s)
	}
	// Step with the keyboard: right twice, left once.
	if err := chromedp.Do(ctx,
		chromedp.KeyEvent(kb.ArrowRight),
		chromedp.KeyEvent(kb.ArrowRight),
		chromedp.KeyEvent(kb.ArrowLeft),
		chromedp.WaitVisible(chromedp.CSS("#step-2")),
		snap("05-episode-step2"),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#position"); s != "Step 2 of 4" {
		t.Errorf("after right, right, left: position = %q, want Step 2 of 4", s)
	}
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("article.step")).filter(a => a.offsetParent !== null).map(a => a.id)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(shown) != 1 || shown[0] != "step-2" {
		t.Errorf("steps on screen: %v, want only step-2", shown)
	}
	src2, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#step-2 img"), "src"))
	if err != nil {
		t.Fatal(err)
	}
	if !src2.Exists || !strings.Contains(src2.Value, "/shot/") {
		t.Errorf("step 2's screenshot was not loaded: src %+v", src2)
	}
	drawn, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#step-2 svg.overlay line.mk-drag").length`))
	if err != nil {
		t.Fatal(err)
	}
	if drawn != 1 {
		t.Errorf("step 2 (a drag) draws %d drag lines, want 1", drawn)
	}

	// Step 1's accessibility tree opens in a collapsible block.
	if err := chromedp.Do(ctx,
		chromedp.KeyEvent(kb.ArrowLeft),
		chromedp.Click(chromedp.CSS("#step-1 details.tree summary")),
		chromedp.WaitVisible(chromedp.CSS("#step-1 pre.tree")),
		snap("05b-episode-tree"),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#step-1 pre.tree"); !strings.Contains(s, "[text] <out.txt> & more") {
		t.Errorf("step 1's accessibility tree = %q", s)
	}

	// A review with a wrong token is refused, and the form keeps what was
	// typed.
	episode := srv.URL + "/run/run-a/episode?task=carry-result&repeat=0"
	value := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("value of %s: %v", sel, err)
		}
		return v
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(episode),
		chromedp.WaitVisible(chromedp.CSS("#review-form")),
		chromedp.Click(chromedp.CSS(`input[name="verdict"][value="pass"]`)),
		chromedp.SendKeys(chromedp.CSS("#reviewer"), "ann"),
		chromedp.SendKeys(chromedp.CSS("#note"), "the file holds 1591 after all"),
		chromedp.SendKeys(chromedp.CSS("#token"), "wrong"),
		chromedp.Click(chromedp.CSS("#submit-review")),
		chromedp.WaitVisible(chromedp.CSS("#error")),
		snap("06-review-refused"),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#error"); !strings.HasPrefix(s, "401") {
		t.Errorf("review with a wrong token: %q, want 401", s)
	}
	if n, r, tok := value("#note"), value("#reviewer"), value("#token"); n != "the file holds 1591 after all" || r != "ann" || tok != "" {
		t.Errorf("after the refusal the form holds note %q, reviewer %q, token %q; want the note and reviewer kept, no token", n, r, tok)
	}
	checked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('input[name="verdict"][value="pass"]').checked`))
	if err != nil || !checked {
		t.Errorf("after the refusal the verdict pass is not checked (%v)", err)
	}
	// With the token it is recorded, note and all.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#token"), "s3cret"),
		chromedp.Click(chromedp.CSS("#submit-review")),
		chromedp.WaitNotPresent(chromedp.CSS("#error")), // the refused page is gone
		chromedp.WaitVisible(chromedp.CSS("#current-review")),
		snap("07-reviewed"),
	); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#current-review"); !strings.Contains(s, "Marked pass by ann") || !strings.Contains(s, "1591 after all") {
		t.Errorf("after the review: %q", s)
	}
	// The next episode's form has the reviewer and the token from this
	// browser's storage; "next unreviewed" skips the reviewed episode.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/run/run-a/episode?task=sort-rows&repeat=0"),
		chromedp.WaitVisible(chromedp.CSS("#review-form")),
		snap("07b-review-remembered"),
	); err != nil {
		t.Fatal(err)
	}
	if r, tok := value("#reviewer"), value("#token"); r != "ann" || tok != "s3cret" {
		t.Errorf("the next review form holds reviewer %q and token %q, want them remembered", r, tok)
	}
	next, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#next-unreviewed a").href`))
	if err != nil || !strings.Contains(next, "task=write-note") {
		t.Fatalf("next unreviewed after sort-rows (carry-result reviewed) = %q (%v), want write-note", next, err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(next), chromedp.WaitVisible(chromedp.CSS("#review-form")), snap("07c-next-unreviewed")); err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "h1"); !strings.HasPrefix(s, "write-note") {
		t.Errorf("the next unreviewed episode is %q, want write-note", s)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/run/run-a?show=disagree"),
		chromedp.WaitVisible(chromedp.CSS("#episodes")),
		snap("08-run-disagreeing"),
	); err != nil {
		t.Fatal(err)
	}
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll("#episodes tbody tr")))
	if err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, "#disagreement-rate"); s != "100.0%" {
		t.Errorf("disagreement rate after one disagreeing review = %q, want 100.0%%", s)
	}
	if len(nodes) != 1 {
		t.Errorf("%d disagreeing episodes listed, want 1", len(nodes))
	}
}
