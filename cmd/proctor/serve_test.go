package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env/browser"
	"github.com/proctor-eval/proctor/judge/judgetest"
	"github.com/proctor-eval/proctor/rollout/api"
	"github.com/proctor-eval/proctor/rollout/client"
	"github.com/proctor-eval/proctor/store"
)

var serveRE = regexp.MustCompile(`serving \d+ tasks? on (\S+) \(run folder (\S+)\)`)

// startServe starts `proctor serve` with args as another process and
// returns the address it prints and its run folder.
func startServe(t *testing.T, args string) (url, dir string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=serve --listen 127.0.0.1:0 "+args)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	})
	sc := bufio.NewScanner(stderr)
	var said []string
	for sc.Scan() {
		said = append(said, sc.Text())
		if m := serveRE.FindStringSubmatch(sc.Text()); m != nil {
			go func() { // keep the pipe drained
				for sc.Scan() {
				}
			}()
			return m[1], m[2]
		}
	}
	t.Fatalf("proctor serve did not start:\n%s", strings.Join(said, "\n"))
	return "", ""
}

// rolloutLine is a line of the Python example's output.
type rolloutLine struct {
	Task    string   `json:"task"`
	Reward  *float64 `json:"reward"`
	Outcome string   `json:"outcome"`
	Fault   string   `json:"fault"`
}

// pythonGold runs examples/rollout/gym_loop.py against a service.
func pythonGold(t *testing.T, py, url, token string) map[string]rolloutLine {
	t.Helper()
	out, err := exec.Command(py, "../../examples/rollout/gym_loop.py", "--url", url, "--token-file", token).Output()
	if err != nil {
		t.Fatalf("gym_loop.py: %v\n%s", err, out)
	}
	got := map[string]rolloutLine{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r rolloutLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		got[r.Task] = r
	}
	return got
}

// replayOutcomes runs proctor run --agent replay and returns each task's
// outcome.
func replayOutcomes(t *testing.T, args ...string) map[string]string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "replay")
	_, errs, code := runCLI(t, "", append([]string{"run", "--agent", "replay", "--report", "none", "--out", dir}, args...)...)
	if code != 0 {
		t.Fatalf("proctor run exited %d: %s", code, errs)
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, _ := st.Results()
	out := map[string]string{}
	for _, r := range rs {
		out[r.Task] = r.Outcome
	}
	return out
}

// sameRewards checks that every rollout's final reward is the outcome
// proctor run --agent replay gives its task.
func sameRewards(t *testing.T, got map[string]rolloutLine, want map[string]string) {
	t.Helper()
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%d rollouts, %d replayed episodes", len(got), len(want))
	}
	for id, w := range want {
		r, ok := got[id]
		switch {
		case !ok:
			t.Errorf("%s: no rollout", id)
		case r.Reward == nil:
			t.Errorf("%s: no reward (%s: %s); the replay: %s", id, r.Outcome, r.Fault, w)
		case r.Outcome != w || (*r.Reward == 1) != (w == string(check.Success)):
			t.Errorf("%s: reward %v (%s); the replay: %s", id, *r.Reward, r.Outcome, w)
		}
	}
}

