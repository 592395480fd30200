package viewer

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A run exports as a static site that opens from disk: every link within
// the run points at a file of the copy, and none at the server.
func TestExport(t *testing.T) {
	root := twoRuns(t)
	out := t.TempDir()
	if err := Export(filepath.Join(root, "run-a"), out, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"index.html", "episode/sort-rows-0.html", "episode/sort-rows-0.gif", "episode/sort-rows-0.zip",
		"episode/write-note-0.html", "static/viewer.css", "static/viewer.js"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the copy lacks %s: %v", f, err)
		}
	}
	link := regexp.MustCompile(`(?:href|src)="([^"]*)"`)
	for _, page := range []string{"index.html", "episode/sort-rows-0.html"} {
		b, err := os.ReadFile(filepath.Join(out, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllSubmatch(b, -1) {
			target := strings.ReplaceAll(string(m[1]), "&amp;", "&")
			if strings.HasPrefix(target, "/") || strings.HasPrefix(target, "http") {
				t.Errorf("%s links to the server: %s", page, target)
				continue
			}
			file, _, _ := strings.Cut(target, "#")
			if file == "" {
				continue
			}
			if _, err := os.Stat(filepath.Join(out, filepath.Dir(page), file)); err != nil {
				t.Errorf("%s links to %s, which the copy lacks", page, target)
			}
		}
	}
	// It opens from disk: the episode's first screenshot loads, and the
	// stepper works without the server.
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate("file://"+filepath.Join(out, "index.html")),
		chromedp.WaitVisible(chromedp.CSS("#episodes")),
		chromedp.Click(chromedp.CSS(`#episodes a[href="episode/sort-rows-0.html"]`)),
		chromedp.WaitVisible(chromedp.CSS("#filmstrip")),
		chromedp.Click(chromedp.CSS("#next")),
		snap("13-export-from-disk"),
	); err != nil {
		t.Fatal(err)
	}
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#step-1 img").complete && document.querySelector("#step-1 img").naturalWidth > 0`))
	if err != nil || !loaded {
		t.Errorf("the first screenshot did not load from disk (%v)", err)
	}
	if s := text(t, ctx, "#position"); s != "Step 2 of 5" {
		t.Errorf("the stepper from disk: %q", s)
	}
}
