// Package rfb is a client for the Remote Framebuffer protocol (RFC 6143),
// the protocol VNC servers speak. It connects to a server, keeps a copy of
// the server's framebuffer current in a background goroutine and sends
// pointer, key and clipboard events.
//
// Scope: protocol versions 3.3, 3.7 and 3.8 (an offer above 3.8, such as
// Apple's 3.889, is answered with 3.8); security types None (1) and VNC
// Authentication (2); the pixel format is always set to 32 bits per pixel,
// true colour, little-endian; the encodings asked for are ZRLE (16),
// CopyRect (1) and Raw (0) with the pseudo-encodings DesktopSize (-223),
// ExtendedDesktopSize (-308) and LastRect (-224). Colour maps are ignored,
// Bell is accepted and dropped, ServerCutText is kept (see Clipboard).
//
// The package is written here rather than taken from a Go module: the Go
// RFB clients considered (mitchellh/go-vnc, kward/go-vnc,
// amitbet/vnc2video, openai/go-vncdriver and their forks) are archived or
// no longer maintained, and the subset of the protocol a client needs is
// small enough to keep every read bounded the way this package requires.
//
// Dial returns once the whole framebuffer has arrived. Refresh asks for
// the whole framebuffer again and returns once updates that began after
// the call cover the screen; Snapshot copies the framebuffer as of the
// last complete update (never half of one).
//
// Clipboard text is Latin-1 on the wire: SetClipboard sends runes above
// U+00FF as '?', and Clipboard converts what the server sent to UTF-8.
// Which X selection a server uses is its own business. x11vnc writes the
// text it receives to the root window's CUT_BUFFER0 at once and owns
// PRIMARY and CLIPBOARD only once its selection window exists (some
// seconds after it starts); it sends changes of CUT_BUFFER0, and of PRIMARY
// and CLIPBOARD while it watches them. TigerVNC's Xvnc sets CLIPBOARD and
// PRIMARY and sends CLIPBOARD changes. The tests check CUT_BUFFER0 both
// ways with x11vnc and CLIPBOARD both ways with Xvnc.
//
// Reads are bounded: the reader goroutine waits without a deadline only
// for the first byte of a server message (a server with nothing to report
// sends nothing); the rest of every message, and every write, must finish
// within Config.Timeout. Rectangles must lie inside the framebuffer and
// the framebuffer is limited to MaxPixels, so a hostile or broken server
// cannot make the client allocate without bound. Close unblocks
// everything.
package rfb

import (
	"context"
	"crypto/des"
	"encoding/binary"
	"fmt"
	"image"
	"io"
	"net"
	"time"
)

// MaxPixels bounds the framebuffer a server may announce (width times
// height): 64 Mi pixels, 256 MiB of RGBA.
const MaxPixels = 1 << 26

// maxText bounds the desktop name and the reason strings kept from the
// server; longer strings are read and cut.
const maxText = 1 << 16

// maxCutText bounds the clipboard text kept from a ServerCutText; the rest
// is read and dropped.
const maxCutText = 4 << 20

// DefaultTimeout is the bound used when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Config says how to connect.
type Config struct {
	// Password for VNC Authentication. Empty: the server must offer
	// security type None.
	Password string
	// Timeout bounds the handshake and each message read or written
	// after it; 0 means DefaultTimeout.
	Timeout time.Duration
	// Shared asks the server to leave other clients connected.
	Shared bool
}

// Security types and encodings of RFC 6143.
const (
	secInvalid = 0
	secNone    = 1
	secVNCAuth = 2

	encRaw                 int32 = 0
	encCopyRect            int32 = 1
	encZRLE                int32 = 16
	encDesktopSize         int32 = -223
	encLastRect            int32 = -224
	encExtendedDesktopSize int32 = -308
)