// TestPythonRolloutsOnDesktops plays the runner suite's gold solutions
// through proctor serve on local desktops over TLS with the Python
// example, and compares each final reward with proctor run's replay.
func TestPythonRolloutsOnDesktops(t *testing.T) {
	needDesktop(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	tok := tokenFile(t, "rollout-token")
	url, dir := startServe(t, "../../testdata/runner --parallel 2 --token-file "+tok+" --out "+filepath.Join(t.TempDir(), "serve"))
	if !strings.Contains(url, "#sha256=") {
		t.Fatalf("not a pinned address: %s", url)
	}
	got := pythonGold(t, py, url, tok)
	sameRewards(t, got, replayOutcomes(t, "../../testdata/runner", "--parallel", "2"))
	// proctor report reads the rollouts as a run's episodes.
	stdout, errs, code := runCLI(t, "", "report", dir)
	if code != 0 || !strings.Contains(stdout, "rollout") || !strings.Contains(stdout, "episodes                     5") {
		t.Fatalf("report exited %d:\n%s\n%s", code, stdout, errs)
	}
}

// TestPythonRolloutsInBrowsers does the same with browser tasks, over
// plain HTTP on loopback.
func TestPythonRolloutsInBrowsers(t *testing.T) {
	if _, err := browser.ExecPath(); err != nil {
		t.Skip(err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	tok := tokenFile(t, "rollout-token")
	const filter = "^(forms-employees-qa|confirm-archive-t203|modal-edit-hopper|tabs-order-brightwater)$"
	url, _ := startServe(t, "../../suites/web --env browser --parallel 2 --insecure-loopback --filter "+filter+" --token-file "+tok+
		" --out "+filepath.Join(t.TempDir(), "serve"))
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("not a loopback address: %s", url)
	}
	got := pythonGold(t, py, url, tok)
	sameRewards(t, got, replayOutcomes(t, "../../suites/web", "--env", "browser", "--parallel", "2", "--filter", filter))
}

func TestServeRefuses(t *testing.T) {
	tok := tokenFile(t, "rollout-token")
	_, errs, code := runCLI(t, "", "serve", "../../testdata/mem", "--env", "mem", "--token-file", tok, "--insecure-loopback", "--listen", "0.0.0.0:0")
	if code != 1 || !strings.Contains(errs, "loopback address only") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, errs, code = runCLI(t, "", "serve", "../../testdata/mem", "--env", "mem", "--token-file", tok, "--filter", "^nothing$")
	if code != 1 || !strings.Contains(errs, "no task selected") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// TestServeJudged decides a judged task's rollouts at their finish with
// a local stand-in of the judge's API, as proctor run does: the gold
// answer's reward is 1, a wrong answer's 0, and a judge that gives no
// verdict ends the rollout with status error and no reward.
func TestServeJudged(t *testing.T) {
	var down atomic.Bool
	sa := judgetest.New(t, func(a judgetest.Asked) judgetest.Reply {
		if down.Load() && !preflightQuestion(a) {
			return judgetest.Reply{Status: 503, Text: "overloaded"}
		}
		return judgetest.Quoted(a)
	})
	t.Setenv("PROCTOR_JUDGE_KEY", judgetest.Key)
	tok := tokenFile(t, "rollout-token")
	suite := "../../testdata/judged --filter ^judged-answer$ --env mem --token-file " + tok + " --insecure-loopback"

	// Without a judge, the service does not start.
	_, errs, code := runCLI(t, "", strings.Fields("serve "+suite)...)
	if code != 1 || !strings.Contains(errs, "give --judge-model") {
		t.Fatalf("serve without a judge: exit %d: %s", code, errs)
	}

	url, dir := startServe(t, suite+" --out "+filepath.Join(t.TempDir(), "serve")+" --judge-model judge-a --judge-base-url "+sa.OpenAIURL()+" --judge-api-key-env PROCTOR_JUDGE_KEY")
	c, err := client.New(url, "rollout-token")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	answer := func(text string) *api.Final {
		t.Helper()
		ro, err := c.Create(ctx, api.CreateRequest{Task: "judged-answer", Observation: api.ObsTree})
		if err != nil {
			t.Fatal(err)
		}
		sr, err := c.Step(ctx, ro.ID, api.StepRequest{Actions: []action.Action{{Kind: action.Answer, Text: text}}})
		if err != nil || !sr.Done || sr.Final == nil {
			t.Fatalf("answer %s: %+v %v", text, sr, err)
		}
		return sr.Final
	}
	asked := sa.Calls()
	if fin := answer("3"); fin.Status != api.StatusFinished || fin.Reward == nil || *fin.Reward != 1 ||
		!strings.Contains(string(fin.Verdict), "the answer is right") {
		t.Fatalf("the gold answer: %+v %s", fin, fin.Verdict)
	}
	if sa.Calls() == asked {
		t.Fatal("the judge was not asked")
	}
	if fin := answer("4"); fin.Status != api.StatusFinished || fin.Reward == nil || *fin.Reward != 0 || fin.Outcome != string(check.Failure) {
		t.Fatalf("a wrong answer: %+v", fin)
	}
	down.Store(true) // and an answer the judge's cache does not hold
	if fin := answer("three"); fin.Status != api.StatusError || fin.Reward != nil || !strings.Contains(fin.Reason, "judge") {
		t.Fatalf("a judge that gives no verdict: %+v", fin)
	}
	if _, err := os.Stat(filepath.Join(dir, JudgeCacheDir)); err != nil {
		t.Errorf("no judge cache in the run folder: %v", err)
	}
}
