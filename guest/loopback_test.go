package guest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/query"
	"github.com/proctor-eval/proctor/task"
)

// TestLoopbackThroughTheDaemon: a remote desktop's app with network:
// private is read by the checks' loopback probes through the daemon: a
// page, a status that is not 2xx, and a port where nothing listens.
func TestLoopbackThroughTheDaemon(t *testing.T) {
	need(t, "python3")
	srv, token := serve(t)
	ctx := context.Background()
	c, err := Dial(ctx, srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	const wait = `python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:18766/")'`
	setup := env.Setup{Apps: map[string]task.AppSpec{"server": {Command: "python3 -m http.server --bind 127.0.0.1 18766", Network: task.NetworkPrivate}},
		Steps: []task.Step{
			{Write: &task.Write{Path: "~/sky.json", Content: `{"fov": 60}`}},
			{Launch: &task.Launch{App: "server"}},
			{Run: &task.Run{Command: "true", Network: task.NetworkPrivate, Until: wait, Timeout: duration.Duration(20 * time.Second)}},
		}}
	if err := c.Reset(ctx, setup); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
		found      bool
	}{{"/sky.json", `{"fov": 60}`, true}, {"/none.json", "", false}} {
		v, found, err := env.CallLoopback(ctx, c, query.Service{HTTP: &query.HTTP{Port: 18766, Path: tc.path}})
		if err != nil || found != tc.found || tc.found && v != tc.want {
			t.Fatalf("%s: %q found %v err %v", tc.path, v, found, err)
		}
	}
	if _, _, err := env.CallLoopback(ctx, c, query.Service{HTTP: &query.HTTP{Port: 18767, Path: "/"}}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a port where nothing listens: %v", err)
	}
}

// TestLoopbackRefused: a daemon whose environment has no loopback of its
// own says so (an action not possible), and a bad port or body is a bad
// request.
func TestLoopbackRefused(t *testing.T) {
	srv := httptest.NewServer((&Server{Env: newRootEnv(t), Token: "tok"}).Handler())
	defer srv.Close()
	ctx := context.Background()
	c, err := Dial(ctx, srv.URL, "tok")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = env.CallLoopback(ctx, c, query.Service{HTTP: &query.HTTP{Port: 8090, Path: "/"}})
	if !errors.Is(err, env.ErrBadAction) || !strings.Contains(err.Error(), "no loopback of its own") {
		t.Fatalf("an environment without a loopback: %v", err)
	}
	for _, tc := range []struct{ query, body, want string }{
		{"port=0", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "not a TCP port"},
		{"port=x", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "not a TCP port"},
	} {
		req, _ := http.NewRequest("POST", srv.URL+PathLoopback+"?"+tc.query, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set(APIHeader, APIVersion)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), tc.want) {
			t.Fatalf("%s: %d %s", tc.query, res.StatusCode, b)
		}
	}
}
