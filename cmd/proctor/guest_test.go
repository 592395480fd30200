package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env/xdesktop"
	"github.com/proctor-eval/proctor/guest"
)

// When the test binary runs with PROCTOR_TEST_MAIN set, it is proctor.
func init() {
	if args := os.Getenv("PROCTOR_TEST_MAIN"); args != "" {
		os.Args = append([]string{"proctor"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
}

// TestGuestCrashLeavesNothing starts `proctor guest --local`, has it launch
// an application and a background command, kills it with SIGKILL, and
// checks that none of the desktop's processes survive it.
func TestGuestCrashLeavesNothing(t *testing.T) {
	for _, b := range []string{"Xvfb", "dbus-daemon", "openbox", "yad"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=guest --local --listen 127.0.0.1:0 --token tok --verbose")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addr := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, after, ok := strings.Cut(sc.Text(), "serving on "); ok {
			addr = after
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if addr == "" {
		t.Fatal("the daemon did not say where it serves")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := guest.Dial(ctx, addr, "tok")
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := filepath.Base(filepath.Dir(info.Home))
	if _, err := c.Run(ctx, "(yad --text=crash &) ; (setsid sleep 400 &)", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := len(xdesktop.Processes(id)); n < 4 {
		t.Fatalf("expected the desktop's processes to run, found %d", n)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	var left []int
	for range 50 {
		if left = xdesktop.Processes(id); len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Daemonised processes outlive a SIGKILLed parent; whatever is left is
	// named here so that it can be fixed.
	if len(left) > 0 {
		for _, pid := range left {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("left running after the daemon died: %d %q", pid, bytes.ReplaceAll(comm, []byte{0}, []byte{' '}))
		}
	}
}

// TestGuestToken checks where the daemon's token comes from, that a token
// file must hold one, and that each risky way of giving it is warned
// about on stderr without the token itself being printed.
func TestGuestToken(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	private := file("private", "  from-file\n", 0o600)
	shared := file("shared", "from-shared-file\n", 0o644)
	empty := file("empty", " \n\t\n", 0o600)
	tests := []struct {
		name     string
		o        guestOptions
		env      string
		token    string // "": a new one
		err      string
		warnings []string
	}{
		{name: "a private file, trimmed", o: guestOptions{tokenFile: private}, env: "from-env", token: "from-file"},
		{name: "a file others can read", o: guestOptions{tokenFile: shared}, token: "from-shared-file", warnings: []string{"readable by other users"}},
		{name: "an empty file", o: guestOptions{tokenFile: empty}, err: "is empty"},
		{name: "a missing file", o: guestOptions{tokenFile: filepath.Join(dir, "none")}, err: "--token-file"},
		{name: "both flags", o: guestOptions{tokenFile: private, token: "x"}, err: "give one"},
		{name: "the flag", o: guestOptions{token: "from-flag"}, env: "from-env", token: "from-flag", warnings: []string{"visible to every user in ps; prefer --token-file or PROCTOR_TOKEN"}},
		{name: "the environment", env: "from-env", token: "from-env"},
		{name: "none: a new one", warnings: []string{"token: "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			token, err := guestToken(tc.o, tc.env, &stderr)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.token != "" && token != tc.token:
				t.Errorf("token %q, want %q", token, tc.token)
			case tc.token == "" && len(token) < 20:
				t.Errorf("new token %q is too short", token)
			}
			out := stderr.String()
			for _, w := range tc.warnings {
				if !strings.Contains(out, w) {
					t.Errorf("stderr %q does not say %q", out, w)
				}
			}
			if len(tc.warnings) == 0 && out != "" {
				t.Errorf("stderr %q, want nothing", out)
			}
			// Only a token nobody knows yet is printed.
			if tc.token != "" && strings.Contains(out, token) {
				t.Errorf("stderr %q shows the token", out)
			}
		})
	}
}

// TestGuestTokenFileEmpty checks that the command refuses an empty token
// file before it starts anything.
func TestGuestTokenFileEmpty(t *testing.T) {
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := newGuestCommand()
	c.SetArgs([]string{"--local", "--listen", "127.0.0.1:0", "--token-file", p})
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	if err := c.Execute(); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("guest with an empty token file: %v", err)
	}
}

// TestGuestExposure checks that serving on anything but loopback is
// warned about.
func TestGuestExposure(t *testing.T) {
	tests := []struct {
		addr string
		warn string // "": none
	}{
		{"127.0.0.1:7400", ""},
		{"127.0.0.2:7400", ""},
		{"[::1]:7400", ""},
		{"0.0.0.0:7400", "every network interface"},
		{"[::]:7400", "every network interface"},
		{"192.168.1.20:7400", "not a loopback address"},
		{"[fe80::1]:7400", "not a loopback address"},
	}
	for _, tc := range tests {
		a, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		got := exposure(a)
		if tc.warn == "" && got != "" || !strings.Contains(got, tc.warn) {
			t.Errorf("%s: warning %q, want one saying %q", tc.addr, got, tc.warn)
		}
		if tc.warn != "" && !strings.Contains(got, "plain HTTP") {
			t.Errorf("%s: warning %q does not say why", tc.addr, got)
		}
	}
}
