package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/store"
)

func needDesktop(t *testing.T) {
	t.Helper()
	for _, b := range []string{"Xvfb", "dbus-daemon", "openbox", "yad", "mousepad"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
}

// TestRunReportExport runs the replay agent end to end, then reads the
// run back with report and export.
func TestRunReportExport(t *testing.T) {
	needDesktop(t)
	dir := filepath.Join(t.TempDir(), "run")
	out, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/runner", "--agent", "replay", "--parallel", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("run exited %d:\n%s\n%s", code, out, errs)
	}
	for _, w := range []string{"success rate                 100.0%", "weighted score               100.0%"} {
		if !strings.Contains(out, w) {
			t.Errorf("the report lacks %q:\n%s", w, out)
		}
	}
	if !strings.Contains(errs, "[5/5] [####################] 100%") {
		t.Errorf("no progress line for the last episode:\n%s", errs)
	}
	out, _, code = runCLI(t, "", "report", dir, "--format", "json")
	var reps []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &reps) != nil || len(reps) != 1 {
		t.Fatalf("report --format json: %d %s", code, out)
	}
	out, _, code = runCLI(t, "", "export", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 5 {
		t.Fatalf("export: %d lines", len(lines))
	}
	var first exportLine
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Instruction == "" || len(first.Steps) == 0 || first.Steps[0].Screenshot == "" {
		t.Fatalf("export line %+v (%v)", first, err)
	}
	if _, err := os.Stat(filepath.Join(first.Dir, first.Steps[0].Screenshot)); err != nil {
		t.Fatalf("exported screenshot path: %v", err)
	}
	// Several runs at once; a folder without a run is named, not made.
	out, _, code = runCLI(t, "", "export", dir, dir)
	if n := strings.Count(strings.TrimSpace(out), "\n") + 1; code != 0 || n != 10 {
		t.Fatalf("export of two runs: exit %d, %d lines", code, n)
	}
	missing := filepath.Join(t.TempDir(), "nothing")
	if _, errs, code := runCLI(t, "", "export", missing); code == 0 || !strings.Contains(errs, "no run there") {
		t.Fatalf("export of a missing run: %d %s", code, errs)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("export made the folder it was asked to read")
	}
	// A second run into the same folder is refused; --resume finds nothing to do.
	if _, errs, code := runCLI(t, "", "run", "--agent", "replay", "--suite", "../../testdata/runner", "--out", dir); code == 0 || !strings.Contains(errs, "already holds a run") {
		t.Fatalf("a run into a used folder: %d %s", code, errs)
	}
	if _, errs, code := runCLI(t, "", "run", "--resume", dir); code != 0 || !strings.Contains(errs, "5 of 5 episodes already recorded") {
		t.Fatalf("resume of a finished run: %d %s", code, errs)
	}
}

func TestPreflightRefuses(t *testing.T) {
	needDesktop(t)
	_, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/example", "--agent", "noop", "--out", filepath.Join(t.TempDir(), "r"))
	if code == 0 || !strings.Contains(errs, "pre-flight refused the run") || !strings.Contains(errs, "task android-open-wifi-details needs an android environment") {
		t.Fatalf("pre-flight: %d %s", code, errs)
	}
	_, errs, code = runCLI(t, "", "run", "--agent", "nobody")
	if code == 0 || !strings.Contains(errs, `unknown agent "nobody"`) {
		t.Fatalf("unknown agent: %d %s", code, errs)
	}
}

// TestKilledRunResumes kills `proctor run` with SIGKILL once some episodes
// are recorded, resumes it, and checks that no finished episode was run
// again and none is missing.
func TestKilledRunResumes(t *testing.T) {
	needDesktop(t)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=run --suite ../../testdata/runner --agent replay --parallel 1 --report none --out "+dir)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "[2/5]") {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := st.Results()
	st.Close()
	if len(before) < 2 || len(before) == 5 {
		t.Fatalf("%d episodes recorded before the kill, want between 2 and 4", len(before))
	}
	time.Sleep(500 * time.Millisecond) // the killed run's desktop watchdog cleans up
	_, errs, code := runCLI(t, "", "run", "--resume", dir, "--report", "none")
	if code != 0 {
		t.Fatalf("resume exited %d: %s", code, errs)
	}
	st, _ = store.Open(dir)
	defer st.Close()
	after, _ := st.Results()
	if len(after) != 5 {
		t.Fatalf("%d episodes after the resume, want 5", len(after))
	}
	old := map[string]time.Time{}
	for _, r := range before {
		old[r.Task] = r.Finished
	}
	for _, r := range after {
		if r.Outcome != "success" {
			t.Errorf("%s: %s (%s)", r.Task, r.Outcome, r.Reason)
		}
		if f, ok := old[r.Task]; ok && !f.Equal(r.Finished) {
			t.Errorf("%s was run again after the resume", r.Task)
		}
	}
}

