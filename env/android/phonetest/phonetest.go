// Package phonetest is a scripted Android phone for tests: screens made of
// nodes, which taps, typing and keys act on, shown by `uiautomator dump`
// and `screencap -p` as a device shows them, and shared storage in a
// folder. It answers the commands Proctor's Android environment and
// tasks send (input, am start and force-stop, pm clear, install and list,
// monkey, wm, getprop, dumpsys, uiautomator, screencap, settings, svc
// wifi, content query, run-as, and su where it is rooted) as Android 14 prints them,
// records what it was asked (Commands, Taps, Swipes, Stopped, Cleared,
// Started), and runs every other command with the machine's sh, with the
// device's folders mapped into its own. It stands in for a device that
// cannot run on a test machine; its Shell, ExecOut, Push and Pull serve
// an in-process device, and the same handler can serve a device stand-in
// that speaks ADB.
package phonetest

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/proctor-eval/proctor/observe"
)

// Node is one element of a screen.
type Node struct {
	Class     string // android.widget.Button
	Text      string
	Desc      string // content-desc
	ID        string // resource-id
	Box       image.Rectangle
	Clickable bool
	Checkable bool
	Checked   bool
	// Editable nodes (EditText) take the focus when tapped; typing goes
	// into the focused one.
	Focused bool
	// Children are the nodes inside this one (a list row's labels).
	Children []*Node
	// Tap runs when a tap lands on the node (the smallest tapped node
	// that has one); it may change the phone (Show, SetFile).
	Tap func(ph *Phone)
}

// Screen is what an app shows.
type Screen struct {
	Package  string
	Activity string // .MainActivity
	Color    color.RGBA
	Nodes    []*Node
}

// App is an installed app: its package and the screen it opens on.
type App struct {
	Package string
	Start   func(ph *Phone) *Screen
	// Clear forgets the app's data (pm clear); nil: it keeps none.
	Clear func(ph *Phone)
	// Activities are the screens `am start -n PACKAGE/ACTIVITY` opens, by
	// activity name (".wifi.WifiSettings"); an activity not listed does
	// not exist, as Android says (the one Start shows always does).
	Activities map[string]func(ph *Phone) *Screen
	// Actions are the intent actions the app answers with its start
	// screen (`am start -a android.settings.SETTINGS`).
	Actions []string
	// Release marks an app built without android:debuggable: run-as
	// refuses it, and only root (su) reads its private data.
	Release bool
}

// Swipe is one `input swipe X1 Y1 X2 Y2 MS`; a long press is a swipe
// that does not move.
type Swipe struct {
	From, To image.Point
	Ms       int
}

// LongPress reports whether the swipe is a press held in place.
func (s Swipe) LongPress() bool { return s.From == s.To }

// Phone is the scripted phone.
type Phone struct {
	W, H   int
	Model  string
	root   string
	mu     sync.Mutex
	apps   map[string]App
	cur    *Screen
	home   *Screen
	Typed  []string // what was typed, in order
	Keys   []string // the key events, in order
	Taps   [][2]int
	Swipes []Swipe // input swipe: swipes, scrolls and long presses
	// Commands are the shell commands the phone was asked to run, in
	// order, as they came.
	Commands []string
	// Stopped and Cleared are the packages of each `am force-stop` and
	// `pm clear`, in order; Started the component of each activity an
	// `am start` or `monkey` brought to the front (PACKAGE/.Activity).
	Stopped, Cleared, Started []string
	// Rooted makes su answer (`su 0 CMD` runs CMD as root), as on an
	// emulator's userdebug image or a rooted phone; without it su is not
	// found, as on a phone sold in a shop.
	Rooted bool
	// Settings are the values of `settings get NAMESPACE KEY`, by
	// "namespace/key".
	Settings map[string]string
	// Providers are the tables of content providers the content tool
	// reaches, by address: content://sms (SMS's columns) from the start.
	Providers map[string]*Provider
	// Battery is the level `dumpsys battery` reports.
	Battery int
	// Fail, when set, fails every command with this error (a device that
	// went away).
	Fail error
	// NoTree makes uiautomator fail, as it does on screens it cannot read
	// (a game, a video, a busy app).
	NoTree bool
}

