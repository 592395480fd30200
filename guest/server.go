// Package guest serves one environment over HTTP (JSON and images) so that
// a desktop in a VM, a container or a pod is driven exactly like a local
// one, and provides the client that implements env.Env over that API.
//
// Every request needs the bearer token: the daemon runs commands. The
// daemon serves TLS, and clients pin its certificate by fingerprint
// (Target), so that the token can cross a network.
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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/apicall"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
)

// API paths, all under /v1.
const (
	PathHealth     = "/v1/health"
	PathInfo       = "/v1/info"
	PathScreenshot = "/v1/screenshot"
	PathTree       = "/v1/tree"
	PathDo         = "/v1/do"
	PathRun        = "/v1/run"
	PathFile       = "/v1/file"
	PathWindows    = "/v1/windows"
	PathElements   = "/v1/elements"
	PathClipboard  = "/v1/clipboard"
	PathReset      = "/v1/reset"
	PathVersion    = "/v1/version"
	PathLoopback   = "/v1/loopback"
)

// APIVersion is the version of the API this package serves and speaks.
// It changes when a daemon and a client of different versions would
// misunderstand each other; both refuse to talk across a change.
const APIVersion = "1"

// APIHeader carries the API version: the daemon sends it on every
// response, the client on every request.
const APIHeader = "Proctor-API"

// apiVersion is the version in use, APIVersion but for tests, which set
// it to play a daemon or a client of another version. A handler takes it
// when it is made, a client when it is dialled.
var apiVersion = APIVersion

// VersionInfo is the body of GET /v1/version.
type VersionInfo struct {
	API   string `json:"api"`   // the API version
	Build string `json:"build"` // the daemon's build of proctor
}

// MarksHeader carries a set-of-mark screenshot's marks as JSON.
const MarksHeader = "Proctor-Marks"

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
)

// MaxPath bounds a file path (Linux's PATH_MAX): a longer one cannot name
// a file, and resolving it component by component would cost the daemon
// time in proportion to its square.
const MaxPath = 4096

// MinScale is the smallest screenshot scale the API takes; the largest is 1.
const MinScale = 0.01

// ErrBadRequest wraps the daemon's answer to a request it refused as the
// caller's mistake (kinds bad_request and too_large): a malformed
// parameter, a path that names a folder or is too long, a body over the
// limit.
const ErrBadRequest = env.Error("bad request")

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
	MaxBody           int64         // request body bytes

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
// reset may rightly take minutes to answer. The TLS handshake is bounded
// by ReadHeaderTimeout, as net/http bounds it by the shortest timeout.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler: s.Handler(),
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
	mux.HandleFunc("GET "+PathHealth, s.health)
	mux.HandleFunc("GET "+PathInfo, s.info)
	mux.HandleFunc("GET "+PathScreenshot, s.screenshot)
	mux.HandleFunc("GET "+PathTree, s.tree)
	mux.HandleFunc("POST "+PathDo, s.do)
	mux.HandleFunc("POST "+PathRun, s.run)
	mux.HandleFunc("GET "+PathFile, s.readFile)
	mux.HandleFunc("PUT "+PathFile, s.writeFile)
	mux.HandleFunc("GET "+PathWindows, s.windows)
	mux.HandleFunc("POST "+PathElements, s.elements)
	mux.HandleFunc("GET "+PathClipboard, s.clipboard)
	mux.HandleFunc("POST "+PathReset, s.reset)
	mux.HandleFunc("POST "+PathLoopback, s.loopback)
	api := apiVersion
	mux.HandleFunc("GET "+PathVersion, func(w http.ResponseWriter, r *http.Request) {
		reply(w, VersionInfo{API: api, Build: orDefault(s.Build, "unknown")})
	})
	// Anything else gets a JSON error too, not the mux's text.
	mux.HandleFunc("/", noRoute)
	paths := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/") { // "OPTIONS *" and the like: the mux would answer in text
			writeError(w, http.StatusBadRequest, "bad_request", "the request target must be a path under /v1/")
			return
		}
		if r.URL.Path != PathTree {
			s.takeMarksTree()
		}
		mux.ServeHTTP(w, r)
	})
	return s.versioned(api, s.auth(paths))
}

// routes lists each path's methods, for noRoute's 405.
var routes = map[string]string{
	PathHealth: "GET", PathInfo: "GET", PathScreenshot: "GET", PathTree: "GET",
	PathDo: "POST", PathRun: "POST", PathFile: "GET, PUT", PathWindows: "GET",
	PathElements: "POST", PathClipboard: "GET", PathReset: "POST", PathVersion: "GET",
	PathLoopback: "POST",
}

