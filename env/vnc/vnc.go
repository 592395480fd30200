// Package vnc attaches to a desktop that Proctor did not start, over the
// RFB protocol (a VNC server such as x11vnc, TigerVNC or a virtual
// machine's console), and drives it as an env.Env.
//
// The VNC connection gives a screen and input only: screenshots come from
// the client's framebuffer, and every pointer and keyboard action of the
// unified action space becomes RFB pointer and key events. The clipboard
// is the server's cut text. An accessibility tree, shell commands, files
// and windows exist only when a "proctor guest" daemon runs beside the VNC
// server (Config.Guest): its probes are then used, its capabilities are
// declared, element targets are resolved against its tree and clicked over
// VNC, and the task's setup runs through it.
//
// A VNC desktop cannot be reset by Proctor. With a guest, Reset is the
// guest's reset; without one, the operator resets the desktop between
// tasks, or a reset command (Config.ResetCommand, run on this machine)
// does it.
package vnc

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"net"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/input"
	"github.com/proctor-eval/proctor/env/setup"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// DefaultPort is the RFB port of display :0.
const DefaultPort = 5900

// Defaults of Config.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultResetTimeout = 2 * time.Minute
)

// codeTimeout is a code action's time limit (through the guest).
const codeTimeout = 2 * time.Minute

// Caps are the capabilities of a VNC desktop without a guest: the screen,
// the input and the cut text.
var Caps = []task.Capability{task.CapClipboard, task.CapAfter}

// conn is what the environment needs of an RFB client (*rfb.Client).
type conn interface {
	Name() string
	Size() (w, h int)
	Snapshot() *image.RGBA
	Refresh(ctx context.Context) error
	Pointer(x, y int, buttons uint8) error
	Key(keysym uint32, down bool) error
	SetClipboard(text string) error
	Clipboard() string
	Done() <-chan struct{}
	Err() error
	Close() error
}

// Config says which desktop to attach to and what helps drive it.
type Config struct {
	// Addr is the VNC server, HOST:PORT (see ParseAddr).
	Addr string
	// Password is the VNC password; empty for a server without one.
	Password string
	// Timeout bounds the connection and handshake; 0: DefaultTimeout.
	Timeout time.Duration
	// Guest is a "proctor guest" daemon's client (or any env.Env) that
	// serves the same desktop; nil: none. The environment closes it.
	Guest env.Env
	// ResetCommand is a shell command run on this machine by Reset when
	// there is no guest (it may restore a snapshot of a virtual machine);
	// empty: the operator resets the desktop.
	ResetCommand string
	// ResetTimeout bounds ResetCommand; 0: DefaultResetTimeout.
	ResetTimeout time.Duration
	// Log receives the reset command's output; nil: none.
	Log io.Writer
}

// Env is a VNC desktop. Its methods are safe for concurrent use; input
// actions are sent one at a time.
type Env struct {
	c         conn
	addr      string
	guest     env.Env
	guestInfo env.Info
	reset     string
	resetMax  time.Duration
	log       io.Writer

	in sync.Mutex // one action at a time, and the input state below
	// x, y is where the pointer was put last (written under in and mu);
	// buttons are the pointer buttons held down.
	x, y    int
	buttons uint8
	input   *input.Interpreter // the keys held are its

	mu     sync.Mutex
	marks  []observe.Mark // of the last screenshot with marks
	closed bool
}

// ParseAddr checks a VNC server address, HOST:PORT or HOST (port 5900),
// with an optional vnc:// in front, and returns it as HOST:PORT.
func ParseAddr(s string) (string, error) {
	rest := strings.TrimPrefix(s, "vnc://")
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" {
		return "", fmt.Errorf("VNC address %q is empty: give HOST:PORT", s)
	}
	if strings.ContainsAny(rest, "/?#@ \t\r\n") {
		return "", fmt.Errorf("VNC address %q is not HOST:PORT", s)
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil {
		switch {
		case !strings.Contains(rest, ":"):
			host = rest
		case strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "]"):
			host = rest[1 : len(rest)-1]
		default:
			return "", fmt.Errorf("VNC address %q is not HOST:PORT: %v", s, err)
		}
		port = strconv.Itoa(DefaultPort)
	}
	if host == "" {
		return "", fmt.Errorf("VNC address %q has no host", s)
	}
	if strings.ContainsAny(host, "[]") {
		return "", fmt.Errorf("VNC address %q has a stray bracket", s)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 || strconv.Itoa(p) != port {
		return "", fmt.Errorf("VNC address %q: port %q is not a number from 1 to 65535", s, port)
	}
	return net.JoinHostPort(host, port), nil
}