// TestExampleHTTPAgentSolvesATask runs the documented Python agent through
// the runner, as the README shows.
func TestExampleHTTPAgentSolvesATask(t *testing.T) {
	needDesktop(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	agent := exec.Command(py, "../../examples/http-agent/agent.py", "0")
	out, _ := agent.StdoutPipe()
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { agent.Process.Kill(); agent.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:" + strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	dir := filepath.Join(t.TempDir(), "run")
	stdout, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/runner", "--agent", "http", "--agent-url", url,
		"--obs", "a11y", "--filter", "dialog-later", "--out", dir)
	if code != 0 || !strings.Contains(errs, "success      dialog-later") || !strings.Contains(stdout, "100.0%") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
}

// TestOpenAIAgentSolvesATask runs the openai agent against a local server
// that speaks the chat-completions API: the server reads the tree in the
// prompt, answers a pyautogui click on the Later button, then DONE.
func TestOpenAIAgentSolvesATask(t *testing.T) {
	needDesktop(t)
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		answer := "DONE"
		last := string(req.Messages[len(req.Messages)-1].Content)
		if len(req.Messages) == 2 { // system + first observation
			answer = "I cannot find the button."
			for _, row := range strings.Split(last, `\n`) {
				f := strings.Split(row, `\t`)
				if len(f) == 7 && f[1] == "Later" {
					var x, y, w, h int
					fmt.Sscan(f[3]+" "+f[4]+" "+f[5]+" "+f[6], &x, &y, &w, &h)
					answer = fmt.Sprintf("The dialog is open.\n```python\npyautogui.click(%d, %d)\n```", x+w/2, y+h/2)
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "gpt-5",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}},
			"usage":   map[string]any{"prompt_tokens": 2000, "completion_tokens": 40, "total_tokens": 2040}})
	}))
	defer srv.Close()
	t.Setenv("STANDIN_KEY", "k")
	dir := filepath.Join(t.TempDir(), "run")
	stdout, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/runner", "--agent", "openai", "--model", "gpt-5",
		"--base-url", srv.URL, "--api-key-env", "STANDIN_KEY", "--obs", "screenshot+a11y", "--filter", "dialog-later", "--out", dir)
	if code != 0 || !strings.Contains(errs, "success      dialog-later") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
	if requests.Load() != 3 {
		t.Fatalf("%d model requests, want 3 (the pre-flight's question and two steps)", requests.Load())
	}
	// 2 x (2000 in, 40 out) at gpt-5's $1.25 and $10 per million tokens.
	if !strings.Contains(stdout, "$0.0058 / $0.0058") || !strings.Contains(stdout, "4000 / 80") {
		t.Fatalf("tokens and cost missing from the report:\n%s", stdout)
	}
	st, _ := store.Open(dir)
	defer st.Close()
	if run, _ := st.Run(); run.Model != "gpt-5" || run.PromptHash == "" {
		t.Fatalf("run record %+v", run)
	}
	// The model's prose is kept apart from its code, for the viewer.
	if steps, err := st.Turns("dialog-later", 0); err != nil || len(steps) == 0 || steps[0].Thought != "The dialog is open." {
		t.Fatalf("steps %+v (%v): the first should carry the thought", steps, err)
	}
}

