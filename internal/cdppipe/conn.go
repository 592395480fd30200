// Package cdppipe starts Chromium with its DevTools pipe and connects
// chromedp to it, through a transport that hands a reply's result to the
// caller as the bytes the browser sent.
//
// chromedp's own pipe transport decodes every message in full into its
// envelope, checking and copying the result, and the caller then decodes
// the result again. For the megabytes of a page's accessibility tree the
// first pass costs about as much as the second. Conn reads a reply's
// envelope from its first and last bytes instead, and leaves the checking
// to the decode the caller does anyway. chromedp offers no way to give its
// exec allocator another transport, hence Allocator.
//
// Conn.Call (and Conn.Session, SessionOf) sends a command whose reply
// bypasses chromedp altogether and reaches the caller as those bytes, for
// a result type that decodes them itself (RawResult).
package cdppipe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Conn is a chromedp.Transport over the two pipes of a browser started
// with --remote-debugging-pipe: each message is JSON ended by a zero byte.
type Conn struct {
	r  io.ReadCloser
	w  io.WriteCloser
	br *bufio.Reader
	// long gathers a message longer than br's buffer.
	long []byte

	writeMu sync.Mutex
	wbuf    bytes.Buffer
	enc     jsonv2.Encoder

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

// readBuffer is the read buffer's size: most messages fit in it whole.
const readBuffer = 1 << 20

// NewConn returns a transport that reads the browser's messages from r and
// writes commands to w. Close closes both.
func NewConn(r io.ReadCloser, w io.WriteCloser) *Conn {
	c := &Conn{r: r, w: w, br: bufio.NewReaderSize(r, readBuffer), pending: map[int64]chan result{}}
	c.lastID.Store(ownIDs)
	return c
}

// Read reads the next message. A reply with a result is read by its
// envelope's bytes (see reply); any other message is decoded in full.
// Replies to Call's commands go to their callers, not to chromedp.
func (c *Conn) Read(_ context.Context, msg *cdproto.Message) error {
	for {
		b, err := c.next()
		if err != nil {
			c.stop(err)
			return err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if !reply(b, msg) {
			*msg = cdproto.Message{}
			if err := jsonv2.Unmarshal(b, msg, chromedp.DefaultUnmarshalOptions); err != nil {
				c.stop(err) // chromedp reads no further
				return err
			}
		}
		if msg.ID >= ownIDs && msg.Method == "" {
			c.answer(msg)
			continue
		}
		return nil
	}
}

// answer hands a reply to the Call waiting for it; a caller that gave up
// waiting is no longer there.
func (c *Conn) answer(msg *cdproto.Message) {
	c.callMu.Lock()
	ch := c.pending[msg.ID]
	delete(c.pending, msg.ID)
	c.callMu.Unlock()
	if ch == nil {
		return
	}
	if msg.Error != nil {
		ch <- result{err: msg.Error}
		return
	}
	ch <- result{b: msg.Result}
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

// A RawResult decodes a result from the bytes the browser sent, which
// nothing has checked: it checks them as it reads them. Call hands a
// result of such a type its bytes directly.
type RawResult interface {
	DecodeResult(b []byte) error
}

// Call sends a command to a target's session (the browser itself for
// "") and decodes its result into res, with no part for chromedp: the
// reply is decoded once, by res's own DecodeResult where it has one, else
// by the JSON package.
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
	switch d, raw := res.(RawResult); {
	case r.err != nil:
		return r.err
	case res == nil:
		return nil
	case raw:
		return d.DecodeResult(r.b)
	}
	return jsonv2.Unmarshal(r.b, res, chromedp.DefaultUnmarshalOptions)
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

// next reads one message up to its zero byte, in a slice of its own.
func (c *Conn) next() ([]byte, error) {
	c.long = c.long[:0]
	for {
		s, err := c.br.ReadSlice(0)
		switch {
		case err == nil:
			s = s[:len(s)-1]
			// One copy, of the message's exact size: the reader's
			// buffer and long are reused for the next one.
			out := make([]byte, len(c.long)+len(s))
			copy(out[copy(out, c.long):], s)
			return out, nil
		case errors.Is(err, bufio.ErrBufferFull):
			c.long = append(c.long, s...)
		case errors.Is(err, io.EOF) && (len(s) > 0 || len(c.long) > 0):
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// Keys of a reply's envelope, as the browser writes it:
// {"id":N,"result":{...}} and, from a page's session,
// {"id":N,"result":{...},"sessionId":"..."}.
var (
	idKey      = []byte(`{"id":`)
	resultKey  = []byte(`,"result":`)
	sessionKey = []byte(`,"sessionId":"`)
)

// reply reads b as a reply with a result, in the browser's shape: the id,
// the result object's bytes and the session, found from the message's
// first and last bytes. It reports false for anything else (an event, an
// error, another order of keys), which the caller then decodes in full.
// The result's bytes are not checked here: the caller's decode checks
// them.
func reply(b []byte, msg *cdproto.Message) bool {
	if !bytes.HasPrefix(b, idKey) {
		return false
	}
	i := len(idKey)
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == i || j-i > 18 || (b[i] == '0' && j-i > 1) || !bytes.HasPrefix(b[j:], resultKey) {
		return false
	}
	id, err := strconv.ParseInt(string(b[i:j]), 10, 64)
	if err != nil {
		return false
	}
	start, end := j+len(resultKey), len(b)-1
	if end < start+2 || b[end] != '}' {
		return false
	}
	var session []byte
	if b[end-1] == '"' {
		// The result is an object, so a string before the last brace is
		// a field after it: the session, and nothing else, or this is
		// not the shape.
		k := bytes.LastIndex(b[:end], sessionKey)
		if k < start || k+len(sessionKey) > end-1 {
			return false
		}
		session = b[k+len(sessionKey) : end-1]
		if !plain(session) {
			return false
		}
		end = k
	}
	if end-start < 2 || b[start] != '{' || b[end-1] != '}' {
		return false
	}
	*msg = cdproto.Message{ID: id, SessionID: target.SessionID(session), Result: b[start:end]}
	return true
}

// plain reports whether s is printable ASCII with no quote or backslash:
// a string whose JSON text is itself, as the browser's session ids are.
func plain(s []byte) bool {
	for _, c := range s {
		if c <= ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Write writes a message. It is safe to call from more than one
// goroutine.
func (c *Conn) Write(_ context.Context, msg *cdproto.Message) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.wbuf.Reset()
	c.enc.Reset(&c.wbuf, chromedp.DefaultMarshalOptions)
	if err := jsonv2.MarshalEncode(&c.enc, msg, chromedp.DefaultMarshalOptions); err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	// The encoder ends the value with a newline; the pipe wants a zero
	// byte. One write, so that writers do not interleave.
	b := bytes.TrimRight(c.wbuf.Bytes(), "\n")
	c.wbuf.Truncate(len(b))
	c.wbuf.WriteByte(0)
	if _, err := c.w.Write(c.wbuf.Bytes()); err != nil {
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
