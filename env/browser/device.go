package browser

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unicode"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/proctor-eval/proctor/action"
)

// device is the active tab's pointer and keyboard as CDP input events.
// CDP keeps no pointer or modifier state of its own: the device keeps the
// pointer's position, the buttons and modifiers held, and counts the
// clicks of a double or triple click (a press near the last one, soon
// after it, has the next click count).
type device struct {
	b *Browser

	mu      sync.Mutex
	x, y    int
	buttons int64 // input.MouseButton bits held: 1 left, 2 right, 4 middle
	mods    kb.Modifier
	last    struct {
		at    time.Time
		x, y  int
		b     int
		count int64
	}
	// ctx bounds the events of the action being performed (set by Do).
	ctx context.Context
}

// multiClick is how soon and how near a press must follow the last one to
// count as its double (or triple) click.
const (
	multiClickTime = 500 * time.Millisecond
	multiClickDist = 4
)

// reset forgets the state of the last episode.
func (d *device) reset() {
	d.mu.Lock()
	d.x, d.y, d.buttons, d.mods = 0, 0, 0, 0
	d.last.count = 0
	d.mu.Unlock()
}

func (d *device) Size() action.Size { return d.b.size() }

func (d *device) Pointer() (int, int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.x, d.y, nil
}

// context is the context of the action being performed.
func (d *device) context() context.Context {
	if d.ctx == nil {
		return context.Background()
	}
	return d.ctx
}

// send dispatches one input event in the active tab.
func send[P any, R any](d *device, c cdp.Command[P, R], p P) error {
	ctx := d.context()
	pctx, err := d.b.page(ctx)
	if err != nil {
		return err
	}
	// An event that opens a dialog (a click on a button that confirms)
	// gets its reply once the dialog is answered: it is done when the
	// dialog opens.
	opened := d.b.dialogOpened()
	done := make(chan error, 1)
	go func() {
		done <- chromedp.Do(pctx, chromedp.Func(func(_ context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, c, p)
			return err
		}))
	}()
	select {
	case err := <-done:
		return err
	case <-opened:
		return nil
	}
}

// rawMouseEvent is Input.dispatchMouseEvent with its parameters as an
// object.
var rawMouseEvent = cdp.Command[map[string]any, cdp.Empty]{Method: "Input.dispatchMouseEvent"}

// mouseButton is the CDP button of an X button number, with its bit.
func mouseButton(n int) (input.MouseButton, int64) {
	switch n {
	case 2:
		return input.MouseButtonMiddle, 4
	case 3:
		return input.MouseButtonRight, 2
	}
	return input.MouseButtonLeft, 1
}

func (d *device) Move(x, y int) error {
	d.mu.Lock()
	d.x, d.y = x, y
	if d.b.dialogOpen() != nil {
		d.mu.Unlock()
		return nil // the page under a dialog takes no input
	}
	p := input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: float64(x), Y: float64(y),
		Buttons: d.buttons, Modifiers: int64(d.mods), Button: input.MouseButtonNone}
	if d.buttons&1 != 0 {
		p.Button = input.MouseButtonLeft
	}
	d.mu.Unlock()
	return send(d, input.DispatchMouseEvent, p)
}

// Button presses or releases a button; 4 to 7 are the wheel's notches,
// one notch a scroll of action.BrowserNotch pixels.
func (d *device) Button(n int, down bool) error {
	if d.b.dialogOpen() != nil {
		if !down || n != 1 {
			return nil
		}
		x, y, _ := d.Pointer()
		_, err := d.b.clickDialog(d.context(), x, y)
		return err
	}
	d.mu.Lock()
	x, y, mods := d.x, d.y, int64(d.mods)
	if n >= 4 {
		d.mu.Unlock()
		if !down {
			return nil
		}
		dx, dy := 0.0, 0.0
		switch n {
		case 4:
			dy = -action.BrowserNotch
		case 5:
			dy = action.BrowserNotch
		case 6:
			dx = -action.BrowserNotch
		case 7:
			dx = action.BrowserNotch
		}
		// The protocol wants both deltas, and the generated parameters
		// leave a zero one out: the event goes as a plain object.
		return send(d, rawMouseEvent, map[string]any{"type": "mouseWheel", "x": x, "y": y, "deltaX": dx, "deltaY": dy, "modifiers": mods})
	}
	button, bit := mouseButton(n)
	typ := input.DispatchMouseEventTypeMouseReleased
	if down {
		typ = input.DispatchMouseEventTypeMousePressed
		now := time.Now()
		if d.last.b == n && now.Sub(d.last.at) < multiClickTime && abs(x-d.last.x) <= multiClickDist && abs(y-d.last.y) <= multiClickDist {
			d.last.count++
		} else {
			d.last.count = 1
		}
		d.last.at, d.last.x, d.last.y, d.last.b = now, x, y, n
		d.buttons |= bit
	} else {
		d.buttons &^= bit
		d.last.at = time.Now()
	}
	p := input.DispatchMouseEventParams{Type: typ, X: float64(x), Y: float64(y), Button: button,
		Buttons: d.buttons, ClickCount: d.last.count, Modifiers: mods}
	d.mu.Unlock()
	return send(d, input.DispatchMouseEvent, p)
}

