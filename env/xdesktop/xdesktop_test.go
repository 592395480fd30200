package xdesktop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg"

	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// need skips the test when a program it drives is not installed; the test
// script installs them all, so CI never skips.
func need(t testing.TB, bins ...string) {
	t.Helper()
	for _, b := range append([]string{"Xvfb", "dbus-daemon", "openbox"}, bins...) {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
}

// started records every desktop the tests start, for TestMain's check.
var started []string

func start(t testing.TB) *Desktop {
	t.Helper()
	d, err := Start(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	started = append(started, d.s.id)
	t.Cleanup(func() { d.Close() })
	return d
}

// TestMain checks, after every test, that no process of any desktop the
// tests started is still running (zombies left to init, which does not
// reap them here, are not running and do not count).
func TestMain(m *testing.M) {
	Watchdog()
	code := m.Run()
	for _, id := range started {
		if left := markedProcesses(id); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "processes of desktop %s left running: %v\n", id, left)
			code = 1
		}
	}
	os.Exit(code)
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return c
}

func launch(t testing.TB, d *Desktop, app, window string, extra ...task.Step) {
	t.Helper()
	steps := append(extra, task.Step{Launch: &task.Launch{App: app, WaitWindow: window, Timeout: duration.Duration(60 * time.Second)}})
	if err := d.Reset(ctx(t), env.Setup{Steps: steps}); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls the accessibility tree until found reports true.
func waitFor(t testing.TB, d *Desktop, what string, found func(*observe.Tree) bool) {
	t.Helper()
	var last *observe.Tree
	for range 100 {
		tr, err := d.Tree(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if found(tr) {
			return
		}
		last = tr
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("never saw %s; last tree:\n%s", what, observe.Linearize(last.Filter(observe.Options{}), 0))
}

// seen polls the tree up to n times, 100 ms apart, for what found looks
// for.
func seen(t testing.TB, d *Desktop, n int, found func(*observe.Tree) bool) bool {
	t.Helper()
	for range n {
		tr, err := d.Tree(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if found(tr) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

func byName(role, name string) action.Action {
	return action.Action{Kind: action.Click, Target: &action.Target{Role: role, Name: name}}
}

func TestGTKButtonChangesTree(t *testing.T) {
	need(t, "gnome-calculator")
	d := start(t)
	launch(t, d, "gnome-calculator", "Calculator")
	waitFor(t, d, "the 7 key", func(tr *observe.Tree) bool { return len(tr.Find("", "label", "7", "", false)) > 0 })
	steps, err := d.Do(ctx(t), []action.Action{byName("label", "7")})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || !strings.Contains(steps[0].Element, "7") {
		t.Fatalf("steps %+v: the first click should record the 7 key", steps)
	}
	waitFor(t, d, "7 on the display", func(tr *observe.Tree) bool {
		return len(tr.Find("gnome-calculator", "", "", "7", false)) > 0
	})
	// One key a turn, each seen on the display before the next: a
	// loaded machine's GTK drops a click that comes while it redraws.
	for _, k := range [][2]string{{"+", "7+"}, {"8", "7+8"}} {
		if _, err := d.Do(ctx(t), []action.Action{byName("label", k[0])}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, d, k[1]+" on the display", func(tr *observe.Tree) bool {
			return len(tr.Find("gnome-calculator", "", "", k[1], false)) > 0
		})
	}
	if _, err := d.Do(ctx(t), []action.Action{byName("label", "=")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, d, "the result 15", func(tr *observe.Tree) bool {
		return len(tr.Find("gnome-calculator", "", "", "15", true)) > 0
	})
}

func TestQtButtonChangesTree(t *testing.T) {
	need(t, "kcalc")
	d := start(t)
	launch(t, d, "kcalc", "KCalc")
	waitFor(t, d, "the 7 key", func(tr *observe.Tree) bool { return len(tr.Find("kcalc", "push button", "7", "", false)) > 0 })
	if _, err := d.Do(ctx(t), []action.Action{byName("push button", "7"), byName("push button", "×"),
		byName("push button", "6"), byName("push button", "=")}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, d, "the display showing 42", func(tr *observe.Tree) bool {
		return len(tr.Find("kcalc", "", "42", "", false)) > 0
	})
}

func TestTypeUnicodeAndSave(t *testing.T) {
	need(t, "mousepad")
	d := start(t)
	if err := d.Reset(ctx(t), env.Setup{Steps: []task.Step{
		{Write: &task.Write{Path: "~/notes.txt", Content: ""}},
		{Launch: &task.Launch{App: "mousepad", Args: []string{"~/notes.txt"}, WaitWindow: "notes.txt", Timeout: duration.Duration(60 * time.Second)}},
	}}); err != nil {
		t.Fatal(err)
	}
	text := "Grüße, 世界 — ✓ ñandú 42"
	if _, err := d.Do(ctx(t), []action.Action{
		{Kind: action.Click, Target: &action.Target{Role: "text"}},
		{Kind: action.Type, Text: text},
		{Kind: action.Hotkey, Keys: []string{"ctrl", "s"}},
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, d, "the typed text in the editor", func(tr *observe.Tree) bool {
		return len(tr.Find("mousepad", "text", "", text, true)) > 0
	})
	var got []byte
	defer func() {
		if t.Failed() {
			if s, err := d.Screenshot(context.Background(), env.ShotOptions{}); err == nil {
				os.WriteFile("/tmp/unicode-fail.png", s.Data, 0o644)
			}
		}
	}()
	for range 50 {
		got, _ = d.ReadFile(ctx(t), "~/notes.txt")
		if strings.Contains(string(got), text) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("saved file holds %q, want %q", got, text)
}

func TestSetOfMarkClick(t *testing.T) {
	need(t, "kcalc")
	d := start(t)
	launch(t, d, "kcalc", "KCalc")
	waitFor(t, d, "the 9 key", func(tr *observe.Tree) bool { return len(tr.Find("kcalc", "push button", "9", "", false)) > 0 })
	shot, err := d.Screenshot(ctx(t), env.ShotOptions{Marks: true})
	if err != nil {
		t.Fatal(err)
	}
	var nine observe.Mark
	for _, m := range shot.Marks {
		if m.Role == "push button" && m.Name == "9" {
			nine = m
		}
	}
	if nine.Tag == 0 {
		t.Fatalf("no mark for the 9 key among %+v", shot.Marks)
	}
	steps, err := d.Do(ctx(t), []action.Action{{Kind: action.Click, Target: &action.Target{Tag: nine.Tag}}})
	if err != nil {
		t.Fatal(err)
	}
	cx, cy := nine.Center()
	if steps[0].At == nil || steps[0].At[0] != cx || steps[0].At[1] != cy {
		t.Fatalf("tag_%d clicked at %v, want the mark's centre %d,%d", nine.Tag, steps[0].At, cx, cy)
	}
	if steps[0].Element != "push button 9" {
		t.Fatalf("process record %q, want %q", steps[0].Element, "push button 9")
	}
	waitFor(t, d, "the display showing 9", func(tr *observe.Tree) bool { return len(tr.Find("kcalc", "", "9", "", false)) > 1 })
}

func TestKilledAppGivesClearError(t *testing.T) {
	need(t, "kcalc")
	d := start(t)
	launch(t, d, "kcalc", "KCalc")
	ws, err := d.Windows(ctx(t))
	if err != nil || len(ws) == 0 || ws[0].PID == 0 {
		t.Fatalf("windows %+v, %v", ws, err)
	}
	if err := syscall.Kill(ws[0].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for range 50 { // the window goes when the process does
		if ws, _ := d.Windows(ctx(t)); len(ws) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, err = d.Do(ctx(t), []action.Action{byName("push button", "7")})
	if !errors.Is(err, env.ErrNotFound) || !strings.Contains(err.Error(), `push button "7"`) {
		t.Fatalf("click on a dead app: %v, want a not-found error naming the element", err)
	}
}

func TestResetRestoresDesktop(t *testing.T) {
	need(t, "mousepad")
	d := start(t)
	launch(t, d, "mousepad", "Mousepad", task.Step{Write: &task.Write{Path: "~/left.txt", Content: "x"}})
	if err := d.Reset(ctx(t), env.Setup{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadFile(ctx(t), "~/left.txt"); !errors.Is(err, observe.ErrNotFound) {
		t.Fatalf("a file from before the reset: %v", err)
	}
	for range 30 {
		ws, _ := d.Windows(ctx(t))
		if len(ws) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("windows remain after a reset")
}

func TestFileConfinement(t *testing.T) {
	need(t)
	d := start(t)
	c := ctx(t)
	if err := os.Symlink("/etc", filepath.Join(d.Home(), "etc")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"~/../../etc/passwd", "/etc/passwd", "~/etc/passwd", "relative.txt", "/tmp/../etc/passwd"} {
		if _, err := d.ReadFile(c, p); !errors.Is(err, env.ErrForbidden) {
			t.Errorf("ReadFile(%q) = %v, want forbidden", p, err)
		}
		if err := d.WriteFile(c, p, []byte("x")); !errors.Is(err, env.ErrForbidden) {
			t.Errorf("WriteFile(%q) = %v, want forbidden", p, err)
		}
	}
	if err := d.WriteFile(c, "~/a/b.txt", []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if b, err := d.ReadFile(c, "~/a/b.txt"); err != nil || string(b) != "ok" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
}

func TestScreenshotFormats(t *testing.T) {
	need(t)
	d := start(t)
	c := ctx(t)
	tests := []struct {
		o      env.ShotOptions
		format string
		w, h   int
	}{
		{env.ShotOptions{}, "png", 1920, 1080},
		{env.ShotOptions{Scale: 0.5, JPEG: 80, Cursor: true}, "jpeg", 960, 540},
	}
	for _, tc := range tests {
		s, err := d.Screenshot(c, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		img, format, err := image.Decode(bytes.NewReader(s.Data))
		if err != nil || format != tc.format || img.Bounds().Dx() != tc.w || img.Bounds().Dy() != tc.h {
			t.Fatalf("%+v: %s %v %v", tc.o, format, img.Bounds(), err)
		}
	}
}

func TestCommandsAndTimeouts(t *testing.T) {
	need(t)
	d := start(t)
	c := ctx(t)
	res, err := d.Run(c, "echo $HOME; echo oops >&2; exit 3", 10*time.Second)
	if err != nil || strings.TrimSpace(res.Stdout) != d.Home() || res.Stderr != "oops\n" || res.ExitCode != 3 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if _, err := d.Run(c, "sleep 30", 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("a command past its timeout: %v", err)
	}
}

// markedProcesses names the running processes of a desktop.
func markedProcesses(id string) []string {
	var out []string
	for _, pid := range Processes(id) {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		out = append(out, fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(string(comm))))
	}
	return out
}

func TestNothingLeftBehind(t *testing.T) {
	need(t, "mousepad", "kcalc")
	d, err := Start(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	id, xvfb := d.s.id, d.s.infra[0].cmd.Process.Pid
	started = append(started, id)
	launch(t, d, "mousepad", "Mousepad", task.Step{Launch: &task.Launch{App: "kcalc"}},
		task.Step{Run: &task.Run{Command: "sleep 300 & setsid sleep 301 &", Background: true}})
	if len(markedProcesses(id)) < 5 {
		t.Fatalf("expected the desktop's processes to be marked: %v", markedProcesses(id))
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if left := markedProcesses(id); len(left) > 0 {
		t.Fatalf("processes left behind: %v", left)
	}
	if err := syscall.Kill(xvfb, 0); err == nil {
		t.Fatalf("Xvfb (pid %d) still runs", xvfb)
	}
	if _, err := os.Stat(d.s.base); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the desktop's folder remains: %v", err)
	}
}

func TestParallelDesktopsAreSeparate(t *testing.T) {
	need(t, "kcalc", "mousepad")
	a, b := start(t), start(t)
	if a.Display() == b.Display() {
		t.Fatalf("both desktops on %s", a.Display())
	}
	launch(t, a, "kcalc", "KCalc")
	launch(t, b, "mousepad", "Mousepad")
	ta, err := a.Tree(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Tree(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ta.Find("mousepad", "", "", "", false)) > 0 || len(tb.Find("kcalc", "", "", "", false)) > 0 {
		t.Fatal("a desktop sees the other's applications")
	}
	if len(ta.Find("kcalc", "", "", "", false)) == 0 || len(tb.Find("mousepad", "", "", "", false)) == 0 {
		t.Fatal("a desktop does not see its own application")
	}
}

func TestBadActions(t *testing.T) {
	need(t)
	d := start(t)
	tests := []struct {
		a    action.Action
		want error
	}{
		{action.Action{Kind: action.Navigate, Text: "http://x/"}, env.ErrBadAction},
		{action.Action{Kind: action.API, Name: "nope"}, env.ErrBadAction},
		{action.Action{Kind: action.Click, Target: &action.Target{Tag: 99}}, env.ErrNotFound},
		{action.Action{Kind: action.Click, Point: action.At(5000, 5)}, nil},
		{action.Action{Kind: action.Code, Lang: "python", Text: "print(1)"}, env.ErrBadAction},
	}
	for _, tc := range tests {
		_, err := d.Do(ctx(t), []action.Action{tc.a})
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("Do(%v) = %v, want %v", tc.a, err, tc.want)
		}
	}
}

func TestDragAndScroll(t *testing.T) {
	need(t, "yad")
	d := start(t)
	if err := d.Reset(ctx(t), env.Setup{Steps: []task.Step{
		{Run: &task.Run{Command: "yad --title=Level --scale --min-value=0 --max-value=100 --value=50 > ~/value.txt", Background: true}},
		{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Role: "slider"}, Timeout: duration.Duration(30 * time.Second)}},
	}}); err != nil {
		t.Fatal(err)
	}
	els, err := d.Elements(ctx(t), observe.ElementQuery{Role: "slider"})
	if err != nil || len(els) != 1 {
		t.Fatalf("slider: %+v %v", els, err)
	}
	value := func() string {
		els, _ := d.Elements(ctx(t), observe.ElementQuery{Role: "slider"})
		if len(els) == 0 {
			return ""
		}
		return els[0].Text
	}
	b := els[0].Box
	cx, cy := b.Center()
	// Drag the knob from the middle past the left end (but not off the
	// screen: the window may open at its left edge).
	if _, err := d.Do(ctx(t), []action.Action{{Kind: action.Drag, Point: action.At(float64(cx), float64(cy)),
		To: action.At(float64(max(b.X-20, 0)), float64(cy)), Duration: 0.3}}); err != nil {
		t.Fatal(err)
	}
	for range 30 {
		if value() == "0" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := value(); v != "0" {
		t.Fatalf("after dragging the knob to the left end the slider reads %q, want 0", v)
	}
	// Scrolling up over the slider raises it.
	if _, err := d.Do(ctx(t), []action.Action{{Kind: action.Scroll, Point: action.At(float64(cx), float64(cy)), DY: -3}}); err != nil {
		t.Fatal(err)
	}
	for range 30 {
		if v := value(); v != "0" && v != "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("scrolling up over the slider left it at %q", value())
}

func TestFocusStepActivatesTheWindow(t *testing.T) {
	need(t, "yad")
	d := start(t)
	bg := func(title string) task.Step {
		return task.Step{Run: &task.Run{Command: "yad --title=" + title + " --text=" + title, Background: true}}
	}
	wait := func(title string) task.Step {
		return task.Step{WaitWindow: &task.WaitWindow{Title: title, Timeout: duration.Duration(30 * time.Second)}}
	}
	active := func() string {
		ws, err := d.Windows(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.Active {
				return w.Title
			}
		}
		return ""
	}
	// The second window opened is the active one; focus brings back the first.
	steps := []task.Step{bg("First"), wait("First"), bg("Second"), wait("Second"), {Sleep: ptrDuration(500 * time.Millisecond)}}
	if err := d.Reset(ctx(t), env.Setup{Steps: steps}); err != nil {
		t.Fatal(err)
	}
	if got := active(); got != "Second" {
		t.Fatalf("before focus, the active window is %q, want Second", got)
	}
	steps = append(steps, task.Step{Focus: &task.Focus{Title: "first", Timeout: duration.Duration(10 * time.Second)}})
	if err := d.Reset(ctx(t), env.Setup{Steps: steps}); err != nil {
		t.Fatal(err)
	}
	if got := active(); got != "First" {
		t.Fatalf("after focus, the active window is %q, want First", got)
	}
	// A window that never comes is an error naming it.
	err := d.Reset(ctx(t), env.Setup{Steps: []task.Step{{Focus: &task.Focus{Title: "Nowhere", Timeout: duration.Duration(500 * time.Millisecond)}}}})
	if err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("focus on a missing window: %v", err)
	}
}

func ptrDuration(d time.Duration) *duration.Duration { c := duration.Duration(d); return &c }

func TestAppFilesWrittenBeforeLaunch(t *testing.T) {
	d := start(t)
	apps := map[string]task.AppSpec{"quiet": {Command: "sleep 30", Files: map[string]string{
		".config/quiet/settings.ini": "tips=off\n",
		"kept.txt":                   "from the app\n",
	}}}
	steps := []task.Step{
		{Write: &task.Write{Path: "~/kept.txt", Content: "from the task\n"}},
		{Launch: &task.Launch{App: "quiet"}},
	}
	if err := d.Reset(ctx(t), env.Setup{Steps: steps, Apps: apps}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"~/.config/quiet/settings.ini": "tips=off\n", "~/kept.txt": "from the task\n"} {
		b, err := d.ReadFile(ctx(t), path)
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", path, b, err, want)
		}
	}
}

// TestResetEndsStrayClients starts a window the way an agent could escape
// the marker sweep (its own session, an empty environment) and checks
// that the next reset ends it all the same.
func TestResetEndsStrayClients(t *testing.T) {
	need(t, "xterm")
	d := start(t)
	steps := []task.Step{
		{Run: &task.Run{Command: `setsid env -i DISPLAY="$DISPLAY" XAUTHORITY="$XAUTHORITY" PATH=/usr/bin:/bin SHELL=/bin/sh xterm -T stray-window -e sleep 600 &`, Background: true}},
		{WaitWindow: &task.WaitWindow{Title: "stray-window", Timeout: duration.Duration(60 * time.Second)}},
	}
	if err := d.Reset(ctx(t), env.Setup{Steps: steps}); err != nil {
		t.Fatal(err)
	}
	pid := 0
	ws, err := d.Windows(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Title == "stray-window" {
			pid = w.PID
		}
	}
	if pid == 0 {
		t.Fatalf("no pid for the stray window among %+v", ws)
	}
	environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if strings.Contains(string(environ), MarkerVar+"="+d.s.id) {
		t.Fatalf("the stray xterm carries the desktop's marker; the test proves nothing")
	}
	if err := d.Reset(ctx(t), env.Setup{}); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if !running(pid) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the stray xterm (pid %d) outlived the reset", pid)
}

// TestXServerFailureSaysWhy: an X server that ends before it reports its
// display is named in the error with what it said, and nothing of the
// desktop is left.
func TestXServerFailureSaysWhy(t *testing.T) {
	need(t)
	// Xvfb refuses a screen past the X protocol's 32767 pixels.
	d, err := Start(context.Background(), Config{Width: 70000, Height: 70000})
	if err == nil {
		d.Close()
		t.Fatal("a desktop of 70000x70000 started")
	}
	t.Log(err)
	for _, want := range []string{"Xvfb did not report its display", "Xvfb ended", "Couldn't add screen 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}
