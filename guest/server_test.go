package guest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/observe"
)

// serveConns serves s on a loopback listener through Serve, as the daemon
// does, until the test ends.
func serveConns(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// untilClosed reads c until the server closes it, and says how long that
// took; a read that times out first fails the test.
func untilClosed(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %s", limit)
	}
	return time.Since(start) // EOF (nil) or a reset: closed either way
}

// TestConnectionTimeouts opens connections that never finish a request,
// or finish one and stay idle, and checks that the server closes each
// within its timeout instead of keeping a file descriptor for ever.
func TestConnectionTimeouts(t *testing.T) {
	const timeout = 300 * time.Millisecond
	s := &Server{Env: newRootEnv(t), Token: "tok", ReadHeaderTimeout: timeout, ReadTimeout: 2 * timeout, IdleTimeout: timeout}
	addr := serveConns(t, s)
	auth := "Authorization: Bearer tok\r\n"
	tests := []struct {
		name, send string
	}{
		{"silent", ""},
		{"half a request line", "GET /v1/hea"},
		{"headers never ended", "GET /v1/health HTTP/1.1\r\nHost: guest\r\n"},
		{"kept alive after a 401", "GET /v1/health HTTP/1.1\r\nHost: guest\r\n\r\n"},
		{"kept alive after a request", "GET /v1/health HTTP/1.1\r\nHost: guest\r\n" + auth + "\r\n"},
		{"body never ended", "PUT /v1/file?path=~/x HTTP/1.1\r\nHost: guest\r\n" + auth + "Content-Length: 100\r\n\r\nonly ten b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tc.send); err != nil {
				t.Fatal(err)
			}
			// Generous slack for a loaded machine, well under the
			// defaults' 10 s and 2 min.
			if took := untilClosed(t, c, 5*time.Second); took > 2*timeout+2*time.Second {
				t.Errorf("closed after %s, the timeout is %s", took, timeout)
			}
		})
	}
}

// openFDs counts this process's file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count file descriptors: %v", err)
	}
	return len(ents)
}

// TestConnectionLimit checks that connections beyond MaxConns wait to be
// accepted, taking no file descriptor of the daemon, and are served once
// a connection closes.
func TestConnectionLimit(t *testing.T) {
	const max, extra = 2, 30
	s := &Server{Env: newRootEnv(t), Token: "tok", MaxConns: max, ReadHeaderTimeout: time.Minute}
	addr := serveConns(t, s)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	var silent []net.Conn
	for range max {
		silent = append(silent, dial())
	}
	time.Sleep(200 * time.Millisecond) // let the server accept them
	before := openFDs(t)
	waiting := dial()
	io.WriteString(waiting, "GET /v1/health HTTP/1.1\r\nHost: guest\r\nAuthorization: Bearer tok\r\n\r\n")
	for range extra {
		dial()
	}
	time.Sleep(200 * time.Millisecond)
	// Each dial is one descriptor here; an accepted connection would be a
	// second one, the server's.
	if n := openFDs(t) - before; n > extra+1+2 {
		t.Errorf("%d connections over the limit took %d file descriptors", extra+1, n)
	}
	waiting.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := waiting.Read(make([]byte, 1)); err == nil {
		t.Fatalf("a connection over the limit of %d was served (%d bytes)", max, n)
	}
	silent[0].Close()
	waiting.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 12)
	if _, err := io.ReadFull(waiting, b); err != nil || string(b) != "HTTP/1.1 200" {
		t.Fatalf("once a slot was free, the waiting connection got %q, %v", b, err)
	}
}

