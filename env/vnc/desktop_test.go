package vnc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/envtest"
	"github.com/proctor-eval/proctor/env/xdesktop"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

func TestMain(m *testing.M) {
	xdesktop.Watchdog()
	os.Exit(m.Run())
}

// need skips a test when a program it runs is not installed.
func need(t testing.TB, bins ...string) {
	t.Helper()
	for _, b := range append([]string{"Xvfb", "x11vnc", "dbus-daemon", "openbox"}, bins...) {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
}

// lockedBuffer collects a process's output for a failure message.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serve starts a local desktop that serves itself over VNC (x11vnc,
// kept across its resets) on a free port of the loopback interface, with
// the password given or none, and returns both; the test's cleanup ends
// them.
func serve(t testing.TB, password string) (*xdesktop.Desktop, string) {
	t.Helper()
	v := &xdesktop.VNC{Listen: "127.0.0.1:0"}
	if password != "" {
		v.PasswordFile = filepath.Join(t.TempDir(), "vncpass")
		if err := os.WriteFile(v.PasswordFile, []byte(password+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d, err := xdesktop.Start(context.Background(), xdesktop.Config{Width: 1280, Height: 800, VNC: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, d.VNCAddr()
}

// attachDesktop serves a desktop over VNC and attaches to it, with the
// desktop itself as the guest when withGuest is set.
func attachDesktop(t testing.TB, withGuest bool) (*Env, *xdesktop.Desktop) {
	t.Helper()
	d, addr := serve(t, "")
	cfg := Config{Addr: addr}
	if withGuest {
		cfg.Guest = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, d
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestConformance runs the env.Env conformance suite on a desktop
// reached over VNC, with the desktop's own probes as the guest.
func TestConformance(t *testing.T) {
	need(t, "yad", "xclip")
	e, _ := attachDesktop(t, true)
	envtest.Run(t, e)
}

// TestDesktopWithoutGuest attaches to a real VNC server without a guest:
// a screen and input only, and everything else refused.
func TestDesktopWithoutGuest(t *testing.T) {
	need(t, "xdotool")
	e, d := attachDesktop(t, false)
	ctx := testCtx(t)
	info, err := e.Info(ctx)
	if err != nil || info.Kind != "vnc" || info.Screen != (action.Size{W: 1280, H: 800}) || !slices.Equal(info.Caps, []task.Capability{task.CapClipboard, task.CapAfter}) {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	if _, err := e.Tree(ctx); !errors.Is(err, env.ErrBadAction) || !strings.Contains(err.Error(), "needs tree") {
		t.Fatalf("Tree without a guest: %v", err)
	}
	if _, err := e.Run(ctx, "true", time.Second); !errors.Is(err, env.ErrBadAction) || !strings.Contains(err.Error(), "needs commands") {
		t.Fatalf("Run without a guest: %v", err)
	}
	if _, err := e.Do(ctx, []action.Action{{Kind: action.Click, Point: &action.Point{X: 1280, Y: 10}}}); !errors.Is(err, env.ErrBadAction) {
		t.Fatalf("a click off the screen: %v", err)
	}
	// The pointer goes where the action says: the desktop sees it there.
	if _, err := e.Do(ctx, []action.Action{{Kind: action.Move, Point: &action.Point{X: 321, Y: 234}}}); err != nil {
		t.Fatal(err)
	}
	// Read with xdotool, which moves nothing: a probe that moved the
	// pointer to where it read it (a relative move by nothing) could put
	// it back over the VNC server's move, landed in between.
	for {
		cmd := exec.CommandContext(ctx, "xdotool", "getmouselocation", "--shell")
		cmd.Env = append(os.Environ(), "DISPLAY="+d.Display(), "XAUTHORITY="+d.XAuthority())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("xdotool getmouselocation: %v", err)
		}
		at := strings.Fields(string(out))
		if len(at) >= 2 && at[0] == "X=321" && at[1] == "Y=234" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the desktop's pointer is at %q, not where the VNC move put it (321,234)", at)
		case <-time.After(20 * time.Millisecond):
		}
	}
	// A screenshot over VNC shows what the desktop shows.
	shot, err := e.Screenshot(ctx, env.ShotOptions{})
	if err != nil || shot.Size != info.Screen || shot.Format != "png" {
		t.Fatalf("Screenshot = %+v, %v", shot.Size, err)
	}
}

// mousepad resets the desktop to Mousepad editing a file of the given
// content and returns the text area.
func mousepad(t *testing.T, e *Env, content string) observe.Element {
	t.Helper()
	ctx := testCtx(t)
	err := e.Reset(ctx, env.Setup{Steps: []task.Step{
		{Write: &task.Write{Path: "~/doc.txt", Content: content}},
		{Launch: &task.Launch{App: "mousepad", Args: []string{"~/doc.txt"}, WaitWindow: "doc.txt", Timeout: duration.Duration(60 * time.Second)}},
		{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Role: "text"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	els, err := e.Elements(ctx, observe.ElementQuery{Role: "text"})
	if err != nil || len(els) == 0 {
		t.Fatalf("Mousepad's text area: %v, %v", els, err)
	}
	return els[0]
}

// waitText polls the desktop's tree until Mousepad's text satisfies ok.
func waitText(t *testing.T, e *Env, what string, ok func(string) bool) {
	t.Helper()
	ctx := testCtx(t)
	var last string
	for range 100 {
		els, err := e.Elements(ctx, observe.ElementQuery{Role: "text"})
		if err != nil {
			t.Fatal(err)
		}
		if len(els) > 0 {
			if last = els[0].Text; ok(last) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("Mousepad's text is %q; want %s", last, what)
}

func TestTypeUnicodeIntoMousepad(t *testing.T) {
	need(t, "mousepad")
	e, _ := attachDesktop(t, true)
	mousepad(t, e, "")
	const text = "Grüße, Zoë! ✓ 日本語 Ωμέγα €5 {x|y}\nA second line"
	if _, err := e.Do(testCtx(t), []action.Action{
		{Kind: action.Click, Target: &action.Target{Role: "text"}},
		{Kind: action.Type, Text: text},
	}); err != nil {
		t.Fatal(err)
	}
	waitText(t, e, fmt.Sprintf("%q", text), func(s string) bool { return s == text })
}

func TestDragSelectsText(t *testing.T) {
	need(t, "mousepad")
	e, _ := attachDesktop(t, true)
	area := mousepad(t, e, "hello world and more\nsecond line\n")
	y := float64(area.Box.Y + 8)
	if _, err := e.Do(testCtx(t), []action.Action{
		{Kind: action.Drag, Point: &action.Point{X: float64(area.Box.X + 1), Y: y}, To: &action.Point{X: float64(area.Box.X + area.Box.W - 20), Y: y}, Duration: 0.3},
		{Kind: action.Type, Text: "X"},
	}); err != nil {
		t.Fatal(err)
	}
	// The drag selected the whole first line, which the typing replaced.
	waitText(t, e, `"X\nsecond line\n"`, func(s string) bool { return s == "X\nsecond line\n" })
}

func TestWheelScrolls(t *testing.T) {
	need(t, "mousepad")
	e, _ := attachDesktop(t, true)
	var b strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	area := mousepad(t, e, b.String())
	ctx := testCtx(t)
	value := func() float64 {
		els, err := e.Elements(ctx, observe.ElementQuery{Role: "scroll bar"})
		if err != nil {
			t.Fatal(err)
		}
		top := 0.0
		for _, el := range els {
			if v, err := strconv.ParseFloat(el.Text, 64); err == nil && v > top {
				top = v
			}
		}
		return top
	}
	if v := value(); v != 0 {
		t.Fatalf("the text is scrolled (%g) before the wheel turned", v)
	}
	cx, cy := area.Box.Center()
	if _, err := e.Do(ctx, []action.Action{{Kind: action.Scroll, Point: &action.Point{X: float64(cx), Y: float64(cy)}, DY: 10}}); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if value() > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("ten wheel notches down over VNC did not scroll Mousepad's text")
}

// BenchmarkVNC compares, on one desktop, a screenshot through VNC (a
// framebuffer update requested and received, then PNG encoding) with the
// desktop's own capture, and a click round trip (the click, then a
// screenshot that shows its moment) through VNC and directly.
func BenchmarkVNC(b *testing.B) {
	need(b, "mousepad")
	d, addr := serve(b, "")
	if err := d.SetSettle(xdesktop.Settle{Off: true}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. 0123456789\n", 40)
	err := d.Reset(ctx, env.Setup{Steps: []task.Step{
		{Write: &task.Write{Path: "~/text.txt", Content: text}},
		{Launch: &task.Launch{App: "mousepad", Args: []string{"~/text.txt"}, WaitWindow: "text.txt", Timeout: duration.Duration(60 * time.Second)}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	e, err := Dial(ctx, Config{Addr: addr})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	click := []action.Action{{Kind: action.Click, Point: &action.Point{X: 640, Y: 790}}}
	for _, c := range []struct {
		name string
		e    env.Env
	}{{"vnc", e}, {"direct", d}} {
		b.Run("screenshot/"+c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.e.Screenshot(ctx, env.ShotOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("click/"+c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.e.Do(ctx, click); err != nil {
					b.Fatal(err)
				}
				if _, err := c.e.Screenshot(ctx, env.ShotOptions{JPEG: 50, Scale: 0.25}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// A typical step of a task: the agent clicks into the text and types
	// a word, and the runner takes the next observation's screenshot.
	// Bytes received counts everything the server sent over RFB in the
	// step: the background loop's incremental updates and the screenshot's
	// full refresh.
	rc, ok := e.c.(interface{ BytesRead() int64 })
	if !ok {
		b.Fatal("the RFB client counts no bytes")
	}
	step := []action.Action{{Kind: action.Click, Point: &action.Point{X: 640, Y: 500}}, {Kind: action.Type, Text: "word "}}
	b.Run("step/vnc", func(b *testing.B) {
		before := rc.BytesRead()
		for b.Loop() {
			if _, err := e.Do(ctx, step); err != nil {
				b.Fatal(err)
			}
			if _, err := e.Screenshot(ctx, env.ShotOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(rc.BytesRead()-before)/float64(b.N), "B/step")
	})
}
