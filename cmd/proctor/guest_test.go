package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
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

	"github.com/proctor-eval/proctor/env/remote"
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
	c, err := remote.Dial(ctx, addr, "tok")
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

// TestGuestListen checks how the daemon serves for each choice of
// --listen, --insecure, --tls-cert and --tls-key: TLS unless --insecure,
// on every address, with the fingerprint printed and in the target, and a
// warning for plain HTTP off loopback; and that a runner can dial the
// target it prints.
func TestGuestListen(t *testing.T) {
	dir := t.TempDir()
	cert, fingerprint, err := guest.SelfSigned("guest.example")
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
	tests := []struct {
		name   string
		o      guestOptions
		scheme string // "": refused
		says   []string
		err    string
	}{
		{name: "loopback: TLS", o: guestOptions{listen: "127.0.0.1:0"}, scheme: "https", says: []string{"fingerprint sha256="}},
		{name: "every interface: TLS", o: guestOptions{listen: "0.0.0.0:0"}, scheme: "https", says: []string{"fingerprint sha256="}},
		{name: "a certificate of one's own", o: guestOptions{listen: "127.0.0.1:0", tlsCert: certFile, tlsKey: keyFile}, scheme: "https", says: []string{"fingerprint sha256=" + fingerprint}},
		{name: "loopback, --insecure", o: guestOptions{listen: "127.0.0.1:0", insecure: true}, scheme: "http"},
		{name: "every interface, --insecure", o: guestOptions{listen: "0.0.0.0:0", insecure: true}, scheme: "http", says: []string{"warning: listening on every network interface", "plain HTTP"}},
		{name: "a certificate without a key", o: guestOptions{listen: "0.0.0.0:0", tlsCert: certFile}, err: "--tls-cert and --tls-key go together"},
		{name: "a key without a certificate", o: guestOptions{listen: "0.0.0.0:0", tlsKey: keyFile}, err: "--tls-cert and --tls-key go together"},
		{name: "--insecure and a certificate", o: guestOptions{listen: "0.0.0.0:0", insecure: true, tlsCert: certFile, tlsKey: keyFile}, err: "give one"},
		{name: "a missing certificate", o: guestOptions{listen: "0.0.0.0:0", tlsCert: filepath.Join(dir, "none"), tlsKey: keyFile}, err: "--tls-cert, --tls-key: open"},
		{name: "a key of another certificate", o: guestOptions{listen: "0.0.0.0:0", tlsCert: certFile, tlsKey: certFile}, err: "--tls-cert, --tls-key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			ln, config, target, err := guestListen(tc.o, &stderr)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				if ln != nil {
					t.Error("listening after an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			out := stderr.String()
			for _, s := range tc.says {
				if !strings.Contains(out, s) {
					t.Errorf("stderr %q does not say %q", out, s)
				}
			}
			if len(tc.says) == 0 && out != "" {
				t.Errorf("stderr %q, want nothing", out)
			}
			if target.Scheme != tc.scheme || (config != nil) != (tc.scheme == "https") {
				t.Fatalf("target %s, TLS %v; want %s", target, config != nil, tc.scheme)
			}
			if tc.scheme == "https" {
				if !strings.Contains(out, "fingerprint sha256="+target.Fingerprint+"\n") || remote.Fingerprint(config.Certificates[0].Certificate[0]) != target.Fingerprint {
					t.Errorf("stderr %q, target %s: not the served certificate's fingerprint", out, target)
				}
				if strings.Contains(out, "plain HTTP") {
					t.Errorf("stderr %q warns of plain HTTP over TLS", out)
				}
			}
			// Dial the target as printed, over loopback.
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- (&guest.Server{Token: "tok", TLS: config}).Serve(ctx, ln) }()
			defer func() { cancel(); <-done }()
			_, port, _ := net.SplitHostPort(target.Host)
			target.Host = net.JoinHostPort("127.0.0.1", port)
			c, err := remote.Dial(ctx, target.String(), "tok")
			if err != nil {
				t.Fatalf("Dial(%s): %v", target, err)
			}
			c.Close()
		})
	}
}

// TestGuestRefusesBeforeDesktop checks that the command refuses TLS
// options it cannot serve, on a public address, before it starts a
// desktop, and never falls back to plain HTTP.
func TestGuestRefusesBeforeDesktop(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--tls-cert", none}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-cert", none, "--tls-key", none}, "--tls-cert, --tls-key: open " + none},
		{[]string{"--insecure", "--tls-cert", "a", "--tls-key", "b"}, "--insecure serves plain HTTP, --tls-cert TLS: give one"},
	} {
		c := newGuestCommand()
		// No token: a new one would be printed if the refusal came late.
		c.SetArgs(append([]string{"--local", "--listen", "0.0.0.0:0"}, tc.args...))
		var stderr bytes.Buffer
		c.SetOut(io.Discard)
		c.SetErr(&stderr)
		start := time.Now()
		err := c.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.says) || time.Since(start) > 2*time.Second {
			t.Errorf("guest %s: %v after %s, want a refusal saying %q at once", tc.args, err, time.Since(start), tc.says)
		}
		if out := stderr.String(); strings.Contains(out, "desktop") || strings.Contains(out, "token:") {
			t.Errorf("guest %s printed %q", tc.args, out)
		}
	}
}
