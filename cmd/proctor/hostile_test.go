package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env/browser"
	"github.com/proctor-eval/proctor/store"
)

// hostileSuite writes a browser suite of one task whose page opens 1,000
// windows at each click.
func hostileSuite(t *testing.T, wall string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"suite.yaml": "name: hostile\ndescription: A page that opens windows without end.\n",
		"assets/storm.html": `<!doctype html><title>Storm</title>
<button style="width:400px;height:200px" onclick="for (let i = 0; i < 1000; i++) window.open('about:blank#' + i)">Win a prize</button>`,
		"storm.yaml": `id: storm
instruction: Click the button.
environment: {type: browser, resolution: 1280x800}
level: bronze
difficulty: easy
interface: gui
kind: state
max_steps: 1000
time_limit: ` + wall + `
setup:
  - copy: {asset: storm.html, to: ~/storm.html}
  - open: {path: ~/storm.html}
checks:
  - kind: exact
    probe: {page: {js: "document.title"}}
    expected: Calm
gold:
  - kind: key
    keys: [f5]
  - kind: done
`,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// clicker is an agent that clicks the page's button at every step, and
// says on steps which step it was asked for.
func clicker(t *testing.T, steps chan<- int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/step" {
			fmt.Fprint(w, `{}`)
			return
		}
		var req struct {
			Observation struct {
				Step int `json:"step"`
			} `json:"observation"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		select {
		case steps <- req.Observation.Step:
		default:
		}
		// Each click a pixel apart: no early stop for repeating itself.
		fmt.Fprintf(w, `{"actions": [{"kind": "click", "point": {"x": %d, "y": 60}}]}`, 100+req.Observation.Step%200)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestHostilePageRun: an episode on a page that opens 1,000 windows at
// every click ends by its wall time, uncompleted, after one attempt; a
// run interrupted on such a page exits with no browser process or profile
// folder left.
func TestHostilePageRun(t *testing.T) {
	if _, err := browser.ExecPath(); err != nil {
		t.Skip(err)
	}
	t.Run("wall time", func(t *testing.T) {
		steps := make(chan int, 1)
		out := filepath.Join(t.TempDir(), "run")
		started := time.Now()
		stdout, stderr, code := runCLI(t, "", "run", "--suite", hostileSuite(t, "20s"), "--env", "browser", "--agent", "http",
			"--agent-url", clicker(t, steps), "--report", "none", "--out", out)
		t.Logf("the run took %v", time.Since(started).Round(time.Millisecond))
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		st, err := store.OpenRun(out)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rs, _ := st.Results()
		if len(rs) != 1 || rs[0].Outcome != "uncompleted" || rs[0].Attempts != 1 || !strings.Contains(rs[0].Reason, "wall-time limit of 20s") {
			t.Fatalf("results: %+v", rs)
		}
		if rs[0].Steps < 2 {
			t.Fatalf("%d steps in 20 s: the storm held the episode", rs[0].Steps)
		}
	})
	t.Run("interrupt", func(t *testing.T) {
		tmp := t.TempDir()
		steps := make(chan int, 1)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "PROCTOR_TEST_MAIN=run --suite "+hostileSuite(t, "5m")+" --env browser --agent http --agent-url "+
			clicker(t, steps)+" --report none --out "+filepath.Join(t.TempDir(), "run"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		for s := range steps {
			if s >= 3 {
				break
			}
		}
		if len(usingPath(tmp)) == 0 {
			t.Fatal("no browser runs under the run's temporary folder")
		}
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		for end := time.Now().Add(30 * time.Second); len(usingPath(tmp)) > 0 && time.Now().Before(end); {
			time.Sleep(100 * time.Millisecond)
		}
		if left := usingPath(tmp); len(left) > 0 {
			t.Fatalf("processes left after the interrupt: %v\n%s", left, stderr.String())
		}
		if m, _ := filepath.Glob(filepath.Join(tmp, "proctor-browser-*")); len(m) > 0 {
			t.Fatalf("browser folders left after the interrupt: %v", m)
		}
	})
}

// usingPath lists the processes whose command line holds path.
func usingPath(path string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && e.Name() != "self" && bytes.Contains(cmdline, []byte(path)) {
			out = append(out, e.Name())
		}
	}
	return out
}