// New makes a phone of w by h pixels, its storage in a test folder, on its
// home screen.
func New(t testing.TB, w, h int) *Phone {
	ph, err := NewIn(t.TempDir(), w, h)
	if err != nil {
		t.Fatal(err)
	}
	return ph
}

// NewIn makes a phone of w by h pixels whose storage is the folder root
// (sdcard/ and data/local/tmp/ are made in it), on its home screen.
func NewIn(root string, w, h int) (*Phone, error) {
	for _, d := range []string{"sdcard/Download", "data/local/tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return nil, err
		}
	}
	ph := &Phone{W: w, H: h, Model: "Proctor Phone", root: root, apps: map[string]App{}, Settings: map[string]string{}, Battery: 76,
		Providers: map[string]*Provider{"content://sms": {Columns: SMS}}}
	ph.home = &Screen{Package: "com.android.launcher3", Activity: ".Launcher", Color: color.RGBA{30, 60, 90, 255},
		Nodes: []*Node{{Class: "android.widget.TextView", Text: "Home", Box: image.Rect(0, 100, w, 200)}}}
	ph.cur = ph.home
	return ph, nil
}

// Install adds an app.
func (ph *Phone) Install(a App) {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	ph.apps[a.Package] = a
}

// Show puts a screen in front.
func (ph *Phone) Show(s *Screen) {
	ph.cur = s
}

// Current is the screen in front.
func (ph *Phone) Current() *Screen {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	return ph.cur
}

// Root is the folder that holds the phone's storage: sdcard/ and
// data/local/tmp/.
func (ph *Phone) Root() string { return ph.root }

// local maps a device path to the folder; ok is false outside the
// phone's storage.
func (ph *Phone) local(p string) (string, bool) {
	p = filepath.Clean(p)
	for _, prefix := range []string{"/sdcard", "/storage/emulated/0", "/data/local/tmp"} {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			base := strings.TrimPrefix(prefix, "/")
			if prefix == "/storage/emulated/0" {
				base = "sdcard"
			}
			return filepath.Join(ph.root, base, strings.TrimPrefix(p, prefix)), true
		}
	}
	return "", false
}

// AppData is the folder of an app's private data (/data/data/PACKAGE).
func (ph *Phone) AppData(pkg string) string { return filepath.Join(ph.root, "data/data", pkg) }

// SetFile writes a file of the phone (an app's doing).
func (ph *Phone) SetFile(p, content string) error {
	l, ok := ph.local(p)
	if !ok {
		return fmt.Errorf("%s is outside the phone's storage", p)
	}
	if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
		return err
	}
	return os.WriteFile(l, []byte(content), 0o644)
}

// Push writes a file.
func (ph *Phone) Push(_ context.Context, data []byte, remote string) error {
	if ph.Fail != nil {
		return ph.Fail
	}
	l, ok := ph.local(remote)
	if !ok {
		return fmt.Errorf("push %s: permission denied", remote)
	}
	return os.WriteFile(l, data, 0o644)
}

// Pull reads a file; observe.ErrNotFound when it is not there.
func (ph *Phone) Pull(_ context.Context, remote string) ([]byte, error) {
	if ph.Fail != nil {
		return nil, ph.Fail
	}
	l, ok := ph.local(remote)
	if !ok {
		return nil, fmt.Errorf("pull %s: permission denied", remote)
	}
	b, err := os.ReadFile(l)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", remote, observe.ErrNotFound)
	}
	return b, err
}

