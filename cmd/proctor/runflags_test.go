package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// refusedURL is the URL of a loopback port that nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestAgentPreflight: the pre-flight connects to an http agent's URL; a
// port that refuses the connection refuses the run at once, naming the
// URL and --agent-url, and leaves no run folder.
func TestAgentPreflight(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	refused := refusedURL(t)
	tests := []struct {
		name    string
		rc      runConfig
		timeout time.Duration // 0: agentDialTimeout's
		want    string        // "" when it passes
	}{
		{"answering", runConfig{Agent: "http", AgentURL: srv.URL}, 0, ""},
		{"answering, with a path", runConfig{Agent: "http", AgentURL: srv.URL + "/agent/"}, 0, ""},
		{"refused", runConfig{Agent: "http", AgentURL: refused}, 0, "the agent at " + refused + " (--agent-url) does not accept connections: dial tcp"},
		{"no connection in time", runConfig{Agent: "http", AgentURL: srv.URL}, time.Nanosecond, srv.URL + " (--agent-url) does not accept connections: dial tcp"},
		{"another agent is not dialled", runConfig{Agent: "noop", AgentURL: refused}, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.timeout > 0 {
				defer func(d time.Duration) { agentDialTimeout = d }(agentDialTimeout)
				agentDialTimeout = tc.timeout
			}
			ps := agentProblems(context.Background(), tc.rc)
			switch {
			case tc.want == "" && len(ps) > 0:
				t.Fatalf("problems %q, want none", ps)
			case tc.want != "" && (len(ps) != 1 || !strings.Contains(ps[0], tc.want)):
				t.Fatalf("problems %q, want one with %q", ps, tc.want)
			}
		})
	}
	out := filepath.Join(t.TempDir(), "runs", "x")
	for range 2 { // the same command again: refused for the same reason
		_, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/runner", "--filter", "^shell-write$", "--agent", "http",
			"--agent-url", refused, "--report", "none", "--out", out)
		if code != 1 || !strings.Contains(errs, "pre-flight refused the run") || !strings.Contains(errs, refused+" (--agent-url)") {
			t.Fatalf("exit %d, want the pre-flight refusing the agent:\n%s", code, errs)
		}
		if _, err := os.Stat(filepath.Dir(out)); err == nil {
			t.Fatalf("a refused run made %s", filepath.Dir(out))
		}
	}
}

// TestRefusedRunLeavesNoFolder: a run that the runner's pre-flight
// refuses (a judged task without a judge) removes what it wrote, so the
// same command can be given again; a folder that was there stays, empty.
func TestRefusedRunLeavesNoFolder(t *testing.T) {
	tests := []struct {
		name   string
		exists bool
	}{
		{"new folder", false},
		{"empty folder given", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			out := filepath.Join(base, "runs", "judged")
			if tc.exists {
				if err := os.MkdirAll(out, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 {
				_, errs, code := runCLI(t, "", "run", "../../testdata/judged", "--filter", "^judged-answer$", "--agent", "noop",
					"--report", "none", "--out", out)
				if code != 1 || !strings.Contains(errs, "pre-flight refused the run") || !strings.Contains(errs, "no judge model is configured") {
					t.Fatalf("exit %d, want the pre-flight refusing the run:\n%s", code, errs)
				}
			}
			entries, err := os.ReadDir(out)
			switch {
			case tc.exists && (err != nil || len(entries) != 0):
				t.Fatalf("the folder given holds %v (%v), want it empty", entries, err)
			case !tc.exists:
				if _, err := os.Stat(filepath.Join(base, "runs")); err == nil {
					t.Fatalf("the refused run left %s", filepath.Join(base, "runs"))
				}
			}
		})
	}
}

// TestResumeRefusesWhatItIgnores: a resumed run keeps its recorded
// selection and settings, so the flags that would change them are refused
// by name; those it takes (where it runs, the report, a judge), and those
// that give the recorded value again, are not.
func TestResumeRefusesWhatItIgnores(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The recorded filter keeps no task: a resume that passes the check
	// stops at the selection, before any environment starts.
	rc := runConfig{Suite: "../../testdata/runner", Agent: "replay", Obs: "som", Filter: "^nomatch$", Parallel: 1, Repeat: 1}
	cb, _ := json.Marshal(rc)
	if err := st.SetRun(store.Run{ID: "run", Config: cb}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	const passes = "no task selected"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"filter", []string{"--filter", "^download"}, "does not take what would change them: --filter; leave"},
		{"selection and agent", []string{"--tag", "web", "--parallel", "2", "--agent", "noop", "--suite", "suites/web"},
			"does not take what would change them: --agent, --parallel, --suite, --tag; leave"},
		{"suite argument", []string{"suites/web"}, "does not take what would change them: the suite argument suites/web; leave"},
		{"model settings", []string{"--model", "gpt-5", "--max-cost", "1", "--out", "runs/y"}, "does not take what would change them: --max-cost, --model, --out; leave"},
		{"judge flags without a judge", []string{"--judge-timeout", "1m", "--prices", "p.json"}, "does not take what would change them: --judge-timeout, --prices; leave"},
		{"the recorded values again", []string{"../../testdata/runner/", "--agent", "replay", "--filter", "^nomatch$", "--parallel", "1", "--out", dir}, passes},
		{"what it takes", []string{"--env", "browser", "--report", "none", "--token-file", "t", "--judge-model", "gpt-5", "--prices", "p.json"}, passes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", append([]string{"run", "--resume", dir}, tc.args...)...)
			if code != 1 || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, want %q:\n%s", code, tc.want, errs)
			}
			if tc.want != passes && !strings.Contains(errs, "continues the run with the selection and settings it recorded") {
				t.Fatalf("the refusal does not say the run keeps what it recorded:\n%s", errs)
			}
		})
	}
}