// newEnv makes the environment on an open connection. With a guest it
// reads the guest's capabilities and refuses a guest whose screen is not
// the VNC server's.
func newEnv(ctx context.Context, c conn, cfg Config) (*Env, error) {
	e := &Env{c: c, addr: cfg.Addr, guest: cfg.Guest, reset: cfg.ResetCommand,
		resetMax: cfg.ResetTimeout, log: cfg.Log}
	if e.resetMax <= 0 {
		e.resetMax = DefaultResetTimeout
	}
	e.input = &input.Interpreter{Device: device{e}, Place: place{e}, Name: "the VNC desktop " + e.Name()}
	if e.guest != nil {
		info, err := e.guest.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("the guest beside vnc://%s: %w", e.addr, err)
		}
		if w, h := c.Size(); info.Screen != (action.Size{W: w, H: h}) {
			return nil, fmt.Errorf("the guest's screen is %dx%d but vnc://%s shows %dx%d: the guest must serve the desktop the VNC server shows",
				info.Screen.W, info.Screen.H, e.addr, w, h)
		}
		e.guestInfo = info
	}
	return e, nil
}

// Name is how the environment is named in messages: vnc://HOST:PORT.
func (e *Env) Name() string { return "vnc://" + e.addr }

// alive returns env.ErrClosed once the environment is closed or the
// connection is gone.
func (e *Env) alive() error {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: %s was closed", env.ErrClosed, e.Name())
	}
	select {
	case <-e.c.Done():
		err := e.c.Err()
		if err == nil {
			err = errors.New("the connection ended")
		}
		return fmt.Errorf("%w: %s: %v", env.ErrClosed, e.Name(), err)
	default:
		return nil
	}
}

func (e *Env) size() action.Size {
	w, h := e.c.Size()
	return action.Size{W: w, H: h}
}

// missing is the error of an operation that needs a capability the
// desktop does not offer without a guest.
func (e *Env) missing(what string, c task.Capability) error {
	return fmt.Errorf("%w: %s needs %s, which %s does not offer without a guest (a \"proctor guest\" daemon beside the VNC server, named as the desktop's guest)",
		env.ErrBadAction, what, c, e.Name())
}

// Info describes the desktop: kind vnc, the framebuffer's size, and the
// capabilities: the cut text, plus the guest's when one is attached.
func (e *Env) Info(ctx context.Context) (env.Info, error) {
	info := env.Info{Kind: "vnc", Screen: e.size(), Display: e.Name(),
		Versions: map[string]string{"vnc": e.c.Name(), "go": runtime.Version()}, Caps: slices.Clone(Caps)}
	if e.guest != nil {
		info.Home = e.guestInfo.Home
		for k, v := range e.guestInfo.Versions {
			if _, ok := info.Versions["guest "+k]; !ok {
				info.Versions["guest "+k] = v
			}
		}
		for _, c := range e.guestInfo.Caps {
			// The guest's loopback is not carried through the VNC
			// desktop: its loopback probes are refused before a run.
			if c != task.CapLoopback && !slices.Contains(info.Caps, c) {
				info.Caps = append(info.Caps, c)
			}
		}
	}
	return info, e.alive()
}

// GuestKind is the kind of environment the guest beside the VNC server
// serves ("x11" for a "proctor guest" desktop), or "" without a guest.
func (e *Env) GuestKind() string {
	if e.guest == nil {
		return ""
	}
	if e.guestInfo.Kind == "" {
		return "x11"
	}
	return e.guestInfo.Kind
}

