package rfb

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Client is a connection to a VNC server. Its methods are safe for
// concurrent use.
//
// A goroutine reads the server's messages: it applies each
// FramebufferUpdate to a private framebuffer and, once the whole update
// is in, copies the rectangles it drew to the framebuffer that Snapshot
// reads (so a snapshot never shows half an update), then asks for the next
// incremental update. One incremental request is outstanding at a time;
// Refresh adds a non-incremental one.
type Client struct {
	conn  net.Conn
	cfg   Config
	r     *bufio.Reader
	nread atomic.Int64
	dec   *decoder
	name  string

	wmu sync.Mutex // serialises writes

	mu      sync.Mutex
	pub     *image.RGBA // the framebuffer as of the last complete update
	clip    string
	begun   uint64 // FramebufferUpdates whose reading has begun
	waiters map[*waiter]struct{}

	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error
	done      chan struct{}
	err       error // set before done is closed
}

// waiter is a Refresh waiting for updates begun after seq to cover the
// screen.
type waiter struct {
	after   uint64
	covered int
	ch      chan struct{}
}

// countingConn counts the bytes read from the connection.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func newClient(conn net.Conn, cfg Config) *Client {
	c := &Client{conn: conn, cfg: cfg, done: make(chan struct{}), waiters: map[*waiter]struct{}{}}
	c.r = bufio.NewReaderSize(countingConn{conn, &c.nread}, bufSize)
	c.dec = newDecoder(c.r)
	c.dec.onRect = func() { conn.SetReadDeadline(time.Now().Add(cfg.Timeout)) }
	return c
}

// Name is the desktop name the server sent in ServerInit.
func (c *Client) Name() string { return c.name }

// Size is the framebuffer's size as of the last complete update.
func (c *Client) Size() (w, h int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pub.Rect.Dx(), c.pub.Rect.Dy()
}

// Snapshot returns a copy of the framebuffer as of the last complete
// update. Pixels are opaque.
func (c *Client) Snapshot() *image.RGBA {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := image.NewRGBA(c.pub.Rect)
	copy(out.Pix, c.pub.Pix)
	return out
}

// Clipboard is the text of the last ServerCutText received (converted
// from Latin-1), or "" before any.
func (c *Client) Clipboard() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clip
}

// BytesRead is the number of bytes received from the server so far,
// handshake included.
func (c *Client) BytesRead() int64 { return c.nread.Load() }

// Done is closed when the connection has ended: the server closed it, a
// read or write failed, a message could not be decoded, or Close was
// called.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is nil while the connection is up; after Done is closed it is an
// error wrapping ErrClosed and the cause.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Close ends the connection and waits for the reader goroutine to stop.
// It returns the error of closing the socket (nil when the connection had
// already ended); later calls return nil.
func (c *Client) Close() error {
	first := false
	c.closeOnce.Do(func() {
		first = true
		c.closing.Store(true)
		if err := c.conn.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			c.closeErr = fmt.Errorf("rfb: closing the connection: %w", err)
		}
		<-c.done
	})
	if !first {
		return nil
	}
	return c.closeErr
}

// Refresh asks the server for the whole framebuffer and waits until
// updates that began after the call have been applied and together
// cover the screen, so that a Snapshot taken afterwards shows what the
// server had when it read the request (and so input sent before it). The
// guarantee is exact while no other Refresh runs on the client: two at
// once may both return on the first answer. ctx bounds the wait; if the
// server sends nothing in time the error wraps ctx's error and says "no
// framebuffer update from the server".
func (c *Client) Refresh(ctx context.Context) error {
	if err := c.Err(); err != nil {
		return err
	}
	wt := c.addWaiter()
	c.mu.Lock()
	w, h := c.pub.Rect.Dx(), c.pub.Rect.Dy()
	c.mu.Unlock()
	if err := c.write("FramebufferUpdateRequest", updateRequest(false, w, h)); err != nil {
		c.removeWaiter(wt)
		return err
	}
	if err := c.wait(ctx, wt); err != nil {
		if errors.Is(err, ErrClosed) {
			return err
		}
		return fmt.Errorf("rfb: %w", err)
	}
	return nil
}

// addWaiter registers a wait for the updates that begin from now on.
func (c *Client) addWaiter() *waiter {
	wt := &waiter{ch: make(chan struct{})}
	c.mu.Lock()
	wt.after = c.begun
	c.waiters[wt] = struct{}{}
	c.mu.Unlock()
	return wt
}

func (c *Client) removeWaiter(wt *waiter) {
	c.mu.Lock()
	delete(c.waiters, wt)
	c.mu.Unlock()
}

