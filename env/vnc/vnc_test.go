package vnc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/input"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// fakeConn is an RFB connection that records the events sent to it.
type fakeConn struct {
	mu        sync.Mutex
	w, h      int
	events    []string
	refreshes int
	cut       string
	sent      string
	done      chan struct{}
	err       error
	closed    bool
}

func newFake(w, h int) *fakeConn { return &fakeConn{w: w, h: h, done: make(chan struct{})} }

func (f *fakeConn) Name() string     { return "fake desktop" }
func (f *fakeConn) Size() (int, int) { return f.w, f.h }
func (f *fakeConn) Snapshot() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, f.w, f.h))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	img.Set(0, 2, color.RGBA{255, 0, 0, 255})
	return img
}
func (f *fakeConn) Refresh(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refreshes++
	return nil
}
func (f *fakeConn) record(format string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, fmt.Sprintf(format, args...))
	return nil
}
func (f *fakeConn) Pointer(x, y int, b uint8) error { return f.record("ptr %d,%d %07b", x, y, b) }
func (f *fakeConn) Key(sym uint32, down bool) error {
	d := "up"
	if down {
		d = "down"
	}
	return f.record("key %#x %s", sym, d)
}
func (f *fakeConn) SetClipboard(s string) error { f.sent = s; return nil }
func (f *fakeConn) Clipboard() string           { return f.cut }
func (f *fakeConn) Done() <-chan struct{}       { return f.done }
func (f *fakeConn) Err() error                  { return f.err }
func (f *fakeConn) Close() error                { f.closed = true; return nil }
func (f *fakeConn) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev := f.events
	f.events = nil
	return ev
}

// fakeGuest is a guest that serves a tree with one button and counts
// what is delegated to it.
type fakeGuest struct {
	env.Env // the methods a test does not expect are nil: calling one panics
	screen  action.Size
	resets  []env.Setup
	closed  bool
}

func (g *fakeGuest) Info(context.Context) (env.Info, error) {
	return env.Info{Kind: "x11", Screen: g.screen, Home: "/home/u", Caps: task.DesktopCapabilities}, nil
}

func (g *fakeGuest) Tree(context.Context) (*observe.Tree, error) {
	vis := []string{"enabled", "showing", "visible"}
	return &observe.Tree{Apps: []*observe.Node{{App: "yad", Role: "application", Name: "yad", Children: []*observe.Node{
		{Role: "dialog", Name: "Question", States: append(vis, "active"), Box: action.Box{X: 0, Y: 0, W: 200, H: 100},
			Children: []*observe.Node{{Role: "push button", Name: "Later", States: vis, Box: action.Box{X: 100, Y: 60, W: 40, H: 20}}}},
	}}}}, nil
}

func (g *fakeGuest) Run(_ context.Context, cmd string, _ time.Duration) (observe.CommandResult, error) {
	return observe.CommandResult{Stdout: "ran " + cmd}, nil
}
func (g *fakeGuest) Clipboard(context.Context) (string, error) { return "guest clipboard", nil }
func (g *fakeGuest) Reset(_ context.Context, s env.Setup) error {
	g.resets = append(g.resets, s)
	return nil
}
func (g *fakeGuest) Close() error { g.closed = true; return nil }