// Screenshot waits for a framebuffer update begun after the call, then
// encodes the framebuffer (PNG, or JPEG at o.JPEG), scaled by o.Scale.
// Marks need the guest's tree.
func (e *Env) Screenshot(ctx context.Context, o env.ShotOptions) (env.Shot, error) {
	if err := e.alive(); err != nil {
		return env.Shot{}, err
	}
	if o.Marks && e.guest == nil {
		return env.Shot{}, e.missing("a screenshot with set-of-mark boxes", task.CapTree)
	}
	if o.Scale < 0 || o.Scale > 4 {
		return env.Shot{}, fmt.Errorf("%w: scale %g is out of range 0..4", env.ErrBadAction, o.Scale)
	}
	if err := e.c.Refresh(ctx); err != nil {
		if aerr := e.alive(); aerr != nil {
			return env.Shot{}, aerr
		}
		return env.Shot{}, fmt.Errorf("refresh the framebuffer of %s: %w", e.Name(), err)
	}
	img := e.c.Snapshot()
	if img == nil || img.Rect.Empty() {
		return env.Shot{}, fmt.Errorf("%s has no framebuffer yet", e.Name())
	}
	var marks []observe.Mark
	var tree *observe.Tree
	if o.Marks {
		t, err := e.guest.Tree(ctx)
		if err != nil {
			return env.Shot{}, err
		}
		tree = t
		marks = observe.Marks(t.Filter(observe.Options{Screen: e.size()}))
		observe.DrawMarks(img, marks)
		e.mu.Lock()
		e.marks = marks
		e.mu.Unlock()
	}
	e.mu.Lock()
	ptr := &image.Point{X: e.x, Y: e.y} // where the environment last put the pointer
	e.mu.Unlock()
	return env.FinishShot(img, o, ptr, marks, tree)
}

// Tree reads the guest's accessibility tree.
func (e *Env) Tree(ctx context.Context) (*observe.Tree, error) {
	if err := e.alive(); err != nil {
		return nil, err
	}
	if e.guest == nil || !e.guestInfo.Has(task.CapTree) {
		return nil, e.missing("the accessibility tree", task.CapTree)
	}
	return e.guest.Tree(ctx)
}

// Run runs a shell command through the guest.
func (e *Env) Run(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error) {
	if err := e.alive(); err != nil {
		return observe.CommandResult{}, err
	}
	if e.guest == nil || !e.guestInfo.Has(task.CapCommands) {
		return observe.CommandResult{}, e.missing("a shell command", task.CapCommands)
	}
	return e.guest.Run(ctx, cmd, timeout)
}

// ReadFile reads a file through the guest.
func (e *Env) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := e.alive(); err != nil {
		return nil, err
	}
	if e.guest == nil || !e.guestInfo.Has(task.CapFiles) {
		return nil, e.missing("reading "+path, task.CapFiles)
	}
	return e.guest.ReadFile(ctx, path)
}

// WriteFile writes a file through the guest.
func (e *Env) WriteFile(ctx context.Context, path string, data []byte) error {
	if err := e.alive(); err != nil {
		return err
	}
	if e.guest == nil || !e.guestInfo.Has(task.CapFiles) {
		return e.missing("writing "+path, task.CapFiles)
	}
	return e.guest.WriteFile(ctx, path, data)
}

// Windows lists the top-level windows through the guest.
func (e *Env) Windows(ctx context.Context) ([]env.Window, error) {
	if err := e.alive(); err != nil {
		return nil, err
	}
	if e.guest == nil || !e.guestInfo.Has(task.CapWindows) {
		return nil, e.missing("the window list", task.CapWindows)
	}
	return e.guest.Windows(ctx)
}

// Elements finds accessibility elements through the guest.
func (e *Env) Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	if err := e.alive(); err != nil {
		return nil, err
	}
	if e.guest == nil || !e.guestInfo.Has(task.CapTree) {
		return nil, e.missing("finding elements", task.CapTree)
	}
	return e.guest.Elements(ctx, q)
}

// Clipboard reads the clipboard: the guest's when one is attached (it
// reads the selection itself), else the last cut text the server sent.
func (e *Env) Clipboard(ctx context.Context) (string, error) {
	if err := e.alive(); err != nil {
		return "", err
	}
	if e.guest != nil && e.guestInfo.Has(task.CapClipboard) {
		return e.guest.Clipboard(ctx)
	}
	return e.c.Clipboard(), nil
}