// ExecOut runs cmd and returns its standard output.
func (ph *Phone) ExecOut(ctx context.Context, cmd string) ([]byte, error) {
	res, err := ph.Shell(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return []byte(res.Stdout), nil
}

// Shell runs cmd: the phone's own commands here, the rest with sh.
func (ph *Phone) Shell(ctx context.Context, cmd string) (observe.CommandResult, error) {
	if ph.Fail != nil {
		return observe.CommandResult{}, ph.Fail
	}
	ph.mu.Lock()
	ph.Commands = append(ph.Commands, cmd)
	ph.mu.Unlock()
	if res, ok := ph.simple(cmd); ok {
		return res, nil
	}
	return ph.sh(ctx, cmd)
}

// simple answers a command made of the phone's own commands, joined by
// ";" or "&&", after an optional `export HOME=...; cd ...` prefix; ok is
// false for any other command, which sh runs.
func (ph *Phone) simple(cmd string) (observe.CommandResult, bool) {
	var out observe.CommandResult
	for _, part := range strings.Split(strings.ReplaceAll(cmd, " && ", "; "), "; ") {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(part, "export HOME=") || strings.HasPrefix(part, "cd ") {
			continue
		}
		res, ok := ph.own(part)
		if !ok {
			return observe.CommandResult{}, false
		}
		out.Stdout += res.Stdout
		out.Stderr += res.Stderr
		if out.ExitCode = res.ExitCode; res.ExitCode != 0 {
			break
		}
	}
	return out, true
}

// own answers the commands the environment sends that only a phone has.
func (ph *Phone) own(cmd string) (observe.CommandResult, bool) {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return observe.CommandResult{}, false
	}
	ok := func(out string) (observe.CommandResult, bool) { return observe.CommandResult{Stdout: out}, true }
	bad := func(code int, msg string) (observe.CommandResult, bool) {
		return observe.CommandResult{Stderr: msg + "\n", ExitCode: code}, true
	}
	switch {
	case f[0] == "settings" && len(f) == 4 && f[1] == "get":
		v, found := ph.Settings[f[2]+"/"+f[3]]
		if !found {
			v = "null"
		}
		return ok(v + "\n")
	case f[0] == "settings" && len(f) == 5 && f[1] == "put":
		ph.Settings[f[2]+"/"+f[3]] = strings.Trim(f[4], "'")
		return ok("")
	case f[0] == "settings" && len(f) == 4 && f[1] == "delete":
		k := f[2] + "/" + f[3]
		if _, found := ph.Settings[k]; !found {
			return ok("Deleted 0 rows\n")
		}
		delete(ph.Settings, k)
		return ok("Deleted 1 rows\n")
	case f[0] == "settings" && len(f) == 3 && f[1] == "list":
		if !slices.Contains([]string{"global", "secure", "system"}, f[2]) {
			return bad(255, "Invalid namespace: "+f[2])
		}
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(ph.Settings)) {
			if key, in := strings.CutPrefix(k, f[2]+"/"); in {
				b.WriteString(key + "=" + ph.Settings[k] + "\n")
			}
		}
		return ok(b.String())
	case f[0] == "pm" && len(f) == 3 && f[1] == "uninstall":
		pkg := strings.Trim(f[2], "'")
		if _, found := ph.apps[pkg]; !found {
			return bad(1, "Failure [DELETE_FAILED_INTERNAL_ERROR]")
		}
		delete(ph.apps, pkg)
		os.RemoveAll(filepath.Join(ph.root, "data/data", pkg))
		if ph.cur.Package == pkg {
			ph.cur = ph.home
		}
		return ok("Success\n")
	case f[0] == "svc" && len(f) == 3 && f[1] == "wifi" && (f[2] == "enable" || f[2] == "disable"):
		// The Wi-Fi service keeps its state in the global setting wifi_on.
		ph.Settings["global/wifi_on"] = map[string]string{"enable": "1", "disable": "0"}[f[2]]
		return ok("")
	case cmd == "dumpsys battery":
		return ok(fmt.Sprintf("Current Battery Service state:\n  AC powered: false\n  level: %d\n  scale: 100\n", ph.Battery))
	case cmd == "wm size":
		return ok(fmt.Sprintf("Physical size: %dx%d\n", ph.W, ph.H))
	case f[0] == "getprop" && len(f) == 2:
		return ok(map[string]string{"ro.build.version.release": "14", "ro.product.model": ph.Model, "ro.build.version.sdk": "34"}[f[1]] + "\n")
	case cmd == "dumpsys window windows":
		return ok(fmt.Sprintf("  mCurrentFocus=Window{4f2a1c u0 %s/%s%s}\n", ph.cur.Package, ph.cur.Package, ph.cur.Activity))
	case cmd == "screencap -p":
		return ok(string(ph.png()))
	case cmd == "uiautomator dump /dev/tty" || strings.HasPrefix(cmd, "uiautomator dump "):
		if ph.NoTree {
			return bad(1, "ERROR: could not get idle state.")
		}
		if cmd != "uiautomator dump /dev/tty" {
			return observe.CommandResult{}, false // to a file: sh writes it below
		}
		return ok(ph.dump() + "UI hierchary dumped to: /dev/tty\n")
	case f[0] == "input" && len(f) >= 2:
		return ph.input(f[1:], cmd)
	case f[0] == "monkey" && len(f) >= 3 && f[1] == "-p":
		return ph.start(strings.Trim(f[2], "'"))
	case f[0] == "am" && len(f) >= 3 && f[1] == "start":
		w, good := words(cmd)
		if !good {
			return bad(1, "/system/bin/sh: syntax error: unterminated quoted string")
		}
		return ph.amStart(w[2:])
	case f[0] == "am" && len(f) >= 3 && f[1] == "force-stop":
		pkg := strings.Trim(f[2], "'")
		ph.Stopped = append(ph.Stopped, pkg)
		if ph.cur.Package == pkg {
			ph.cur = ph.home
		}
		return ok("")
	case f[0] == "run-as" && len(f) == 4 && f[2] == "cat":
		pkg, rel := strings.Trim(f[1], "'"), strings.Trim(f[3], "'")
		a, found := ph.apps[pkg]
		switch {
		case !found:
			return bad(1, "run-as: unknown package: "+pkg)
		case a.Release:
			return bad(1, "run-as: package not debuggable: "+pkg)
		}
		b, err := os.ReadFile(filepath.Join(ph.root, "data/data", pkg, filepath.Clean("/"+rel)))
		if err != nil {
			return bad(1, "cat: "+rel+": No such file or directory")
		}
		return ok(string(b))
	case f[0] == "su":
		// su 0 cat PATH: the only command run as root here.
		if !ph.Rooted {
			return bad(127, "/system/bin/sh: su: inaccessible or not found")
		}
		if len(f) != 4 || f[1] != "0" && f[1] != "root" || f[2] != "cat" {
			return bad(1, "su: the scripted phone runs only `su 0 cat PATH` as root")
		}
		name := strings.Trim(f[3], "'")
		l, mapped := ph.local(name)
		if rest, under := strings.CutPrefix(filepath.Clean(name), "/data/data/"); under {
			l, mapped = filepath.Join(ph.root, "data/data", filepath.Clean("/"+rest)), true
		}
		b, err := os.ReadFile(l)
		if !mapped || err != nil {
			return bad(1, "cat: "+name+": No such file or directory")
		}
		return ok(string(b))
	case f[0] == "pm" && len(f) >= 3 && f[1] == "clear":
		pkg := strings.Trim(f[2], "'")
		ph.Cleared = append(ph.Cleared, pkg)
		if a, found := ph.apps[pkg]; found {
			os.RemoveAll(filepath.Join(ph.root, "data/data", pkg))
			if a.Clear != nil {
				a.Clear(ph)
			}
		}
		return ok("Success\n")
	case f[0] == "pm" && len(f) >= 3 && f[1] == "install":
		return ph.pmInstall(f[2:])
	case f[0] == "pm" && len(f) >= 2 && f[1] == "list" && len(f) <= 4 && (len(f) == 2 || f[2] == "packages"):
		if len(f) == 2 {
			return bad(255, "Error: didn't specify type of data to list")
		}
		filter := ""
		if len(f) == 4 {
			filter = strings.Trim(f[3], "'")
		}
		var b strings.Builder
		for _, pkg := range slices.Sorted(maps.Keys(ph.apps)) {
			if strings.Contains(pkg, filter) {
				b.WriteString("package:" + pkg + "\n")
			}
		}
		return ok(b.String())
	case f[0] == "content" && len(f) >= 2 && slices.Contains([]string{"query", "insert", "update", "delete"}, f[1]):
		w, good := words(cmd)
		if !good {
			return bad(1, "/system/bin/sh: syntax error: unterminated quoted string")
		}
		return ph.content(w[1:])
	}
	return observe.CommandResult{}, false
}