// Dial connects to the VNC server at addr ("host:port") and runs the
// handshake: version, security, ClientInit/ServerInit, then SetPixelFormat
// and SetEncodings, and asks for the whole framebuffer. ctx bounds the
// connection and the handshake (each step also within cfg.Timeout).
// Errors name the step that failed; a rejected password gives an error
// wrapping ErrAuth.
func Dial(ctx context.Context, addr string, cfg Config) (*Client, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("rfb: connect %s: %w", addr, err)
	}
	deadline := time.Now().Add(cfg.Timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn.SetDeadline(deadline)
	// ctx may be cancelled during the handshake: closing the connection
	// unblocks the read or write in progress.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	c, err := handshake(conn, cfg)
	if !stop() || ctx.Err() != nil {
		conn.Close()
		if err == nil {
			err = fmt.Errorf("rfb: %s: %w", addr, ctx.Err())
		}
		return nil, err
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w (server %s)", err, addr)
	}
	conn.SetDeadline(time.Time{})
	// Wait for the answer to the first request, so that Snapshot shows the
	// screen as soon as Dial returns and no update in flight predates a
	// later Refresh.
	wt := c.addWaiter()
	go c.readLoop()
	wctx, wcancel := context.WithDeadline(ctx, deadline)
	defer wcancel()
	if err := c.wait(wctx, wt); err != nil {
		c.Close()
		return nil, fmt.Errorf("rfb: init: waiting for the first framebuffer update from %s: %w", addr, err)
	}
	return c, nil
}

// handshake runs the protocol up to and including the first
// FramebufferUpdateRequest and returns the client, not yet reading.
func handshake(conn net.Conn, cfg Config) (*Client, error) {
	c := newClient(conn, cfg)
	r := c.r
	minor, err := negotiateVersion(r, conn)
	if err != nil {
		return nil, fmt.Errorf("rfb: version: %w", err)
	}
	if err := negotiateSecurity(r, conn, minor, cfg.Password); err != nil {
		return nil, err
	}
	// ClientInit.
	shared := byte(0)
	if cfg.Shared {
		shared = 1
	}
	if _, err := conn.Write([]byte{shared}); err != nil {
		return nil, fmt.Errorf("rfb: init: sending ClientInit: %w", err)
	}
	var si [24]byte
	if _, err := io.ReadFull(r, si[:]); err != nil {
		return nil, fmt.Errorf("rfb: init: reading ServerInit: %w", err)
	}
	w := int(binary.BigEndian.Uint16(si[0:]))
	h := int(binary.BigEndian.Uint16(si[2:]))
	if w*h > MaxPixels {
		return nil, fmt.Errorf("rfb: init: framebuffer %dx%d is larger than %d pixels", w, h, MaxPixels)
	}
	name, err := readString(r, binary.BigEndian.Uint32(si[20:]))
	if err != nil {
		return nil, fmt.Errorf("rfb: init: reading the desktop name: %w", err)
	}
	c.name = name
	c.dec.resize(w, h)
	c.pub = image.NewRGBA(c.dec.fb.Rect)
	copy(c.pub.Pix, c.dec.fb.Pix)
	msg := setupMessages(w, h)
	if _, err := conn.Write(msg); err != nil {
		return nil, fmt.Errorf("rfb: init: sending SetPixelFormat and SetEncodings: %w", err)
	}
	return c, nil
}

// setupMessages returns SetPixelFormat (32 bpp, depth 24, little-endian
// true colour, red in bits 16-23, green 8-15, blue 0-7), SetEncodings and a
// non-incremental FramebufferUpdateRequest for the whole screen.
func setupMessages(w, h int) []byte {
	b := []byte{0, 0, 0, 0,
		32, 24, 0, 1, // bpp, depth, big-endian, true colour
		0, 255, 0, 255, 0, 255, // red, green, blue max
		16, 8, 0, // shifts
		0, 0, 0}
	encs := []int32{encZRLE, encCopyRect, encRaw, encDesktopSize, encExtendedDesktopSize, encLastRect}
	b = append(b, 2, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(len(encs)))
	for _, e := range encs {
		b = binary.BigEndian.AppendUint32(b, uint32(e))
	}
	return append(b, updateRequest(false, w, h)...)
}

