// Package xdesktop is the local X11 desktop environment: its own Xvfb,
// window manager, D-Bus session bus and AT-SPI registry, a fresh home
// folder at every reset, and every process it starts tracked and ended.
// Input and screenshots go through the pure-Go X client (package x11), the
// accessibility tree through AT-SPI (package atspi).
package xdesktop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/internal/atspi"
	"github.com/proctor-eval/proctor/internal/x11"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// Config configures a desktop.
type Config struct {
	Width, Height int    // screen size; default 1920x1080
	HomeTemplate  string // folder copied into the home folder at every reset
	Dir           string // where the desktop's folder is made; default the system temp dir
	NoWM          bool   // run without a window manager
	// Session is the desktop session it starts with (task.Sessions),
	// openbox when empty; a reset switches to the one its setup names.
	Session string
	Log     io.Writer
	// Settle is how the desktop waits for its screen to settle after each
	// turn; the zero value is DefaultSettle (off where PROCTOR_SETTLE=off).
	Settle Settle
	// VNC, when set, serves the desktop over VNC too (see VNC).
	VNC *VNC
}

// Desktop is a local X11 desktop. It implements env.Env.
type Desktop struct {
	cfg  Config
	s    *session
	x    *x11.Conn
	a11y *atspi.Client

	mu    sync.Mutex
	marks []observe.Mark // of the last set-of-mark observation
	// base is the desktop's folder, opened once: ReadFile and WriteFile
	// reach the home and temporary folders through it (see files.go).
	base *os.Root
	// roots are the folders ReadFile and WriteFile may touch, named as
	// given and with symbolic links resolved.
	roots []string
	st    settler // waiting for the screen to settle (see settle.go)
	// sel reads the clipboard over a connection of its own, made at the
	// first read (selErr: it could not be, and xclip or xsel read it).
	sel    *x11.Selections
	selErr error
	// vncAddr is where the desktop's own VNC server listens (Config.VNC).
	vncAddr string
}

var _ env.Env = (*Desktop)(nil)

// Start starts a desktop and waits until it answers.
func Start(ctx context.Context, cfg Config) (*Desktop, error) {
	if cfg.Width == 0 {
		cfg.Width, cfg.Height = 1920, 1080
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	for _, bin := range []string{"Xvfb", "dbus-daemon"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("%s is not installed (apt-get install xvfb dbus openbox at-spi2-core)", bin)
		}
	}
	if cfg.Session != "" && !cfg.NoWM {
		if why := sessionMissing(cfg.Session); why != "" {
			return nil, fmt.Errorf("%s", why)
		}
	}
	base, err := os.MkdirTemp(cfg.Dir, "proctor-desktop-")
	if err != nil {
		return nil, err
	}
	s := &session{id: filepath.Base(base), base: base, home: filepath.Join(base, "home"),
		runtime: filepath.Join(base, "run"), tmp: filepath.Join(base, "tmp"),
		width: cfg.Width, height: cfg.Height, log: cfg.Log}
	for _, d := range []string{s.home, s.runtime, s.tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			os.RemoveAll(base)
			return nil, err
		}
	}
	d := &Desktop{cfg: cfg, s: s}
	d.st.cfg = settleConfig(cfg.Settle)
	if err := d.openRoots(); err != nil {
		os.RemoveAll(base)
		return nil, err
	}
	if err := s.startWatchdog(); err != nil {
		d.base.Close()
		os.RemoveAll(base)
		return nil, fmt.Errorf("start the desktop's watchdog: %w", err)
	}
	if err := d.resetHome(); err != nil {
		d.Close()
		return nil, err
	}
	if err := s.startInfra(ctx); err != nil {
		d.Close()
		return nil, err
	}
	if d.x, err = x11.DialCookie(s.display, s.cookie); err != nil {
		d.Close()
		return nil, err
	}
	if want := d.wantSession(""); want != "" {
		if err := d.startSession(ctx, want); err != nil {
			d.Close()
			return nil, err
		}
	}
	if d.a11y, err = atspi.Connect(ctx, s.busAddr); err != nil {
		d.Close()
		return nil, err
	}
	if cfg.VNC != nil {
		if d.vncAddr, err = d.startVNC(ctx, *cfg.VNC); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// ID names the desktop; its processes carry it in MarkerVar.
func (d *Desktop) ID() string { return d.s.id }

// Display is the X display, such as ":3".
func (d *Desktop) Display() string { return d.s.display }

// Home is the desktop's home folder.
func (d *Desktop) Home() string { return d.s.home }

// XAuthority is the file that holds the cookie an X client needs to
// connect to the desktop's display (for XAUTHORITY, or x11vnc -auth).
func (d *Desktop) XAuthority() string { return d.s.xauth }

// Env is the environment the desktop's processes get.
func (d *Desktop) Env() []string { return d.s.env() }

// Close ends every process of the desktop and removes its folder.
func (d *Desktop) Close() error {
	d.st.close()
	if d.a11y != nil {
		d.a11y.Close()
	}
	if d.x != nil {
		d.x.Close()
	}
	d.mu.Lock()
	if d.sel != nil {
		d.sel.Close()
	}
	d.mu.Unlock()
	err := d.s.close()
	d.base.Close()
	return err
}

func (d *Desktop) alive() error {
	if err := d.s.infraDown(); err != nil {
		return fmt.Errorf("%w: %v", env.ErrClosed, err)
	}
	return nil
}

// Info describes the desktop.
func (d *Desktop) Info(ctx context.Context) (env.Info, error) {
	w, h := d.x.Size()
	return env.Info{Kind: "x11", Screen: action.Size{W: w, H: h}, Display: d.s.display, Home: d.s.home,
		Versions: map[string]string{"x11": d.x.Server(), "go": runtime.Version()}, Caps: desktopCaps}, d.alive()
}

// desktopCaps are a desktop's capabilities: those of the x11 type, and
// page probes in the Chromium that a browser task opens (see Page).
var desktopCaps = append(slices.Clone(task.DesktopCapabilities), task.CapPage)

func (d *Desktop) size() action.Size {
	w, h := d.x.Size()
	return action.Size{W: w, H: h}
}

// Capture reads the screen (reusing one buffer) for callers that encode
// it themselves.
func (d *Desktop) Capture() (*image.RGBA, error) {
	if err := d.alive(); err != nil {
		return nil, err
	}
	img, err := d.x.Capture()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", env.ErrClosed, err)
	}
	return img, nil
}

