// Package mem is an environment kept entirely in memory: an env.Env that
// needs no display, no browser and no device, so that the runner's, the
// episode's and the checks' tests run anywhere, fast and always alike. It
// passes the conformance suite (env/envtest) for what it declares.
//
// What it models:
//   - a screen of a fixed size (1280x800 unless told), drawn as a real
//     image (windows with title bars, widgets as boxes with their text) and
//     encoded as PNG or JPEG as the other environments encode theirs, with
//     set-of-mark boxes from its elements;
//   - windows of applications (App): titles, a stacking order (a click
//     raises a window; the top one is active), modal dialogs; their widgets
//     (push buttons, single- and multi-line text fields, check boxes,
//     labels, combo boxes) with boxes, roles, names, values and states, in
//     an accessibility tree of one application per window;
//   - the unified action space through the same interpreter as the X11 and
//     VNC desktops (package env/input): a click on a widget focuses,
//     toggles or presses it (a press may write a file and close its
//     window, see Effect); keys and typed text go to the focused field:
//     characters, enter, tab, escape, backspace, delete, arrows, home, end,
//     ctrl+a, ctrl+c, ctrl+x, ctrl+v, alt+f4; element targets (set-of-mark
//     tags, element ids, roles and names) resolve as on the desktop;
//   - a file system under the home folder (/home/user, "~") and /tmp, with
//     the desktop's rules (ReadFile and WriteFile refuse other paths and
//     "..", env.ErrForbidden), restored at every reset (WithFiles);
//   - a clipboard; setup steps that mean something in memory: write, copy,
//     launch (an App, or a plain text window for any other application the
//     setup knows), open of a file (a text window with a Save button),
//     wait_window, wait_element, focus and sleep;
//   - faults for tests of what uses an environment (Fault): errors, delays
//     and deaths on chosen calls.
//
// What it does not model: processes and a shell (Run, code actions and run
// steps are refused with env.ErrBadAction, and Info does not claim
// task.CapCommands), web pages and URLs, network and loopback APIs,
// scrolling (no content lies outside its window), drag and drop, menus,
// file modes and links, and time (nothing changes unless an action or a
// reset changes it, so waits look once).
//
// An Env is safe for concurrent use.
package mem

import (
	"context"
	"errors"
	"fmt"
	"image"
	"maps"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// Kind is the environment's kind (Info.Kind) and the type of the tasks
// its sources serve.
const Kind = "mem"

// Home is the home folder, which "~" names.
const Home = "/home/user"

// DefaultSize is the screen's size unless WithSize says otherwise.
var DefaultSize = action.Size{W: 1280, H: 800}

// Caps are the capabilities of an in-memory environment: everything but
// commands, web pages and a loopback of its own.
var Caps = []task.Capability{task.CapTree, task.CapApps, task.CapFiles, task.CapClipboard, task.CapWindows, task.CapElements, task.CapAfter}

// Option configures an environment (New, Source).
type Option func(*config) error

type config struct {
	size   action.Size
	sized  bool // WithSize was given
	apps   map[string]App
	files  map[string][]byte
	faults []Fault
	plan   *plan // shared by the environments of one Source
}

// WithSize sets the screen's size.
func WithSize(s action.Size) Option {
	return func(c *config) error {
		if s.W < 16 || s.H < 16 || s.W > 16384 || s.H > 16384 {
			return fmt.Errorf("screen size %dx%d is not between 16x16 and 16384x16384", s.W, s.H)
		}
		c.size, c.sized = s, true
		return nil
	}
}

// WithApp adds an application that launch steps can name; it is looked
// for before the setup's own apps and the built-in ones.
func WithApp(name string, a App) Option {
	return func(c *config) error {
		if err := a.validate(name); err != nil {
			return err
		}
		a.Widgets = slices.Clone(a.Widgets)
		c.apps[name] = a
		return nil
	}
}

// WithFiles sets the files every reset restores (the home folder's
// template), by path as WriteFile takes them.
func WithFiles(files map[string]string) Option {
	return func(c *config) error {
		for p, s := range files {
			full, err := confine(p)
			if err != nil {
				return err
			}
			c.files[full] = []byte(s)
		}
		return nil
	}
}

// WithFault injects faults (see Fault).
func WithFault(f ...Fault) Option {
	return func(c *config) error {
		for _, f := range f {
			if err := f.validate(); err != nil {
				return err
			}
		}
		c.faults = append(c.faults, f...)
		return nil
	}
}

func newConfig(opts []Option) (config, error) {
	c := config{size: DefaultSize, apps: map[string]App{}, files: map[string][]byte{}}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return c, err
		}
	}
	if c.plan == nil {
		c.plan = &plan{faults: c.faults, calls: map[string]int{}}
	}
	return c, nil
}

// Env is an in-memory environment. It implements env.Env.
type Env struct {
	cfg  config
	size action.Size

	mu     sync.Mutex
	down   error // why the environment is closed or dead; nil while it lives
	files  map[string][]byte
	clip   string
	wins   []*window // in stacking order, the top one last
	marks  []observe.Mark
	ptr    image.Point
	held   map[uint32]bool // keys held down
	press  *widget         // the widget a held left button went down on
	opened int             // windows opened since the last reset
	// Counters of windows, processes and widgets, never reset: an id
	// names one thing for the environment's life.
	nextWin int
	nextID  int64
}