func attach(t *testing.T, c *fakeConn, cfg Config) *Env {
	t.Helper()
	cfg.Addr = "desk:5901"
	e, err := newEnv(context.Background(), c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func pt(x, y float64) *action.Point { return &action.Point{X: x, Y: y} }

func TestActionsBecomeEvents(t *testing.T) {
	drag := []string{"ptr 10,10 0000000", "ptr 10,10 0000001"}
	for i := 1; i <= input.DragSteps; i++ {
		drag = append(drag, fmt.Sprintf("ptr %d,%d 0000001", 10+20*i/input.DragSteps, 10+10*i/input.DragSteps))
	}
	drag = append(drag, "ptr 30,20 0000000")
	for _, c := range []struct {
		name string
		acts []action.Action
		want []string
	}{
		{"move", []action.Action{{Kind: action.Move, Point: pt(5, 6)}}, []string{"ptr 5,6 0000000"}},
		{"move in thousandths", []action.Action{{Kind: action.Move, Point: &action.Point{X: 500, Y: 500, Unit: action.Thousand}}}, []string{"ptr 50,25 0000000"}},
		{"move_rel from the last position", []action.Action{{Kind: action.Move, Point: pt(5, 6)}, {Kind: action.MoveRel, Point: pt(3, -2)}},
			[]string{"ptr 5,6 0000000", "ptr 8,4 0000000"}},
		{"left click", []action.Action{{Kind: action.Click, Point: pt(7, 8)}},
			[]string{"ptr 7,8 0000000", "ptr 7,8 0000001", "ptr 7,8 0000000"}},
		{"right double click", []action.Action{{Kind: action.Click, Point: pt(7, 8), Button: action.Right, Count: 2}},
			[]string{"ptr 7,8 0000000", "ptr 7,8 0000100", "ptr 7,8 0000000", "ptr 7,8 0000100", "ptr 7,8 0000000"}},
		{"middle click where the pointer is", []action.Action{{Kind: action.Move, Point: pt(1, 2)}, {Kind: action.Click, Button: action.Middle}},
			[]string{"ptr 1,2 0000000", "ptr 1,2 0000000", "ptr 1,2 0000010", "ptr 1,2 0000000"}},
		{"scroll down 2 and left 1", []action.Action{{Kind: action.Scroll, Point: pt(4, 4), DY: 2, DX: -1}},
			[]string{"ptr 4,4 0000000", "ptr 4,4 0010000", "ptr 4,4 0000000", "ptr 4,4 0010000", "ptr 4,4 0000000", "ptr 4,4 0100000", "ptr 4,4 0000000"}},
		{"scroll up and right", []action.Action{{Kind: action.Scroll, DY: -1, DX: 1}},
			[]string{"ptr 0,0 0001000", "ptr 0,0 0000000", "ptr 0,0 1000000", "ptr 0,0 0000000"}},
		{"a fifth of a page is two notches", []action.Action{{Kind: action.Scroll, Pages: 0.2}},
			[]string{"ptr 0,0 0010000", "ptr 0,0 0000000", "ptr 0,0 0010000", "ptr 0,0 0000000"}},
		{"mouse down, move, mouse up", []action.Action{{Kind: action.MouseDown, Point: pt(2, 2)}, {Kind: action.Move, Point: pt(9, 9)}, {Kind: action.MouseUp}},
			[]string{"ptr 2,2 0000000", "ptr 2,2 0000001", "ptr 9,9 0000001", "ptr 9,9 0000000"}},
		{"drag", []action.Action{{Kind: action.Drag, Point: pt(10, 10), To: pt(30, 20)}}, drag},
		{"drag_rel", []action.Action{{Kind: action.Move, Point: pt(10, 10)}, {Kind: action.DragRel, To: pt(20, 10)}},
			append([]string{"ptr 10,10 0000000"}, drag...)},
		{"type ASCII, Latin-1 and beyond", []action.Action{{Kind: action.Type, Text: "aé✓\n"}},
			[]string{"key 0x61 down", "key 0x61 up", "key 0xe9 down", "key 0xe9 up", "key 0x1002713 down", "key 0x1002713 up", "key 0xff0d down", "key 0xff0d up"}},
		{"type with clear", []action.Action{{Kind: action.Type, Text: "Z", Clear: true}},
			[]string{"key 0xffe3 down", "key 0x61 down", "key 0x61 up", "key 0xffe3 up", "key 0xffff down", "key 0xffff up", "key 0x5a down", "key 0x5a up"}},
		{"keys in turn, any naming", []action.Action{{Kind: action.Key, Keys: []string{"Return", "F5", "pagedown"}}},
			[]string{"key 0xff0d down", "key 0xff0d up", "key 0xffc2 down", "key 0xffc2 up", "key 0xff56 down", "key 0xff56 up"}},
		{"hotkey released in reverse", []action.Action{{Kind: action.Hotkey, Keys: []string{"ctrl", "shift", "t"}}},
			[]string{"key 0xffe3 down", "key 0xffe1 down", "key 0x74 down", "key 0x74 up", "key 0xffe1 up", "key 0xffe3 up"}},
		{"key_down and key_up", []action.Action{{Kind: action.KeyDown, Keys: []string{"shift"}}, {Kind: action.KeyUp, Keys: []string{"shift"}}},
			[]string{"key 0xffe1 down", "key 0xffe1 up"}},
		{"control actions send nothing", []action.Action{{Kind: action.Wait, Duration: 0.001}, {Kind: action.Done}, {Kind: action.Fail}, {Kind: action.Answer, Text: "42"}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(100, 50)
			e := attach(t, f, Config{})
			steps, err := e.Do(context.Background(), c.acts)
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) != len(c.acts) {
				t.Fatalf("%d steps for %d actions", len(steps), len(c.acts))
			}
			if got := f.take(); !slices.Equal(got, c.want) {
				t.Fatalf("events:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		act  action.Action
		want string // in the error
	}{
		{"a click off the screen", action.Action{Kind: action.Click, Point: pt(100, 10)}, "outside the 100x50 screen"},
		{"a negative point", action.Action{Kind: action.Move, Point: pt(-1, 0)}, "outside"},
		{"a relative move off the screen", action.Action{Kind: action.MoveRel, Point: pt(0, 50)}, "off the 100x50 screen"},
		{"a drag ending off the screen", action.Action{Kind: action.Drag, Point: pt(1, 1), To: pt(1, 60)}, "outside"},
		{"an unknown key", action.Action{Kind: action.Key, Keys: []string{"hyperdrive"}}, `no X keysym for key "hyperdrive"`},
		{"a hotkey with an unknown key sends none", action.Action{Kind: action.Hotkey, Keys: []string{"ctrl", "nokey"}}, `"nokey"`},
		{"an element target without a tree", action.Action{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "OK"}}, "needs tree"},
		{"a tag without a tree", action.Action{Kind: action.Type, Text: "x", Target: &action.Target{Tag: 3}}, "needs tree"},
		{"code without commands", action.Action{Kind: action.Code, Text: "ls"}, "needs commands"},
		{"a browser action", action.Action{Kind: action.Navigate, Text: "https://example.com"}, "not the VNC desktop vnc://desk:5901"},
		{"an API call", action.Action{Kind: action.API, Name: "mail"}, `no API "mail"`},
		{"an invalid action", action.Action{Kind: action.Click, Count: 5}, "click count 5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(100, 50)
			e := attach(t, f, Config{})
			_, err := e.Do(context.Background(), []action.Action{c.act})
			if !errors.Is(err, env.ErrBadAction) || !env.AgentsFault(err) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Do = %v; want env.ErrBadAction mentioning %q", err, c.want)
			}
			if ev := f.take(); len(ev) > 0 {
				t.Fatalf("a refused action sent events: %v", ev)
			}
		})
	}
}

func TestWithoutGuest(t *testing.T) {
	f := newFake(100, 50)
	f.cut = "cut ✓"
	e := attach(t, f, Config{})
	ctx := context.Background()
	info, err := e.Info(ctx)
	if err != nil || info.Kind != "vnc" || info.Screen != (action.Size{W: 100, H: 50}) || !slices.Equal(info.Caps, []task.Capability{task.CapClipboard, task.CapAfter}) {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	for _, c := range []struct {
		name string
		call func() error
		cap  task.Capability
	}{
		{"Tree", func() error { _, err := e.Tree(ctx); return err }, task.CapTree},
		{"Elements", func() error { _, err := e.Elements(ctx, observe.ElementQuery{Role: "text"}); return err }, task.CapTree},
		{"Run", func() error { _, err := e.Run(ctx, "true", time.Second); return err }, task.CapCommands},
		{"ReadFile", func() error { _, err := e.ReadFile(ctx, "~/a"); return err }, task.CapFiles},
		{"WriteFile", func() error { return e.WriteFile(ctx, "~/a", nil) }, task.CapFiles},
		{"Windows", func() error { _, err := e.Windows(ctx); return err }, task.CapWindows},
		{"marks", func() error { _, err := e.Screenshot(ctx, env.ShotOptions{Marks: true}); return err }, task.CapTree},
		{"a write step", func() error {
			return e.Reset(ctx, env.Setup{Steps: []task.Step{{Write: &task.Write{Path: "~/a", Content: "x"}}}})
		}, task.CapFiles},
		{"a launch step", func() error {
			return e.Reset(ctx, env.Setup{Steps: []task.Step{{Launch: &task.Launch{App: "mousepad"}}}})
		}, task.CapApps},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if !errors.Is(err, env.ErrBadAction) || !strings.Contains(err.Error(), "needs "+string(c.cap)) || !strings.Contains(err.Error(), "vnc://desk:5901") {
				t.Fatalf("err = %v; want env.ErrBadAction naming %s and the desktop", err, c.cap)
			}
		})
	}
	if got, err := e.Clipboard(ctx); err != nil || got != "cut ✓" {
		t.Fatalf("Clipboard = %q, %v; want the server's cut text", got, err)
	}
	if err := e.SetClipboard("to server"); err != nil || f.sent != "to server" {
		t.Fatalf("SetClipboard: %v, sent %q", err, f.sent)
	}
	// A task needing only a screen and the clipboard is let through; one
	// needing files is refused by the run's pre-flight.
	tk := task.Task{Checks: []check.Spec{{Kind: "exact", Probe: &check.Probe{File: "~/x"}, Expected: "y"}}}
	if miss := tk.Missing(info.Caps); len(miss) != 1 || miss[0].Cap != task.CapFiles {
		t.Fatalf("Missing = %+v; want files", miss)
	}
}

func TestWithGuest(t *testing.T) {
	ctx := context.Background()
	g := &fakeGuest{screen: action.Size{W: 200, H: 100}}
	f := newFake(200, 100)
	e := attach(t, f, Config{Guest: g})
	info, err := e.Info(ctx)
	if err != nil || info.Kind != "vnc" || !slices.Equal(info.Caps, []task.Capability{task.CapClipboard, task.CapAfter, task.CapTree, task.CapCommands, task.CapApps, task.CapFiles, task.CapWindows, task.CapElements}) {
		t.Fatalf("Info = %+v, %v; want the guest's capabilities", info, err)
	}
	steps, err := e.Do(ctx, []action.Action{{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "Later"}}})
	if err != nil {
		t.Fatal(err)
	}
	if steps[0].Element != "push button Later" || *steps[0].At != [2]int{120, 70} {
		t.Fatalf("step %+v: want the click on push button Later at its centre", steps[0])
	}
	if got := f.take(); !slices.Equal(got, []string{"ptr 120,70 0000000", "ptr 120,70 0000001", "ptr 120,70 0000000"}) {
		t.Fatalf("events %v: want a click at the button's centre over VNC", got)
	}
	shot, err := e.Screenshot(ctx, env.ShotOptions{Marks: true})
	if err != nil || len(shot.Marks) != 1 {
		t.Fatalf("marks %+v, %v", shot.Marks, err)
	}
	if _, err := e.Do(ctx, []action.Action{{Kind: action.Move, Target: &action.Target{Tag: 1}}}); err != nil {
		t.Fatal(err)
	}
	if got := f.take(); !slices.Equal(got, []string{"ptr 120,70 0000000"}) {
		t.Fatalf("events %v: want a move to mark 1", got)
	}
	if _, err := e.Do(ctx, []action.Action{{Kind: action.Move, Target: &action.Target{Tag: 2}}}); !errors.Is(err, env.ErrNotFound) {
		t.Fatalf("a tag that is not there: %v", err)
	}
	steps, err = e.Do(ctx, []action.Action{{Kind: action.Code, Text: "ls"}})
	if err != nil || !strings.Contains(steps[0].Output, "ran ls") {
		t.Fatalf("code through the guest: %+v, %v", steps, err)
	}
	if got, _ := e.Clipboard(ctx); got != "guest clipboard" {
		t.Fatalf("Clipboard = %q; want the guest's", got)
	}
	setup := env.Setup{Steps: []task.Step{{Write: &task.Write{Path: "~/a", Content: "x"}}}}
	if err := e.Reset(ctx, setup); err != nil || len(g.resets) != 1 || len(g.resets[0].Steps) != 1 {
		t.Fatalf("Reset = %v; guest resets %+v", err, g.resets)
	}
	if err := e.Close(); err != nil || !g.closed || !f.closed {
		t.Fatalf("Close = %v; guest closed %v, connection closed %v", err, g.closed, f.closed)
	}
	if _, err := e.Info(ctx); !errors.Is(err, env.ErrClosed) {
		t.Fatalf("Info after Close: %v", err)
	}

	// A guest of another screen is not the desktop the server shows.
	_, err = newEnv(ctx, newFake(300, 100), Config{Addr: "desk:5901", Guest: &fakeGuest{screen: action.Size{W: 200, H: 100}}})
	if err == nil || !strings.Contains(err.Error(), "200x100") || !strings.Contains(err.Error(), "300x100") {
		t.Fatalf("a guest of another size: %v", err)
	}
}

