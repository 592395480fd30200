// Package cdppipe starts Chromium with its DevTools pipe in the binary
// (CBOR) protocol and connects chromedp to it, through a transport that
// converts the messages to and from the JSON chromedp speaks.
//
// With the JSON protocol the browser converts every message it sends from
// its own CBOR to JSON, on its main thread: for the 1.7 MB of a page's
// accessibility tree that costs it about a third of the call (measured:
// 102 ms a call in JSON, 67 ms in CBOR). Conn does that conversion
// instead (package cdpcbor), for the messages chromedp reads. chromedp's
// own pipe transport speaks JSON only, and chromedp offers no way to give
// its exec allocator another transport, hence Allocator.
//
// Conn.Call (and Conn.Session, SessionOf) sends a command whose reply
// bypasses chromedp altogether and reaches the caller as the CBOR the
// browser sent, for a result type that decodes it itself (CBORResult), or
// else as JSON.
package cdppipe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/proctor-eval/proctor/internal/cdpcbor"
)

// Conn is a chromedp.Transport over the two pipes of a browser started
// with --remote-debugging-pipe=cbor: each message is a CBOR envelope (see
// cbor.go), converted from and to chromedp's JSON.
type Conn struct {
	r   io.ReadCloser
	w   io.WriteCloser
	br  *bufio.Reader
	buf []byte // the message being read

	writeMu sync.Mutex
	wbuf    []byte

	closeOnce sync.Once
	closeErr  error

	// Calls made through Call, which bypass chromedp.
	callMu  sync.Mutex
	pending map[int64]chan result // by id
	readErr error                 // why reading stopped: the calls that follow fail
	lastID  atomic.Int64
}

// result is the answer to a Call: its result's bytes, or the error.
type result struct {
	b   []byte
	err error
}

// ownIDs is where the ids of Call's commands start. chromedp numbers its
// commands from 1, and would need a billion of them to get here; the
// browser reads ids as 32-bit integers.
const ownIDs = 1 << 30

// readBuffer is the read buffer's size.
const readBuffer = 64 << 10

// NewConn returns a transport that reads the browser's messages from r and
// writes commands to w. Close closes both.
func NewConn(r io.ReadCloser, w io.WriteCloser) *Conn {
	c := &Conn{r: r, w: w, br: bufio.NewReaderSize(r, readBuffer), pending: map[int64]chan result{}}
	c.lastID.Store(ownIDs)
	return c
}

// Read reads the next message, its params, result or error converted to
// JSON. Replies to Call's commands go to their callers, not to chromedp.
func (c *Conn) Read(_ context.Context, msg *cdproto.Message) error {
	for {
		b, err := c.next()
		if err != nil {
			c.stop(err)
			return err
		}
		e, err := scan(b)
		if err == nil && e.id >= ownIDs && e.method == "" {
			err = c.answer(e)
			if err == nil {
				continue
			}
		}
		if err == nil {
			err = e.decode(msg)
		}
		if err != nil {
			c.stop(err) // chromedp reads no further
			return err
		}
		return nil
	}
}

// answer hands a reply to the Call waiting for it, its result as CBOR; a
// caller that gave up waiting is no longer there.
func (c *Conn) answer(e envelope) error {
	c.callMu.Lock()
	ch := c.pending[e.id]
	delete(c.pending, e.id)
	c.callMu.Unlock()
	if ch == nil {
		return nil
	}
	switch rerr, err := errorOf(e.error); {
	case err != nil:
		ch <- result{err: err}
		return err
	case rerr != nil:
		ch <- result{err: rerr}
	default:
		// The message's buffer is read into next: the result keeps a copy.
		ch <- result{b: bytes.Clone(e.result)}
	}
	return nil
}

// stop fails the calls waiting for a reply, and those that follow.
func (c *Conn) stop(err error) {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	if c.readErr == nil {
		c.readErr = fmt.Errorf("cdppipe: the connection ended: %w", err)
	}
	for id, ch := range c.pending {
		ch <- result{err: c.readErr}
		delete(c.pending, id)
	}
}

// A CBORResult decodes a result from the CBOR the browser sent, which
// nothing has checked: it checks it as it reads it (with a
// cdpcbor.Decoder). Call hands a result of such a type the bytes
// directly, with no JSON in between.
type CBORResult interface {
	DecodeCBOR(b []byte) error
}

// Call sends a command to a target's session (the browser itself for
// "") and decodes its result into res, with no part for chromedp: the
// reply is decoded once: by res's own DecodeCBOR where it has one, else
// converted to JSON for the JSON package.
func (c *Conn) Call(ctx context.Context, session target.SessionID, method string, params, res any) error {
	var p []byte
	if params != nil {
		var err error
		if p, err = jsonv2.Marshal(params, chromedp.DefaultMarshalOptions); err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
	}
	id := c.lastID.Add(1)
	ch := make(chan result, 1)
	c.callMu.Lock()
	if err := c.readErr; err != nil {
		c.callMu.Unlock()
		return err
	}
	c.pending[id] = ch
	c.callMu.Unlock()
	defer func() {
		c.callMu.Lock()
		delete(c.pending, id)
		c.callMu.Unlock()
	}()
	if err := c.Write(ctx, &cdproto.Message{ID: id, SessionID: session, Method: cdproto.MethodType(method), Params: p}); err != nil {
		return err
	}
	var r result
	select {
	case r = <-ch:
	case <-ctx.Done():
		return ctx.Err()
	}
	switch d, raw := res.(CBORResult); {
	case r.err != nil:
		return r.err
	case res == nil:
		return nil
	case raw:
		return d.DecodeCBOR(r.b)
	}
	j, err := toJSON(r.b)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", method, err)
	case j == nil:
		return nil // a reply with no result
	}
	return jsonv2.Unmarshal(j, res, chromedp.DefaultUnmarshalOptions)
}