// Key presses or releases the key of an X keysym, with the modifiers
// held; a printable key types its character unless Ctrl, Alt or Meta is
// held (then it is a shortcut).
func (d *device) Key(sym uint32, down bool) error {
	if dl := d.b.dialogOpen(); dl != nil && down {
		return d.b.dialogKey(sym)
	}
	r, mod, ok := keysymRune(sym)
	if !ok {
		return fmt.Errorf("the key %#x has no DOM key", sym)
	}
	d.mu.Lock()
	if mod != 0 {
		if down {
			d.mods |= mod
		} else {
			d.mods &^= mod
		}
	}
	mods := d.mods
	d.mu.Unlock()
	if mods&kb.ModifierShift != 0 && unicode.IsLower(r) {
		r = unicode.ToUpper(r)
	}
	evs := kb.Encode(r)
	shortcut := mods&(kb.ModifierCtrl|kb.ModifierAlt|kb.ModifierMeta) != 0
	for _, ev := range evs {
		if (ev.Type == kb.KeyDown || ev.Type == kb.KeyChar) != down {
			continue
		}
		if ev.Type == kb.KeyChar && shortcut {
			continue
		}
		p := *ev
		p.Modifiers = int64(mods)
		if err := send(d, input.DispatchKeyEvent, p); err != nil {
			return err
		}
	}
	return nil
}

// TypeRune types a character: as its key where the US layout has one,
// else as inserted text (as an input method does).
func (d *device) TypeRune(r rune) error {
	if d.b.dialogOpen() != nil {
		return d.b.dialogType(r)
	}
	if r == '\n' || r == '\t' || r < 0x80 && unicode.IsPrint(r) {
		for _, ev := range kb.Encode(r) {
			if err := send(d, input.DispatchKeyEvent, *ev); err != nil {
				return err
			}
		}
		return nil
	}
	return send(d, input.InsertText, input.InsertTextParams{Text: string(r)})
}

// keysymRune maps an X keysym to the rune chromedp's kb package encodes,
// with the modifier the key is, if any.
func keysymRune(sym uint32) (rune, kb.Modifier, bool) {
	if sym >= 0x20 && sym <= 0x7e || sym >= 0xa0 && sym <= 0xff {
		return rune(sym), 0, true
	}
	if sym&0xff000000 == 0x01000000 {
		return rune(sym & 0xffffff), 0, true
	}
	if sym >= 0xffbe && sym <= 0xffc9 { // F1..F12
		return []rune(kb.F1)[0] + rune(sym-0xffbe), 0, true
	}
	special := map[uint32]struct {
		key string
		mod kb.Modifier
	}{
		0xff08: {kb.Backspace, 0}, 0xff09: {kb.Tab, 0}, 0xff0d: {kb.Enter, 0}, 0xff8d: {kb.Enter, 0},
		0xff1b: {kb.Escape, 0}, 0xffff: {kb.Delete, 0}, 0xff63: {kb.Insert, 0},
		0xff50: {kb.Home, 0}, 0xff57: {kb.End, 0}, 0xff55: {kb.PageUp, 0}, 0xff56: {kb.PageDown, 0},
		0xff51: {kb.ArrowLeft, 0}, 0xff52: {kb.ArrowUp, 0}, 0xff53: {kb.ArrowRight, 0}, 0xff54: {kb.ArrowDown, 0},
		0xffe1: {kb.Shift, kb.ModifierShift}, 0xffe2: {kb.Shift, kb.ModifierShift},
		0xffe3: {kb.Control, kb.ModifierCtrl}, 0xffe4: {kb.Control, kb.ModifierCtrl},
		0xffe9: {kb.Alt, kb.ModifierAlt}, 0xffea: {kb.Alt, kb.ModifierAlt},
		0xffe7: {kb.Meta, kb.ModifierMeta}, 0xffe8: {kb.Meta, kb.ModifierMeta},
		0xffeb: {kb.Meta, kb.ModifierMeta}, 0xffec: {kb.Meta, kb.ModifierMeta},
		0xffe5: {kb.CapsLock, 0}, 0xff7f: {kb.NumLock, 0}, 0xff14: {kb.ScrollLock, 0},
		0xff13: {kb.Pause, 0}, 0xff61: {kb.PrintScreen, 0}, 0xff67: {kb.ContextMenu, 0},
	}
	if k, ok := special[sym]; ok {
		return []rune(k.key)[0], k.mod, true
	}
	return 0, 0, false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
