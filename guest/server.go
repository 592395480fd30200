// Package guest is the daemon that serves one environment over HTTP (JSON
// and images) so that a desktop in a VM, a container or a pod is driven
// exactly like a local one. It speaks the wire protocol of package
// env/remote, whose Client is the environment on the runner's side.
//
// Every request needs the bearer token: the daemon runs commands. The
// daemon serves TLS, and clients pin its certificate by fingerprint
// (remote.Target), so that the token can cross a network.
package guest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/apicall"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/observe"
)

// apiVersion is the version the daemon serves, remote.APIVersion but for
// tests, which set it to play a daemon of another version. A handler
// takes it when it is made.
var apiVersion = remote.APIVersion

// MaxBody bounds request bodies (file uploads and setups with assets)
// unless Server.MaxBody says otherwise.
const MaxBody = 256 << 20

// Defaults of the Server's connection limits. Together they bound what a
// client that never authenticates can hold: a connection that sends
// nothing, or half a request, is closed after ReadHeaderTimeout, an idle
// keep-alive one after IdleTimeout, and beyond MaxConns new connections
// wait in the kernel's accept queue instead of taking file descriptors.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds a whole request, body included: a MaxBody
	// upload at about 1 MB/s.
	DefaultReadTimeout = 5 * time.Minute
	// DefaultIdleTimeout is above the 90 s after which Go's default
	// transport (the Client's) drops an idle connection itself, so the
	// client, not the daemon, closes it and never sends a request on a
	// connection the daemon is closing.
	DefaultIdleTimeout = 2 * time.Minute
	DefaultMaxConns    = 64
	// DefaultConnectTimeout bounds how long a new connection may take to
	// finish its TLS handshake and send its first request's headers: a
	// client that connects and says nothing loses its slot after it.
	DefaultConnectTimeout = 3 * time.Second
	// DefaultMaxConnsPerAddr is how many new connections, not yet past
	// their first request's headers, one client address may hold at once,
	// so that one client cannot take every slot.
	DefaultMaxConnsPerAddr = 16
)

// MaxPath bounds a file path (Linux's PATH_MAX): a longer one cannot name
// a file, and resolving it component by component would cost the daemon
// time in proportion to its square.
const MaxPath = 4096

// MinScale is the smallest screenshot scale the API takes; the largest is 1.
const MinScale = 0.01

// NewToken returns a random bearer token.
func NewToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Server serves an environment. Its zero limits take the defaults above.
type Server struct {
	Env   env.Env
	Token string
	Log   *log.Logger // nil: no request log
	TLS   *tls.Config // nil: plain HTTP, for loopback or a private network
	Build string      // the build of proctor, for GET /v1/version

	ReadHeaderTimeout time.Duration // to read a request's headers
	ReadTimeout       time.Duration // to read a whole request, body included
	IdleTimeout       time.Duration // to wait for the next request on a kept-alive connection
	MaxConns          int           // connections served at once; more wait to be accepted
	MaxConnsPerAddr   int           // new connections (no request yet) one client address may hold; more are closed at once
	ConnectTimeout    time.Duration // for a new connection to finish its handshake and first request's headers
	MaxBody           int64         // request body bytes
	// IdleTrim is how long the daemon waits once no request is in
	// progress before it gives the memory its requests freed (a
	// screenshot's buffers are tens of megabytes) back to the system;
	// 0: DefaultIdleTrim, negative: never.
	IdleTrim time.Duration
	trim     *trimmer

	// resetMu makes resets one at a time: a second waits for the first,
	// so that no setup runs on a desktop another reset is clearing.
	resetMu sync.Mutex

	// marksTree is the tree the last set-of-mark screenshot was made from,
	// kept for the request right after it if that reads the tree: the
	// runner reads the tree just after the marks, and a local desktop hands
	// it over with the screenshot. Any other request drops it, since it may
	// change the screen.
	marksMu   sync.Mutex
	marksTree *observe.Tree
}