// TestClientMistakes checks that requests the caller got wrong are
// answered 4xx with the kind that says so, not 500 internal, and that the
// kinds that were right stay so.
func TestClientMistakes(t *testing.T) {
	e := newRootEnv(t)
	srv := httptest.NewServer((&Server{Env: e, Token: "tok", MaxBody: 1 << 10}).Handler())
	t.Cleanup(srv.Close)
	file := func(p string) string { return remote.PathFile + "?path=" + url.QueryEscape(p) }
	shot := func(scale string) string { return remote.PathScreenshot + "?scale=" + url.QueryEscape(scale) }
	do := func(act string) string { return `{"actions":[` + act + `]}` }
	big := strings.Repeat("x", 2<<10)
	tests := []struct {
		method, path, body string
		status             int
		kind, says         string // says: a part of the message
	}{
		{"GET", file("~/" + strings.Repeat("a", 100_000)), "", 400, "bad_request", "limit of 4096"},
		{"GET", file("~/" + strings.Repeat("a", 300)), "", 400, "bad_request", "too long"},
		{"PUT", file("~/" + strings.Repeat("a", 300)), "x", 400, "bad_request", "too long"},
		{"GET", file("~/docs"), "", 400, "bad_request", "is a folder"},
		{"GET", file("~"), "", 400, "bad_request", "is a folder"},
		{"PUT", file("~/docs"), "x", 400, "bad_request", "is a folder"},
		{"GET", file("~/docs/a.txt/b"), "", 400, "bad_request", "is a file"},
		{"GET", file("~/a\x00b"), "", 400, "bad_request", "NUL"},
		{"GET", file("~/none"), "", 404, "not_found", ""},
		{"GET", file("~/escape"), "", 403, "forbidden", ""},
		{"GET", file("/etc/passwd"), "", 403, "forbidden", ""},
		{"GET", file("~/docs/a.txt"), "", 200, "", ""},
		{"GET", shot("0"), "", 400, "bad_request", "from 0.01 to 1"},
		{"GET", shot("-1"), "", 400, "bad_request", "from 0.01 to 1"},
		{"GET", shot("0.001"), "", 400, "bad_request", "from 0.01 to 1"},
		{"GET", shot("0.009"), "", 400, "bad_request", "from 0.01 to 1"},
		{"GET", shot("1.5"), "", 400, "bad_request", "from 0.01 to 1"},
		{"GET", shot("NaN"), "", 400, "bad_request", "from 0.01 to 1"},
		{"GET", shot("Inf"), "", 400, "bad_request", "from 0.01 to 1"},
		{"GET", shot("-Inf"), "", 400, "bad_request", "from 0.01 to 1"},
		{"GET", shot("half"), "", 400, "bad_request", "from 0.01 to 1"},
		{"GET", shot("0.01"), "", 200, "", ""},
		{"GET", shot("1"), "", 200, "", ""},
		{"POST", remote.PathRun, `{"command":"ls","timeout_ms":-1}`, 400, "bad_request", "not 0 to"},
		{"POST", remote.PathRun, `{"command":"ls","timeout_ms":9223372036854775807}`, 400, "bad_request", "not 0 to"},
		{"PUT", file("~/big"), big, 413, "too_large", "limit of 1024"},
		{"POST", remote.PathReset, `{"assets":{"a":"` + big + `"}}`, 413, "too_large", "limit of 1024"},
		{"GET", "/v1/nothing", "", 404, "no_route", ""},
		{"GET", remote.PathDo, "", 405, "bad_method", "POST"},
		// /v1/do answers 200 with the steps done and the error's kind.
		{"POST", remote.PathDo, do(`{"kind":"click","point":{"x":150,"y":5}}`), 200, "bad_action", "outside"},
		{"POST", remote.PathDo, do(`{"kind":"click","point":{"x":5,"y":5}},{"kind":"move","point":{"x":2,"y":2,"unit":"ratio"}}`), 200, "bad_action", "outside"},
		{"POST", remote.PathDo, do(`{"kind":"click","point":{"x":5,"y":5}}`), 200, "", ""},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e remote.ErrorBody
		if resp.StatusCode >= 400 {
			json.Unmarshal(b, &e)
		} else if tc.method == "POST" && tc.path == remote.PathDo {
			var dr remote.DoResponse
			json.Unmarshal(b, &dr)
			if dr.Error != nil {
				e = *dr.Error
			}
		}
		name := tc.method + " " + tc.path
		if len(name) > 80 {
			name = name[:80] + "…"
		}
		if resp.StatusCode != tc.status || e.Kind != tc.kind || !strings.Contains(e.Error, tc.says) {
			t.Errorf("%s: %d %q %.200q, want %d %q saying %q", name, resp.StatusCode, e.Kind, e.Error, tc.status, tc.kind, tc.says)
		}
	}
}

// TestUnknownLengthBodyTooLarge checks the limit on a body sent without a
// length (chunked), which only reading finds over the limit.
func TestUnknownLengthBodyTooLarge(t *testing.T) {
	srv := httptest.NewServer((&Server{Env: newRootEnv(t), Token: "tok", MaxBody: 1 << 10}).Handler())
	t.Cleanup(srv.Close)
	for _, path := range []string{remote.PathFile + "?path=~/big", remote.PathRun} {
		method := map[bool]string{true: "PUT", false: "POST"}[path != remote.PathRun]
		body := io.MultiReader(strings.NewReader(`{"command":"`), strings.NewReader(strings.Repeat("x", 4<<10)), strings.NewReader(`"}`))
		req, _ := http.NewRequest(method, srv.URL+path, body)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e remote.ErrorBody
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if req.ContentLength != -1 && req.ContentLength != 0 {
			t.Fatalf("the request has a length, %d", req.ContentLength)
		}
		if resp.StatusCode != http.StatusRequestEntityTooLarge || e.Kind != "too_large" {
			t.Errorf("%s %s with 4 KiB, limit 1 KiB: %d %q %q", method, path, resp.StatusCode, e.Kind, e.Error)
		}
	}
}

