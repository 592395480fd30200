package guest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/query"
)

// TestLoopbackRefused: a daemon whose environment has no loopback of its
// own says so (an action not possible), and a bad port or body is a bad
// request.
func TestLoopbackRefused(t *testing.T) {
	srv := httptest.NewServer((&Server{Env: newRootEnv(t), Token: "tok"}).Handler())
	defer srv.Close()
	ctx := context.Background()
	c, err := remote.Dial(ctx, srv.URL, "tok")
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
		req, _ := http.NewRequest("POST", srv.URL+remote.PathLoopback+"?"+tc.query, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set(remote.APIHeader, remote.APIVersion)
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
