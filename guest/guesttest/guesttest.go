// Package guesttest serves an environment through the guest daemon, over
// TLS on loopback, for tests: one call gives what a client needs (the
// target with the certificate's fingerprint, and the token), and the
// test's cleanup stops the daemon.
package guesttest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/guest"
)

// Daemon is a guest daemon serving one environment.
type Daemon struct {
	// Target is where the daemon is, as it prints it at start and as
	// remote.Dial and --env guest= read it:
	// https://127.0.0.1:PORT#sha256=FINGERPRINT.
	Target      string
	Addr        string // 127.0.0.1:PORT
	URL         string // https://127.0.0.1:PORT, the base of the API's paths
	Token       string
	Fingerprint string // of the daemon's self-signed certificate
	Server      *guest.Server

	cert *x509.Certificate
	stop func()
	once sync.Once
}

// Serve serves e with a new token and a new self-signed certificate until
// the test ends. The daemon does not close e.
func Serve(t testing.TB, e env.Env) *Daemon {
	t.Helper()
	return ServeWith(t, &guest.Server{Env: e})
}

// ServeWith serves s as Serve does: an empty Token is a new one, and its
// TLS is a new self-signed certificate. A nil Log is a quiet one.
func ServeWith(t testing.TB, s *guest.Server) *Daemon {
	t.Helper()
	if s.Token == "" {
		s.Token = guest.NewToken()
	}
	cert, fp, err := guest.SelfSigned("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	if s.Log == nil {
		s.Log = log.New(io.Discard, "", 0)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	addr := ln.Addr().String()
	target := remote.Target{Scheme: "https", Host: addr, Fingerprint: fp}
	d := &Daemon{Target: target.String(), Addr: addr, URL: target.Base(), Token: s.Token, Fingerprint: fp,
		Server: s, cert: cert.Leaf}
	d.stop = func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("the guest daemon at %s: %v", addr, err)
		}
	}
	t.Cleanup(d.Close)
	return d
}

// Close stops the daemon before the test ends; the test's cleanup does
// it otherwise.
func (d *Daemon) Close() { d.once.Do(d.stop) }

// Dial returns a client of the daemon, closed when the test ends.
func (d *Daemon) Dial(t testing.TB) *remote.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := remote.Dial(ctx, d.Target, d.Token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// HTTPClient returns an HTTP client that trusts the daemon's certificate
// alone, for requests made by hand (they need the token too).
func (d *Daemon) HTTPClient() *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(d.cert)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}
	return &http.Client{Transport: tr}
}