// Screenshot captures, optionally decorates and scales, and encodes.
func (d *Desktop) Screenshot(ctx context.Context, o env.ShotOptions) (env.Shot, error) {
	img, err := d.Capture()
	if err != nil {
		return env.Shot{}, err
	}
	var marks []observe.Mark
	var tree *observe.Tree
	if o.Marks {
		t, err := d.Tree(ctx)
		if err != nil {
			return env.Shot{}, err
		}
		tree = t
		marks = observe.Marks(t.Filter(observe.Options{Screen: d.size()}))
		observe.DrawMarks(img, marks)
		d.mu.Lock()
		d.marks = marks
		d.mu.Unlock()
	}
	var ptr *image.Point
	if o.Cursor {
		if x, y, err := d.x.Pointer(); err == nil {
			ptr = &image.Point{X: x, Y: y}
		}
	}
	return env.FinishShot(img, o, ptr, marks, tree)
}

// Tree reads the whole accessibility tree, in screen coordinates.
func (d *Desktop) Tree(ctx context.Context) (*observe.Tree, error) {
	if err := d.alive(); err != nil {
		return nil, err
	}
	t, err := d.a11y.Tree(ctx, atspi.Options{})
	if err != nil {
		return nil, fmt.Errorf("read the accessibility tree: %w", err)
	}
	ws, err := d.x.Windows()
	if err != nil {
		return nil, err
	}
	placeWindows(t, ws)
	markOffscreen(t, ws)
	return t, nil
}

// markOffscreen marks the top-level nodes whose X window is not on the
// screen (another workspace, minimised): toolkits still call them
// showing, and the set-of-mark overlay would box them over whatever the
// screen shows instead. A node is matched to its window by process and
// title, or as its process's only window; popups (open menus) are no
// managed window and stay as they are.
func markOffscreen(t *observe.Tree, ws []x11.Window) {
	for _, app := range t.Apps {
		mine := windowsOf(app, ws)
		for _, top := range app.Children {
			if win := windowOf(top, mine); win != nil && win.Hidden {
				top.Offscreen = true
			}
		}
	}
}

// windowsOf lists the X windows of an application's process.
func windowsOf(app *observe.Node, ws []x11.Window) []x11.Window {
	var mine []x11.Window
	for _, w := range ws {
		if w.PID == app.PID && app.PID != 0 {
			mine = append(mine, w)
		}
	}
	return mine
}

// windowOf finds the X window of a top-level node among its process's
// windows: by title, or the process's only window; nil where none is.
func windowOf(top *observe.Node, mine []x11.Window) *x11.Window {
	for i := range mine {
		if mine[i].Title == top.Name {
			return &mine[i]
		}
	}
	if len(mine) == 1 {
		return &mine[0]
	}
	return nil
}

// placeWindows turns the window-relative boxes of GTK 4 applications into
// screen boxes: each top-level node moves by the position of its X window,
// found by process and title.
func placeWindows(t *observe.Tree, ws []x11.Window) {
	for _, app := range t.Apps {
		if !app.WindowRelative {
			continue
		}
		mine := windowsOf(app, ws)
		for _, top := range app.Children {
			win := windowOf(top, mine)
			if win == nil {
				// No window: not showing on this screen (a closed dialog).
				continue
			}
			// Center the node in the window: GTK leaves a margin for
			// resize borders around its content.
			dx := win.X + max(win.W-top.Box.W, 0)/2 - top.Box.X
			dy := win.Y + max(win.H-top.Box.H, 0)/2 - top.Box.Y
			top.Shift(dx, dy)
		}
	}
}