func TestScreenshot(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		o      env.ShotOptions
		format string
		w, h   int
	}{
		{"png", env.ShotOptions{}, "png", 100, 50},
		{"jpeg", env.ShotOptions{JPEG: 80}, "jpeg", 100, 50},
		{"half", env.ShotOptions{Scale: 0.5}, "png", 50, 25},
		{"cursor", env.ShotOptions{Cursor: true}, "png", 100, 50},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(100, 50)
			e := attach(t, f, Config{})
			s, err := e.Screenshot(ctx, c.o)
			if err != nil {
				t.Fatal(err)
			}
			img, format, err := image.Decode(bytes.NewReader(s.Data))
			if err != nil || format != c.format || s.Format != c.format || img.Bounds().Dx() != c.w || img.Bounds().Dy() != c.h || s.Size != (action.Size{W: c.w, H: c.h}) {
				t.Fatalf("decoded %s %v %v; shot %s %+v", format, img.Bounds(), err, s.Format, s.Size)
			}
			if f.refreshes != 1 {
				t.Fatalf("%d refreshes; want one before every screenshot", f.refreshes)
			}
			if c.format == "png" && c.w == 100 {
				r, g, b, _ := img.At(0, 2).RGBA()
				if c.o.Cursor != (r>>8 != 255 || g>>8 != 0 || b>>8 != 0) {
					t.Fatalf("pixel (0,2) = %v %v %v: the framebuffer's red pixel, under the cursor only when drawn", r>>8, g>>8, b>>8)
				}
			}
		})
	}
	f := newFake(100, 50)
	e := attach(t, f, Config{})
	if _, err := e.Screenshot(ctx, env.ShotOptions{JPEG: 101}); err == nil {
		t.Fatal("JPEG quality 101 accepted")
	}
	if _, err := e.Screenshot(ctx, env.ShotOptions{Scale: 9}); !errors.Is(err, env.ErrBadAction) {
		t.Fatalf("scale 9: %v", err)
	}
}

