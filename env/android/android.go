package android

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	_ "image/png" // screencap -p
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// Kind is the environment's kind in Info and in task files
// (environment.type: android).
const Kind = "android"

// Home is the folder that stands for "~" in the paths of setup steps,
// probes and checks: Android has no home folder, and its shared storage
// is where apps and people keep files.
const Home = "/sdcard"

// Device is what the environment needs of a device over ADB; package
// adb's Device provides it (through Over), and tests give a scripted
// phone.
type Device interface {
	// Shell runs a command with the device's sh, with its output and
	// exit status.
	Shell(ctx context.Context, cmd string) (observe.CommandResult, error)
	// ExecOut runs a command and returns its raw standard output
	// (screencap -p).
	ExecOut(ctx context.Context, cmd string) ([]byte, error)
	// Push writes a file on the device; Pull reads one
	// (observe.ErrNotFound when it is not there).
	Push(ctx context.Context, data []byte, remote string) error
	Pull(ctx context.Context, remote string) ([]byte, error)
}

// Caps are the capabilities an Android device offers beyond a screen and
// touch: its accessibility tree, shell commands, files, windows (the
// focused activity) and elements. It has no clipboard that ADB can read
// on every Android version, and no web page probes.
var Caps = []task.Capability{task.CapTree, task.CapCommands, task.CapApps, task.CapFiles, task.CapWindows, task.CapElements, task.CapAfter}

// Phone is an Android device as a Proctor environment.
type Phone struct {
	dev    Device
	serial string
	mu     sync.Mutex
	size   imageSize
	marks  []observe.Mark
	apps   []string  // the packages the last setup launched, cleared by the next reset
	base   *baseline // what shared storage held at the first reset
	closed bool
}

type imageSize struct{ W, H int }

// New makes the environment of the device dev, named serial in messages.
func New(dev Device, serial string) *Phone { return &Phone{dev: dev, serial: serial} }

var _ env.Env = (*Phone)(nil)

// wmSize reads "Physical size: 1080x2340" and "Override size: 720x1560"
// (the override, when set, is what apps draw at).
var wmSizeRE = regexp.MustCompile(`(?m)^(Physical|Override) size: (\d{2,5})x(\d{2,5})\s*$`)

// ParseWMSize reads the output of `wm size`.
func ParseWMSize(out string) (w, h int, err error) {
	ms := wmSizeRE.FindAllStringSubmatch(out, -1)
	if len(ms) == 0 {
		return 0, 0, fmt.Errorf("no screen size in the output of wm size: %q", clip([]byte(out)))
	}
	m := ms[len(ms)-1] // the override comes after the physical size
	for _, x := range ms {
		if x[1] == "Override" {
			m = x
		}
	}
	w, _ = strconv.Atoi(m[2])
	h, _ = strconv.Atoi(m[3])
	return w, h, nil
}

func (p *Phone) alive() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("android %s: %w", p.serial, env.ErrClosed)
	}
	return nil
}

// shell runs cmd and fails on a non-zero exit status, naming cmd.
func (p *Phone) shell(ctx context.Context, cmd string) (string, error) {
	res, err := p.dev.Shell(ctx, cmd)
	if err != nil {
		return "", fmt.Errorf("android %s: %s: %w", p.serial, cmd, err)
	}
	if res.ExitCode != 0 {
		return res.Stdout, fmt.Errorf("android %s: %s exited %d: %s", p.serial, cmd, res.ExitCode, strings.TrimSpace(res.Stderr+" "+res.Stdout))
	}
	return res.Stdout, nil
}

// screen reads the screen's size once.
func (p *Phone) screen(ctx context.Context) (imageSize, error) {
	p.mu.Lock()
	s := p.size
	p.mu.Unlock()
	if s.W > 0 {
		return s, nil
	}
	out, err := p.shell(ctx, "wm size")
	if err != nil {
		return s, err
	}
	w, h, err := ParseWMSize(out)
	if err != nil {
		return s, fmt.Errorf("android %s: %w", p.serial, err)
	}
	s = imageSize{w, h}
	p.mu.Lock()
	p.size = s
	p.mu.Unlock()
	return s, nil
}

