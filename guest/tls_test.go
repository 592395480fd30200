package guest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/remote"
)

// serveTLS serves s with a new self-signed certificate, as the daemon
// does by default, and returns its address and the certificate's
// fingerprint.
func serveTLS(t *testing.T, s *Server) (addr, fingerprint string) {
	t.Helper()
	cert, fingerprint, err := SelfSigned("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	if s.Log == nil { // quiet: failed handshakes are expected here
		s.Log = log.New(io.Discard, "", 0)
	}
	return serveConns(t, s), fingerprint
}

// TestTLSPinned dials a TLS daemon by its pinned fingerprint, by IP and by
// name, and uses it; and checks the certificate SelfSigned makes.
func TestTLSPinned(t *testing.T) {
	addr, fingerprint := serveTLS(t, &Server{Env: newRootEnv(t), Token: "tok", Build: "v9.9"})
	_, port, _ := net.SplitHostPort(addr)
	ctx := context.Background()
	for _, target := range []string{
		"https://" + addr + "#sha256=" + fingerprint,
		// The pin is all that is checked: the name is not, nor the CA.
		"https://localhost:" + port + "#sha256=" + strings.ToUpper(fingerprint),
	} {
		c, err := remote.Dial(ctx, target, "tok")
		if err != nil {
			t.Fatalf("Dial(%q): %v", target, err)
		}
		if v := c.Version(); v.API != remote.APIVersion || v.Build != "v9.9" {
			t.Errorf("version %+v", v)
		}
		if err := c.WriteFile(ctx, "~/t.txt", []byte("over TLS")); err != nil {
			t.Fatal(err)
		}
		if b, err := c.ReadFile(ctx, "~/t.txt"); err != nil || string(b) != "over TLS" {
			t.Fatalf("read back %q, %v", b, err)
		}
		c.Close()
	}

	cert, fp, err := SelfSigned("10.1.2.3", "guest.example", "0.0.0.0", "")
	if err != nil {
		t.Fatal(err)
	}
	if fp != remote.Fingerprint(cert.Certificate[0]) || len(fp) != 64 || strings.ToLower(fp) != fp {
		t.Errorf("fingerprint %q is not the lowercase hex SHA-256 of the certificate", fp)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	for _, name := range []string{"10.1.2.3", "guest.example", "localhost", "127.0.0.1", "::1"} {
		if _, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots}); err != nil {
			t.Errorf("the certificate is not valid for %s: %v", name, err)
		}
	}
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: "10.9.9.9", Roots: roots}); err == nil {
		t.Error("the certificate is valid for an address it was not made for")
	}
	if key, ok := cert.PrivateKey.(*ecdsa.PrivateKey); !ok || key.Curve != elliptic.P256() {
		t.Errorf("key %T, want ECDSA P-256", cert.PrivateKey)
	}
}