func TestReset(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	mark := filepath.Join(dir, "reset")
	for _, c := range []struct {
		name    string
		cmd     string
		timeout time.Duration
		err     string
	}{
		{"no command: the operator resets", "", 0, ""},
		{"the command runs", "echo done > " + mark, 0, ""},
		{"a failing command names its status and output", "echo broken >&2; exit 3", 0, "exited 3: broken"},
		{"a command past its limit", "sleep 5", 50 * time.Millisecond, "ran past its limit of 50ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(mark)
			f := newFake(100, 50)
			var log bytes.Buffer
			e := attach(t, f, Config{ResetCommand: c.cmd, ResetTimeout: c.timeout, Log: &log})
			// The agent left a button and a key held: Reset lets go.
			if _, err := e.Do(ctx, []action.Action{{Kind: action.MouseDown, Point: pt(3, 3)}, {Kind: action.KeyDown, Keys: []string{"alt"}}}); err != nil {
				t.Fatal(err)
			}
			f.take()
			sleep := duration.Duration(time.Millisecond)
			err := e.Reset(ctx, env.Setup{Steps: []task.Step{{Sleep: &sleep}}})
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("Reset = %v; want %q", err, c.err)
			}
			if got := f.take(); !slices.Equal(got, []string{"key 0xffe9 up", "ptr 3,3 0000000"}) {
				t.Fatalf("events %v: want the held key and button released", got)
			}
			if _, statErr := os.Stat(mark); (c.cmd != "" && c.err == "") != (statErr == nil) {
				t.Fatalf("reset command ran: %v", statErr)
			}
		})
	}
}