// updateRequest is a FramebufferUpdateRequest for the whole w x h screen.
func updateRequest(incremental bool, w, h int) []byte {
	b := make([]byte, 10)
	b[0] = 3
	if incremental {
		b[1] = 1
	}
	binary.BigEndian.PutUint16(b[6:], uint16(w))
	binary.BigEndian.PutUint16(b[8:], uint16(h))
	return b
}

// negotiateVersion reads the server's ProtocolVersion and answers with the
// highest version both support; it returns the minor version chosen (3, 7
// or 8).
func negotiateVersion(r io.Reader, w io.Writer) (int, error) {
	var buf [12]byte
	if _, err := io.ReadFull(r, buf[:]); err != nil {
		return 0, fmt.Errorf("reading the server's ProtocolVersion: %w", err)
	}
	major, minor, err := parseVersion(buf[:])
	if err != nil {
		return 0, err
	}
	switch {
	case major > 3 || minor >= 8:
		minor = 8
	case minor == 7:
	default:
		minor = 3
	}
	if _, err := fmt.Fprintf(w, "RFB 003.%03d\n", minor); err != nil {
		return 0, fmt.Errorf("sending ProtocolVersion: %w", err)
	}
	return minor, nil
}

// parseVersion parses "RFB xxx.yyy\n".
func parseVersion(b []byte) (major, minor int, err error) {
	if len(b) != 12 || string(b[:4]) != "RFB " || b[7] != '.' || b[11] != '\n' {
		return 0, 0, fmt.Errorf("server sent %q, not an RFB ProtocolVersion", b)
	}
	num := func(s []byte) (int, bool) {
		n := 0
		for _, ch := range s {
			if ch < '0' || ch > '9' {
				return 0, false
			}
			n = n*10 + int(ch-'0')
		}
		return n, true
	}
	major, ok1 := num(b[4:7])
	minor, ok2 := num(b[8:11])
	if !ok1 || !ok2 || major < 3 {
		return 0, 0, fmt.Errorf("server sent %q, not an RFB ProtocolVersion 3.x", b)
	}
	return major, minor, nil
}

// negotiateSecurity picks a security type, authenticates and reads the
// SecurityResult where the version has one.
func negotiateSecurity(r io.Reader, w io.Writer, minor int, password string) error {
	var chosen uint32
	if minor == 3 {
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return fmt.Errorf("rfb: security: reading the security type: %w", err)
		}
		chosen = binary.BigEndian.Uint32(b[:])
		switch chosen {
		case secInvalid:
			return fmt.Errorf("rfb: security: server refused the connection: %s", readReason(r))
		case secNone, secVNCAuth:
		default:
			return fmt.Errorf("rfb: security: server requires security type %d; only None (1) and VNC Authentication (2) are supported", chosen)
		}
		if chosen == secVNCAuth && password == "" {
			return fmt.Errorf("rfb: security: server requires VNC Authentication and no password is configured")
		}
	} else {
		var n [1]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return fmt.Errorf("rfb: security: reading the security types: %w", err)
		}
		if n[0] == 0 {
			return fmt.Errorf("rfb: security: server refused the connection: %s", readReason(r))
		}
		types := make([]byte, n[0])
		if _, err := io.ReadFull(r, types); err != nil {
			return fmt.Errorf("rfb: security: reading the security types: %w", err)
		}
		t, err := chooseSecurity(types, password)
		if err != nil {
			return fmt.Errorf("rfb: security: %w", err)
		}
		chosen = uint32(t)
		if _, err := w.Write([]byte{t}); err != nil {
			return fmt.Errorf("rfb: security: sending the security type: %w", err)
		}
	}
	if chosen == secVNCAuth {
		var challenge [16]byte
		if _, err := io.ReadFull(r, challenge[:]); err != nil {
			return fmt.Errorf("rfb: auth: reading the challenge: %w", err)
		}
		if _, err := w.Write(vncAuthResponse(password, challenge)); err != nil {
			return fmt.Errorf("rfb: auth: sending the response: %w", err)
		}
	} else if minor < 8 {
		// Versions 3.3 and 3.7 send no SecurityResult after None.
		return nil
	}
	var res [4]byte
	if _, err := io.ReadFull(r, res[:]); err != nil {
		if chosen == secVNCAuth {
			return fmt.Errorf("rfb: auth: reading the SecurityResult: %w", err)
		}
		return fmt.Errorf("rfb: security: reading the SecurityResult: %w", err)
	}
	if binary.BigEndian.Uint32(res[:]) == 0 {
		return nil
	}
	reason := "no reason given"
	if minor >= 8 {
		reason = readReason(r)
	}
	if chosen == secVNCAuth {
		return fmt.Errorf("rfb: auth: %w: %s", ErrAuth, reason)
	}
	return fmt.Errorf("rfb: security: server refused security type None: %s", reason)
}

