package x11

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// painter is a second client that draws on the root window.
type painter struct {
	x    *xgb.Conn
	root xproto.Window
	gc   xproto.Gcontext
}

func newPainter(t *testing.T, display string) *painter {
	t.Helper()
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Close)
	p := &painter{x: x, root: xproto.Setup(x).DefaultScreen(x).Root}
	if p.gc, err = xproto.NewGcontextId(x); err != nil {
		t.Fatal(err)
	}
	if err := xproto.CreateGCChecked(x, p.gc, xproto.Drawable(p.root), xproto.GcForeground, []uint32{0x336699}).Check(); err != nil {
		t.Fatal(err)
	}
	return p
}

// fill draws a rectangle and waits until the server has drawn it.
func (p *painter) fill(x, y, w, h int) error {
	xproto.PolyFillRectangle(p.x, xproto.Drawable(p.root), p.gc,
		[]xproto.Rectangle{{X: int16(x), Y: int16(y), Width: uint16(w), Height: uint16(h)}})
	_, err := xproto.GetInputFocus(p.x).Reply()
	return err
}

// every draws rectangles of size w x h every period (0: one after the
// other) until the test ends.
func (p *painter) every(t *testing.T, period time.Duration, w, h int) {
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(period):
				if p.fill(10+i%20, 10, w, h) != nil {
					return
				}
			}
		}
	}()
}

