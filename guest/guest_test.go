package guest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/envtest"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/env/xdesktop"
	"github.com/proctor-eval/proctor/guest/guesttest"
	"github.com/proctor-eval/proctor/query"
	"github.com/proctor-eval/proctor/task"
)

// TestMain lets this test binary serve as the watchdog of the desktops
// its tests start.
func TestMain(m *testing.M) {
	xdesktop.Watchdog()
	os.Exit(m.Run())
}

func need(t *testing.T, bins ...string) {
	t.Helper()
	for _, b := range append([]string{"Xvfb", "dbus-daemon", "openbox"}, bins...) {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
}

// serve starts a real desktop behind a guest daemon on loopback.
func serve(t *testing.T) *guesttest.Daemon {
	t.Helper()
	d, err := xdesktop.Start(context.Background(), xdesktop.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return guesttest.Serve(t, d)
}

func TestConformanceThroughTheDaemon(t *testing.T) {
	need(t, "yad", "xclip")
	envtest.Run(t, serve(t).Dial(t))
}

func TestAuthAndConfinement(t *testing.T) {
	need(t)
	d := serve(t)
	token := d.Token
	type req struct {
		method, path, auth string
		body               string
		status             int
		kind               string
	}
	bearer := "Bearer " + token
	tests := []req{
		{"GET", remote.PathHealth, "", "", 401, "unauthorized"},
		{"GET", remote.PathInfo, "Bearer wrong", "", 401, "unauthorized"},
		{"GET", remote.PathScreenshot, "Basic " + token, "", 401, "unauthorized"},
		{"POST", remote.PathRun, "", `{"command":"touch /tmp/pwned"}`, 401, "unauthorized"},
		{"GET", remote.PathFile + "?path=" + url.QueryEscape("/etc/passwd"), bearer, "", 403, "forbidden"},
		{"GET", remote.PathFile + "?path=" + url.QueryEscape("~/../../../etc/passwd"), bearer, "", 403, "forbidden"},
		{"PUT", remote.PathFile + "?path=" + url.QueryEscape("/tmp/../etc/evil"), bearer, "x", 403, "forbidden"},
		{"GET", remote.PathFile + "?path=" + url.QueryEscape("~/none"), bearer, "", 404, "not_found"},
		{"GET", remote.PathFile, bearer, "", 400, "bad_request"},
		{"POST", remote.PathRun, bearer, `{"command":""}`, 400, "bad_request"},
		{"POST", remote.PathRun, bearer, `{"cmd":"ls"}`, 400, "bad_request"},
		{"GET", remote.PathScreenshot + "?scale=9", bearer, "", 400, "bad_request"},
		// The caller's mistakes, which the desktop's file system or X
		// server would otherwise answer as 500 internal.
		{"GET", remote.PathScreenshot + "?scale=NaN", bearer, "", 400, "bad_request"},
		{"GET", remote.PathScreenshot + "?scale=0.0001", bearer, "", 400, "bad_request"},
		{"GET", remote.PathFile + "?path=" + url.QueryEscape("~"), bearer, "", 400, "bad_request"},
		{"GET", remote.PathFile + "?path=" + url.QueryEscape("~/"+strings.Repeat("a", 300)), bearer, "", 400, "bad_request"},
		{"PUT", remote.PathFile + "?path=" + url.QueryEscape("~/"+strings.Repeat("a", 300)), bearer, "x", 400, "bad_request"},
		{"GET", remote.PathFile + "?path=" + url.QueryEscape("~/"+strings.Repeat("a/", 50_000)), bearer, "", 400, "bad_request"},
		{"GET", remote.PathHealth, bearer, "", 200, ""},
	}
	for _, tc := range tests {
		r, _ := http.NewRequest(tc.method, d.URL+tc.path, strings.NewReader(tc.body))
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		resp, err := d.HTTPClient().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var e remote.ErrorBody
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tc.status || e.Kind != tc.kind {
			t.Errorf("%s %s (auth %q): %d %q, want %d %q (%s)", tc.method, tc.path, tc.auth, resp.StatusCode, e.Kind, tc.status, tc.kind, e.Error)
		}
	}
	c := d.Dial(t)
	if _, err := c.Do(context.Background(), []action.Action{{Kind: action.Click, Point: &action.Point{X: 1e6, Y: 5}}}); !errors.Is(err, env.ErrBadAction) {
		t.Errorf("a click off the screen: %v, want %q", err, env.ErrBadAction)
	}
	if _, err := remote.Dial(context.Background(), d.Target, "wrong"); err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("Dial with a wrong token: %v", err)
	}
}

// TestLoopbackThroughTheDaemon: a remote desktop's app with network:
// private is read by the checks' loopback probes through the daemon: a
// page, a status that is not 2xx, and a port where nothing listens.
func TestLoopbackThroughTheDaemon(t *testing.T) {
	need(t, "python3")
	c := serve(t).Dial(t)
	ctx := context.Background()
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

// TestDoCarriesTheSettleWait: the wait the desktop records after a turn
// reaches the client through the daemon's JSON.
func TestDoCarriesTheSettleWait(t *testing.T) {
	need(t)
	c := serve(t).Dial(t)
	steps, err := c.Do(context.Background(), []action.Action{{Kind: action.Move, Point: &action.Point{X: 3, Y: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].Settle <= 0 {
		t.Fatalf("steps through the daemon %+v: no settle wait", steps)
	}
}
