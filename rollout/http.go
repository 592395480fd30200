package rollout

import (
	"bytes"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/rollout/api"
)

// OpenAPI is the API's OpenAPI document; GET /v1/openapi.json serves it,
// and the tests hold the handlers to it.
//
//go:embed openapi.json
var OpenAPI []byte

// MaxBody bounds a request's body.
const MaxBody = 4 << 20

// route is one route of the API.
type route struct {
	method, path string
	serve        func(h *handler, w http.ResponseWriter, r *http.Request)
}

// routes are the API's routes, all of them; the OpenAPI document lists
// the same.
var routes = []route{
	{"GET", api.PathTasks, (*handler).tasks},
	{"POST", api.PathRollouts, (*handler).create},
	{"GET", api.PathRollout, (*handler).get},
	{"DELETE", api.PathRollout, (*handler).delete},
	{"POST", api.PathStep, (*handler).step},
	{"POST", api.PathFinish, (*handler).finish},
	{"GET", api.PathImage, (*handler).image},
	{"GET", api.PathOpenAPI, (*handler).openapi},
}

// Routes lists the routes the handler serves, as "METHOD PATH".
func Routes() []string {
	out := make([]string, len(routes))
	for i, rt := range routes {
		out[i] = rt.method + " " + rt.path
	}
	return out
}

type handler struct {
	s     *Service
	token string
	log   *log.Logger
}

// Handler serves the API of s. Every request needs the bearer token
// (Authorization: Bearer TOKEN); log, when not nil, gets a line per
// request (its path, never a header).
func Handler(s *Service, token string, log *log.Logger) http.Handler {
	h := &handler{s: s, token: token, log: log}
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.HandleFunc(rt.method+" "+rt.path, func(w http.ResponseWriter, r *http.Request) { rt.serve(h, w, r) })
	}
	mux.HandleFunc("/", noRoute)
	return h.auth(mux)
}

func (h *handler) auth(next http.Handler) http.Handler {
	want := []byte("Bearer " + h.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if h.token == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="proctor"`)
			w.Header().Set("Connection", "close")
			writeError(w, &Error{Kind: api.KindUnauthorized, Msg: "missing or wrong bearer token"})
			h.logf("%s %s 401 (%s)", r.Method, r.URL.Path, r.RemoteAddr)
			return
		}
		if r.ContentLength > MaxBody {
			writeError(w, errorf(api.KindTooLarge, "the body is over the limit of %d bytes", MaxBody))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		next.ServeHTTP(w, r)
		h.logf("%s %s %s", r.Method, r.URL.Path, time.Since(start).Round(time.Microsecond))
	})
}

func (h *handler) logf(format string, args ...any) {
	if h.log != nil {
		h.log.Printf(format, args...)
	}
}

// noRoute answers a path the API does not have, or a method a path does
// not take, in JSON.
func noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, rt := range routes {
		if matches(rt.path, r.URL.Path) {
			allow = append(allow, rt.method)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, errorf(api.KindBadMethod, "%s takes %s, not %s", r.URL.Path, strings.Join(allow, ", "), r.Method))
		return
	}
	writeError(w, errorf(api.KindNotFound, "no API at %s", r.URL.Path))
}

// matches reports whether path matches a route's pattern, whose {name}
// segments match any one segment.
func matches(pattern, path string) bool {
	ps, qs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(qs) {
		return false
	}
	for i := range ps {
		if ps[i] != qs[i] && !(strings.HasPrefix(ps[i], "{") && qs[i] != "") {
			return false
		}
	}
	return true
}

// writeError answers err: an *Error with its kind's status, anything else
// as an internal error.
func writeError(w http.ResponseWriter, err error) {
	e := &Error{Kind: api.KindInternal, Msg: err.Error()}
	errors.As(err, &e)
	body := api.Error{Error: e.Msg, Kind: e.Kind}
	if e.RetryAfter > 0 {
		secs := int((e.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		body.RetryAfter = secs
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(api.Status(e.Kind))
	json.NewEncoder(w).Encode(body)
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// decode reads the body as one JSON value into v; an empty body leaves v
// as it is when empty is allowed.
func decode(w http.ResponseWriter, r *http.Request, v any, empty bool) bool {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			writeError(w, errorf(api.KindTooLarge, "the body is over the limit of %d bytes", mbe.Limit))
		} else {
			writeError(w, errorf(api.KindBadRequest, "read the body: %v", err))
		}
		return false
	}
	if empty && len(bytes.TrimSpace(b)) == 0 {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, errorf(api.KindBadRequest, "bad JSON body: %v", err))
		return false
	}
	if dec.More() {
		writeError(w, errorf(api.KindBadRequest, "bad JSON body: more than one value"))
		return false
	}
	return true
}

// client names the caller for the per-client limit: its Proctor-Client
// header, else its address.
func clientOf(r *http.Request) string {
	if c := r.Header.Get(api.ClientHeader); c != "" {
		return "name " + c
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "address " + host
}

func (h *handler) tasks(w http.ResponseWriter, r *http.Request) {
	gold := false
	if g := r.URL.Query().Get("gold"); g != "" {
		var err error
		if gold, err = strconv.ParseBool(g); err != nil {
			writeError(w, errorf(api.KindBadRequest, "gold=%q: give true or false", g))
			return
		}
	}
	reply(w, http.StatusOK, h.s.Tasks(gold))
}

func (h *handler) create(w http.ResponseWriter, r *http.Request) {
	var req api.CreateRequest
	if !decode(w, r, &req, false) {
		return
	}
	if req.Task == "" {
		writeError(w, errorf(api.KindBadRequest, `give "task": a task's id, or a template's (GET %s lists them)`, api.PathTasks))
		return
	}
	ro, err := h.s.Create(r.Context(), clientOf(r), req)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Location", strings.Replace(api.PathRollout, "{id}", ro.ID, 1))
	reply(w, http.StatusCreated, ro)
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) {
	ro, err := h.s.Get(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	reply(w, http.StatusOK, ro)
}

func (h *handler) delete(w http.ResponseWriter, r *http.Request) {
	if err := h.s.Delete(r.PathValue("id")); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *handler) step(w http.ResponseWriter, r *http.Request) {
	var req api.StepRequest
	if !decode(w, r, &req, false) {
		return
	}
	resp, err := h.s.Step(r.PathValue("id"), req)
	if err != nil {
		writeError(w, err)
		return
	}
	reply(w, http.StatusOK, resp)
}

func (h *handler) finish(w http.ResponseWriter, r *http.Request) {
	var none struct{}
	if !decode(w, r, &none, true) {
		return
	}
	ro, err := h.s.Finish(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	reply(w, http.StatusOK, ro)
}

func (h *handler) image(w http.ResponseWriter, r *http.Request) {
	step := 0
	if q := r.URL.Query().Get("step"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 {
			writeError(w, errorf(api.KindBadRequest, "step=%q: give a step number, from 1", q))
			return
		}
		step = n
	}
	b, typ, err := h.s.Image(r.PathValue("id"), step)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.Write(b)
}

func (h *handler) openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(OpenAPI)
}
