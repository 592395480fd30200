package rollout

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/proctor-eval/proctor/rollout/api"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/viewer"
)

// TestRolloutInViewer checks that a rollout is a run's episode in the
// viewer: its page shows the steps' screenshots and the verdict, and a
// screenshot of it is kept under test-output/rollout.
func TestRolloutInViewer(t *testing.T) {
	f := newFixture(t, options{})
	if err := f.st.SetRun(store.Run{ID: filepath.Base(f.st.Dir), Started: time.Now().UTC(), Agent: "rollout", ObsMode: "per rollout",
		Resolution: "1920x1080", Parallel: 1, Repeat: 1}); err != nil {
		t.Fatal(err)
	}
	tk, _ := loadSuite(t).Task("editor-save")
	steps := f.gold(f.create(api.CreateRequest{Task: tk.ID, Observation: api.ObsMarks}), tk)
	if fin := steps[len(steps)-1].Final; fin == nil || fin.Reward == nil || *fin.Reward != 1 {
		t.Fatalf("final: %+v", fin)
	}
	srv := httptest.NewServer((&viewer.Server{Root: f.st.Dir}).Handler())
	defer srv.Close()
	page := srv.URL + "/run/" + filepath.Base(f.st.Dir) + "/episode?task=editor-save&repeat=0"
	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	if resp.StatusCode != 200 || strings.Count(body, `alt="screenshot before step`) != 4 || !strings.Contains(body, "all checks passed") {
		t.Fatalf("episode page: %d\n%s", resp.StatusCode, body)
	}
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed: no screenshot of the page")
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000),
		chromedp.Flag("user-data-dir", t.TempDir()))...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#filmstrip"))); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
	if err != nil {
		t.Fatal(err)
	}
	out := "../test-output/rollout"
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "episode.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}