// TestHumanAgent plays a person who answers through standard input.
func TestHumanAgent(t *testing.T) {
	needDesktop(t)
	dir := filepath.Join(t.TempDir(), "run")
	stdout, errs, code := runCLI(t, "not yet\nANS 3\n", "run", "--suite", "../../testdata/runner", "--agent", "human",
		"--filter", "count-lines", "--out", dir)
	if code != 0 || !strings.Contains(errs, "success      count-lines") || !strings.Contains(errs, "view it with `x11vnc -display") ||
		!strings.Contains(errs, `"not yet" is not DONE`) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
}

// validateTemp points TMPDIR at a folder of the test's and returns a
// function listing the validations' temporary folders in it.
func validateTemp(t *testing.T) func() []string {
	t.Helper()
	tmp, err := os.MkdirTemp("", "validate-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	return func() []string {
		m, _ := filepath.Glob(filepath.Join(tmp, "proctor-validate-*"))
		return m
	}
}

func TestValidate(t *testing.T) {
	needDesktop(t)
	left := validateTemp(t)
	out, errs, code := runCLI(t, "", "validate", "../../testdata/runner", "--parallel", "2")
	if code != 0 || !strings.Contains(errs, "5 tasks, 21 trajectories, 0 violations") || !strings.Contains(out, "types without saving") ||
		!strings.Contains(errs, "settle per turn: median ") {
		t.Fatalf("validate of the runner suite: exit %d\n%s\n%s", code, out, errs)
	}
	// No violation: the temporary folder of the episodes is removed.
	if m := left(); len(m) != 0 || !strings.Contains(errs, "(episodes not kept: --out keeps them)") {
		t.Fatalf("validation without violations left %v:\n%s", m, errs)
	}
}

// TestValidateCatchesBrokenChecks breaks checks on purpose — a wrong
// expected value, and a check that anything passes — and expects validate
// to name each violation.
func TestValidateCatchesBrokenChecks(t *testing.T) {
	needDesktop(t)
	dir := t.TempDir()
	for _, f := range []string{"suite.yaml", "shell-write.yaml", "count-lines.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/runner", f))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		switch f {
		case "shell-write.yaml": // the expected value is wrong: gold fails
			s = strings.Replace(s, "expected: hello", "expected: hullo", 1)
		case "count-lines.yaml": // a too lenient tolerance: the wrong answer passes
			s = strings.Replace(s, `accepted: ["3", "three"]`, "accepted: [\"3\"]\n    tolerance: 1", 1)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	left := validateTemp(t)
	out, errs, code := runCLI(t, "", "validate", dir)
	if code != 1 || !strings.Contains(errs, "2 violations") {
		t.Fatalf("exit %d, want 1 with 2 violations\n%s\n%s", code, out, errs)
	}
	// Violations: the temporary folder is kept, and named.
	if m := left(); len(m) != 1 || !strings.Contains(errs, "(episodes in "+m[0]+")") {
		t.Fatalf("validation with violations kept %v, want one folder named in:\n%s", m, errs)
	} else if _, err := os.Stat(filepath.Join(m[0], store.DBFile)); err != nil {
		t.Fatalf("the kept folder has no episodes: %v", err)
	}
	var violations []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "VIOLATION") {
			violations = append(violations, strings.Join(strings.Fields(line)[:2], " "))
		}
	}
	want := []string{"count-lines counts", "shell-write gold"}
	if strings.Join(violations, "|") != strings.Join(want, "|") {
		t.Fatalf("violations %v, want %v\n%s", violations, want, out)
	}
}

