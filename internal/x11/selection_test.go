package x11

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// owner holds the clipboard of display on a connection of its own and
// answers requests for it as a pasting client's peer does: with UTF-8
// text (only STRING when stringOnly), by increments of chunk bytes when
// the text is longer than chunk, or not at all when silent.
type owner struct {
	data       string
	chunk      int
	stringOnly bool
	silent     bool
}

func (o owner) start(t *testing.T, display string) {
	t.Helper()
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	atom := func(name string) xproto.Atom {
		r, err := xproto.InternAtom(x, false, uint16(len(name)), name).Reply()
		if err != nil {
			t.Fatal(err)
		}
		return r.Atom
	}
	clip, utf8, str, incr := atom("CLIPBOARD"), atom("UTF8_STRING"), atom("STRING"), atom("INCR")
	root := xproto.Setup(x).DefaultScreen(x).Root
	win, _ := xproto.NewWindowId(x)
	if err := xproto.CreateWindowChecked(x, 0, win, root, 0, 0, 1, 1, 0, xproto.WindowClassInputOnly, 0, 0, nil).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.SetSelectionOwnerChecked(x, win, clip, xproto.TimeCurrentTime).Check(); err != nil {
		t.Fatal(err)
	}
	notify := func(e xproto.SelectionRequestEvent, prop xproto.Atom) {
		n := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: prop}
		xproto.SendEvent(x, false, e.Requestor, 0, string(n.Bytes()))
	}
	go func() {
		type transfer struct {
			req  xproto.SelectionRequestEvent
			rest string
			done bool
		}
		var cur *transfer
		for {
			ev, xerr := x.WaitForEvent()
			if ev == nil && xerr == nil {
				return
			}
			switch e := ev.(type) {
			case xproto.SelectionRequestEvent:
				want := utf8
				if o.stringOnly {
					want = str
				}
				switch {
				case o.silent:
				case e.Target != want:
					notify(e, xproto.AtomNone)
				case len(o.data) <= o.chunk:
					xproto.ChangeProperty(x, xproto.PropModeReplace, e.Requestor, e.Property, e.Target, 8, uint32(len(o.data)), []byte(o.data))
					notify(e, e.Property)
				default:
					xproto.ChangeWindowAttributes(x, e.Requestor, xproto.CwEventMask, []uint32{xproto.EventMaskPropertyChange})
					n := make([]byte, 4)
					n[0], n[1], n[2], n[3] = byte(len(o.data)), byte(len(o.data)>>8), byte(len(o.data)>>16), byte(len(o.data)>>24)
					xproto.ChangeProperty(x, xproto.PropModeReplace, e.Requestor, e.Property, incr, 32, 1, n)
					cur = &transfer{req: e, rest: o.data}
					notify(e, e.Property)
				}
			case xproto.PropertyNotifyEvent:
				if cur == nil || cur.done || e.Window != cur.req.Requestor || e.Atom != cur.req.Property || e.State != xproto.PropertyDelete {
					continue
				}
				piece := cur.rest[:min(o.chunk, len(cur.rest))]
				cur.rest = cur.rest[len(piece):]
				cur.done = piece == ""
				xproto.ChangeProperty(x, xproto.PropModeReplace, cur.req.Requestor, cur.req.Property, cur.req.Target, 8, uint32(len(piece)), []byte(piece))
			}
		}
	}()
}

func TestSelections(t *testing.T) {
	long := strings.Repeat("clipboard ✓ ", 30000) // 390 kB: sent by increments
	tests := []struct {
		name  string
		owner *owner
		limit int
		want  string
		cut   bool
	}{
		{"nobody owns it", nil, 100, "", false},
		{"UTF-8 text", &owner{data: "copied ✓", chunk: 1 << 16}, 100, "copied ✓", false},
		{"only STRING", &owner{data: "plain", chunk: 1 << 16, stringOnly: true}, 100, "plain", false},
		{"cut", &owner{data: "0123456789", chunk: 1 << 16}, 4, "0123", true},
		{"by increments", &owner{data: long, chunk: 1 << 15}, 1 << 20, long, false},
		{"by increments, cut", &owner{data: long, chunk: 1 << 15}, 1000, long[:1000], true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			display := xvfb(t)
			if tc.owner != nil {
				tc.owner.start(t, display)
			}
			s, err := DialSelections(display, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for range 2 { // the second read on the same connection too
				got, cut, err := s.Read(context.Background(), "CLIPBOARD", tc.limit)
				if err != nil || got != tc.want || cut != tc.cut {
					t.Fatalf("Read = %.40q (%d bytes), cut %v, %v; want %.40q (%d bytes), cut %v", got, len(got), cut, err, tc.want, len(tc.want), tc.cut)
				}
			}
		})
	}
}

// An owner that never answers costs the read 5 seconds at most, or the
// context's time.
func TestSelectionsOwnerSilent(t *testing.T) {
	display := xvfb(t)
	(&owner{silent: true}).start(t, display)
	s, err := DialSelections(display, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, _, err := s.Read(ctx, "CLIPBOARD", 100); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read = %v, want the context's deadline", err)
	}
	if _, _, err := s.Read(context.Background(), "CLIPBOARD", 100); !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("Read = %v, want ErrNoAnswer", err)
	}
}

// What xclip copies, the reader pastes.
func TestSelectionsOfXclip(t *testing.T) {
	if _, err := exec.LookPath("xclip"); err != nil {
		t.Skip("xclip is not installed")
	}
	display := xvfb(t)
	cmd := exec.Command("xclip", "-selection", "clipboard", "-display", display)
	cmd.Stdin = strings.NewReader("from xclip ✓")
	if err := cmd.Run(); err != nil { // xclip forks an owner that stays
		t.Fatal(err)
	}
	// Its owner ends with the X server, at the test's end.
	s, err := DialSelections(display, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, _, err := s.Read(context.Background(), "CLIPBOARD", 100); err != nil || got != "from xclip ✓" {
		t.Fatalf("Read = %q, %v", got, err)
	}
}