// Info describes the device: its screen, Android version and model.
func (p *Phone) Info(ctx context.Context) (env.Info, error) {
	if err := p.alive(); err != nil {
		return env.Info{}, err
	}
	s, err := p.screen(ctx)
	if err != nil {
		return env.Info{}, err
	}
	info := env.Info{Kind: Kind, Display: p.serial, Home: Home, Caps: Caps, Versions: map[string]string{}}
	info.Screen.W, info.Screen.H = s.W, s.H
	for prop, name := range map[string]string{"ro.build.version.release": "android", "ro.product.model": "model", "ro.build.version.sdk": "sdk"} {
		if v, err := p.shell(ctx, "getprop "+prop); err == nil && strings.TrimSpace(v) != "" {
			info.Versions[name] = strings.TrimSpace(v)
		}
	}
	return info, nil
}

// Screenshot captures the screen with screencap -p.
func (p *Phone) Screenshot(ctx context.Context, o env.ShotOptions) (env.Shot, error) {
	if err := p.alive(); err != nil {
		return env.Shot{}, err
	}
	img, err := p.capture(ctx)
	if err != nil {
		return env.Shot{}, err
	}
	rgba, ok := img.(*image.RGBA)
	if !ok || rgba.Rect.Min != (image.Point{}) {
		rgba = image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
		draw.Draw(rgba, rgba.Rect, img, img.Bounds().Min, draw.Src)
	}
	var marks []observe.Mark
	var tree *observe.Tree
	if o.Marks {
		if tree, err = p.Tree(ctx); err != nil {
			return env.Shot{}, err
		}
		marks = observe.Marks(tree.Filter(observe.Options{Screen: sizeOf(rgba)}))
		observe.DrawMarks(rgba, marks)
		p.mu.Lock()
		p.marks = marks
		p.mu.Unlock()
	}
	return env.FinishShot(rgba, o, nil, marks, tree)
}

// capture takes the screen with screencap -p.
func (p *Phone) capture(ctx context.Context) (image.Image, error) {
	b, err := p.dev.ExecOut(ctx, "screencap -p")
	if err != nil {
		return nil, fmt.Errorf("android %s: screencap: %w", p.serial, err)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("android %s: screencap -p gave no image (%d bytes): %v", p.serial, len(b), err)
	}
	return img, nil
}

// Tree reads the window hierarchy with uiautomator dump, written to the
// terminal, or where the device cannot (older Androids), to a file that
// is then read back.
func (p *Phone) Tree(ctx context.Context) (*observe.Tree, error) {
	if err := p.alive(); err != nil {
		return nil, err
	}
	b, err := p.dev.ExecOut(ctx, "uiautomator dump /dev/tty")
	if err == nil && bytes.Contains(b, []byte("<hierarchy")) {
		return p.parse(b)
	}
	const file = "/data/local/tmp/proctor-window.xml"
	if _, err := p.shell(ctx, "uiautomator dump "+file); err != nil {
		return nil, fmt.Errorf("android %s: read the window hierarchy: %w", p.serial, err)
	}
	b, err = p.dev.Pull(ctx, file)
	if err != nil {
		return nil, fmt.Errorf("android %s: read the window hierarchy: %w", p.serial, err)
	}
	return p.parse(b)
}

func (p *Phone) parse(b []byte) (*observe.Tree, error) {
	t, err := ParseDump(b)
	if err != nil {
		return nil, fmt.Errorf("android %s: %w", p.serial, err)
	}
	return t, nil
}