// SetClipboard sends text to the server as the client's cut text.
func (e *Env) SetClipboard(text string) error {
	if err := e.alive(); err != nil {
		return err
	}
	return e.c.SetClipboard(text)
}

// Reset releases every button and key the agent left held, then resets
// the desktop: through the guest when one is attached (its reset runs
// the setup); otherwise by the reset command when one is given, and the
// setup may only hold steps that need nothing of the desktop (sleeps).
// Without either, the operator is responsible for the desktop's state.
func (e *Env) Reset(ctx context.Context, s env.Setup) error {
	if err := e.alive(); err != nil {
		return err
	}
	if err := e.release(); err != nil {
		return err
	}
	e.mu.Lock()
	e.marks = nil
	e.mu.Unlock()
	if e.guest != nil {
		return e.guest.Reset(ctx, s)
	}
	t := task.Task{Setup: s.Steps}
	if miss := t.Missing(Caps); len(miss) > 0 {
		n := miss[0]
		return fmt.Errorf("%w: setup[%v] (%s) needs %s, which %s does not offer without a guest",
			env.ErrBadAction, n.Path[1], n.Label, n.Cap, e.Name())
	}
	if e.reset != "" {
		if err := e.runReset(ctx); err != nil {
			return err
		}
	}
	// What is left to run needs nothing of the desktop: package setup
	// runs it, and has no hook for the steps a desktop runs itself.
	return setup.Executor{Env: e}.Run(ctx, s)
}

// RunSteps runs a task's steps after the agent: through the guest when
// one is attached; otherwise the steps that need nothing but the screen
// and input (keys, sleeps).
func (e *Env) RunSteps(ctx context.Context, s env.Setup) error {
	if err := e.alive(); err != nil {
		return err
	}
	if e.guest != nil {
		return env.RunSteps(ctx, e.guest, s)
	}
	t := task.Task{After: s.Steps}
	if miss := t.Missing(Caps); len(miss) > 0 {
		n := miss[0]
		return fmt.Errorf("%w: %s[%v] (%s) needs %s, which %s does not offer without a guest",
			env.ErrBadAction, n.Path[0], n.Path[len(n.Path)-1], n.Label, n.Cap, e.Name())
	}
	return setup.Executor{Env: e}.After().Run(ctx, s)
}

// runReset runs the reset command on this machine within its time limit.
func (e *Env) runReset(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, e.resetMax)
	defer cancel()
	cmd := exec.CommandContext(rctx, "sh", "-c", e.reset)
	// The command's own children (a sleep, a virtual machine tool) end
	// with it: it leads a process group, which is killed at the limit.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out strings.Builder
	w := io.Writer(&out)
	if e.log != nil {
		w = io.MultiWriter(&out, e.log)
	}
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	if rctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("reset command %q of %s ran past its limit of %s", e.reset, e.Name(), e.resetMax)
	}
	if err != nil {
		msg := strings.TrimSpace(out.String())
		if len(msg) > 500 {
			msg = msg[len(msg)-500:]
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Exited() {
			return fmt.Errorf("reset command %q of %s exited %d: %s", e.reset, e.Name(), ee.ExitCode(), msg)
		}
		return fmt.Errorf("reset command %q of %s: %w", e.reset, e.Name(), err)
	}
	return nil
}

// release lets go of every button and key still held.
func (e *Env) release() error {
	e.in.Lock()
	defer e.in.Unlock()
	var errs []error
	held := e.input.Held()
	for i := len(held) - 1; i >= 0; i-- {
		errs = append(errs, e.c.Key(held[i], false))
	}
	e.input.Forget()
	if e.buttons != 0 {
		e.buttons = 0
		errs = append(errs, e.c.Pointer(e.x, e.y, 0))
	}
	return errors.Join(errs...)
}

// Close ends the connection and the guest's client.
func (e *Env) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	err := e.c.Close()
	if e.guest != nil {
		err = errors.Join(err, e.guest.Close())
	}
	return err
}
