// Package env defines the contract every environment meets: a local X11
// desktop, a desktop reached through the guest daemon, and later browsers,
// VNC desktops and Android devices. The runner and the checks use only this
// interface.
package env

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/apicall"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/query"
	"github.com/proctor-eval/proctor/task"
)

// Info describes an environment.
type Info struct {
	Kind     string            `json:"kind"` // x11, browser, vnc, android
	Screen   action.Size       `json:"screen"`
	Display  string            `json:"display,omitempty"`
	Home     string            `json:"home,omitempty"`
	Versions map[string]string `json:"versions,omitempty"`
	// Caps are the capabilities the environment offers beyond a screen
	// and input; a task that needs one it lacks is refused before a run.
	Caps []task.Capability `json:"caps,omitempty"`
}

// Has reports whether the environment offers c.
func (i Info) Has(c task.Capability) bool { return slices.Contains(i.Caps, c) }

// Source is one place of a run's pool, as a provider describes it: it
// starts (and, after a death, starts again) the environment that serves
// that place.
type Source struct {
	// Name says which environment this is in messages and reports:
	// "local 2", "guest https://10.0.0.5:7400".
	Name string
	// Type is the environment type it serves (task.Environment.Type).
	Type string
	// Also lists other types it serves: a VNC desktop with an X11 guest
	// beside it runs the tasks written for X11 desktops too.
	Also []string
	// Size is the fixed screen size of the environment, or zero when
	// Start makes one of any size.
	Size action.Size
	// Start starts the environment, at size when Size is zero.
	Start func(ctx context.Context, size action.Size) (Env, error)
	// Once means a dead environment cannot be started again (a remote
	// daemon that is gone): the place leaves the pool.
	Once bool
	// Remote means the environment runs on another machine, so it cannot
	// reach what listens on this machine's loopback: the command services
	// a suite declares (Proctor starts them on 127.0.0.1).
	Remote bool
	// Release, when set, gives back what the place holds whether or not
	// its environment ever started (a pod on a cluster); the commands
	// call it for every place when the run ends.
	Release func()
}

// Loopback reports whether host (a name or an address, without a port)
// is this machine's loopback: "localhost" or an address in 127.0.0.0/8
// or ::1. An environment there shares this machine's loopback.
func Loopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.Unmap().IsLoopback()
}

// ShotOptions tunes a screenshot.
type ShotOptions struct {
	Scale  float64 `json:"scale,omitempty"`  // 0 or 1: full size
	JPEG   int     `json:"jpeg,omitempty"`   // JPEG quality 1..100; 0: PNG
	Cursor bool    `json:"cursor,omitempty"` // draw the pointer
	Marks  bool    `json:"marks,omitempty"`  // draw the set-of-mark boxes
}

// Shot is an encoded screenshot.
type Shot struct {
	Data   []byte         `json:"data"`
	Format string         `json:"format"` // png or jpeg
	Size   action.Size    `json:"size"`   // of the encoded image
	Marks  []observe.Mark `json:"marks,omitempty"`
	// Tree is the accessibility tree the marks were made from, when the
	// environment read one for them (so that a caller need not read it
	// again); nil otherwise.
	Tree *observe.Tree `json:"-"`
}

// Env is one environment an agent acts on.
type Env interface {
	Info(ctx context.Context) (Info, error)
	// Screenshot captures the screen.
	Screenshot(ctx context.Context, o ShotOptions) (Shot, error)
	// Tree reads the whole accessibility tree; Filter and Linearize (package
	// observe) make what a model reads from it.
	Tree(ctx context.Context) (*observe.Tree, error)
	// Do performs actions in order and records each one. Element targets
	// (set-of-mark tags, role and name) are resolved against the current
	// screen. It stops at the first action that fails.
	Do(ctx context.Context, acts []action.Action) ([]action.Step, error)
	// Run runs a shell command in the environment's session.
	Run(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error)
	// ReadFile and WriteFile work within the allowed roots.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	WriteFile(ctx context.Context, path string, data []byte) error
	// Windows lists the top-level windows.
	Windows(ctx context.Context) ([]Window, error)
	// Elements finds accessibility elements (for checks and waits).
	Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error)
	// Clipboard reads the clipboard's text.
	Clipboard(ctx context.Context) (string, error)
	// Reset returns the environment to a clean state (applications ended,
	// home folder restored) and runs the setup steps.
	Reset(ctx context.Context, s Setup) error
	// Close ends the environment and everything it started.
	Close() error
}

// Page is implemented by an environment that shows web pages (a
// browser): the checks' page probes read its active tab.
type Page interface {
	Page(ctx context.Context, q observe.PageQuery) (val string, found bool, err error)
}

// Tabs is implemented by an environment with browser tabs: each
// observation lists them, with their addresses and the active one, as a
// browser shows them in its tab strip and address bar.
type Tabs interface {
	Tabs(ctx context.Context) ([]observe.Tab, error)
}

