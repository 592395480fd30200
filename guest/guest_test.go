package guest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/envtest"
	"github.com/proctor-eval/proctor/env/xdesktop"
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

// serve starts a real desktop behind a guest server on loopback.
func serve(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	d, err := xdesktop.Start(context.Background(), xdesktop.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	token := NewToken()
	srv := httptest.NewServer((&Server{Env: d, Token: token}).Handler())
	t.Cleanup(srv.Close)
	return srv, token
}

func TestConformanceThroughTheDaemon(t *testing.T) {
	need(t, "yad", "xclip")
	srv, token := serve(t)
	c, err := Dial(context.Background(), srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	envtest.Run(t, c)
}

func TestAuthAndConfinement(t *testing.T) {
	need(t)
	srv, token := serve(t)
	type req struct {
		method, path, auth string
		body               string
		status             int
		kind               string
	}
	bearer := "Bearer " + token
	tests := []req{
		{"GET", PathHealth, "", "", 401, "unauthorized"},
		{"GET", PathInfo, "Bearer wrong", "", 401, "unauthorized"},
		{"GET", PathScreenshot, "Basic " + token, "", 401, "unauthorized"},
		{"POST", PathRun, "", `{"command":"touch /tmp/pwned"}`, 401, "unauthorized"},
		{"GET", PathFile + "?path=" + url.QueryEscape("/etc/passwd"), bearer, "", 403, "forbidden"},
		{"GET", PathFile + "?path=" + url.QueryEscape("~/../../../etc/passwd"), bearer, "", 403, "forbidden"},
		{"PUT", PathFile + "?path=" + url.QueryEscape("/tmp/../etc/evil"), bearer, "x", 403, "forbidden"},
		{"GET", PathFile + "?path=" + url.QueryEscape("~/none"), bearer, "", 404, "not_found"},
		{"GET", PathFile, bearer, "", 400, "bad_request"},
		{"POST", PathRun, bearer, `{"command":""}`, 400, "bad_request"},
		{"POST", PathRun, bearer, `{"cmd":"ls"}`, 400, "bad_request"},
		{"GET", PathScreenshot + "?scale=9", bearer, "", 400, "bad_request"},
		// The caller's mistakes, which the desktop's file system or X
		// server would otherwise answer as 500 internal.
		{"GET", PathScreenshot + "?scale=NaN", bearer, "", 400, "bad_request"},
		{"GET", PathScreenshot + "?scale=0.0001", bearer, "", 400, "bad_request"},
		{"GET", PathFile + "?path=" + url.QueryEscape("~"), bearer, "", 400, "bad_request"},
		{"GET", PathFile + "?path=" + url.QueryEscape("~/"+strings.Repeat("a", 300)), bearer, "", 400, "bad_request"},
		{"PUT", PathFile + "?path=" + url.QueryEscape("~/"+strings.Repeat("a", 300)), bearer, "x", 400, "bad_request"},
		{"GET", PathFile + "?path=" + url.QueryEscape("~/"+strings.Repeat("a/", 50_000)), bearer, "", 400, "bad_request"},
		{"GET", PathHealth, bearer, "", 200, ""},
	}
	for _, tc := range tests {
		r, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var e apiError
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tc.status || e.Kind != tc.kind {
			t.Errorf("%s %s (auth %q): %d %q, want %d %q (%s)", tc.method, tc.path, tc.auth, resp.StatusCode, e.Kind, tc.status, tc.kind, e.Error)
		}
	}
	c, err := Dial(context.Background(), srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(context.Background(), []action.Action{{Kind: action.Click, Point: &action.Point{X: 1e6, Y: 5}}}); !errors.Is(err, env.ErrBadAction) {
		t.Errorf("a click off the screen: %v, want %q", err, env.ErrBadAction)
	}
	if _, err := Dial(context.Background(), srv.URL, "wrong"); err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("Dial with a wrong token: %v", err)
	}
}
