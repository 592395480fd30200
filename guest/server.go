// Package guest serves one environment over HTTP (JSON and images) so that
// a desktop in a VM, a container or a pod is driven exactly like a local
// one, and provides the client that implements env.Env over that API.
//
// Every request needs the bearer token: the daemon runs commands.
package guest

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strconv"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
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
)

// MarksHeader carries a set-of-mark screenshot's marks as JSON.
const MarksHeader = "Proctor-Marks"

// MaxBody bounds request bodies (file uploads and setups with assets).
const MaxBody = 256 << 20

// NewToken returns a random bearer token.
func NewToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Server serves an environment.
type Server struct {
	Env   env.Env
	Token string
	Log   *log.Logger // nil: no request log
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
	return s.auth(mux)
}

func (s *Server) auth(next http.Handler) http.Handler {
	want := []byte("Bearer " + s.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		got := []byte(r.Header.Get("Authorization"))
		if s.Token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="proctor"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token")
			s.logf("%s %s 401 (%s)", r.Method, r.URL.Path, r.RemoteAddr)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
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

// Error kinds and their statuses; the client turns them back into the
// env package's sentinel errors.
var errorKinds = []struct {
	err    error
	kind   string
	status int
}{
	{env.ErrNotFound, "not_found", http.StatusNotFound},
	{check.ErrNotExist, "not_found", http.StatusNotFound},
	{env.ErrForbidden, "forbidden", http.StatusForbidden},
	{env.ErrBadAction, "bad_action", http.StatusUnprocessableEntity},
	{env.ErrClosed, "closed", http.StatusServiceUnavailable},
}

func writeError(w http.ResponseWriter, status int, kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(apiError{Error: msg, Kind: kind})
}

func fail(w http.ResponseWriter, err error) {
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			writeError(w, k.status, k.kind, err.Error())
			return
		}
	}
	writeError(w, http.StatusInternalServerError, "internal", err.Error())
}

func badRequest(w http.ResponseWriter, format string, args ...any) {
	writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf(format, args...))
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		badRequest(w, "bad JSON body: %v", err)
		return false
	}
	return true
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
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 4 {
			badRequest(w, "scale %q is not a number in (0, 4]", v)
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
	}
	w.Header().Set("Content-Type", "image/"+shot.Format)
	w.Write(shot.Data)
}

// tree replies with the raw tree as JSON, or with format=text the
// filtered, linearised table a model reads.
func (s *Server) tree(w http.ResponseWriter, r *http.Request) {
	t, err := s.Env.Tree(r.Context())
	if err != nil {
		fail(w, err)
		return
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
	Steps []env.Step `json:"steps"`
	Error *apiError  `json:"error,omitempty"`
}

func (s *Server) do(w http.ResponseWriter, r *http.Request) {
	var req DoRequest
	if !decode(w, r, &req) {
		return
	}
	steps, err := s.Env.Do(r.Context(), req.Actions)
	resp := DoResponse{Steps: steps}
	if err != nil {
		resp.Error = &apiError{Error: err.Error(), Kind: "internal"}
		for _, k := range errorKinds {
			if errors.Is(err, k.err) {
				resp.Error.Kind = k.kind
				break
			}
		}
	}
	reply(w, resp)
}

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
	res, err := s.Env.Run(r.Context(), req.Command, time.Duration(req.TimeoutMS)*time.Millisecond)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, res)
}

func (s *Server) readFile(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query().Get("path")
	if p == "" {
		badRequest(w, "path is missing")
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
	p := r.URL.Query().Get("path")
	if p == "" {
		badRequest(w, "path is missing")
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		badRequest(w, "read the body: %v", err)
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
	var q check.ElementQuery
	if !decode(w, r, &q) {
		return
	}
	els, err := s.Env.Elements(r.Context(), q)
	if err != nil {
		fail(w, err)
		return
	}
	if els == nil {
		els = []check.Element{}
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
