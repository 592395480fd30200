package xdesktop

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/query"
	"github.com/proctor-eval/proctor/task"
)

// TestPrivateNetwork: an app with network: private listens on its
// desktop's own loopback. Two desktops serve the same port at once; the
// loopback probe of each reads its own desktop's server; the machine's
// loopback does not reach either; a reset ends the servers and keeps the
// namespace; without a server the probe is an error (nothing answers),
// not a value.
func TestPrivateNetwork(t *testing.T) {
	need(t, "python3")
	const port = 18764
	server := task.AppSpec{Command: "python3 -m http.server --bind 127.0.0.1 " + "18764", Network: task.NetworkPrivate}
	serve := func(d *Desktop, page string) {
		t.Helper()
		setup := env.Setup{Apps: map[string]task.AppSpec{"server": server}, Steps: []task.Step{
			{Write: &task.Write{Path: "~/" + page, Content: "desktop " + page}},
			{Launch: &task.Launch{App: "server"}},
			// The machine's loopback has no such server: only a command in
			// the desktop's namespace sees it come up.
			{Run: &task.Run{Command: "true", Network: task.NetworkPrivate, Timeout: duration.Duration(20 * time.Second),
				Until: `python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:18764/")'`}},
		}}
		if err := d.Reset(ctx(t), setup); err != nil {
			t.Fatal(err)
		}
	}
	probe := func(d *Desktop, page string) (string, bool, error) {
		return env.CallLoopback(ctx(t), d, query.Service{HTTP: &query.HTTP{Port: port, Path: "/" + page}})
	}
	a, b := start(t), start(t)
	serve(a, "a.txt")
	serve(b, "b.txt")
	for _, tc := range []struct {
		d          *Desktop
		page, want string
		found      bool
	}{{a, "a.txt", "desktop a.txt", true}, {b, "b.txt", "desktop b.txt", true}, {a, "b.txt", "", false}} {
		v, found, err := probe(tc.d, tc.page)
		if err != nil || found != tc.found || tc.found && v != tc.want {
			t.Fatalf("probe of %s: %q found %v err %v, want %q found %v", tc.page, v, found, err, tc.want, tc.found)
		}
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:18764", time.Second); err == nil {
		c.Close()
		t.Fatal("the machine's loopback reaches a desktop's private server")
	}
	if res, err := a.Run(ctx(t), `python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:18764/")'`, 10*time.Second); err != nil || res.ExitCode == 0 {
		t.Fatalf("a command on the machine's network reaches the private server: %+v %v", res, err)
	}
	if err := a.Reset(ctx(t), env.Setup{}); err != nil {
		t.Fatal(err)
	}
	q := query.Service{HTTP: &query.HTTP{Port: port, Path: "/"}}
	if _, _, err := env.CallLoopback(ctx(t), a, q); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("after the reset the server still answers, or another error: %v", err)
	}
	// The namespace outlives the reset: an app started again serves there.
	serve(a, "c.txt")
	if v, _, err := probe(a, "c.txt"); err != nil || v != "desktop c.txt" {
		t.Fatalf("after the reset: %q %v", v, err)
	}
}

// TestLoopbackTransportIgnoresHost: whatever host a request names, the
// transport reaches the desktop's loopback only.
func TestLoopbackTransportIgnoresHost(t *testing.T) {
	need(t)
	d := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.invalid:80/", nil)
	_, err := d.LoopbackTransport(18765).RoundTrip(req)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:18765") {
		t.Fatalf("a request for another host: %v", err)
	}
}
