package x11

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Selections reads an X selection (the clipboard) as a client does that
// pastes: it asks the selection's owner to convert it to text into a
// property of a window of its own, and reads the property, in pieces when
// the owner sends it incrementally (INCR). It has its own connection, so
// that the events of the conversion are its own, and is safe for
// concurrent use (one read at a time). It stands for starting xclip or
// xsel, a process and a connection per read.
type Selections struct {
	mu     sync.Mutex
	x      *xgb.Conn
	win    xproto.Window
	events chan xgb.Event
	done   chan struct{}
	atoms  map[string]xproto.Atom
}

// ErrNoAnswer is the error of a read whose owner did not answer in time.
const ErrNoAnswer Error = "the selection's owner did not answer"

// Error is an error of this package's.
type Error string

func (e Error) Error() string { return string(e) }

// DialSelections connects to the local display (":5") with cookie as its
// MIT-MAGIC-COOKIE-1 (nil: no credentials), for reading selections.
func DialSelections(display string, cookie []byte) (*Selections, error) {
	x, err := dialOwn(display, cookie)
	if err != nil {
		return nil, err
	}
	root := xproto.Setup(x).DefaultScreen(x).Root
	win, err := xproto.NewWindowId(x)
	if err == nil {
		// An unmapped input-only window: the requestor, whose property
		// changes (PropertyNotify) pace an incremental transfer.
		err = xproto.CreateWindowChecked(x, 0, win, root, 0, 0, 1, 1, 0, xproto.WindowClassInputOnly, 0,
			xproto.CwEventMask, []uint32{xproto.EventMaskPropertyChange}).Check()
	}
	if err != nil {
		x.Close()
		return nil, fmt.Errorf("X display %s: a window for the selection: %w", display, err)
	}
	s := &Selections{x: x, win: win, events: make(chan xgb.Event, 64), done: make(chan struct{}), atoms: map[string]xproto.Atom{}}
	go s.read()
	return s, nil
}

// read passes the connection's events on until it closes; events that no
// read waits for (a late answer of an owner given up on) are dropped once
// the channel is full.
func (s *Selections) read() {
	defer close(s.done)
	for {
		ev, xerr := s.x.WaitForEvent()
		if ev == nil && xerr == nil {
			return
		}
		if ev == nil {
			continue
		}
		select {
		case s.events <- ev:
		default:
		}
	}
}

// Close ends the connection.
func (s *Selections) Close() error {
	s.x.Close()
	<-s.done
	return nil
}

func (s *Selections) atom(name string) (xproto.Atom, error) {
	if a, ok := s.atoms[name]; ok {
		return a, nil
	}
	r, err := xproto.InternAtom(s.x, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0, err
	}
	s.atoms[name] = r.Atom
	return r.Atom, nil
}

// Read reads the selection name ("CLIPBOARD", "PRIMARY") as text, at most
// limit bytes of it (cut reports a longer one), waiting for its owner
// until ctx ends. A selection nobody owns, or whose owner has no text,
// is "".
func (s *Selections) Read(ctx context.Context, name string, limit int) (text string, cut bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range len(s.events) { // answers to reads given up on
		<-s.events
	}
	sel, err := s.atom(name)
	if err != nil {
		return "", false, err
	}
	own, err := xproto.GetSelectionOwner(s.x, sel).Reply()
	if err != nil {
		return "", false, err
	}
	if own.Owner == xproto.WindowNone {
		return "", false, nil
	}
	prop, err := s.atom("PROCTOR_SELECTION")
	if err != nil {
		return "", false, err
	}
	incr, err := s.atom("INCR")
	if err != nil {
		return "", false, err
	}
	for _, target := range []string{"UTF8_STRING", "STRING"} {
		t, err := s.atom(target)
		if err != nil {
			return "", false, err
		}
		if err := xproto.ConvertSelectionChecked(s.x, s.win, sel, t, prop, xproto.TimeCurrentTime).Check(); err != nil {
			return "", false, err
		}
		var n xproto.SelectionNotifyEvent
		if err := s.wait(ctx, func(ev xgb.Event) bool {
			e, ok := ev.(xproto.SelectionNotifyEvent)
			n = e
			return ok && e.Requestor == s.win && e.Selection == sel
		}); err != nil {
			return "", false, err
		}
		if n.Property == xproto.AtomNone {
			continue // the owner has no text of this target
		}
		r, err := xproto.GetProperty(s.x, true, s.win, prop, xproto.GetPropertyTypeAny, 0, uint32(limit/4+1)).Reply()
		if err != nil {
			return "", false, err
		}
		if r.Type != incr {
			return cutTo(r.Value, limit, r.BytesAfter > 0)
		}
		return s.incremental(ctx, prop, limit)
	}
	return "", false, nil
}

// incremental reads an INCR transfer: each piece is a new value of the
// property, read and deleted, until an empty one. A transfer over limit
// is read to its end and cut, so that the owner is not left waiting.
func (s *Selections) incremental(ctx context.Context, prop xproto.Atom, limit int) (string, bool, error) {
	var buf []byte
	cut := false
	for {
		if err := s.wait(ctx, func(ev xgb.Event) bool {
			e, ok := ev.(xproto.PropertyNotifyEvent)
			return ok && e.Window == s.win && e.Atom == prop && e.State == xproto.PropertyNewValue
		}); err != nil {
			return "", false, err
		}
		r, err := xproto.GetProperty(s.x, true, s.win, prop, xproto.GetPropertyTypeAny, 0, 1<<20).Reply()
		if err != nil {
			return "", false, err
		}
		if len(r.Value) == 0 {
			text, c, err := cutTo(buf, limit, cut)
			return text, c, err
		}
		if room := limit + 1 - len(buf); room > 0 {
			buf = append(buf, r.Value[:min(room, len(r.Value))]...)
		} else {
			cut = true
		}
	}
}

// wait takes events until one matches, ctx ends or the owner has taken 5
// seconds.
func (s *Selections) wait(ctx context.Context, match func(xgb.Event) bool) error {
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case ev := <-s.events:
			if match(ev) {
				return nil
			}
		case <-s.done:
			return ErrClosed
		case <-t.C:
			return ErrNoAnswer
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func cutTo(b []byte, limit int, more bool) (string, bool, error) {
	if len(b) > limit {
		return string(b[:limit]), true, nil
	}
	return string(b), more, nil
}

// dialOwn connects to the local display (":5") with cookie as its
// MIT-MAGIC-COOKIE-1 (nil: no credentials): a connection of a watcher's
// or a reader's own, beside the Conn of the desktop's input and screen.
func dialOwn(display string, cookie []byte) (*xgb.Conn, error) {
	path, err := socketPath(display)
	if err != nil {
		return nil, err
	}
	nc, err := net.DialTimeout("unix", path, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connect to X display %s: %w", display, err)
	}
	cc := &cookieConn{Conn: nc}
	if cookie != nil {
		cc.name, cc.data = "MIT-MAGIC-COOKIE-1", cookie
	}
	x, err := xgb.NewConnNet(cc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("connect to X display %s: %w", display, err)
	}
	return x, nil
}