// Marks returns the set-of-mark elements of the screen now and remembers
// them for tag_N targets.
func (d *Desktop) Marks(ctx context.Context) ([]observe.Mark, error) {
	t, err := d.Tree(ctx)
	if err != nil {
		return nil, err
	}
	marks := observe.Marks(t.Filter(observe.Options{Screen: d.size()}))
	d.mu.Lock()
	d.marks = marks
	d.mu.Unlock()
	return marks, nil
}

// Windows lists the top-level windows.
func (d *Desktop) Windows(ctx context.Context) ([]env.Window, error) {
	if err := d.alive(); err != nil {
		return nil, err
	}
	ws, err := d.x.Windows()
	if err != nil {
		return nil, err
	}
	out := make([]env.Window, len(ws))
	for i, w := range ws {
		out[i] = env.Window{ID: w.ID, Title: w.Title, PID: w.PID, Active: w.Active,
			Box: action.Box{X: w.X, Y: w.Y, W: w.W, H: w.H}}
	}
	return out, nil
}

// Elements finds accessibility elements.
func (d *Desktop) Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	t, err := d.Tree(ctx)
	if err != nil {
		return nil, err
	}
	return t.Elements(q), nil
}

// Clipboard reads the clipboard's text (at most MaxOutput bytes) as a
// pasting client does, over an X connection of the desktop's own (xclip
// or xsel, started as commands, where that connection cannot be made).
func (d *Desktop) Clipboard(ctx context.Context) (string, error) {
	if err := d.alive(); err != nil {
		return "", err
	}
	d.mu.Lock()
	if d.sel == nil && d.selErr == nil {
		d.sel, d.selErr = x11.DialSelections(d.s.display, d.s.cookie)
	}
	sel := d.sel
	d.mu.Unlock()
	if sel != nil {
		text, _, err := sel.Read(ctx, "CLIPBOARD", MaxOutput)
		if err == nil || ctx.Err() != nil || errors.Is(err, x11.ErrNoAnswer) {
			return text, err
		}
		d.mu.Lock()
		if d.sel == sel { // lost: connect again at the next read
			d.sel = nil
			sel.Close()
		}
		d.mu.Unlock()
	}
	// Without a connection of its own, as a paste from a terminal does.
	for _, c := range []string{"xclip -selection clipboard -o", "xsel --clipboard --output"} {
		if _, err := exec.LookPath(strings.Fields(c)[0]); err != nil {
			continue
		}
		res, err := d.Run(ctx, c, 5*time.Second)
		if err != nil {
			return "", err
		}
		if res.ExitCode != 0 {
			return "", nil // an empty clipboard
		}
		return res.Stdout, nil
	}
	return "", fmt.Errorf("reading the clipboard needs xclip or xsel (apt-get install xclip)")
}

// MaxOutput bounds the stdout and stderr a command may return.
const MaxOutput = 1 << 20

type capped struct {
	buf bytes.Buffer
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := MaxOutput - c.buf.Len(); room < len(p) {
		c.buf.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

// Run runs a shell command in the desktop's session, in its home folder,
// and ends its whole process group at the timeout.
func (d *Desktop) Run(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error) {
	return d.run(ctx, cmd, timeout, false)
}

// run runs a shell command, in the desktop's own network namespace when
// private.
func (d *Desktop) run(ctx context.Context, cmd string, timeout time.Duration, private bool) (observe.CommandResult, error) {
	if err := d.alive(); err != nil {
		return observe.CommandResult{}, err
	}
	if timeout <= 0 {
		timeout = observe.DefaultCommandTimeout
	}
	var (
		out, errb capped
		p         *proc
		err       error
	)
	start := func() error {
		p, err = d.s.start("command", []string{"/bin/bash", "-c", cmd}, d.s.home, nil, &out, &errb)
		return err
	}
	if private {
		var path string
		if path, err = d.s.netnsPath(); err == nil {
			err = inNetns(path, start)
		}
	} else {
		err = start()
	}
	if err != nil {
		return observe.CommandResult{}, err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		stop(p, 200*time.Millisecond)
		return observe.CommandResult{}, fmt.Errorf("command %q timed out after %s", cmd, timeout)
	case <-ctx.Done():
		stop(p, 200*time.Millisecond)
		return observe.CommandResult{}, ctx.Err()
	}
	res := observe.CommandResult{Stdout: out.buf.String(), Stderr: errb.buf.String(), ExitCode: p.cmd.ProcessState.ExitCode()}
	if out.cut {
		res.Stdout += "\n[output cut at 1 MiB]"
	}
	return res, nil
}

// Launch starts an application (argv[0] looked up on the safe PATH) in
// the session; Reset and Close end it.
func (d *Desktop) Launch(argv ...string) error {
	if len(argv) == 0 {
		return fmt.Errorf("launch: no command")
	}
	path, err := LookPath(argv[0])
	if err != nil {
		return err
	}
	argv[0] = path
	p, err := d.s.start(filepath.Base(path), argv, d.s.home, nil, nil, nil)
	if err != nil {
		return err
	}
	d.s.mu.Lock()
	d.s.apps = append(d.s.apps, p)
	d.s.mu.Unlock()
	return nil
}

// LookPath finds a program on the desktop's PATH (SafePath), as the
// desktop's processes will.
func LookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(SafePath) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed (not found in %s)", name, SafePath)
}