// takeMarksTree returns the kept tree, if any, and drops it.
func (s *Server) takeMarksTree() *observe.Tree {
	s.marksMu.Lock()
	defer s.marksMu.Unlock()
	t := s.marksTree
	s.marksTree = nil
	return t
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// HTTPServer returns the http.Server of the API with the Server's timeouts.
// Serve it on a listener from Listener, or use Serve, so that the
// connection limit holds too. It has no write timeout: a command or a
// reset may rightly take minutes to answer. A new connection has
// ConnectTimeout to finish its TLS handshake and send its first request's
// headers, and is closed after it.
func (s *Server) HTTPServer() *http.Server {
	p := &pendingConns{timeout: orDefault(s.ConnectTimeout, DefaultConnectTimeout), perAddr: orDefault(s.MaxConnsPerAddr, DefaultMaxConnsPerAddr),
		conns: map[net.Conn]pendingConn{}, byAddr: map[string]int{}, logf: s.logf}
	return &http.Server{
		ConnState: p.track,
		Handler:   s.Handler(),
		// net/http's own log (failed TLS handshakes, a panic) goes with
		// the request log, else to the standard logger as before.
		ErrorLog:          s.Log,
		TLSConfig:         s.TLS,
		ReadHeaderTimeout: orDefault(s.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       orDefault(s.ReadTimeout, DefaultReadTimeout),
		IdleTimeout:       orDefault(s.IdleTimeout, DefaultIdleTimeout),
	}
}

// Listener limits ln to the Server's MaxConns connections at once: Accept
// waits until a connection closes. With TLS, the connections it gives are
// TLS ones.
func (s *Server) Listener(ln net.Listener) net.Listener {
	n := orDefault(s.MaxConns, DefaultMaxConns)
	var l net.Listener = &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
	if s.TLS != nil {
		// The limit is on the connections beneath, so that one still in
		// its handshake holds a slot too. net/http answers a plain HTTP
		// request on a *tls.Conn with a 400 that says so, which the
		// client turns into ErrTLSMismatch.
		l = tls.NewListener(l, s.TLS)
	}
	return l
}

// Serve serves the API on ln until ctx ends, then shuts down, giving
// requests in flight 5 seconds to finish. It serves TLS when s.TLS is set.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := s.HTTPServer()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(s.Listener(ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(sctx)
}

// limitListener is golang.org/x/net/netutil's LimitListener, small enough
// not to need the module.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{} // closed by Close, to end an Accept waiting for a slot
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// Handler returns the HTTP handler of the API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	api := apiVersion
	handlers := map[remote.Route]http.HandlerFunc{
		{Method: "GET", Path: remote.PathHealth}:     s.health,
		{Method: "GET", Path: remote.PathInfo}:       s.info,
		{Method: "GET", Path: remote.PathScreenshot}: s.screenshot,
		{Method: "GET", Path: remote.PathTree}:       s.tree,
		{Method: "POST", Path: remote.PathDo}:        s.do,
		{Method: "POST", Path: remote.PathRun}:       s.run,
		{Method: "GET", Path: remote.PathFile}:       s.readFile,
		{Method: "PUT", Path: remote.PathFile}:       s.writeFile,
		{Method: "GET", Path: remote.PathWindows}:    s.windows,
		{Method: "POST", Path: remote.PathElements}:  s.elements,
		{Method: "GET", Path: remote.PathClipboard}:  s.clipboard,
		{Method: "POST", Path: remote.PathReset}:     s.reset,
		{Method: "POST", Path: remote.PathSteps}:     s.steps,
		{Method: "POST", Path: remote.PathLoopback}:  s.loopback,
		{Method: "GET", Path: remote.PathVersion}: func(w http.ResponseWriter, r *http.Request) {
			reply(w, remote.VersionInfo{API: api, Build: orDefault(s.Build, "unknown")})
		},
	}
	// The daemon serves the protocol's routes, all of them and no other.
	if len(handlers) != len(remote.Routes) {
		panic(fmt.Sprintf("guest: %d handlers for the %d routes of the API", len(handlers), len(remote.Routes)))
	}
	for _, rt := range remote.Routes {
		h, ok := handlers[rt]
		if !ok {
			panic("guest: no handler for " + rt.String())
		}
		mux.HandleFunc(rt.String(), h)
	}
	// Anything else gets a JSON error too, not the mux's text.
	mux.HandleFunc("/", noRoute)
	paths := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/") { // "OPTIONS *" and the like: the mux would answer in text
			writeError(w, remote.KindBadRequest, "the request target must be a path under /v1/")
			return
		}
		if r.URL.Path != remote.PathTree {
			s.takeMarksTree()
		}
		mux.ServeHTTP(w, r)
	})
	h := s.versioned(api, s.auth(paths))
	if s.IdleTrim < 0 {
		return h
	}
	if s.trim == nil {
		s.trim = &trimmer{after: orDefault(s.IdleTrim, DefaultIdleTrim), free: freeMemory}
	}
	return s.trim.wrap(h)
}