// TestDialErrors checks that each way of dialling wrong is one error that
// names the daemon, is its own sentinel and not another's, and never
// shows the token.
func TestDialErrors(t *testing.T) {
	const token = "s3cret-token-value"
	tlsAddr, fingerprint := serveTLS(t, &Server{Env: newRootEnv(t), Token: token})
	plainAddr := serveConns(t, &Server{Env: newRootEnv(t), Token: token})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()
	other := strings.Repeat("0", 64)
	sentinels := []error{remote.ErrUnauthorized, remote.ErrFingerprint, remote.ErrTLSMismatch, remote.ErrVersion, env.ErrClosed}
	tests := []struct {
		name, target, token string
		is                  []error
		says                []string
	}{
		{"a wrong token", "https://" + tlsAddr + "#sha256=" + fingerprint, "wrong-" + token,
			[]error{remote.ErrUnauthorized}, []string{"guest at https://" + tlsAddr + ": unauthorized"}},
		{"a wrong fingerprint", "https://" + tlsAddr + "#sha256=" + other, token,
			[]error{remote.ErrFingerprint}, []string{"guest at https://" + tlsAddr, "certificate sha256=" + fingerprint, "pinned sha256=" + other}},
		{"no pin for a self-signed certificate", "https://" + tlsAddr, token,
			[]error{remote.ErrFingerprint}, []string{"guest at https://" + tlsAddr, "not one this machine trusts", "#sha256="}},
		{"plain HTTP to TLS", "http://" + tlsAddr, token,
			[]error{remote.ErrTLSMismatch}, []string{"guest at http://" + tlsAddr + " speaks TLS: use https://" + tlsAddr + "#sha256="}},
		{"TLS to plain HTTP", "https://" + plainAddr + "#sha256=" + other, token,
			[]error{remote.ErrTLSMismatch}, []string{"guest at https://" + plainAddr + " speaks plain HTTP (started with --insecure?)"}},
		{"nobody listening", "https://" + closedAddr + "#sha256=" + other, token,
			[]error{env.ErrClosed, syscall.ECONNREFUSED}, []string{"guest at https://" + closedAddr + ": cannot reach the daemon", "connection refused"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := remote.Dial(context.Background(), tc.target, tc.token)
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			msg := err.Error()
			for _, want := range tc.is {
				if !errors.Is(err, want) {
					t.Errorf("%q is not %v", msg, want)
				}
			}
			for _, s := range sentinels {
				if !errors.Is(tc.is[0], s) && errors.Is(err, s) {
					t.Errorf("%q is %v too", msg, s)
				}
			}
			for _, want := range tc.says {
				if !strings.Contains(msg, want) {
					t.Errorf("%q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, token) || strings.Count(msg, "guest at") != 1 || strings.Contains(msg, "\n") {
				t.Errorf("%q: want one line naming the daemon once, without the token", msg)
			}
		})
	}
}

// TestWrongFingerprintSendsNothing checks that a client that finds another
// certificate than the pinned one sends no request, so no token.
func TestWrongFingerprintSendsNothing(t *testing.T) {
	var buf lockedBuffer
	addr, _ := serveTLS(t, &Server{Env: newRootEnv(t), Token: "tok", Log: log.New(&buf, "", 0)})
	if _, err := remote.Dial(context.Background(), "https://"+addr+"#sha256="+strings.Repeat("1", 64), "tok"); !errors.Is(err, remote.ErrFingerprint) {
		t.Fatalf("Dial: %v", err)
	}
	// The daemon logs the failed handshake once the client hangs up;
	// a request would be logged before it.
	got := ""
	for range 100 {
		if got = buf.String(); strings.Contains(got, "TLS handshake error") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(got, "TLS handshake error") || strings.Contains(got, "GET") {
		t.Errorf("the daemon's log: %q, want a failed handshake and no request", got)
	}
}

// lockedBuffer is a log's buffer that a test reads while the server writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// setAPIVersion makes the code below speak version v, until the test ends.
func setAPIVersion(t *testing.T, v string) {
	old := apiVersion
	apiVersion = v
	t.Cleanup(func() { apiVersion = old })
}

// TestVersionMismatch checks the handshake both ways: a client refuses a
// daemon of another version, a daemon refuses a client of another version,
// and each error names both versions. (A client of another version is
// played in env/remote's TestClientOfAnotherVersion.)
func TestVersionMismatch(t *testing.T) {
	ctx := context.Background()
	t.Run("the daemon speaks 2", func(t *testing.T) {
		setAPIVersion(t, "2")
		h := (&Server{Env: newRootEnv(t), Token: "tok"}).Handler()
		apiVersion = "1"
		srv := httptest.NewServer(h)
		defer srv.Close()
		_, err := remote.Dial(ctx, srv.URL, "tok")
		want := "guest at " + srv.URL + " speaks API version 2; this proctor speaks 1 (upgrade one of them)"
		if !errors.Is(err, remote.ErrVersion) || err.Error() != want {
			t.Fatalf("Dial: %v, want %q", err, want)
		}
	})
	t.Run("the daemon refuses a client of version 2", func(t *testing.T) {
		srv := httptest.NewServer((&Server{Env: newRootEnv(t), Token: "tok"}).Handler())
		defer srv.Close()
		for _, tc := range []struct {
			declared, auth string
			status         int
			kind           string
		}{
			{"2", "Bearer tok", http.StatusConflict, "version"},
			{"2", "", http.StatusConflict, "version"}, // before the token: v2 may send it otherwise
			{"", "Bearer tok", http.StatusOK, ""},     // curl declares nothing
			{"", "", http.StatusUnauthorized, "unauthorized"},
			{"1", "Bearer tok", http.StatusOK, ""},
		} {
			req, _ := http.NewRequest("GET", srv.URL+remote.PathVersion, nil)
			if tc.declared != "" {
				req.Header.Set(remote.APIHeader, tc.declared)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var e remote.ErrorBody
			json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			if resp.StatusCode != tc.status || e.Kind != tc.kind || resp.Header.Get(remote.APIHeader) != "1" {
				t.Errorf("declaring %q: %d %q, %s %q; want %d %q, %s \"1\"", tc.declared, resp.StatusCode, e.Kind, remote.APIHeader, resp.Header.Get(remote.APIHeader), tc.status, tc.kind, remote.APIHeader)
			}
			if tc.kind == "version" && e.Error != "this daemon speaks API version 1; the client speaks 2 (upgrade one of them)" {
				t.Errorf("the message %q does not name both versions", e.Error)
			}
		}
	})
	// Daemons other than this package's: one of a later version that
	// serves anyone, and one from before the handshake.
	for _, tc := range []struct {
		name, header string
		status       int
		says         string
	}{
		{"a lenient daemon of version 2", "2", http.StatusOK, "speaks API version 2; this proctor speaks 1"},
		{"a daemon that declares no version", "", http.StatusNotFound, "does not say which API version it speaks"},
		{"a daemon that declares none, but answers", "", http.StatusOK, "does not say which API version it speaks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.header != "" {
					w.Header().Set(remote.APIHeader, tc.header)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				w.Write([]byte(`{"api":"2","build":"v2","error":"no API here","kind":"no_route"}`))
			}))
			defer srv.Close()
			_, err := remote.Dial(ctx, srv.URL, "tok")
			if !errors.Is(err, remote.ErrVersion) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), srv.URL) {
				t.Fatalf("Dial: %v, want %v saying %q", err, remote.ErrVersion, tc.says)
			}
		})
	}
}

// TestTLSHandshakeTimeout checks that a connection that never finishes
// its TLS handshake is closed like one that never finishes its request.
func TestTLSHandshakeTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	addr, _ := serveTLS(t, &Server{Env: newRootEnv(t), Token: "tok", ReadHeaderTimeout: timeout})
	for _, send := range []string{"", "\x16\x03\x01\x02\x00"} { // nothing; a ClientHello's header only
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte(send))
		if took := untilClosed(t, c, 5*time.Second); took > timeout+2*time.Second {
			t.Errorf("sending %q: closed after %s, the timeout is %s", send, took, timeout)
		}
	}
}