var _ env.Env = (*Env)(nil)

// New makes an environment. It starts reset, with no window open and the
// files of WithFiles.
func New(opts ...Option) (*Env, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("mem: %w", err)
	}
	e := &Env{cfg: c, size: c.size}
	e.resetLocked()
	return e, nil
}

// resetLocked ends every window and restores the files.
func (e *Env) resetLocked() {
	e.files = maps.Clone(e.cfg.files)
	e.clip = ""
	e.wins = nil
	e.marks = nil
	e.held = map[uint32]bool{}
	e.press = nil
	e.opened = 0
	// The pointer waits in the bottom-right corner, as on the desktop.
	e.ptr = image.Pt(e.size.W-1, e.size.H-1)
}

// alive fails with env.ErrClosed once the environment is closed or dead.
func (e *Env) alive() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.down
}

// enter starts a call of method: it fails on a closed or dead
// environment, and applies the faults that fall on the call.
func (e *Env) enter(ctx context.Context, method string) error {
	if err := e.alive(); err != nil {
		return err
	}
	n, faults := e.cfg.plan.hit(method)
	for _, f := range faults {
		if err := f.apply(ctx, e, method, n); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return e.alive()
}

// Kill makes the environment die as a desktop whose X server crashed:
// every later call fails with env.ErrClosed.
func (e *Env) Kill() { e.die(errors.New("killed")) }

func (e *Env) die(why error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down == nil {
		e.down = fmt.Errorf("%w: the in-memory environment died: %v", env.ErrClosed, why)
	}
}

// Calls counts the calls of a method (as Fault names them; "" counts
// every call) on this environment and every other one its Source started.
func (e *Env) Calls(method string) int { return e.cfg.plan.count(method) }

// Close ends the environment; every later call fails with env.ErrClosed.
func (e *Env) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down == nil {
		e.down = fmt.Errorf("%w: the in-memory environment was closed", env.ErrClosed)
	}
	return nil
}

// Info describes the environment.
func (e *Env) Info(ctx context.Context) (env.Info, error) {
	if err := e.enter(ctx, "Info"); err != nil {
		return env.Info{}, err
	}
	return env.Info{Kind: Kind, Screen: e.size, Display: "memory", Home: Home,
		Versions: map[string]string{"go": runtime.Version()}, Caps: slices.Clone(Caps)}, nil
}

// Screenshot draws the screen: its windows, and the set-of-mark boxes
// when asked (remembered for tag targets).
func (e *Env) Screenshot(ctx context.Context, o env.ShotOptions) (env.Shot, error) {
	if err := e.enter(ctx, "Screenshot"); err != nil {
		return env.Shot{}, err
	}
	e.mu.Lock()
	img := e.drawLocked()
	var marks []observe.Mark
	var tree *observe.Tree
	if o.Marks {
		tree = e.treeLocked()
		marks = observe.Marks(tree.Filter(observe.Options{Screen: e.size}))
		e.marks = marks
	}
	ptr := e.ptr
	e.mu.Unlock()
	if o.Marks {
		observe.DrawMarks(img, marks)
	}
	return env.FinishShot(img, o, &ptr, marks, tree)
}

// Tree is the accessibility tree: one application per open window.
func (e *Env) Tree(ctx context.Context) (*observe.Tree, error) {
	if err := e.enter(ctx, "Tree"); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.treeLocked(), nil
}

// Elements finds accessibility elements.
func (e *Env) Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	if err := e.enter(ctx, "Elements"); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.treeLocked().Elements(q), nil
}

// Windows lists the open windows in the order they opened; the one on
// top is active.
func (e *Env) Windows(ctx context.Context) ([]env.Window, error) {
	if err := e.enter(ctx, "Windows"); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []env.Window{}
	for _, w := range e.byAge() {
		out = append(out, env.Window{ID: w.id, Title: w.title, PID: w.pid, Box: w.box, Active: w == e.top()})
	}
	return out, nil
}

// Clipboard reads the clipboard's text.
func (e *Env) Clipboard(ctx context.Context) (string, error) {
	if err := e.enter(ctx, "Clipboard"); err != nil {
		return "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.clip, nil
}

// errNoCommands is the refusal of whatever needs a shell.
func errNoCommands(what string) error {
	return fmt.Errorf("%w: %s needs %s, which the in-memory environment does not offer", env.ErrBadAction, what, task.CapCommands)
}

// Run refuses: the in-memory environment has no shell.
func (e *Env) Run(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error) {
	if err := e.enter(ctx, "Run"); err != nil {
		return observe.CommandResult{}, err
	}
	return observe.CommandResult{}, errNoCommands("a shell command")
}

// ReadFile reads a file under the home folder or /tmp.
func (e *Env) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if err := e.enter(ctx, "ReadFile"); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.readLocked(p)
}

// WriteFile writes a file under the home folder or /tmp.
func (e *Env) WriteFile(ctx context.Context, p string, data []byte) error {
	if err := e.enter(ctx, "WriteFile"); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.writeLocked(p, data)
}

// appTitle is the title of a window of a desktop application the
// in-memory desktop does not model.
func appTitle(name string, a task.AppSpec) string {
	if a.Window != "" {
		return a.Window
	}
	return name
}

// fileTitle is the title of the window that shows a file.
func fileTitle(p string) string { return path.Base(strings.TrimSuffix(p, "/")) }