func (ph *Phone) start(pkg string) (observe.CommandResult, bool) {
	a, found := ph.apps[pkg]
	if !found {
		return observe.CommandResult{Stderr: "** No activities found to run, monkey aborted.\n", ExitCode: 251}, true
	}
	ph.cur = a.Start(ph)
	ph.Started = append(ph.Started, pkg+"/"+ph.cur.Activity)
	return observe.CommandResult{Stdout: "Events injected: 1\n"}, true
}

func (ph *Phone) input(args []string, cmd string) (observe.CommandResult, bool) {
	num := func(s string) int {
		var n int
		fmt.Sscan(s, &n)
		return n
	}
	switch {
	case args[0] == "tap" && len(args) == 3:
		x, y := num(args[1]), num(args[2])
		ph.Taps = append(ph.Taps, [2]int{x, y})
		var hit *Node
		walk(ph.cur.Nodes, func(n *Node) {
			if n.Tap != nil && image.Pt(x, y).In(n.Box) && (hit == nil || area(n.Box) < area(hit.Box)) {
				hit = n
			}
			if strings.HasSuffix(n.Class, "EditText") {
				n.Focused = image.Pt(x, y).In(n.Box)
			}
		})
		if hit != nil {
			hit.Tap(ph)
		}
	case args[0] == "swipe" && (len(args) == 5 || len(args) == 6):
		sw := Swipe{From: image.Pt(num(args[1]), num(args[2])), To: image.Pt(num(args[3]), num(args[4]))}
		if len(args) == 6 {
			sw.Ms = num(args[5])
		}
		ph.Swipes = append(ph.Swipes, sw)
	case args[0] == "text" && len(args) >= 2:
		t := strings.Trim(strings.Join(args[1:], " "), "'")
		ph.Typed = append(ph.Typed, strings.ReplaceAll(t, "%s", " "))
		walk(ph.cur.Nodes, func(n *Node) {
			if n.Focused {
				n.Text += strings.ReplaceAll(t, "%s", " ")
			}
		})
	case args[0] == "keyevent" || args[0] == "keycombination":
		for _, k := range args[1:] {
			ph.Keys = append(ph.Keys, k)
			if k == "KEYCODE_HOME" || k == "KEYCODE_BACK" && ph.cur != ph.home {
				ph.cur = ph.home
			}
		}
	default:
		return observe.CommandResult{Stderr: "input: unknown command " + cmd + "\n", ExitCode: 1}, true
	}
	return observe.CommandResult{}, true
}

