package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/store"
)

// TestExampleJudgeServer runs the README's example judge server and the
// README's own command that points a run at it, with the key variable
// unset: a judge at a loopback address needs no key, and the example
// answers the JSON the judge's parser reads.
func TestExampleJudgeServer(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	var server, run string
	cmds := readmeCommands(readmeFences(t))
	for i, c := range cmds {
		if strings.HasPrefix(c.key(), "python3 examples/judge-server/judge.py ") && i+1 < len(cmds) {
			server, run = c.key(), cmds[i+1].key()
		}
	}
	if server == "" || !strings.Contains(run, "--judge-base-url http://127.0.0.1:8760/v1") {
		t.Fatalf("the README has no example judge server followed by a run that asks it (%q, %q)", server, run)
	}
	args, ok := proctorArgs(run)
	if !ok {
		t.Fatalf("%q does not run bin/proctor", run)
	}

	judge := exec.Command(py, "examples/judge-server/judge.py", "0")
	judge.Dir = "../.."
	out, _ := judge.StdoutPipe()
	if err := judge.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { judge.Process.Kill(); judge.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	port := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	dir := filepath.Join(t.TempDir(), "run")
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "http://127.0.0.1:8760"):
			args[i] = strings.Replace(a, "8760", port, 1)
		case strings.HasPrefix(a, "testdata/"):
			args[i] = "../../" + a
		case i > 0 && args[i-1] == "--out":
			args[i] = dir
		}
	}
	t.Setenv("OPENAI_API_KEY", "")
	stdout, errs, code := runCLI(t, "", args...)
	if code != 0 || !strings.Contains(errs, "success      judged-answer") || !strings.Contains(stdout, "openai:local") {
		t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, errs)
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := st.Results()
	if err != nil || len(rs) != 1 || rs[0].Outcome != "success" {
		t.Fatalf("results %+v (%v), want judged-answer passed", rs, err)
	}
}

// TestJudgeFlagsHelp: the help of every command with a judge says what
// the judge is sent, the JSON it must answer, and that a local judge
// needs no key.
func TestJudgeFlagsHelp(t *testing.T) {
	for _, cmd := range []string{"run", "validate", "judge"} {
		out, _, code := runCLI(t, "", cmd, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		for _, w := range []string{`"BEGIN EVIDENCE CODE"`, `"END EVIDENCE CODE"`, `{"verdict": "pass" or "fail", "reason": "..."}`,
			`"criteria": [{"id", "pass": true or false, "reason"}]`, "last one not quoted from the evidence",
			"examples/judge-server/judge.py", "a loopback one (127.0.0.1, ::1, localhost: a judge served here) needs no key",
			"it may be empty or unset where --judge-base-url is a loopback address"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s --help lacks %q", cmd, w)
			}
		}
	}
}
