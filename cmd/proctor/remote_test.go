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
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/guest"
	"github.com/proctor-eval/proctor/store"
)

// tokenFile writes a token to a file only its owner reads.
func tokenFile(t *testing.T, token string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(f, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

var servingRE = regexp.MustCompile(`serving on (https://\S+#sha256=[0-9a-f]{64})`)

// startGuest starts `proctor guest --local` with TLS as a process of its
// own, as on another machine, and returns the address it prints (with the
// certificate's fingerprint) and the process.
func startGuest(t *testing.T, token string) (string, *exec.Cmd) {
	t.Helper()
	target, _, cmd := startGuestWith(t, token, "")
	return target, cmd
}

var vncOnRE = regexp.MustCompile(`VNC on vnc://(\S+)`)

// startGuestWith starts `proctor guest --local` with more options; with
// --vnc among them it also returns the VNC server's address it prints.
func startGuestWith(t *testing.T, token, extra string) (target, vnc string, _ *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=guest --local --listen 127.0.0.1:0 --token-file "+token+" "+extra)
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
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	wantVNC := strings.Contains(extra, "--vnc ")
	sc := bufio.NewScanner(stderr)
	var said []string
	for sc.Scan() {
		said = append(said, sc.Text())
		if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
			target = m[1]
		}
		if m := vncOnRE.FindStringSubmatch(sc.Text()); m != nil {
			vnc = m[1]
		}
		if target != "" && (vnc != "" || !wantVNC) {
			go func() {
				for sc.Scan() {
				}
			}()
			return target, vnc, cmd
		}
	}
	t.Fatalf("the guest never said where it serves:\n%s", strings.Join(said, "\n"))
	return "", "", nil
}

// TestValidateOnTwoTLSGuests validates tasks of the built-in suite on two
// guest daemons started as separate processes with TLS, the runner
// pinning each one's certificate.
func TestValidateOnTwoTLSGuests(t *testing.T) {
	needDesktop(t)
	tok := tokenFile(t, guest.NewToken())
	a, _ := startGuest(t, tok)
	b, _ := startGuest(t, tok)
	_, errs, code := runCLI(t, "", "validate", "../../suites/desktop", "--filter", "^(calc-product|editor-write-1|count-words-1|dialog-answer-install-now)$",
		"--token-file", tok, "--env", "guest="+a, "--env", "guest="+b)
	if code != 0 || !strings.Contains(errs, "4 tasks") || !strings.Contains(errs, " 0 violations") {
		t.Fatalf("validate on two guests exited %d:\n%s", code, errs)
	}
}

// TestGuestKilledMidRun kills one of two guests once the run has recorded
// an episode: the run finishes on the other, loses no finished episode,
// and its report names the dead guest.
func TestGuestKilledMidRun(t *testing.T) {
	needDesktop(t)
	tok := tokenFile(t, guest.NewToken())
	a, _ := startGuest(t, tok)
	b, bproc := startGuest(t, tok)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=run --suite ../../testdata/runner --agent replay --report none --token-file "+tok+
		" --env guest="+a+" --env guest="+b+" --out "+dir)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var said []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		said = append(said, sc.Text())
		if strings.HasPrefix(sc.Text(), "[1/5]") {
			bproc.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	for sc.Scan() {
		said = append(said, sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the run failed (%v):\n%s", err, strings.Join(said, "\n"))
	}
	where := strings.SplitN(b, "#", 2)[0]
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := st.Results()
	st.Close()
	if len(rs) != 5 {
		t.Fatalf("%d episodes recorded, want 5:\n%s", len(rs), strings.Join(said, "\n"))
	}
	for _, r := range rs {
		if r.Outcome != "success" {
			t.Errorf("%s: %s (%s)", r.Task, r.Outcome, r.Reason)
		}
	}
	out, _, code := runCLI(t, "", "report", dir)
	if code != 0 || !strings.Contains(out, "Lost environments") || !strings.Contains(out, "guest "+where) {
		t.Fatalf("the report does not name the dead guest %s:\n%s\nrun said:\n%s", where, out, strings.Join(said, "\n"))
	}
}

// TestGuestPreflightErrors: a wrong token, a wrong fingerprint, plain HTTP
// to a TLS daemon and another API version each stop the run before
// anything is scored, with one clear error.
func TestGuestPreflightErrors(t *testing.T) {
	needDesktop(t)
	tok := tokenFile(t, "right-token")
	a, _ := startGuest(t, tok)
	wrongFP := a[:len(a)-1] + map[bool]string{true: "0", false: "1"}[!strings.HasSuffix(a, "0")]
	plain := "http://" + strings.TrimPrefix(strings.SplitN(a, "#", 2)[0], "https://")
	// A daemon that answers with another API version.
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Proctor-API", "99")
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"api": "99", "ok": true, "version": "99"})
	}))
	defer other.Close()
	otherTarget := other.URL + "#sha256=" + remote.Fingerprint(other.Certificate().Raw)
	tests := []struct {
		name, target, token, want string
	}{
		{"wrong token", a, tokenFile(t, "wrong-token"), "unauthorized"},
		{"wrong fingerprint", wrongFP, tok, "not the pinned sha256="},
		{"plain HTTP to a TLS daemon", plain, tok, "speaks TLS"},
		{"another API version", otherTarget, tok, "99"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			_, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/runner", "--agent", "replay", "--report", "none",
				"--token-file", tc.token, "--env", "guest="+tc.target, "--out", dir)
			if code == 0 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 2 {
				t.Fatalf("exit %d, stderr:\n%s\nwant one error mentioning %q", code, errs, tc.want)
			}
			if strings.Contains(errs, "right-token") || strings.Contains(errs, "wrong-token") {
				t.Fatalf("the token shows in the error:\n%s", errs)
			}
			if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err == nil {
				t.Fatalf("a run folder was made: something was scored")
			}
			fmt.Fprintln(os.Stderr, tc.name+": "+strings.TrimSpace(errs))
		})
	}
}
