package x11

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/damage"
	"github.com/jezek/xgb/xproto"
)

// Damage watches the screen for drawing, through the X DAMAGE extension,
// so that a caller can wait until the screen has settled: until no
// application has drawn for a quiet period.
//
// It has an X connection of its own. The server reports every rectangle
// drawn on the screen (level RawRectangles on the root window, whose
// damage includes every window on it) as an event, and one goroutine reads
// them as they come, so that the events never pile up in xgb's queue. A
// Conn, which reads no events, is not involved. Close ends the goroutine
// and the connection; so does the X server's going away.
//
// Caret-sized rectangles are not counted (see CaretThickness): a blinking
// text cursor would otherwise pass for an application's answer to input,
// and one blinking faster than the quiet period would keep the screen
// from ever settling.
type Damage struct {
	x    *xgb.Conn
	id   damage.Damage
	done chan struct{} // closed when the reader has stopped

	mu      sync.Mutex
	last    time.Time     // when the last counted rectangle arrived
	changed chan struct{} // closed, and replaced, at every counted rectangle
	counted int           // rectangles counted
	ignored int           // caret-sized rectangles left out
	err     error         // why the reader stopped
}

// Caret bounds the rectangles Damage leaves out: a text cursor is at most
// CaretThickness pixels across and CaretLength long. Measured on this
// desktop: mousepad's caret blinks as a 3x18 rectangle, LibreOffice
// Writer's as 1x18, each on its own; typed text redraws at least the glyphs
// (a whole line in both). A caret that blinks by redrawing a whole text
// field (LibreOffice's dialogs redraw a 639x48 field) cannot be told from
// typing by its rectangle; it blinks no faster than every 400 ms, which a
// quiet period shorter than that outlasts.
const (
	CaretThickness = 3
	CaretLength    = 48
)

// caretSized reports whether r could be a text cursor (vertical, or
// horizontal as an underline cursor is).
func caretSized(r xproto.Rectangle) bool {
	thin, long := min(r.Width, r.Height), max(r.Width, r.Height)
	return thin <= CaretThickness && long <= CaretLength
}

// WatchDamage connects to the local display (":5") with cookie as its
// MIT-MAGIC-COOKIE-1 (nil: no credentials) and starts watching the screen.
func WatchDamage(display string, cookie []byte) (*Damage, error) {
	x, err := dialOwn(display, cookie)
	if err != nil {
		return nil, err
	}
	m, err := watch(x)
	if err != nil {
		x.Close()
		return nil, fmt.Errorf("watch X display %s for drawing: %w", display, err)
	}
	return m, nil
}

func watch(x *xgb.Conn) (*Damage, error) {
	err := initExt(x, "DAMAGE")
	if err != nil {
		return nil, fmt.Errorf("no DAMAGE extension: %w", err)
	}
	// The server refuses every other DAMAGE request from a client that
	// has not said which version it speaks.
	v, err := damage.QueryVersion(x, 1, 1).Reply()
	if err != nil {
		return nil, fmt.Errorf("DAMAGE QueryVersion: %w", err)
	}
	if v.MajorVersion < 1 {
		return nil, fmt.Errorf("DAMAGE version %d.%d is older than 1.0", v.MajorVersion, v.MinorVersion)
	}
	id, err := damage.NewDamageId(x)
	if err != nil {
		return nil, err
	}
	root := xproto.Setup(x).DefaultScreen(x).Root
	if err := damage.CreateChecked(x, id, xproto.Drawable(root), damage.ReportLevelRawRectangles).Check(); err != nil {
		return nil, fmt.Errorf("DAMAGE Create on the root window: %w", err)
	}
	// A new damage object starts with the whole screen damaged, which the
	// server reports at once: the event is queued by the time the check's
	// reply has come, and it is no change.
	for {
		ev, xerr := x.PollForEvent()
		if ev == nil && xerr == nil {
			break // the queue is empty
		}
		if _, ok := ev.(damage.NotifyEvent); ok {
			break
		}
	}
	m := &Damage{x: x, id: id, done: make(chan struct{}), changed: make(chan struct{})}
	go m.read()
	return m, nil
}

