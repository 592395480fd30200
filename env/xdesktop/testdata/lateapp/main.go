// Command lateapp is a test application that answers typing late: a
// while after each key press it draws the typed character, 8 times the
// size of basicfont's 7x13 face, in black at (20, 20) of its white
// window titled "Late typing".
//
//	lateapp [-delay 400ms]
package main

import (
	"flag"
	"fmt"
	"image"
	"os"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Scale and Origin place the glyph in the window.
const (
	Scale   = 8
	OriginX = 20
	OriginY = 20
)

func main() {
	delay := flag.Duration("delay", 400*time.Millisecond, "how long after a key press the character is drawn")
	flag.Parse()
	if err := run(*delay); err != nil {
		fmt.Fprintln(os.Stderr, "lateapp:", err)
		os.Exit(1)
	}
}

func run(delay time.Duration) error {
	x, err := xgb.NewConn()
	if err != nil {
		return err
	}
	defer x.Close()
	setup := xproto.Setup(x)
	scr := setup.DefaultScreen(x)
	win, err := xproto.NewWindowId(x)
	if err != nil {
		return err
	}
	mask := uint32(xproto.EventMaskKeyPress | xproto.EventMaskExposure | xproto.EventMaskStructureNotify)
	if err := xproto.CreateWindowChecked(x, scr.RootDepth, win, scr.Root, 0, 0, 400, 300, 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwEventMask,
		[]uint32{scr.WhitePixel, mask}).Check(); err != nil {
		return err
	}
	title := "Late typing"
	xproto.ChangeProperty(x, xproto.PropModeReplace, win, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(title)), []byte(title))
	if a, err := xproto.InternAtom(x, false, 12, "_NET_WM_NAME").Reply(); err == nil {
		if u, err := xproto.InternAtom(x, false, 11, "UTF8_STRING").Reply(); err == nil {
			xproto.ChangeProperty(x, xproto.PropModeReplace, win, a.Atom, u.Atom, 8, uint32(len(title)), []byte(title))
		}
	}
	if a, err := xproto.InternAtom(x, false, 11, "_NET_WM_PID").Reply(); err == nil {
		pid := uint32(os.Getpid())
		xproto.ChangeProperty(x, xproto.PropModeReplace, win, a.Atom, xproto.AtomCardinal, 32, 1,
			[]byte{byte(pid), byte(pid >> 8), byte(pid >> 16), byte(pid >> 24)})
	}
	gc, err := xproto.NewGcontextId(x)
	if err != nil {
		return err
	}
	if err := xproto.CreateGCChecked(x, gc, xproto.Drawable(win), xproto.GcForeground, []uint32{scr.BlackPixel}).Check(); err != nil {
		return err
	}
	if err := xproto.MapWindowChecked(x, win).Check(); err != nil {
		return err
	}

	var mu sync.Mutex
	var shown rune // the character drawn, 0 for none
	draw := func() {
		mu.Lock()
		r := shown
		mu.Unlock()
		xproto.ClearArea(x, false, win, 0, 0, 0, 0)
		if rects := Glyph(r); len(rects) > 0 {
			xproto.PolyFillRectangle(x, xproto.Drawable(win), gc, rects)
		}
		xproto.GetInputFocus(x).Reply() // flush
	}
	keysyms, err := xproto.GetKeyboardMapping(x, setup.MinKeycode, byte(setup.MaxKeycode-setup.MinKeycode+1)).Reply()
	if err != nil {
		return err
	}
	per := int(keysyms.KeysymsPerKeycode)
	// A window manager still starting may drop the request to map the
	// window: ask again until the window is mapped.
	mapped, isMapped := make(chan struct{}), false
	go func() {
		for {
			select {
			case <-mapped:
				return
			case <-time.After(500 * time.Millisecond):
				xproto.MapWindow(x, win)
			}
		}
	}()
	for {
		ev, xerr := x.WaitForEvent()
		if ev == nil && xerr == nil {
			return nil // the server went away
		}
		switch e := ev.(type) {
		case xproto.MapNotifyEvent:
			if e.Window == win && !isMapped {
				close(mapped)
				isMapped = true
			}
		case xproto.ExposeEvent:
			if e.Count == 0 {
				draw()
			}
		case xproto.MappingNotifyEvent:
			if k, err := xproto.GetKeyboardMapping(x, setup.MinKeycode, byte(setup.MaxKeycode-setup.MinKeycode+1)).Reply(); err == nil {
				keysyms, per = k, int(k.KeysymsPerKeycode)
			}
		case xproto.KeyPressEvent:
			i := (int(e.Detail) - int(setup.MinKeycode)) * per
			if i < 0 || i >= len(keysyms.Keysyms) {
				continue
			}
			sym := rune(keysyms.Keysyms[i])
			if sym < 0x20 || sym > 0x7e {
				continue // not a printable ASCII character
			}
			time.AfterFunc(delay, func() {
				mu.Lock()
				shown = sym
				mu.Unlock()
				draw()
			})
		}
	}
}

// Glyph is the rectangles, in window coordinates, that draw r.
func Glyph(r rune) []xproto.Rectangle {
	if r == 0 {
		return nil
	}
	face := basicfont.Face7x13
	dr, mask, mp, _, ok := face.Glyph(fixed.P(0, face.Ascent), r)
	if !ok {
		return nil
	}
	var out []xproto.Rectangle
	for y := dr.Min.Y; y < dr.Max.Y; y++ {
		for x := dr.Min.X; x < dr.Max.X; x++ {
			p := mp.Add(image.Pt(x-dr.Min.X, y-dr.Min.Y))
			if _, _, _, a := mask.At(p.X, p.Y).RGBA(); a >= 0x8000 {
				out = append(out, xproto.Rectangle{X: int16(OriginX + x*Scale), Y: int16(OriginY + y*Scale), Width: Scale, Height: Scale})
			}
		}
	}
	return out
}