func TestTasksStats(t *testing.T) {
	out, _, code := runCLI(t, "", "tasks", "stats", "../../testdata/runner")
	for _, w := range []string{"5 task instances; instructions average 9.4 words; gold solutions average 2.4 actions; 6 wrong trajectories", "by app", "bash", "by level", "paper  3   60.0%"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Fatalf("stats lack %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "columns") {
		t.Fatalf("a suite of one domain has a table by domain:\n%s", out)
	}
	// Levels are listed from paper to gold, not by name; a suite of
	// several domains has a column for each and overall.
	out, _, _ = runCLI(t, "", "tasks", "stats", "../../suites/desktop")
	for _, w := range []string{
		"by domain (columns) and kind, interface, level, difficulty\n              data  files  graphics  math  office  system  web  writing  overall\n",
		"\n       paper     4     10         0     0       0       1    1        8       24\n",
		"\n       total    12     19         8     8      14       8   12       15       96\n",
		"  gui+cli  4     4.2%  ####\n",
	} {
		if !strings.Contains(out, w) {
			t.Fatalf("stats of suites/desktop lack %q:\n%s", w, out)
		}
	}
	levels := regexp.MustCompile(`(?m)^  (paper|wood|bronze|silver|gold) `).FindAllStringSubmatch(out, -1)
	var order []string
	for _, m := range levels {
		order = append(order, m[1])
	}
	if strings.Join(order, " ") != "paper wood bronze silver gold" {
		t.Fatalf("levels in the order %v:\n%s", order, out)
	}
}

// TestSIGTERMStopsARun sends SIGTERM to `proctor run` while its agent's
// episode is busy on the desktop (a huge scroll refused, then a long
// wait): the run stops within 5 s, says how to resume, and exits 130.
func TestSIGTERMStopsARun(t *testing.T) {
	needDesktop(t)
	acting := make(chan struct{}, 100)
	agentSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/step":
			var req struct {
				Observation struct {
					Step int `json:"step"`
				} `json:"observation"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			if req.Observation.Step == 1 {
				fmt.Fprint(w, `{"actions": [{"kind": "scroll", "point": {"x": 10, "y": 10}, "dy": 1000000000}]}`)
				return
			}
			acting <- struct{}{}
			fmt.Fprint(w, `{"actions": [{"kind": "wait", "duration": 300}]}`)
		default:
			fmt.Fprint(w, `{}`)
		}
	}))
	defer agentSrv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=run --suite ../../testdata/runner --filter ^shell-write$ --agent http --agent-url "+agentSrv.URL+" --report none --out "+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	select {
	case <-acting:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the agent was never asked for a second step: %s", stderr.String())
	}
	time.Sleep(300 * time.Millisecond) // the wait has begun
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatalf("proctor run was still running 5 s after SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "interrupted; continue with: proctor run --resume") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 130 and how to resume", code, stderr.String())
	}
}

// TestRunFromAnotherDirectory runs the built-in suite from a directory
// with no suites/ folder: the suite built into the binary is used.
func TestRunFromAnotherDirectory(t *testing.T) {
	needDesktop(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	out, errs, code := runCLI(t, "", "run", "--agent", "replay", "--filter", "^(files-create-notes-txt|count-words-1)$", "--out", "run")
	if code != 0 || !strings.Contains(out, "2/2") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errs)
	}
}

// TestValidateReportsAmbiguousTargets replays gold solutions that click
// one of two buttons named OK: by name alone (ambiguous: validate warns
// and names the step), and narrowed with nth (no warning).
func TestValidateReportsAmbiguousTargets(t *testing.T) {
	needDesktop(t)
	dir := t.TempDir()
	suite, err := os.ReadFile("../../testdata/runner/suite.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"suite.yaml": string(suite)}
	for _, c := range []struct{ id, target, rc string }{
		{"ok-by-name", "{role: push button, name: OK}", "3"},
		{"ok-narrowed", "{role: push button, name: OK, nth: 2}", "7"},
	} {
		files[c.id+".yaml"] = `id: ` + c.id + `
instruction: Click OK.
app: yad
level: wood
difficulty: easy
interface: gui
kind: state
max_steps: 4
setup:
  - run:
      command: yad --title=Twice --text="Which OK?" --button=OK:3 --button=OK:7; echo $? > ~/rc
      background: true
  - wait_element:
      element: {role: push button, name: OK}
      timeout: 30s
checks:
  - kind: exact
    probe: {file: ~/rc}
    expected: ` + c.rc + `
gold:
  - kind: click
    target: ` + c.target + `
  - kind: wait
    duration: 0.5
  - kind: done
`
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code := runCLI(t, "", "validate", dir, "--parallel", "2")
	if code != 0 || !strings.Contains(errs, "0 violations") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	want := `warning: ambiguous target: ok-by-name [gold] step 1: click push button "OK" matched 2 showing elements and the first was taken`
	if !strings.Contains(errs, want) || strings.Count(errs, "ambiguous target") != 1 {
		t.Fatalf("want one warning %q\n%s", want, errs)
	}
}