// Session is a target's session whose commands go through Call; its
// events are the target's.
func (c *Conn) Session(t *chromedp.Target) cdp.Session { return session{t, c} }

type session struct {
	*chromedp.Target
	c *Conn
}

func (s session) Call(ctx context.Context, method string, params, res any) error {
	return s.c.Call(ctx, s.SessionID, method, params, res)
}

// next reads one message: its envelope's header, then what the header
// says follows. The slice is reused by the next call.
func (c *Conn) next() ([]byte, error) {
	const h = cdpcbor.EnvelopeSize
	c.buf = slices.Grow(c.buf[:0], h)[:h]
	if _, err := io.ReadFull(c.br, c.buf); err != nil {
		return nil, err // io.EOF between messages, else cut off
	}
	n, ok := cdpcbor.EnvelopeLength(c.buf)
	if !ok {
		return nil, fmt.Errorf("%w: a message starts % x, not with an envelope", cdpcbor.ErrMalformed, c.buf)
	}
	c.buf = slices.Grow(c.buf, n)[:h+n]
	if _, err := io.ReadFull(c.br, c.buf[h:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return c.buf, nil
}

// envelope is what a message holds: its id, method and session, and the
// CBOR of its params, result or error, in the message's bytes.
type envelope struct {
	id                    int64
	method, session       string
	params, result, error []byte
}

// scan reads a message's envelope.
func scan(b []byte) (envelope, error) {
	var e envelope
	if n, ok := cdpcbor.EnvelopeLength(b); !ok || n != len(b)-cdpcbor.EnvelopeSize {
		return e, fmt.Errorf("%w: a message that is not one envelope", cdpcbor.ErrMalformed)
	}
	d := cdpcbor.NewDecoder(b)
	err := d.Map(func(key []byte) error {
		var err error
		switch string(key) {
		case "id":
			if e.id, err = d.Int(); err == nil && e.id < 0 {
				err = fmt.Errorf("%w: a negative id", cdpcbor.ErrMalformed)
			}
		case "method":
			e.method, err = d.String()
		case "sessionId":
			e.session, err = d.String()
		case "params":
			e.params, err = d.Raw()
		case "result":
			e.result, err = d.Raw()
		case "error":
			e.error, err = d.Raw()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	})
	if err == nil {
		err = d.End()
	}
	return e, err
}

// decode reads the message b into msg: its params, result or error
// converted to JSON.
func decode(b []byte, msg *cdproto.Message) error {
	*msg = cdproto.Message{}
	e, err := scan(b)
	if err != nil {
		return err
	}
	return e.decode(msg)
}

// decode fills msg from the envelope, converting its parts to JSON.
func (e envelope) decode(msg *cdproto.Message) error {
	var err error
	*msg = cdproto.Message{}
	msg.ID, msg.Method, msg.SessionID = e.id, cdproto.MethodType(e.method), target.SessionID(e.session)
	if msg.Params, err = toJSON(e.params); err != nil {
		return err
	}
	if msg.Result, err = toJSON(e.result); err != nil {
		return err
	}
	msg.Error, err = errorOf(e.error)
	return err
}

// toJSON converts a part of a message to JSON; nil stays nil.
func toJSON(b []byte) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	// About as long in JSON.
	return cdpcbor.AppendJSON(make([]byte, 0, 16+len(b)*9/8), b)
}

// errorOf reads the error of a reply; nil for none.
func errorOf(b []byte) (*cdproto.Error, error) {
	if b == nil {
		return nil, nil
	}
	j, err := toJSON(b)
	if err != nil {
		return nil, err
	}
	var e cdproto.Error
	if err := jsonv2.Unmarshal(j, &e, chromedp.DefaultUnmarshalOptions); err != nil {
		return nil, fmt.Errorf("%w: the error %s: %v", cdpcbor.ErrMalformed, j, err)
	}
	return &e, nil
}

// Write writes a message. It is safe to call from more than one
// goroutine.
func (c *Conn) Write(_ context.Context, msg *cdproto.Message) error {
	if msg.ID < 0 || msg.ID > math.MaxInt32 {
		return fmt.Errorf("cdppipe: message id %d out of range", msg.ID)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	b, at := cdpcbor.StartMap(c.wbuf[:0])
	b = cdpcbor.AppendInt(cdpcbor.AppendText(b, "id"), msg.ID)
	if msg.SessionID != "" {
		b = cdpcbor.AppendText(cdpcbor.AppendText(b, "sessionId"), string(msg.SessionID))
	}
	b = cdpcbor.AppendText(cdpcbor.AppendText(b, "method"), string(msg.Method))
	if len(msg.Params) > 0 {
		var err error
		if b, err = cdpcbor.AppendCBOR(cdpcbor.AppendText(b, "params"), msg.Params); err != nil {
			return fmt.Errorf("cdppipe: %s: encoding its params: %w", msg.Method, err)
		}
	}
	b, err := cdpcbor.EndMap(b, at)
	if err != nil {
		return err
	}
	c.wbuf = b
	// One write, so that writers do not interleave.
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("writing a message: %w", err)
	}
	return nil
}

// Close closes both pipes, which makes the browser exit.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() { c.closeErr = errors.Join(c.r.Close(), c.w.Close()) })
	return c.closeErr
}

var _ chromedp.Transport = (*Conn)(nil)