// TestClientErrorKinds checks which sentinel each refusal is on the
// client's side: the runner tells the agent about env.ErrBadAction and
// ends the run on anything else.
func TestClientErrorKinds(t *testing.T) {
	srv := httptest.NewServer((&Server{Env: newRootEnv(t), Token: "tok", MaxBody: 1 << 10}).Handler())
	t.Cleanup(srv.Close)
	ctx := context.Background()
	c, err := remote.Dial(ctx, srv.URL, "tok")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 2<<10)
	_, readDir := c.ReadFile(ctx, "~/docs")
	_, offScreen := c.Do(ctx, []action.Action{{Kind: action.Click, Point: &action.Point{X: 500, Y: 5}}})
	_, hugeDo := c.Do(ctx, []action.Action{{Kind: action.Type, Text: big}})
	_, badScale := c.Screenshot(ctx, env.ShotOptions{Scale: 2})
	_, missing := c.ReadFile(ctx, "~/none")
	_, outside := c.ReadFile(ctx, "/etc/passwd")
	tests := []struct {
		name     string
		err      error
		is, isnt []error
	}{
		{"reading a folder", readDir, []error{remote.ErrBadRequest}, []error{env.ErrBadAction, env.ErrNotFound}},
		{"a point off the screen", offScreen, []error{env.ErrBadAction}, nil},
		{"actions over the body limit", hugeDo, []error{env.ErrBadAction, remote.ErrBadRequest}, nil},
		{"writing over the body limit", c.WriteFile(ctx, "~/big", []byte(big)), []error{remote.ErrBadRequest}, []error{env.ErrBadAction}},
		{"a scale of 2", badScale, []error{remote.ErrBadRequest}, []error{env.ErrBadAction}},
		{"a missing file", missing, []error{observe.ErrNotFound}, []error{remote.ErrBadRequest}},
		{"a file outside the roots", outside, []error{env.ErrForbidden}, []error{remote.ErrBadRequest}},
	}
	for _, tc := range tests {
		for _, want := range tc.is {
			if !errors.Is(tc.err, want) {
				t.Errorf("%s: %v is not %q", tc.name, tc.err, want)
			}
		}
		for _, not := range tc.isnt {
			if errors.Is(tc.err, not) {
				t.Errorf("%s: %v is %q", tc.name, tc.err, not)
			}
		}
	}
}

