package remote

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
)

// This file is the wire protocol that the guest daemon serves and Client
// speaks: its paths, its version handshake, its request and response
// bodies and its error kinds. Both sides take them from here only.

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
	PathSteps      = "/v1/steps" // a task's steps after the agent, without a reset
	PathVersion    = "/v1/version"
	PathLoopback   = "/v1/loopback"
)

// Route is one method on one path of the API.
type Route struct {
	Method, Path string
}

// String returns the route as net/http's ServeMux patterns write it.
func (r Route) String() string { return r.Method + " " + r.Path }

// Routes are every route of the API: the daemon serves exactly these.
var Routes = []Route{
	{"GET", PathHealth},
	{"GET", PathInfo},
	{"GET", PathScreenshot},
	{"GET", PathTree},
	{"POST", PathDo},
	{"POST", PathRun},
	{"GET", PathFile},
	{"PUT", PathFile},
	{"GET", PathWindows},
	{"POST", PathElements},
	{"GET", PathClipboard},
	{"POST", PathReset},
	{"POST", PathSteps},
	{"GET", PathVersion},
	{"POST", PathLoopback},
}

// Allow returns the methods of a path, comma-separated in the order of
// Routes (an Allow header's value), or "" for a path the API does not have.
func Allow(path string) string {
	var methods []string
	for _, r := range Routes {
		if r.Path == path {
			methods = append(methods, r.Method)
		}
	}
	return strings.Join(methods, ", ")
}

// APIVersion is the version of the API this package speaks and the
// daemon serves. It changes when a daemon and a client of different
// versions would misunderstand each other; both refuse to talk across a
// change.
const APIVersion = "1"

// APIHeader carries the API version: the daemon sends it on every
// response, the client on every request.
const APIHeader = "Proctor-API"

// MarksHeader carries a set-of-mark screenshot's marks as JSON.
const MarksHeader = "Proctor-Marks"

// ShortVersion returns a version the other side declared as it is, or
// quoted when it holds anything but a plain word, cut to a length that
// fits a message.
func ShortVersion(v string) string {
	if len(v) > 32 {
		v = v[:32] + "..."
	}
	if q := strconv.Quote(v); q[1:len(q)-1] != v || strings.ContainsAny(v, " ;,") {
		return q
	}
	return v
}

// VersionInfo is the body of GET /v1/version.
type VersionInfo struct {
	API   string `json:"api"`   // the API version
	Build string `json:"build"` // the daemon's build of proctor
}

// DoRequest is the body of POST /v1/do.
type DoRequest struct {
	Actions []action.Action `json:"actions"`
}

// DoResponse is its reply: the steps done, and the error that stopped
// the rest, if any.
type DoResponse struct {
	Steps []action.Step `json:"steps"`
	Error *ErrorBody    `json:"error,omitempty"`
}

// RunRequest is the body of POST /v1/run.
type RunRequest struct {
	Command   string `json:"command"`
	TimeoutMS int    `json:"timeout_ms,omitempty"`
}

// ClipboardResponse is the body of GET /v1/clipboard.
type ClipboardResponse struct {
	Text string `json:"text"`
}

// ErrorBody is the body of every error response, and the error of a
// DoResponse.
type ErrorBody struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// The error kinds an ErrorBody names.
const (
	KindNotFound     = "not_found"
	KindForbidden    = "forbidden"
	KindBadAction    = "bad_action"
	KindClosed       = "closed"
	KindBadRequest   = "bad_request"
	KindTooLarge     = "too_large"
	KindUnauthorized = "unauthorized"
	KindVersion      = "version"
	KindBadMethod    = "bad_method"
	KindNoRoute      = "no_route"
	KindInternal     = "internal"
)

// ErrorKind is one error kind: its name, its HTTP status, and the
// sentinel error it stands for.
type ErrorKind struct {
	Kind   string
	Status int
	// Err is the sentinel: the daemon gives the kind to an error that is
	// Err (errors.Is), the client's error is Err. Nil: a plain error on
	// the client's side, the daemon's trouble.
	Err error
	// Request marks a kind the daemon gives of its own, about the request
	// as a whole (its token, its version, its size), never to an
	// environment's error: an environment that is itself a client may
	// return ErrUnauthorized about another daemon.
	Request bool
}

// ErrorKinds is the one table of error kinds, looked up first match
// first: the daemon encodes an error with KindOf, the client decodes it
// with KindError.
var ErrorKinds = []ErrorKind{
	{Kind: KindNotFound, Status: http.StatusNotFound, Err: env.ErrNotFound},
	{Kind: KindForbidden, Status: http.StatusForbidden, Err: env.ErrForbidden},
	{Kind: KindBadAction, Status: http.StatusUnprocessableEntity, Err: env.ErrBadAction},
	{Kind: KindClosed, Status: http.StatusServiceUnavailable, Err: env.ErrClosed},
	{Kind: KindBadRequest, Status: http.StatusBadRequest, Err: ErrBadRequest},
	{Kind: KindTooLarge, Status: http.StatusRequestEntityTooLarge, Err: ErrBadRequest, Request: true},
	{Kind: KindUnauthorized, Status: http.StatusUnauthorized, Err: ErrUnauthorized, Request: true},
	{Kind: KindVersion, Status: http.StatusConflict, Err: ErrVersion, Request: true},
	{Kind: KindBadMethod, Status: http.StatusMethodNotAllowed, Request: true},
	{Kind: KindNoRoute, Status: http.StatusNotFound, Request: true},
	{Kind: KindInternal, Status: http.StatusInternalServerError},
}

// LookupKind returns the entry of a kind's name.
func LookupKind(kind string) (ErrorKind, bool) {
	for _, k := range ErrorKinds {
		if k.Kind == kind {
			return k, true
		}
	}
	return ErrorKind{}, false
}

// Status returns a kind's HTTP status: 500 for a kind not in the table.
func Status(kind string) int {
	if k, ok := LookupKind(kind); ok {
		return k.Status
	}
	return http.StatusInternalServerError
}

// KindOf returns the kind the daemon gives an environment's error: the
// first kind not about the request whose sentinel err is, else
// KindInternal.
func KindOf(err error) ErrorKind {
	for _, k := range ErrorKinds {
		if !k.Request && k.Err != nil && errors.Is(err, k.Err) {
			return k
		}
	}
	k, _ := LookupKind(KindInternal)
	return k
}

// KindError is the client's error for an answer of the given kind. Any
// kind without a sentinel (internal, or one from a newer daemon) is a
// plain error: the daemon's trouble, not the caller's.
func KindError(kind, msg string) error {
	if k, ok := LookupKind(kind); ok && k.Err != nil {
		return fmt.Errorf("%w: %s", k.Err, msg)
	}
	return fmt.Errorf("guest: %s", msg)
}