func TestClosedConnection(t *testing.T) {
	f := newFake(100, 50)
	e := attach(t, f, Config{})
	f.err = errors.New("connection reset by peer")
	close(f.done)
	_, err := e.Do(context.Background(), []action.Action{{Kind: action.Move, Point: pt(1, 1)}})
	if !errors.Is(err, env.ErrClosed) || env.AgentsFault(err) || !strings.Contains(err.Error(), "connection reset by peer") {
		t.Fatalf("Do on a dead connection: %v", err)
	}
	if _, err := e.Screenshot(context.Background(), env.ShotOptions{}); !errors.Is(err, env.ErrClosed) {
		t.Fatalf("Screenshot on a dead connection: %v", err)
	}
}

func TestParseAddr(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"localhost:5901", "localhost:5901", ""},
		{"vnc://10.0.0.5:5900", "10.0.0.5:5900", ""},
		{"vnc://desk", "desk:5900", ""},
		{"desk", "desk:5900", ""},
		{"[::1]:5902", "[::1]:5902", ""},
		{"vnc://[::1]", "[::1]:5900", ""},
		{"vnc://desk:5901/", "desk:5901", ""},
		{"", "", "empty"},
		{"vnc://", "", "empty"},
		{":5900", "", "no host"},
		{"desk:0", "", "port \"0\""},
		{"desk:70000", "", "port"},
		{"desk:59x", "", "port"},
		{"desk:+5900", "", "port"},
		{"user@desk:5900", "", "not HOST:PORT"},
		{"desk:5900/path", "", "not HOST:PORT"},
		{"::1", "", "not HOST:PORT"},
		{"[::1", "", "not HOST:PORT"},
		{"desk]", "", "bracket"},
	} {
		got, err := ParseAddr(c.in)
		if c.err == "" && (err != nil || got != c.want) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseAddr(%q) = %q, %v; want %q, error %q", c.in, got, err, c.want, c.err)
		}
	}
}