// TestRequestLogHasNoToken checks that the request log, of answered and
// refused requests alike, never holds the token, wherever a client put it.
func TestRequestLogHasNoToken(t *testing.T) {
	const token = "s3cret-token-value"
	var buf bytes.Buffer
	srv := httptest.NewServer((&Server{Env: newRootEnv(t), Token: token, Log: log.New(&buf, "", 0)}).Handler())
	t.Cleanup(srv.Close)
	for _, r := range []struct{ path, auth string }{
		{remote.PathHealth, "Bearer " + token},
		{remote.PathHealth, "Bearer " + token + "x"},
		{remote.PathInfo + "?token=" + token, ""},
		{remote.PathFile + "?path=~/" + token, "Bearer " + token},
	} {
		req, _ := http.NewRequest("GET", srv.URL+r.path, nil)
		if r.auth != "" {
			req.Header.Set("Authorization", r.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := buf.String(); strings.Count(got, "\n") != 4 || strings.Contains(got, token) {
		t.Errorf("request log, 4 lines without the token:\n%s", got)
	}
}

// treeCounter counts tree reads and hands a tree with set-of-mark shots.
type treeCounter struct {
	*rootEnv
	reads int
}

func (e *treeCounter) Tree(ctx context.Context) (*observe.Tree, error) {
	e.reads++
	return &observe.Tree{}, nil
}

func (e *treeCounter) Screenshot(ctx context.Context, o env.ShotOptions) (env.Shot, error) {
	shot, err := e.rootEnv.Screenshot(ctx, o)
	if o.Marks {
		shot.Tree = &observe.Tree{}
	}
	return shot, err
}

// TestMarksTreeServedOnce: the tree a set-of-mark screenshot was made from
// answers the tree request right after it, without reading the tree
// again; any other request in between, or a second tree request, reads it.
func TestMarksTreeServedOnce(t *testing.T) {
	e := &treeCounter{rootEnv: newRootEnv(t)}
	s := &Server{Env: e, Token: "tok"}
	h := s.Handler()
	get := func(method, target, body string) {
		t.Helper()
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer tok")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
	}
	steps := []struct {
		method, target, body string
		reads                int // tree reads so far
	}{
		{"GET", remote.PathScreenshot + "?marks=1", "", 0},
		{"GET", remote.PathTree, "", 0}, // the marks' tree
		{"GET", remote.PathTree, "", 1}, // read again
		{"GET", remote.PathScreenshot + "?marks=1", "", 1},
		{"POST", remote.PathDo, `{"actions":[{"kind":"move","point":{"x":1,"y":1}}]}`, 1},
		{"GET", remote.PathTree, "", 2}, // the screen may have changed
		{"GET", remote.PathScreenshot, "", 2},
		{"GET", remote.PathTree, "", 3}, // no marks, no tree kept
	}
	for i, st := range steps {
		get(st.method, st.target, st.body)
		if e.reads != st.reads {
			t.Fatalf("after request %d (%s %s): %d tree reads, want %d", i+1, st.method, st.target, e.reads, st.reads)
		}
	}
}

// overlapEnv counts the resets running at once.
type overlapEnv struct {
	env.Env
	mu       sync.Mutex
	cur, max int
}

func (e *overlapEnv) Reset(ctx context.Context, s env.Setup) error {
	e.mu.Lock()
	e.cur++
	e.max = max(e.max, e.cur)
	e.mu.Unlock()
	time.Sleep(50 * time.Millisecond)
	e.mu.Lock()
	e.cur--
	e.mu.Unlock()
	return nil
}

// TestResetsOneAtATime: concurrent resets of one daemon run one after the
// other, each answered, none beside another (a setup must not run on a
// desktop another reset is clearing).
func TestResetsOneAtATime(t *testing.T) {
	e := &overlapEnv{Env: newRootEnv(t)}
	addr := serveConns(t, &Server{Env: e, Token: "tok"})
	var wg sync.WaitGroup
	codes := make(chan int, 6)
	for range 6 {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", "http://"+addr+remote.PathReset, strings.NewReader("{}"))
			req.Header.Set("Authorization", "Bearer tok")
			req.Header.Set(remote.APIHeader, remote.APIVersion)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusNoContent {
			t.Errorf("a reset answered %d", c)
		}
	}
	if e.max != 1 {
		t.Fatalf("%d resets ran at once", e.max)
	}
}

// TestSilentConnectionsLoseTheirSlots: connections that never send a
// request lose their slots after ConnectTimeout, so that an authenticated
// request is served while the header timeout is still far off; and one
// address holds at most MaxConnsPerAddr connections, more are closed at
// once.
func TestSilentConnectionsLoseTheirSlots(t *testing.T) {
	s := &Server{Env: newRootEnv(t), Token: "tok", MaxConns: 4, ConnectTimeout: 300 * time.Millisecond, ReadHeaderTimeout: time.Minute}
	addr := serveConns(t, s)
	for range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: guest\r\nAuthorization: Bearer tok\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(20 * time.Second)) // the header timeout is a minute
	b := make([]byte, 12)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "HTTP/1.1 200" {
		t.Fatalf("behind silent connections, the request got %q, %v", b, err)
	}

	s = &Server{Env: newRootEnv(t), Token: "tok", MaxConns: 10, MaxConnsPerAddr: 2, ConnectTimeout: time.Minute, ReadHeaderTimeout: time.Minute}
	addr = serveConns(t, s)
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	third, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	untilClosed(t, third, 20*time.Second) // the timeouts are a minute
}

// TestIdleTrim checks that the daemon gives its freed memory back once no
// request has been in progress for IdleTrim, and never during one.
func TestIdleTrim(t *testing.T) {
	freed := make(chan struct{}, 10)
	tr := &trimmer{after: time.Millisecond, free: func() { freed <- struct{}{} }}
	tr.begin()
	tr.begin()
	tr.end()
	if tr.timer != nil {
		t.Fatal("armed while a request is in progress")
	}
	tr.end()
	<-freed // idle: trimmed
	tr.begin()
	tr.fire() // a timer that fires as a request begins
	select {
	case <-freed:
		t.Fatal("trimmed during a request")
	default:
	}
	tr.end()
	<-freed
}