// Run runs a command with the device's shell; timeout bounds it.
func (p *Phone) Run(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error) {
	if err := p.alive(); err != nil {
		return observe.CommandResult{}, err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := p.dev.Shell(ctx, withHome(cmd))
	if err != nil {
		return res, fmt.Errorf("android %s: %s: %w", p.serial, cmd, err)
	}
	return res, nil
}

// Roots are the folders whose files a task may read and write: shared
// storage (Home, also reached as /storage/emulated/0) and the folder
// every app and the shell may use for scratch files.
var Roots = []string{Home, "/storage/emulated/0", "/data/local/tmp"}

// Resolve turns a path of a task (absolute, or under "~", which is Home)
// into the device's path, refusing one outside Roots.
func Resolve(p string) (string, error) {
	switch {
	case p == "~":
		p = Home
	case strings.HasPrefix(p, "~/"):
		p = Home + p[1:]
	case !strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("%w: path %q must be absolute or start with ~/", env.ErrForbidden, p)
	}
	p = path.Clean(p)
	for _, r := range Roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s is outside %s", env.ErrForbidden, p, strings.Join(Roots, ", "))
}

// appData splits a path in an app's private data
// (/data/data/PACKAGE/REL or /data/user/0/PACKAGE/REL).
func appData(p string) (pkg, rel string, ok bool) {
	p = path.Clean(p)
	for _, root := range []string{"/data/data/", "/data/user/0/"} {
		if rest, found := strings.CutPrefix(p, root); found {
			pkg, rel, _ = strings.Cut(rest, "/")
			return pkg, rel, packageRE.MatchString(pkg) && rel != ""
		}
	}
	return "", "", false
}

// readAppData reads a file of an app's private data as the app (run-as,
// which a debuggable app allows), else as root (su, on a rooted device or
// an emulator's userdebug image).
func (p *Phone) readAppData(ctx context.Context, pkg, rel string) ([]byte, error) {
	full := "/data/data/" + pkg + "/" + rel
	var why []string
	for _, cmd := range []string{"run-as " + Quote(pkg) + " cat " + Quote(rel), "su 0 cat " + Quote(full)} {
		res, err := p.dev.Shell(ctx, cmd)
		if err != nil {
			return nil, fmt.Errorf("android %s: %s: %w", p.serial, cmd, err)
		}
		if res.ExitCode == 0 {
			return []byte(res.Stdout), nil
		}
		msg := strings.TrimSpace(res.Stderr + " " + res.Stdout)
		if strings.Contains(msg, "No such file") {
			return nil, fmt.Errorf("%s: %w", full, observe.ErrNotFound)
		}
		why = append(why, cmd+": "+msg)
	}
	return nil, fmt.Errorf("%w: %s is in %s's private data, which neither run-as (a debuggable app) nor su (root) could read: %s",
		env.ErrForbidden, full, pkg, strings.Join(why, "; "))
}

// ReadFile reads a file of the device: in shared storage and the scratch
// folder, or in an app's private data (/data/data/PACKAGE/...), read as
// the app or as root.
func (p *Phone) ReadFile(ctx context.Context, name string) ([]byte, error) {
	if err := p.alive(); err != nil {
		return nil, err
	}
	if pkg, rel, ok := appData(name); ok {
		return p.readAppData(ctx, pkg, rel)
	}
	dst, err := Resolve(name)
	if err != nil {
		return nil, err
	}
	b, err := p.dev.Pull(ctx, dst)
	if err != nil {
		return nil, fmt.Errorf("android %s: read %s: %w", p.serial, dst, err)
	}
	return b, nil
}

// WriteFile writes a file of the device, making its folder.
func (p *Phone) WriteFile(ctx context.Context, name string, data []byte) error {
	if err := p.alive(); err != nil {
		return err
	}
	dst, err := Resolve(name)
	if err != nil {
		return err
	}
	if _, err := p.shell(ctx, "mkdir -p "+Quote(path.Dir(dst))); err != nil {
		return err
	}
	if err := p.dev.Push(ctx, data, dst); err != nil {
		return fmt.Errorf("android %s: write %s: %w", p.serial, dst, err)
	}
	return nil
}

// focusRE finds the focused window in dumpsys window's output:
// "mCurrentFocus=Window{1a2b3c u0 com.android.settings/com.android.settings.Settings}".
var focusRE = regexp.MustCompile(`mCurrentFocus=Window\{\S+ \S+ ([^}\s]+)\}`)

// Windows lists the focused window: its title is the package and
// activity ("com.android.settings/com.android.settings.Settings").
func (p *Phone) Windows(ctx context.Context) ([]env.Window, error) {
	if err := p.alive(); err != nil {
		return nil, err
	}
	out, err := p.shell(ctx, "dumpsys window windows")
	if err != nil {
		return nil, err
	}
	m := focusRE.FindStringSubmatch(out)
	if m == nil {
		return nil, nil
	}
	s, err := p.screen(ctx)
	if err != nil {
		return nil, err
	}
	w := env.Window{Title: m[1], Active: true}
	w.Box.W, w.Box.H = s.W, s.H
	return []env.Window{w}, nil
}

// Elements finds the nodes of the window hierarchy that match q.
func (p *Phone) Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	t, err := p.Tree(ctx)
	if err != nil {
		return nil, err
	}
	return t.Elements(q), nil
}

// Clipboard is not offered: ADB reads no clipboard on every Android
// version.
func (p *Phone) Clipboard(context.Context) (string, error) {
	return "", fmt.Errorf("%w: an Android device offers no clipboard to read (task.CapClipboard)", env.ErrBadAction)
}

// Close marks the environment closed; the device stays as it is.
func (p *Phone) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return nil
}

// Quote quotes s for the device's sh.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func sizeOf(img *image.RGBA) action.Size {
	return action.Size{W: img.Rect.Dx(), H: img.Rect.Dy()}
}