// DefaultIdleTrim is how long an idle daemon keeps the memory its last
// requests freed: long enough that the requests of one step (an action,
// the screenshot, the tree) do not each pay for a collection, short
// enough that a desktop waiting for its agent holds no garbage.
const DefaultIdleTrim = time.Second

// freeMemory gives the heap freed back to the system and, the first
// time, the pages of the program that its start alone touched.
func freeMemory() {
	debug.FreeOSMemory()
	pagedOut.Do(func() { pageOutExecutable() })
}

var pagedOut sync.Once

// trimmer gives the memory freed back to the system once no request has
// been in progress for a while: the Go runtime otherwise keeps a freed
// heap until its next collection, which an idle daemon may not run for
// minutes.
type trimmer struct {
	after time.Duration
	free  func()
	mu    sync.Mutex
	busy  int
	timer *time.Timer // armed while idle and not yet trimmed
}

func (t *trimmer) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.begin()
		defer t.end()
		h.ServeHTTP(w, r)
	})
}

func (t *trimmer) begin() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.busy++
	if t.timer != nil {
		t.timer.Stop()
	}
}

func (t *trimmer) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.busy--; t.busy > 0 {
		return
	}
	if t.timer == nil {
		t.timer = time.AfterFunc(t.after, t.fire)
		return
	}
	t.timer.Reset(t.after)
}

// fire trims, unless a request began since the timer was armed.
func (t *trimmer) fire() {
	t.mu.Lock()
	idle := t.busy == 0
	t.mu.Unlock()
	if idle {
		t.free()
	}
}

func noRoute(w http.ResponseWriter, r *http.Request) {
	if allow := remote.Allow(r.URL.Path); allow != "" {
		w.Header().Set("Allow", allow)
		writeError(w, remote.KindBadMethod, fmt.Sprintf("%s takes %s, not %s", r.URL.Path, allow, r.Method))
		return
	}
	writeError(w, remote.KindNoRoute, fmt.Sprintf("no API at %s", r.URL.Path))
}