func FuzzParseAddr(f *testing.F) {
	for _, s := range []string{"localhost:5901", "vnc://desk", "[::1]:5902", "desk:0", "a:b:c", "[", "vnc://[::1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseAddr(s)
		if err != nil {
			if got != "" {
				t.Fatalf("ParseAddr(%q) = %q with error %v", s, got, err)
			}
			return
		}
		// An accepted address is HOST:PORT and parses again to itself.
		again, err := ParseAddr(got)
		if err != nil || again != got {
			t.Fatalf("ParseAddr(%q) = %q, which parses again to %q, %v", s, got, again, err)
		}
		if strings.ContainsAny(got, "/?#@ \t\r\n") {
			t.Fatalf("ParseAddr(%q) = %q holds a character no address has", s, got)
		}
	})
}

func TestReadPasswordFile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, content string
		mode          os.FileMode
		want, err     string
		warned        bool
	}{
		{"one line", "s3cret\n", 0o600, "s3cret", "", false},
		{"no line break", "s3cret", 0o600, "s3cret", "", false},
		{"CRLF", "s3cret\r\nignored\r\n", 0o600, "s3cret", "", false},
		{"spaces kept", " a b \n", 0o600, " a b ", "", false},
		{"empty", "", 0o600, "", "has no password on its first line", false},
		{"empty first line", "\nsecond\n", 0o600, "", "has no password", false},
		{"readable by others", "pw\n", 0o644, "pw", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if err := os.WriteFile(p, []byte(c.content), c.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, c.mode)
			var warn bytes.Buffer
			got, err := ReadPasswordFile(p, &warn)
			if c.err == "" && (err != nil || got != c.want) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), p)) {
				t.Fatalf("ReadPasswordFile = %q, %v; want %q, error %q", got, err, c.want, c.err)
			}
			if c.warned != strings.Contains(warn.String(), "readable by other users") {
				t.Fatalf("warning %q", warn.String())
			}
		})
	}
	if _, err := ReadPasswordFile(filepath.Join(dir, "missing"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}

func TestDialFailureClosesTheGuest(t *testing.T) {
	for _, addr := range []string{"desk:0", "127.0.0.1:1"} {
		g := &fakeGuest{screen: action.Size{W: 10, H: 10}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := Dial(ctx, Config{Addr: addr, Guest: g, Timeout: 5 * time.Second})
		cancel()
		if err == nil || !g.closed {
			t.Fatalf("Dial(%s) = %v; guest closed %v: want an error and the guest closed", addr, err, g.closed)
		}
	}
}