// Notices is implemented by an environment that acts on its own behalf
// while the agent acts (a browser refusing a page's request to an address
// the task does not allow, closing popups past its cap): Notices returns
// what happened since its last call, a line each, at most a few lines.
// The episode tells them to the agent with its next observation and
// records them with the step.
type Notices interface {
	Notices() []string
}

// StepRunner is implemented by an environment that runs a task's steps
// after the agent (task.Task.After) without a reset: the same kinds as a
// setup's, with the same Setup's apps and assets, whose errors name the
// step as "after[2] keys: ...". It declares task.CapAfter.
type StepRunner interface {
	RunSteps(ctx context.Context, s Setup) error
}

// RunSteps runs the steps of s on e after the agent, or says that e runs
// no steps after the agent.
func RunSteps(ctx context.Context, e Env, s Setup) error {
	r, ok := find[StepRunner](e)
	if !ok {
		return fmt.Errorf("%w: this environment runs no steps after the agent (task.CapAfter)", ErrBadAction)
	}
	return r.RunSteps(ctx, s)
}

// LoopbackAPI is implemented by an environment whose applications serve APIs
// on its own loopback (a desktop app with network: private): the checks'
// loopback probes (http and xmlrpc with a port) call them through it.
type LoopbackAPI interface {
	// LoopbackTransport sends HTTP requests to port on the environment's
	// own loopback (127.0.0.1 there), whatever host their URL names.
	LoopbackTransport(port int) http.RoundTripper
}

// CallLoopback makes a loopback probe's API call on e (package apicall
// reads the answer), or says that e has no loopback of its own.
func CallLoopback(ctx context.Context, e Env, q query.Service) (string, bool, error) {
	l, ok := LoopbackOf(e)
	if !ok {
		return "", false, fmt.Errorf("%w: %s needs an environment's own loopback (task.CapLoopback)", ErrBadAction, q.Describe())
	}
	port := q.Port()
	return apicall.Do(ctx, l.LoopbackTransport(port), "http://127.0.0.1:"+strconv.Itoa(port), q)
}

// Wrapper is an environment that wraps another: the optional interfaces
// (Page, LoopbackAPI) are looked for on the one it wraps too.
type Wrapper interface {
	Unwrap() Env
}

// find returns e, or an environment e wraps, as a T.
func find[T any](e Env) (T, bool) {
	for {
		if t, ok := e.(T); ok {
			return t, true
		}
		w, ok := e.(Wrapper)
		if !ok {
			var zero T
			return zero, false
		}
		e = w.Unwrap()
	}
}

// LoopbackOf returns e, or the environment it wraps, as a LoopbackAPI.
func LoopbackOf(e Env) (LoopbackAPI, bool) { return find[LoopbackAPI](e) }

// ReadPage reads a page probe of e, or says that e shows no web page.
func ReadPage(ctx context.Context, e Env, q observe.PageQuery) (string, bool, error) {
	p, ok := find[Page](e)
	if !ok {
		return "", false, fmt.Errorf("%w: %s needs a browser's page (task.CapPage)", ErrBadAction, q.Describe())
	}
	return p.Page(ctx, q)
}

// Window is a top-level window.
type Window struct {
	ID     uint32     `json:"id"`
	Title  string     `json:"title"`
	PID    int        `json:"pid,omitempty"`
	Box    action.Box `json:"box"`
	Active bool       `json:"active,omitempty"`
}

// Setup is what Reset prepares: the task's steps, the apps they may
// launch (beyond the built-in ones) and the suite's assets.
type Setup struct {
	Steps  []task.Step             `json:"steps,omitempty"`
	Apps   map[string]task.AppSpec `json:"apps,omitempty"`
	Assets map[string][]byte       `json:"assets,omitempty"` // asset name to content, for copy steps
	// Type is the task's environment type: a desktop opens a browser
	// task's pages in Chromium, with page probes.
	Type string `json:"type,omitempty"`
	// Origins (scheme://host:port) a browser's pages may reach besides
	// those of the pages the steps open: the task's services' and those
	// its task or suite allows. Web opens the public web to them too.
	// Everything else is refused (package browser).
	Origins []string `json:"origins,omitempty"`
	Web     bool     `json:"web,omitempty"`
	// Session is the desktop session an x11 task runs in (task.Sessions):
	// a desktop switches to it before the steps, and a fresh one is
	// started at every reset. Empty: the desktop's own.
	Session string `json:"session,omitempty"`
}

// App resolves an app name among the setup's apps and the built-in ones.
func (s Setup) App(name string) (task.AppSpec, bool) {
	if a, ok := s.Apps[name]; ok {
		return a, true
	}
	a, ok := task.BuiltinApps[name]
	return a, ok
}

// AgentsFault classifies the error of a failed action, in the one place
// every environment and the runner share: true when the agent asked for
// something wrong (an invalid action, a point off the screen, an amount
// over a limit, an element that is not there, a forbidden path), which the
// agent hears about while its episode goes on; false when the environment
// or the harness failed, which is retried and never scored.
func AgentsFault(err error) bool {
	for _, e := range []error{action.ErrInvalid, ErrBadAction, ErrNotFound, ErrForbidden} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
