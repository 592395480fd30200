// Package x11 is a pure-Go X client for driving a desktop: screenshots with
// GetImage, input with the XTEST extension (pointer, buttons, wheel, keys,
// and any Unicode text through a spare keycode), and the window list from
// the window manager's EWMH properties.
package x11

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

func init() {
	// xgb logs "Could not get authority info" for servers without an auth
	// file; the desktop reports its own errors.
	xgb.Logger = log.New(io.Discard, "", 0)
}

// Conn is a connection to one X display. It is safe for concurrent use.
type Conn struct {
	mu      sync.Mutex
	x       *xgb.Conn
	root    xproto.Window
	w, h    int
	depth   byte
	keys    *keymap
	display string
	atoms   map[string]xproto.Atom
	shm     *shmBuf // nil when MIT-SHM is not available
	server  string
}

// DialCookie connects to the local display (":5") presenting cookie as
// its MIT-MAGIC-COOKIE-1, and checks that XTEST is available.
//
// xgb has no way to be given credentials: it reads $XAUTHORITY, which is
// the whole process's and would have to change under every other
// goroutine for each desktop. So the socket is dialled here and xgb's
// connection setup request is rewritten on its way out to carry the
// cookie, whatever xgb found to put there (see cookieConn). (xgb still
// reads $XAUTHORITY for a connection it did not dial, but only entries
// without a display number match it, and what it finds is replaced.)
func DialCookie(display string, cookie []byte) (*Conn, error) {
	path, err := socketPath(display)
	if err != nil {
		return nil, err
	}
	nc, err := net.DialTimeout("unix", path, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connect to X display %s: %w", display, err)
	}
	x, err := xgb.NewConnNet(&cookieConn{Conn: nc, name: "MIT-MAGIC-COOKIE-1", data: cookie})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("connect to X display %s: %w", display, err)
	}
	return setup(x, display)
}

// socketPath is the Unix socket of a local display such as ":5" or ":5.0".
func socketPath(display string) (string, error) {
	host, num, ok := strings.Cut(display, ":")
	if i := strings.IndexByte(num, '.'); i >= 0 {
		num = num[:i]
	}
	if _, err := strconv.ParseUint(num, 10, 16); !ok || err != nil || host != "" && host != "unix" {
		return "", fmt.Errorf("X display %q is not a local display such as :5", display)
	}
	return "/tmp/.X11-unix/X" + num, nil
}

// cookieConn puts its credentials into the connection setup request, the
// first thing a client writes (X11 protocol, "Connection Setup"): byte
// order, protocol version, the lengths of the authorisation name and data,
// then both, each padded to 4 bytes.
type cookieConn struct {
	net.Conn
	name string
	data []byte
	sent bool // written once, before xgb starts its goroutines
}

func (c *cookieConn) Write(p []byte) (int, error) {
	if c.sent {
		return c.Conn.Write(p)
	}
	c.sent = true
	if len(p) < 12 || p[0] != 'l' && p[0] != 'B' {
		return 0, fmt.Errorf("unexpected X connection setup request (%d bytes)", len(p))
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if p[0] == 'B' {
		order = binary.BigEndian
	}
	req := make([]byte, 12, 12+pad4(len(c.name))+pad4(len(c.data)))
	copy(req, p[:6]) // byte order and protocol version
	order.PutUint16(req[6:], uint16(len(c.name)))
	order.PutUint16(req[8:], uint16(len(c.data)))
	req = append(req, c.name...)
	req = append(req, make([]byte, pad4(len(c.name))-len(c.name))...)
	req = append(req, c.data...)
	req = append(req, make([]byte, pad4(len(c.data))-len(c.data))...)
	if _, err := c.Conn.Write(req); err != nil {
		return 0, err
	}
	return len(p), nil
}

func pad4(n int) int { return (n + 3) &^ 3 }

// setup finishes a connection: XTEST, the screen, the keymap, MIT-SHM.
func setup(x *xgb.Conn, display string) (*Conn, error) {
	var err error
	err = initExt(x, "XTEST")
	if err != nil {
		x.Close()
		return nil, fmt.Errorf("X display %s has no XTEST extension: %w", display, err)
	}
	setup := xproto.Setup(x)
	scr := setup.DefaultScreen(x)
	c := &Conn{x: x, root: scr.Root, w: int(scr.WidthInPixels), h: int(scr.HeightInPixels),
		depth: scr.RootDepth, display: display, atoms: map[string]xproto.Atom{},
		server: fmt.Sprintf("%s %d", setup.Vendor, setup.ReleaseNumber)}
	if c.keys, err = loadKeymap(x, setup); err != nil {
		x.Close()
		return nil, err
	}
	if c.depth == 24 || c.depth == 32 {
		_ = c.enableSHM() // GetImage is the fallback
	}
	return c, nil
}

// Close ends the connection.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys.restore(c.x)
	c.closeSHM()
	c.x.Close()
	return nil
}

// Server names the X server: vendor and release number.
func (c *Conn) Server() string { return c.server }