func watchDamage(t *testing.T, display string) *Damage {
	t.Helper()
	m, err := WatchDamage(display, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// waitCount polls the monitor's counts until ok accepts them.
func waitCount(t *testing.T, m *Damage, ok func(counted, ignored int) bool) {
	t.Helper()
	for range 1000 {
		if ok(m.Counts()) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	c, i := m.Counts()
	t.Fatalf("the monitor never read the drawing (%d counted, %d ignored)", c, i)
}

var testSettle = SettleOptions{Quiet: 100 * time.Millisecond, Cap: 2 * time.Second}

func TestSettleQuietScreen(t *testing.T) {
	m := watchDamage(t, xvfb(t))
	got, err := m.Settle(context.Background(), time.Now(), testSettle)
	if err != nil {
		t.Fatal(err)
	}
	if got.Capped || got.Changed {
		t.Fatalf("a screen nobody draws on: %+v, want neither capped nor changed", got)
	}
}

func TestSettleAnimationHitsCap(t *testing.T) {
	display := xvfb(t)
	m := watchDamage(t, display)
	newPainter(t, display).every(t, 0, 50, 50)
	// A quiet period long enough that no stall of a loaded machine passes
	// for one.
	o := SettleOptions{Quiet: 500 * time.Millisecond, Cap: 1500 * time.Millisecond}
	got, err := m.Settle(context.Background(), time.Now(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Capped || !got.Changed || got.Waited < o.Cap {
		t.Fatalf("a screen redrawn without pause: %+v, want capped after %s", got, o.Cap)
	}
	if counted, _ := m.Counts(); counted == 0 {
		t.Fatal("no rectangle counted")
	}
}

// TestSettleIgnoresCaret blinks a caret far faster than any toolkit does:
// the screen counts as settled all the same.
func TestSettleIgnoresCaret(t *testing.T) {
	display := xvfb(t)
	m := watchDamage(t, display)
	p := newPainter(t, display)
	p.every(t, 20*time.Millisecond, 2, 18)
	waitCount(t, m, func(_, ignored int) bool { return ignored > 0 })
	got, err := m.Settle(context.Background(), time.Now(), testSettle)
	if err != nil {
		t.Fatal(err)
	}
	if got.Capped || got.Changed {
		t.Fatalf("a blinking caret: %+v, want settled", got)
	}
	if counted, _ := m.Counts(); counted != 0 {
		t.Fatalf("%d caret rectangles counted", counted)
	}
}

func TestCaretSized(t *testing.T) {
	tests := []struct {
		w, h  uint16
		caret bool
	}{
		{1, 18, true}, {3, 18, true}, {2, 48, true}, {18, 2, true}, // carets, an underline cursor
		{4, 18, false},  // a narrow glyph
		{2, 49, false},  // a vertical rule
		{200, 1, false}, // a horizontal line
		{638, 19, false}, {50, 50, false},
	}
	for _, tc := range tests {
		if got := caretSized(xproto.Rectangle{Width: tc.w, Height: tc.h}); got != tc.caret {
			t.Errorf("caretSized(%dx%d) = %v, want %v", tc.w, tc.h, got, tc.caret)
		}
	}
}

// TestSettleWaitsForLateDrawing: an application that draws its answer
// only after a while is waited for.
func TestSettleWaitsForLateDrawing(t *testing.T) {
	display := xvfb(t)
	m := watchDamage(t, display)
	p := newPainter(t, display)
	since := time.Now()
	drawn := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		drawn <- p.fill(100, 100, 40, 20)
	}()
	o := testSettle
	o.React = 1500 * time.Millisecond
	got, err := m.Settle(context.Background(), since, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-drawn; err != nil {
		t.Fatal(err)
	}
	if !got.Changed || got.Capped {
		t.Fatalf("one late drawing: %+v, want changed and settled", got)
	}
}

// TestSettleCountsDrawingDuringTheActions: drawing between since and the
// call is the answer; Settle then waits only for the quiet period.
func TestSettleCountsDrawingDuringTheActions(t *testing.T) {
	display := xvfb(t)
	m := watchDamage(t, display)
	since := time.Now()
	if err := newPainter(t, display).fill(5, 5, 30, 30); err != nil {
		t.Fatal(err)
	}
	waitCount(t, m, func(counted, _ int) bool { return counted > 0 })
	o := testSettle
	o.React = o.Cap // would wait to the cap for a first change
	got, err := m.Settle(context.Background(), since, o)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Changed || got.Capped {
		t.Fatalf("drawing before the call: %+v, want changed and settled", got)
	}
}

func TestSettleStopsWithContext(t *testing.T) {
	display := xvfb(t)
	m := watchDamage(t, display)
	newPainter(t, display).every(t, 0, 50, 50)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := testSettle
	o.Cap = time.Hour
	if _, err := m.Settle(ctx, time.Now(), o); !errors.Is(err, context.Canceled) {
		t.Fatalf("Settle with a cancelled context: %v", err)
	}
}

// TestDamageEndsWithItsConnection: when the server drops the monitor's
// connection (here another client kills it, as when the server exits),
// Settle says so and the reader has stopped.
func TestDamageEndsWithItsConnection(t *testing.T) {
	display := xvfb(t)
	m := watchDamage(t, display)
	p := newPainter(t, display)
	if err := xproto.KillClientChecked(p.x, uint32(m.id)).Check(); err != nil {
		t.Fatal(err)
	}
	<-m.done
	o := testSettle
	o.Cap = time.Hour
	if _, err := m.Settle(context.Background(), time.Now(), o); !errors.Is(err, ErrClosed) {
		t.Fatalf("Settle after the connection closed: %v, want ErrClosed", err)
	}
}

// TestDamageCloseLeavesNoGoroutines: Close ends the reader and xgb's own
// goroutines.
func TestDamageCloseLeavesNoGoroutines(t *testing.T) {
	display := xvfb(t)
	p := newPainter(t, display)
	before := runtime.NumGoroutine()
	m, err := WatchDamage(display, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.fill(0, 0, 100, 100); err != nil {
		t.Fatal(err)
	}
	m.Close()
	n := runtime.NumGoroutine()
	for range 500 { // xgb's goroutines end soon after the connection
		if n = runtime.NumGoroutine(); n <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	t.Fatalf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
}

func TestSettleOptionsValidate(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		o  SettleOptions
		ok bool
	}{
		{SettleOptions{Quiet: 150 * ms, React: 500 * ms, Cap: 2000 * ms}, true},
		{SettleOptions{Quiet: 150 * ms, Cap: 150 * ms}, true},
		{SettleOptions{Quiet: 0, Cap: time.Second}, false},
		{SettleOptions{Quiet: 150 * ms, React: -ms, Cap: time.Second}, false},
		{SettleOptions{Quiet: 150 * ms, Cap: 100 * ms}, false},
		{SettleOptions{Quiet: 150 * ms, React: 2 * time.Second, Cap: time.Second}, false},
	}
	for _, tc := range tests {
		if err := tc.o.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate() = %v, want ok %v", tc.o, err, tc.ok)
		}
	}
}