// chooseSecurity picks VNC Authentication when a password is configured
// and offered, else None; without a password None is required.
func chooseSecurity(types []byte, password string) (byte, error) {
	has := func(t byte) bool {
		for _, x := range types {
			if x == t {
				return true
			}
		}
		return false
	}
	switch {
	case password != "" && has(secVNCAuth):
		return secVNCAuth, nil
	case has(secNone):
		return secNone, nil
	case password == "" && has(secVNCAuth):
		return 0, fmt.Errorf("server requires VNC Authentication (offers %v) and no password is configured", types)
	}
	return 0, fmt.Errorf("server offers security types %v; only None (1) and VNC Authentication (2) are supported", types)
}

// vncAuthResponse encrypts the challenge with DES, keyed by the first 8
// bytes of the password (zero padded) with the bits of each byte reversed,
// as VNC Authentication does.
func vncAuthResponse(password string, challenge [16]byte) []byte {
	var key [8]byte
	copy(key[:], password)
	for i, b := range key {
		b = (b&0xF0)>>4 | (b&0x0F)<<4
		b = (b&0xCC)>>2 | (b&0x33)<<2
		b = (b&0xAA)>>1 | (b&0x55)<<1
		key[i] = b
	}
	block, _ := des.NewCipher(key[:]) // cannot fail: the key is 8 bytes
	out := make([]byte, 16)
	block.Encrypt(out[:8], challenge[:8])
	block.Encrypt(out[8:], challenge[8:])
	return out
}

// readReason reads a reason string (u32 length, then text); a read error
// is reported in its place.
func readReason(r io.Reader) string {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return fmt.Sprintf("(reason unreadable: %v)", err)
	}
	s, err := readString(r, binary.BigEndian.Uint32(b[:]))
	if err != nil {
		return fmt.Sprintf("(reason unreadable: %v)", err)
	}
	return s
}

// readString reads n bytes of Latin-1 text, keeps at most maxText of them
// and returns them as UTF-8.
func readString(r io.Reader, n uint32) (string, error) {
	return readText(r, n, maxText)
}

// readText reads n bytes of Latin-1 text, keeps at most limit of them and
// returns them as UTF-8. Memory grows with the bytes actually received,
// not with the length announced.
func readText(r io.Reader, n uint32, limit int64) (string, error) {
	keep := min(int64(n), limit)
	buf, err := io.ReadAll(io.LimitReader(r, keep))
	if err != nil {
		return "", err
	}
	if int64(len(buf)) < keep {
		return "", io.ErrUnexpectedEOF
	}
	if _, err := io.CopyN(io.Discard, r, int64(n)-keep); err != nil {
		return "", err
	}
	return latin1ToString(buf), nil
}

// latin1ToString converts Latin-1 bytes to a UTF-8 string.
func latin1ToString(b []byte) string {
	rs := make([]rune, len(b))
	for i, ch := range b {
		rs[i] = rune(ch)
	}
	return string(rs)
}

// stringToLatin1 converts a string to Latin-1; runes above U+00FF become
// '?'.
func stringToLatin1(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out
}

// bufSize is the size of the buffered reader on the connection.
const bufSize = 64 << 10