func noRoute(w http.ResponseWriter, r *http.Request) {
	if allow, ok := routes[r.URL.Path]; ok {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, "bad_method", fmt.Sprintf("%s takes %s, not %s", r.URL.Path, allow, r.Method))
		return
	}
	writeError(w, http.StatusNotFound, "no_route", fmt.Sprintf("no API at %s", r.URL.Path))
}

// versioned declares the API version on every response, and refuses a
// request that declares another one before anything else, the token
// included: a client of another version may not even send it the same
// way. A request that declares none (curl, a script) is served.
func (s *Server) versioned(api string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(APIHeader, api)
		if v := r.Header.Get(APIHeader); v != "" && v != api {
			writeError(w, http.StatusConflict, "version", fmt.Sprintf("this daemon speaks API version %s; the client speaks %s (upgrade one of them)", api, short(v)))
			s.logf("%s %s 409 (API version %s)", r.Method, r.URL.Path, short(v))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// short returns a version the other side declared as it is, or quoted
// when it holds anything but a plain word, cut to a length that fits a
// message.
func short(v string) string {
	if len(v) > 32 {
		v = v[:32] + "..."
	}
	if q := strconv.Quote(v); q[1:len(q)-1] != v || strings.ContainsAny(v, " ;,") {
		return q
	}
	return v
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
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token")
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

// apiError is the body of every error response.
type apiError struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// Error kinds and their statuses, first match first; the client turns
// them back into sentinel errors.
var errorKinds = []struct {
	err    error
	kind   string
	status int
}{
	{env.ErrNotFound, "not_found", http.StatusNotFound},
	{env.ErrForbidden, "forbidden", http.StatusForbidden},
	{env.ErrBadAction, "bad_action", http.StatusUnprocessableEntity},
	{env.ErrClosed, "closed", http.StatusServiceUnavailable},
	{ErrBadRequest, "bad_request", http.StatusBadRequest},
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
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			return k.kind, k.status, err.Error()
		}
	}
	// Only a *fs.PathError is looked at, so that, say, a process's
	// ENOTDIR deep in a reset is not blamed on the caller.
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		for _, m := range pathMistakes {
			if errors.Is(pe.Err, m.errno) {
				return "bad_request", http.StatusBadRequest, m.why + ": " + err.Error()
			}
		}
	}
	return "internal", http.StatusInternalServerError, err.Error()
}

func writeError(w http.ResponseWriter, status int, kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(apiError{Error: msg, Kind: kind})
}

func fail(w http.ResponseWriter, err error) {
	kind, status, msg := classify(err)
	writeError(w, status, kind, msg)
}

func badRequest(w http.ResponseWriter, format string, args ...any) {
	writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf(format, args...))
}

func tooLarge(w http.ResponseWriter, limit int64) {
	writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is over the limit of %d bytes", limit))
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
		w.Header().Set(MarksHeader, string(b))
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

// DoRequest is the body of POST /v1/do.
type DoRequest struct {
	Actions []action.Action `json:"actions"`
}

// DoResponse is its reply: the steps done, and the error that stopped
// the rest, if any.
type DoResponse struct {
	Steps []action.Step `json:"steps"`
	Error *apiError     `json:"error,omitempty"`
}

func (s *Server) do(w http.ResponseWriter, r *http.Request) {
	var req DoRequest
	if !decode(w, r, &req) {
		return
	}
	steps, err := s.Env.Do(r.Context(), req.Actions)
	resp := DoResponse{Steps: steps}
	if err != nil {
		kind, _, msg := classify(err)
		if kind == "internal" && len(steps) < len(req.Actions) && s.impossible(r.Context(), req.Actions[len(steps)]) {
			kind = "bad_action"
		}
		resp.Error = &apiError{Error: msg, Kind: kind}
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

// RunRequest is the body of POST /v1/run.
type RunRequest struct {
	Command   string `json:"command"`
	TimeoutMS int    `json:"timeout_ms,omitempty"`
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	var req RunRequest
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

// ClipboardResponse is the body of GET /v1/clipboard.
type ClipboardResponse struct {
	Text string `json:"text"`
}

func (s *Server) clipboard(w http.ResponseWriter, r *http.Request) {
	t, err := s.Env.Clipboard(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, ClipboardResponse{Text: t})
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
	if err := s.Env.Reset(r.Context(), setup); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