func area(r image.Rectangle) int { return r.Dx() * r.Dy() }

// walk calls f on the nodes and their children, depth first.
func walk(ns []*Node, f func(*Node)) {
	for _, n := range ns {
		f(n)
		walk(n.Children, f)
	}
}

// sh runs cmd with the machine's sh, the device's folders mapped into the
// phone's.
func (ph *Phone) sh(ctx context.Context, cmd string) (observe.CommandResult, error) {
	for _, m := range [][2]string{{"/storage/emulated/0", "/sdcard"}, {"/sdcard", filepath.Join(ph.root, "sdcard")},
		{"/data/local/tmp", filepath.Join(ph.root, "data/local/tmp")}} {
		cmd = strings.ReplaceAll(cmd, m[0], m[1])
	}
	// pm and settings keep the phone's state: chained with commands of
	// the shell they are refused, not pretended (run them alone, or
	// joined by ";" or "&&" with the phone's own commands).
	prelude := `pm() { echo "pm: the scripted phone runs pm alone, not chained with shell commands" >&2; return 1; }; ` +
		`settings() { echo "settings: the scripted phone runs settings alone, not chained with shell commands" >&2; return 1; }; `
	c := exec.CommandContext(ctx, "sh", "-c", prelude+cmd)
	c.Dir = ph.root
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	res := observe.CommandResult{Stdout: strings.ReplaceAll(out.String(), ph.root, ""), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		return res, err
	}
	return res, nil
}