// Size is the screen size in pixels.
func (c *Conn) Size() (w, h int) { return c.w, c.h }

// ErrClosed is returned after the X server went away.
var ErrClosed = errors.New("the X server closed the connection")

// Capture reads the whole screen into an RGBA image.
func (c *Conn) Capture() (*image.RGBA, error) {
	img := image.NewRGBA(image.Rect(0, 0, c.w, c.h))
	return img, c.CaptureInto(img)
}

// CaptureInto reads the screen into img, which must be the screen's size.
// The screen is read in bands so that no reply exceeds the server's limits.
func (c *Conn) CaptureInto(img *image.RGBA) error {
	if img.Rect.Dx() != c.w || img.Rect.Dy() != c.h {
		return fmt.Errorf("capture into a %v image, the screen is %dx%d", img.Rect.Size(), c.w, c.h)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.depth != 24 && c.depth != 32 {
		return fmt.Errorf("screen depth %d is not supported (24 or 32)", c.depth)
	}
	if c.shm != nil {
		return c.captureSHM(img.Pix, img.Stride)
	}
	return c.captureGetImage(img)
}

// UsesSHM reports whether captures go through MIT-SHM.
func (c *Conn) UsesSHM() bool { return c.shm != nil }

// captureGetImage reads the screen with GetImage requests.
func (c *Conn) captureGetImage(img *image.RGBA) error {
	const band = 256
	cookies := make([]xproto.GetImageCookie, 0, c.h/band+1)
	for y := 0; y < c.h; y += band {
		hh := min(band, c.h-y)
		cookies = append(cookies, xproto.GetImage(c.x, xproto.ImageFormatZPixmap, xproto.Drawable(c.root),
			0, int16(y), uint16(c.w), uint16(hh), 0xffffffff))
	}
	for i, ck := range cookies {
		r, err := ck.Reply()
		if err != nil {
			return fmt.Errorf("read the screen: %w", err)
		}
		y0 := i * band
		hh := min(band, c.h-y0)
		if len(r.Data) < c.w*hh*4 {
			return fmt.Errorf("read the screen: short image (%d bytes)", len(r.Data))
		}
		// ZPixmap at depth 24/32 is BGRX in little-endian order.
		dst := img.Pix[y0*img.Stride:]
		src := r.Data
		for j := 0; j < c.w*hh; j++ {
			s, d := src[4*j:4*j+4:4*j+4], dst[4*j:4*j+4:4*j+4]
			d[0], d[1], d[2], d[3] = s[2], s[1], s[0], 0xff
		}
	}
	return nil
}

// Event types of XTEST's FakeInput.
const (
	keyPress      = 2
	keyRelease    = 3
	buttonPress   = 4
	buttonRelease = 5
	motionNotify  = 6
)

func (c *Conn) fake(typ, detail byte, x, y int16) error {
	return xtest.FakeInputChecked(c.x, typ, detail, 0, c.root, x, y, 0).Check()
}

// Move puts the pointer at (x, y).
func (c *Conn) Move(x, y int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fake(motionNotify, 0, int16(x), int16(y))
}

// Pointer returns the pointer's position.
func (c *Conn) Pointer() (x, y int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, err := xproto.QueryPointer(c.x, c.root).Reply()
	if err != nil {
		return 0, 0, err
	}
	return int(r.RootX), int(r.RootY), nil
}

// Button presses (down) or releases a pointer button: 1 left, 2 middle,
// 3 right, 4/5 wheel up/down, 6/7 wheel left/right.
func (c *Conn) Button(button byte, down bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := byte(buttonRelease)
	if down {
		t = buttonPress
	}
	return c.fake(t, button, 0, 0)
}

// Sync waits until the server has processed every request sent so far.
func (c *Conn) Sync() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := xproto.GetInputFocus(c.x).Reply()
	return err
}

// KeySym presses (down) or releases the key that produces sym, holding
// shift for a shifted symbol. A symbol absent from the keymap is bound to
// a spare keycode first.
func (c *Conn) KeySym(sym xproto.Keysym, down bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	code, shift, err := c.keys.lookup(c.x, sym)
	if err != nil {
		return err
	}
	if down {
		if shift {
			if err := c.fake(keyPress, byte(c.keys.shift), 0, 0); err != nil {
				return err
			}
		}
		return c.fake(keyPress, byte(code), 0, 0)
	}
	if err := c.fake(keyRelease, byte(code), 0, 0); err != nil {
		return err
	}
	if shift {
		return c.fake(keyRelease, byte(c.keys.shift), 0, 0)
	}
	return nil
}

// TypeRune presses and releases the key for r.
func (c *Conn) TypeRune(r rune) error {
	if r == utf8.RuneError || r < 0x20 && r != '\n' && r != '\t' && r != '\r' {
		return fmt.Errorf("cannot type the control character %U", r)
	}
	sym := RuneKeysym(r)
	if err := c.KeySym(sym, true); err != nil {
		return err
	}
	return c.KeySym(sym, false)
}