// TestRunSuiteArgumentAndSelection: run takes the suite as its argument
// (like validate), refuses two different suites, and a selection that
// keeps no task names the suite searched and how many tasks it holds.
func TestRunSuiteArgumentAndSelection(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the built-in suite is written out there
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"argument", []string{"run", "../../testdata/runner", "--agent", "noop", "--filter", "nomatch"},
			`no task selected: none of the 5 tasks of ../../testdata/runner matches --filter "nomatch"`},
		{"argument and the same --suite", []string{"run", "../../testdata/runner", "--suite", "../../testdata/runner/", "--agent", "noop", "--filter", "nomatch"},
			`none of the 5 tasks of ../../testdata/runner matches --filter`},
		{"two suites", []string{"run", "../../testdata/runner", "--suite", "../../testdata/browser", "--agent", "noop"},
			"two suites given: ../../testdata/runner as the argument and ../../testdata/browser with --suite"},
		{"tag", []string{"run", "--suite", "../../testdata/runner", "--agent", "noop", "--filter", "dialog", "--tag", "nosuch"},
			`no task selected: none of the 5 tasks of ../../testdata/runner matches --filter "dialog" and --tag "nosuch"`},
		{"default suite", []string{"run", "--agent", "noop", "--filter", "dialog-later"},
			`tasks of the built-in desktop suite matches --filter "dialog-later"`},
		{"validate, two suites", []string{"validate", "../../testdata/runner", "--suite", "../../testdata/browser"},
			"two suites given"},
		{"validate --suite", []string{"validate", "--suite", "../../testdata/runner", "--filter", "nomatch"},
			`none of the 5 tasks of ../../testdata/runner matches --filter`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", tc.args...)
			if code != 1 || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, want %q:\n%s", code, tc.want, errs)
			}
		})
	}
	out, _, _ := runCLI(t, "", "run", "--help")
	if !strings.Contains(out, "proctor run [SUITE] --agent NAME") {
		t.Errorf("run --help lacks the suite argument:\n%s", out)
	}
	// The summary and --parallel speak of every kind of environment.
	out, _, _ = runCLI(t, "", "--help")
	if !strings.Contains(out, "run         Run an agent on a suite of tasks in the pool's environments") {
		t.Errorf("proctor --help lacks run's summary:\n%s", out)
	}
	for _, c := range []string{"run", "validate"} {
		out, _, _ = runCLI(t, "", c, "--help")
		if regexp.MustCompile(`local desktops (running episodes|replaying) at once`).MatchString(out) ||
			!strings.Contains(out, "each guest, VNC desktop or Android device is one") {
			t.Errorf("%s --help: --parallel speaks of local desktops only:\n%s", c, out)
		}
	}
}

func TestPlural(t *testing.T) {
	tests := []struct {
		n          int
		noun, want string
	}{
		{0, "task", "0 tasks"},
		{1, "task", "1 task"},
		{4, "task", "4 tasks"},
		{1, "trajectory", "1 trajectory"},
		{21, "trajectory", "21 trajectories"},
		{1, "violation", "1 violation"},
	}
	for _, tc := range tests {
		if got := plural(tc.n, tc.noun); got != tc.want {
			t.Errorf("plural(%d, %q) = %q, want %q", tc.n, tc.noun, got, tc.want)
		}
	}
}

// TestRunResolution: a run records the size its tasks run at, and the
// distinct sizes when they differ.
func TestRunResolution(t *testing.T) {
	at := func(res ...string) []*task.Task {
		var ts []*task.Task
		for _, r := range res {
			ts = append(ts, &task.Task{Environment: task.Environment{Resolution: r}})
		}
		return ts
	}
	tests := []struct {
		name  string
		tasks []*task.Task
		want  string
	}{
		{"the default", at("", ""), "1920x1080"},
		{"all the web suite's", at("1280x800", "1280x800"), "1280x800"},
		{"mixed", at("1280x800", "", "1080x2400", "1280x800"), "1080x2400, 1920x1080, 1280x800"},
	}
	for _, tc := range tests {
		if got := resolution(tc.tasks); got != tc.want {
			t.Errorf("%s: resolution = %q, want %q", tc.name, got, tc.want)
		}
	}
}