// read takes every event off the connection until it closes.
func (m *Damage) read() {
	defer close(m.done)
	for {
		ev, xerr := m.x.WaitForEvent()
		if ev == nil && xerr == nil {
			m.mu.Lock()
			m.err = ErrClosed
			m.mu.Unlock()
			m.x.Close() // ends xgb's goroutines, which outlive a lost server
			return
		}
		n, ok := ev.(damage.NotifyEvent)
		if !ok {
			continue // MappingNotify, which every client gets, and the like
		}
		now := time.Now()
		m.mu.Lock()
		if caretSized(n.Area) {
			m.ignored++
		} else {
			m.counted++
			m.last = now
			close(m.changed)
			m.changed = make(chan struct{})
		}
		m.mu.Unlock()
	}
}

// Close stops watching and ends the connection; it returns once the
// reading goroutine has stopped.
func (m *Damage) Close() error {
	m.x.Close()
	<-m.done
	return nil
}

// Done is closed once the watch has ended: after Close, or when the X
// server closed the connection.
func (m *Damage) Done() <-chan struct{} { return m.done }

// Counts returns how many rectangles have been drawn since the watch
// began: those counted, and the caret-sized ones left out.
func (m *Damage) Counts() (counted, ignored int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counted, m.ignored
}

// SettleOptions say how long Settle waits.
type SettleOptions struct {
	// Quiet is how long the screen must stay unchanged to count as
	// settled.
	Quiet time.Duration
	// React is how long, from the call, Settle waits for a first change
	// when none has come since the time it is given: an application busy
	// with the input draws nothing until it is done. Zero does not wait
	// for one.
	React time.Duration
	// Cap is the longest Settle waits; a screen still changing then (an
	// animation) is taken as it is.
	Cap time.Duration
}

// Validate checks that the options make sense.
func (o SettleOptions) Validate() error {
	switch {
	case o.Quiet <= 0:
		return fmt.Errorf("settle: quiet period %s is not positive", o.Quiet)
	case o.React < 0:
		return fmt.Errorf("settle: react time %s is negative", o.React)
	case o.Cap < o.Quiet || o.Cap < o.React:
		return fmt.Errorf("settle: cap %s is shorter than the quiet period %s or the react time %s", o.Cap, o.Quiet, o.React)
	}
	return nil
}

// Settled is what a Settle found.
type Settled struct {
	Waited  time.Duration // how long Settle waited
	Capped  bool          // the screen was still changing at the cap
	Changed bool          // the screen changed after the time given
}

// Settle waits until no counted rectangle has been drawn for o.Quiet,
// for at most o.Cap. Drawing after since counts as the screen's answer to
// what was done at since: when there is none yet, Settle waits up to
// o.React from its call for one. It returns early with ctx's error, and
// with ErrClosed once the X server has gone.
func (m *Damage) Settle(ctx context.Context, since time.Time, o SettleOptions) (Settled, error) {
	if err := o.Validate(); err != nil {
		return Settled{}, err
	}
	start := time.Now()
	deadline := start.Add(o.Cap)
	var res Settled
	timer := time.NewTimer(o.Cap)
	defer timer.Stop()
	for {
		m.mu.Lock()
		last, changed, err := m.last, m.changed, m.err
		m.mu.Unlock()
		now := time.Now()
		res.Waited = now.Sub(start)
		if err != nil {
			return res, err
		}
		var until time.Time // settled then, unless something is drawn
		if last.After(since) {
			res.Changed = true
			until = last.Add(o.Quiet)
		} else {
			until = later(since.Add(o.Quiet), start.Add(o.React))
		}
		if !now.Before(until) {
			return res, nil
		}
		if !now.Before(deadline) {
			res.Capped = true
			return res, nil
		}
		// Since Go 1.23, Reset leaves no stale tick in the channel.
		timer.Reset(min(until.Sub(now), deadline.Sub(now)))
		select {
		case <-timer.C:
		case <-changed:
		case <-m.done:
		case <-ctx.Done():
			res.Waited = time.Since(start)
			return res, ctx.Err()
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