// versioned declares the API version on every response, and refuses a
// request that declares another one before anything else, the token
// included: a client of another version may not even send it the same
// way. A request that declares none (curl, a script) is served.
func (s *Server) versioned(api string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(remote.APIHeader, api)
		if v := r.Header.Get(remote.APIHeader); v != "" && v != api {
			writeError(w, remote.KindVersion, fmt.Sprintf("this daemon speaks API version %s; the client speaks %s (upgrade one of them)", api, remote.ShortVersion(v)))
			s.logf("%s %s 409 (API version %s)", r.Method, r.URL.Path, remote.ShortVersion(v))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) auth(next http.Handler) http.Handler {
	want := []byte("Bearer " + s.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		got := []byte(r.Header.Get("Authorization"))
		if s.Token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="proctor"`)
			// A client without the token keeps no connection open.
			w.Header().Set("Connection", "close")
			writeError(w, remote.KindUnauthorized, "missing or wrong bearer token")
			// The log names the path only: never the query, never a header.
			s.logf("%s %s 401 (%s)", r.Method, r.URL.Path, r.RemoteAddr)
			return
		}
		// A body announced over the limit is refused before it is read.
		limit := orDefault(s.MaxBody, MaxBody)
		if r.ContentLength > limit {
			tooLarge(w, limit)
			s.logf("%s %s 413", r.Method, r.URL.Path)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
		s.logf("%s %s %s", r.Method, r.URL.Path, time.Since(start).Round(time.Microsecond))
	})
}

func (s *Server) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log.Printf(format, args...)
	}
}

// pathMistakes are the file system's answers to a path that cannot name a
// file to read or write: the caller's mistake, not the daemon's.
var pathMistakes = []struct {
	errno syscall.Errno
	why   string
}{
	{syscall.ENAMETOOLONG, "the path or one of its names is too long"},
	{syscall.EISDIR, "the path is a folder, not a file"},
	{syscall.ENOTDIR, "a folder in the path is a file"},
	{syscall.ELOOP, "the path has too many symbolic links"},
}

// classify returns err's kind and status: "internal" (500) when it is
// none of the known ones.
func classify(err error) (kind string, status int, msg string) {
	if k := remote.KindOf(err); k.Kind != remote.KindInternal {
		return k.Kind, k.Status, err.Error()
	}
	// Only a *fs.PathError is looked at, so that, say, a process's
	// ENOTDIR deep in a reset is not blamed on the caller.
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		for _, m := range pathMistakes {
			if errors.Is(pe.Err, m.errno) {
				return remote.KindBadRequest, remote.Status(remote.KindBadRequest), m.why + ": " + err.Error()
			}
		}
	}
	return remote.KindInternal, remote.Status(remote.KindInternal), err.Error()
}

// writeError answers an error of a kind, with the kind's status.
func writeError(w http.ResponseWriter, kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(remote.Status(kind))
	json.NewEncoder(w).Encode(remote.ErrorBody{Error: msg, Kind: kind})
}

func fail(w http.ResponseWriter, err error) {
	kind, _, msg := classify(err)
	writeError(w, kind, msg)
}

func badRequest(w http.ResponseWriter, format string, args ...any) {
	writeError(w, remote.KindBadRequest, fmt.Sprintf(format, args...))
}

func tooLarge(w http.ResponseWriter, limit int64) {
	writeError(w, remote.KindTooLarge, fmt.Sprintf("the body is over the limit of %d bytes", limit))
}

// readBody reads the whole body, answering 413 when it is over the limit.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			tooLarge(w, mbe.Limit)
		} else {
			badRequest(w, "read the body: %v", err)
		}
		return nil, false
	}
	return b, true
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// decode reads the body as one JSON value into v.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	b, ok := readBody(w, r)
	if !ok {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		badRequest(w, "bad JSON body: %v", err)
		return false
	}
	return true
}

// queryPath returns the path parameter, or answers 400 when it cannot
// name a file.
func queryPath(w http.ResponseWriter, r *http.Request) (string, bool) {
	p := r.URL.Query().Get("path")
	switch {
	case p == "":
		badRequest(w, "path is missing")
	case len(p) > MaxPath:
		badRequest(w, "path is %d bytes long, over the limit of %d", len(p), MaxPath)
	case strings.IndexByte(p, 0) >= 0:
		badRequest(w, "path contains a NUL byte")
	default:
		return p, true
	}
	return "", false
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	reply(w, map[string]bool{"ok": true})
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	i, err := s.Env.Info(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, i)
}

func (s *Server) screenshot(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var o env.ShotOptions
	if v := q.Get("scale"); v != "" {
		// A screenshot is only ever shrunk, and below MinScale it is a few
		// pixels wide. Written as what is allowed, the test also refuses
		// NaN, which fails every comparison.
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= MinScale && f <= 1) {
			badRequest(w, "scale %q is not a number from %g to 1", v, MinScale)
			return
		}
		o.Scale = f
	}
	if v := q.Get("jpeg"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			badRequest(w, "jpeg quality %q is not 1..100", v)
			return
		}
		o.JPEG = n
	}
	o.Cursor = q.Get("cursor") == "1"
	o.Marks = q.Get("marks") == "1"
	shot, err := s.Env.Screenshot(r.Context(), o)
	if err != nil {
		fail(w, err)
		return
	}
	if o.Marks {
		b, _ := json.Marshal(shot.Marks)
		w.Header().Set(remote.MarksHeader, string(b))
		s.marksMu.Lock()
		s.marksTree = shot.Tree
		s.marksMu.Unlock()
	}
	w.Header().Set("Content-Type", "image/"+shot.Format)
	w.Write(shot.Data)
}

// tree replies with the raw tree as JSON, or with format=text the
// filtered, linearised table a model reads.
func (s *Server) tree(w http.ResponseWriter, r *http.Request) {
	t := s.takeMarksTree()
	if t == nil {
		var err error
		if t, err = s.Env.Tree(r.Context()); err != nil {
			fail(w, err)
			return
		}
	}
	if r.URL.Query().Get("format") == "text" {
		info, err := s.Env.Info(r.Context())
		if err != nil {
			fail(w, err)
			return
		}
		w.Header().Set("Content-Type", "text/tab-separated-values; charset=utf-8")
		io.WriteString(w, observe.Linearize(t.Filter(observe.Options{Screen: info.Screen}), 0))
		return
	}
	reply(w, t)
}

func (s *Server) do(w http.ResponseWriter, r *http.Request) {
	var req remote.DoRequest
	if !decode(w, r, &req) {
		return
	}
	steps, err := s.Env.Do(r.Context(), req.Actions)
	resp := remote.DoResponse{Steps: steps}
	if err != nil {
		kind, _, msg := classify(err)
		if kind == remote.KindInternal && len(steps) < len(req.Actions) && s.impossible(r.Context(), req.Actions[len(steps)]) {
			kind = remote.KindBadAction
		}
		resp.Error = &remote.ErrorBody{Error: msg, Kind: kind}
	}
	// The status stays 200 whatever the error: the steps done before it
	// are part of the answer.
	reply(w, resp)
}

// impossible reports whether the action that stopped a batch could not be
// done on this screen whatever its state: invalid, or with a point off the
// screen. An environment may report that without env.ErrBadAction
// (xdesktop passes action.Point.Pixels's error on as it is), yet it is the
// caller's mistake, not the daemon's.
func (s *Server) impossible(ctx context.Context, a action.Action) bool {
	if a.Validate() != nil {
		return true
	}
	info, err := s.Env.Info(ctx)
	if err != nil {
		return false
	}
	// Relative moves and drags carry offsets, not positions.
	abs := []*action.Point{a.Point, a.To}
	switch a.Kind {
	case action.MoveRel:
		abs[0] = nil
	case action.DragRel:
		abs[1] = nil
	}
	for _, p := range abs {
		if p == nil {
			continue
		}
		if _, _, err := p.Pixels(info.Screen); err != nil {
			return true
		}
	}
	return false
}

// maxTimeoutMS bounds a command's timeout: a day.
const maxTimeoutMS = 24 * 60 * 60 * 1000

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	var req remote.RunRequest
	if !decode(w, r, &req) {
		return
	}
	if req.Command == "" {
		badRequest(w, "command is empty")
		return
	}
	// Bounded so that it cannot overflow a time.Duration into a negative.
	if req.TimeoutMS < 0 || req.TimeoutMS > maxTimeoutMS {
		badRequest(w, "timeout_ms %d is not 0 to %d", req.TimeoutMS, maxTimeoutMS)
		return
	}
	res, err := s.Env.Run(r.Context(), req.Command, time.Duration(req.TimeoutMS)*time.Millisecond)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, res)
}

func (s *Server) readFile(w http.ResponseWriter, r *http.Request) {
	p, ok := queryPath(w, r)
	if !ok {
		return
	}
	b, err := s.Env.ReadFile(r.Context(), p)
	if err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(b)
}

func (s *Server) writeFile(w http.ResponseWriter, r *http.Request) {
	p, ok := queryPath(w, r)
	if !ok {
		return
	}
	b, ok := readBody(w, r)
	if !ok {
		return
	}
	if err := s.Env.WriteFile(r.Context(), p, b); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) windows(w http.ResponseWriter, r *http.Request) {
	ws, err := s.Env.Windows(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	if ws == nil {
		ws = []env.Window{}
	}
	reply(w, ws)
}

func (s *Server) elements(w http.ResponseWriter, r *http.Request) {
	var q observe.ElementQuery
	if !decode(w, r, &q) {
		return
	}
	els, err := s.Env.Elements(r.Context(), q)
	if err != nil {
		fail(w, err)
		return
	}
	if els == nil {
		els = []observe.Element{}
	}
	reply(w, els)
}

func (s *Server) clipboard(w http.ResponseWriter, r *http.Request) {
	t, err := s.Env.Clipboard(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, remote.ClipboardResponse{Text: t})
}

// loopback sends an HTTP request, given whole in the body (as
// http.Request.Write writes it), to ?port= on the desktop's own loopback
// (env.LoopbackAPI), and answers the response whole (as
// http.Response.Write writes it, its body at most apicall.MaxBody), so
// that the checks' loopback probes reach a remote desktop's apps.
func (s *Server) loopback(w http.ResponseWriter, r *http.Request) {
	port, err := strconv.Atoi(r.URL.Query().Get("port"))
	if err != nil || port < 1 || port > 65535 {
		badRequest(w, "port=%q is not a TCP port (1 to 65535)", r.URL.Query().Get("port"))
		return
	}
	l, ok := env.LoopbackOf(s.Env)
	if !ok {
		fail(w, fmt.Errorf("%w: this environment has no loopback of its own", env.ErrBadAction))
		return
	}
	b, ok := readBody(w, r)
	if !ok {
		return
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		badRequest(w, "the body is not an HTTP request: %v", err)
		return
	}
	req.RequestURI = ""
	req.URL.Scheme, req.URL.Host = "http", "127.0.0.1:"+strconv.Itoa(port)
	res, err := l.LoopbackTransport(port).RoundTrip(req.WithContext(r.Context()))
	if err != nil {
		fail(w, err)
		return
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, apicall.MaxBody+1))
	if err != nil {
		fail(w, fmt.Errorf("read the answer of port %d: %w", port, err))
		return
	}
	res.Body, res.ContentLength, res.TransferEncoding = io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
	w.Header().Set("Content-Type", "message/http")
	res.Write(w)
}

func (s *Server) reset(w http.ResponseWriter, r *http.Request) {
	var setup env.Setup
	if !decode(w, r, &setup) {
		return
	}
	s.resetMu.Lock()
	defer s.resetMu.Unlock()
	if err := s.Env.Reset(r.Context(), setup); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// steps runs a task's steps after the agent, under the reset lock (a
// reset and the steps after an episode never interleave).
func (s *Server) steps(w http.ResponseWriter, r *http.Request) {
	var setup env.Setup
	if !decode(w, r, &setup) {
		return
	}
	s.resetMu.Lock()
	defer s.resetMu.Unlock()
	if err := env.RunSteps(r.Context(), s.Env, setup); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// pendingConns are the connections that have not yet sent the headers of
// their first request: each is closed after timeout, and one client
// address may hold perAddr of them.
type pendingConns struct {
	timeout time.Duration
	perAddr int
	logf    func(format string, args ...any)

	mu     sync.Mutex
	conns  map[net.Conn]pendingConn
	byAddr map[string]int
}

type pendingConn struct {
	addr  string
	timer *time.Timer
}

// track is the http.Server's ConnState hook.
func (p *pendingConns) track(c net.Conn, st http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st != http.StateNew {
		if pc, ok := p.conns[c]; ok {
			pc.timer.Stop()
			delete(p.conns, c)
			if p.byAddr[pc.addr]--; p.byAddr[pc.addr] <= 0 {
				delete(p.byAddr, pc.addr)
			}
		}
		return
	}
	addr := c.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	if p.byAddr[addr] >= p.perAddr {
		p.logf("closed a connection from %s: it holds %d that sent no request yet", addr, p.perAddr)
		c.Close()
		return
	}
	p.byAddr[addr]++
	p.conns[c] = pendingConn{addr: addr, timer: time.AfterFunc(p.timeout, func() {
		if tc, ok := c.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol == "h2" {
			return // net/http reports no request state of an HTTP/2 connection
		}
		c.Close()
	})}
}