// png draws the screen: its colour, and each node a lighter box.
func (ph *Phone) png() []byte {
	img := image.NewRGBA(image.Rect(0, 0, ph.W, ph.H))
	for i := range img.Pix {
		img.Pix[i] = []byte{ph.cur.Color.R, ph.cur.Color.G, ph.cur.Color.B, 255}[i%4]
	}
	walk(ph.cur.Nodes, func(n *Node) {
		c := color.RGBA{220, 220, 220, 255}
		if n.Clickable {
			c = color.RGBA{250, 250, 160, 255}
		}
		for y := max(n.Box.Min.Y, 0); y < min(n.Box.Max.Y, ph.H); y++ {
			for x := max(n.Box.Min.X, 0); x < min(n.Box.Max.X, ph.W); x++ {
				img.SetRGBA(x, y, c)
			}
		}
	})
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	enc.Encode(&b, img)
	return b.Bytes()
}

// dump writes the screen as uiautomator does.
func (ph *Phone) dump() string {
	var b strings.Builder
	b.WriteString(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">`)
	attr := func(name, v string) {
		b.WriteString(" " + name + `="`)
		xml.EscapeText(&b, []byte(v))
		b.WriteString(`"`)
	}
	tf := func(v bool) string {
		if v {
			return "true"
		}
		return "false"
	}
	var node func(n *Node, close bool)
	node = func(n *Node, close bool) {
		b.WriteString("<node")
		attr("index", "0")
		attr("text", n.Text)
		attr("resource-id", n.ID)
		attr("class", n.Class)
		attr("package", ph.cur.Package)
		attr("content-desc", n.Desc)
		attr("checkable", tf(n.Checkable))
		attr("checked", tf(n.Checked))
		attr("clickable", tf(n.Clickable))
		attr("enabled", "true")
		attr("focusable", tf(n.Clickable || strings.HasSuffix(n.Class, "EditText")))
		attr("focused", tf(n.Focused))
		attr("scrollable", "false")
		attr("long-clickable", "false")
		attr("password", "false")
		attr("selected", "false")
		attr("bounds", fmt.Sprintf("[%d,%d][%d,%d]", n.Box.Min.X, n.Box.Min.Y, n.Box.Max.X, n.Box.Max.Y))
		switch {
		case !close:
			b.WriteString(">")
		case len(n.Children) == 0:
			b.WriteString(" />")
		default:
			b.WriteString(">")
			for _, c := range n.Children {
				node(c, true)
			}
			b.WriteString("</node>")
		}
	}
	node(&Node{Class: "android.widget.FrameLayout", Box: image.Rect(0, 0, ph.W, ph.H)}, false)
	for _, n := range ph.cur.Nodes {
		node(n, true)
	}
	b.WriteString("</node></hierarchy>")
	return b.String()
}

// Handle answers a shell command as a device stand-in that speaks ADB
// calls it (see internal/adb/adbtest): its output and exit status.
func (ph *Phone) Handle(cmd string, _ []byte) (stdout, stderr []byte, exit int) {
	res, err := ph.Shell(context.Background(), cmd)
	if err != nil {
		return nil, []byte(err.Error() + "\n"), 255
	}
	return []byte(res.Stdout), []byte(res.Stderr), res.ExitCode
}

// ReadFile reads a file of the phone's storage by its device path.
func (ph *Phone) ReadFile(name string) ([]byte, error) {
	l, ok := ph.local(name)
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, os.ErrPermission)
	}
	return os.ReadFile(l)
}

// WriteFile writes a file of the phone's storage by its device path,
// making its folder.
func (ph *Phone) WriteFile(name string, data []byte, mode os.FileMode) error {
	l, ok := ph.local(name)
	if !ok {
		return fmt.Errorf("%s: %w", name, os.ErrPermission)
	}
	if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
		return err
	}
	return os.WriteFile(l, data, mode.Perm()|0o600)
}

// Stat describes a file of the phone's storage by its device path.
func (ph *Phone) Stat(name string) (os.FileInfo, error) {
	l, ok := ph.local(name)
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, os.ErrPermission)
	}
	return os.Stat(l)
}

// ReadDir lists a folder of the phone's storage by its device path.
func (ph *Phone) ReadDir(name string) ([]os.DirEntry, error) {
	l, ok := ph.local(name)
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, os.ErrPermission)
	}
	return os.ReadDir(l)
}