// wait waits until the updates begun after wt was added cover the screen.
func (c *Client) wait(ctx context.Context, wt *waiter) error {
	defer c.removeWaiter(wt)
	select {
	case <-wt.ch:
		return nil
	case <-ctx.Done():
	case <-c.done:
	}
	// The update may have come just before the end: it still counts.
	select {
	case <-wt.ch:
		return nil
	default:
	}
	if ctx.Err() != nil {
		return fmt.Errorf("no framebuffer update from the server: %w", ctx.Err())
	}
	return c.err
}

// Pointer sends a PointerEvent: the pointer is at (x, y) with the buttons
// in the mask pressed: bit 0 left, 1 middle, 2 right, 3 wheel up, 4 wheel
// down, 5 wheel left, 6 wheel right. A wheel click is a press then a
// release of its bit.
func (c *Client) Pointer(x, y int, buttons uint8) error {
	if x < 0 || y < 0 || x > 0xFFFF || y > 0xFFFF {
		return fmt.Errorf("rfb: pointer position (%d,%d) is outside 0..65535", x, y)
	}
	b := make([]byte, 6)
	b[0] = 5
	b[1] = buttons
	binary.BigEndian.PutUint16(b[2:], uint16(x))
	binary.BigEndian.PutUint16(b[4:], uint16(y))
	return c.write("PointerEvent", b)
}

// Key sends a KeyEvent for the X keysym, pressed (down) or released.
func (c *Client) Key(keysym uint32, down bool) error {
	b := make([]byte, 8)
	b[0] = 4
	if down {
		b[1] = 1
	}
	binary.BigEndian.PutUint32(b[4:], keysym)
	return c.write("KeyEvent", b)
}

// SetClipboard sends a ClientCutText. The protocol carries Latin-1 only:
// runes above U+00FF are sent as '?'.
func (c *Client) SetClipboard(text string) error {
	t := stringToLatin1(text)
	b := make([]byte, 8, 8+len(t))
	b[0] = 6
	binary.BigEndian.PutUint32(b[4:], uint32(len(t)))
	return c.write("ClientCutText", append(b, t...))
}

// write sends one message within the timeout. A failed write leaves the
// stream in an unknown state, so it ends the connection.
func (c *Client) write(what string, b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.Err(); err != nil {
		return err
	}
	c.conn.SetWriteDeadline(time.Now().Add(c.cfg.Timeout))
	if _, err := c.conn.Write(b); err != nil {
		c.conn.Close()
		return fmt.Errorf("rfb: sending %s: %w: %w", what, ErrClosed, err)
	}
	return nil
}

// readLoop reads server messages until the connection fails or is closed.
func (c *Client) readLoop() {
	err := c.readMessages()
	if c.closing.Load() {
		err = errors.New("closed by the client")
	}
	c.conn.Close()
	c.err = fmt.Errorf("rfb: %w: %w", ErrClosed, err)
	close(c.done)
}

func (c *Client) readMessages() error {
	for {
		c.conn.SetReadDeadline(time.Time{})
		typ, err := c.r.ReadByte()
		if err != nil {
			return fmt.Errorf("reading a server message: %w", err)
		}
		c.conn.SetReadDeadline(time.Now().Add(c.cfg.Timeout))
		var seq uint64
		if typ == msgFramebufferUpdate {
			c.mu.Lock()
			c.begun++
			seq = c.begun
			c.mu.Unlock()
		}
		m, err := c.dec.message(typ)
		if err != nil {
			return err
		}
		switch typ {
		case msgFramebufferUpdate:
			c.publish(seq, &m)
			w, h := c.dec.fb.Rect.Dx(), c.dec.fb.Rect.Dy()
			if err := c.write("FramebufferUpdateRequest", updateRequest(true, w, h)); err != nil {
				return err
			}
		case msgServerCutText:
			c.mu.Lock()
			c.clip = m.text
			c.mu.Unlock()
		}
	}
}

// publish copies what update seq drew to the shared framebuffer and wakes
// the Refresh calls it completes.
func (c *Client) publish(seq uint64, m *message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fb := c.dec.fb
	if m.resized || !c.pub.Rect.Eq(fb.Rect) {
		c.pub = image.NewRGBA(fb.Rect)
		copy(c.pub.Pix, fb.Pix)
	} else {
		for _, r := range m.rects {
			n := r.Dx() * 4
			for y := r.Min.Y; y < r.Max.Y; y++ {
				o := fb.PixOffset(r.Min.X, y)
				copy(c.pub.Pix[o:o+n], fb.Pix[o:o+n])
			}
		}
	}
	area := fb.Rect.Dx() * fb.Rect.Dy()
	for wt := range c.waiters {
		if seq <= wt.after {
			continue
		}
		wt.covered += m.area
		if wt.covered >= area {
			close(wt.ch)
			delete(c.waiters, wt)
		}
	}
}
