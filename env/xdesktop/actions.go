package xdesktop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env/input"
	"github.com/proctor-eval/proctor/internal/atspi"
	"github.com/proctor-eval/proctor/internal/x11"
	"github.com/proctor-eval/proctor/observe"
)

// codeTimeout is a code action's time limit.
const codeTimeout = 2 * time.Minute

// targetLag is how long a pointer action looks again for an element the
// tree lacks (see input.Interpreter.Lag).
const targetLag = 1500 * time.Millisecond

// Do performs the actions in order and records each one. A click records
// the accessibility element under the pointer before the click. After the
// last action it waits for the screen to settle (see settle.go).
func (d *Desktop) Do(ctx context.Context, acts []action.Action) ([]action.Step, error) {
	began := time.Now()
	in := &input.Interpreter{Device: xdev{d.x}, Place: place{d}, Name: "this X11 desktop", Lag: targetLag}
	var steps []action.Step
	for i, a := range acts {
		if err := ctx.Err(); err != nil {
			return steps, err
		}
		if err := d.alive(); err != nil {
			return steps, err
		}
		st, err := in.Do(ctx, a)
		if err != nil {
			return steps, fmt.Errorf("action %d (%s): %w", i+1, a, err)
		}
		steps = append(steps, st)
	}
	if err := d.x.Sync(); err != nil {
		return steps, err
	}
	return steps, d.settle(ctx, steps, began)
}

// xdev is the display's pointer and keyboard, through XTEST.
type xdev struct{ x *x11.Conn }

func (v xdev) Size() action.Size {
	w, h := v.x.Size()
	return action.Size{W: w, H: h}
}
func (v xdev) Pointer() (int, int, error)      { return v.x.Pointer() }
func (v xdev) Move(x, y int) error             { return v.x.Move(x, y) }
func (v xdev) Button(n int, down bool) error   { return v.x.Button(byte(n), down) }
func (v xdev) Key(sym uint32, down bool) error { return v.x.KeySym(xproto.Keysym(sym), down) }
func (v xdev) TypeRune(r rune) error           { return v.x.TypeRune(r) }

// place gives the interpreter the desktop's elements and shell.
type place struct{ d *Desktop }

func (p place) Target(ctx context.Context, t *action.Target) (int, int, int, error) {
	return p.d.target(ctx, t)
}
func (p place) Describe(ctx context.Context, x, y int) string { return p.d.describeAt(ctx, x, y) }
func (p place) FindText(ctx context.Context, text string) (observe.TextSpot, error) {
	t, err := p.d.Tree(ctx)
	if err != nil {
		return observe.TextSpot{}, err
	}
	return t.FindText(text, p.d.size()), nil
}
func (p place) Shell(ctx context.Context, command string) (string, error) {
	res, err := p.d.Run(ctx, command, codeTimeout)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr), nil
}

// target resolves the action's element target to a screen point, with
// the number of elements a role and name matched when document order
// picked one.
func (d *Desktop) target(ctx context.Context, t *action.Target) (int, int, int, error) {
	switch {
	case t.Tag > 0 || t.Index != nil:
		d.mu.Lock()
		marks := d.marks
		d.mu.Unlock()
		if marks == nil {
			var err error
			if marks, err = d.Marks(ctx); err != nil {
				return 0, 0, 0, err
			}
		}
		m, err := observe.LookupTarget(marks, *t)
		if err != nil {
			return 0, 0, 0, err
		}
		x, y := m.Center()
		return x, y, 0, nil
	default:
		tree, err := d.Tree(ctx)
		if err != nil {
			return 0, 0, 0, err
		}
		r, err := tree.Resolve(*t, d.size())
		if err != nil {
			return 0, 0, 0, err // observe.ErrNotFound is env.ErrNotFound
		}
		matches := 0
		if r.Ambiguous {
			matches = r.Matches
		}
		x, y := r.Box.Center()
		return x, y, matches, nil
	}
}

func sleep(ctx context.Context, d time.Duration) error { return input.Sleep(ctx, d) }

// describeAt names the smallest clickable element under (x, y) for the
// process record. It asks the application under the point directly,
// descending with GetAccessibleAtPoint, and reads the whole tree only
// when that fails.
func (d *Desktop) describeAt(ctx context.Context, x, y int) string {
	if desc, ok := d.describeFast(ctx, x, y); ok {
		return desc
	}
	t, err := d.Tree(ctx)
	if err != nil {
		return ""
	}
	var n *observe.Located
	if win, ok, err := d.x.WindowAt(x, y); err == nil && ok && win.Popup {
		n = t.AtIn(x, y, action.Box{X: win.X, Y: win.Y, W: win.W, H: win.H})
	} else {
		n = t.At(x, y)
	}
	if n != nil {
		return observe.Describe(n.Node)
	}
	return ""
}

func (d *Desktop) describeFast(ctx context.Context, x, y int) (string, bool) {
	win, ok, err := d.x.WindowAt(x, y)
	if err != nil {
		return "", false
	}
	if !ok {
		return "", true // the desktop's background: no element
	}
	if win.PID == 0 {
		return "", false
	}
	apps, err := d.a11y.AppsWithPIDs(ctx)
	if err != nil {
		return "", false
	}
	for _, app := range apps {
		if app.PID != win.PID {
			continue
		}
		tops, err := d.a11y.TopLevels(ctx, app)
		if err != nil || len(tops) == 0 {
			return "", false
		}
		// The titles of the app's other windows, listed only when a
		// top-level inside this one holds the point.
		others := func() []string {
			var titles []string
			if wins, err := d.x.Windows(); err == nil {
				for _, w := range wins {
					if w.PID == win.PID && w.ID != win.ID && !w.Hidden {
						titles = append(titles, w.Title)
					}
				}
			}
			return titles
		}
		top, ok := pickTop(tops, win, x, y, app.WindowCoords, others)
		if !ok {
			return "", false
		}
		px, py, coords := x, y, atspi.Screen
		if app.WindowCoords {
			coords = atspi.Window
			px = x - win.X - max(win.W-top.Box.W, 0)/2 + top.Box.X
			py = y - win.Y - max(win.H-top.Box.H, 0)/2 + top.Box.Y
		}
		last, err := d.a11y.PathAt(ctx, top, px, py, coords)
		if err != nil {
			return "", false
		}
		// Some containers (GTK 3 notebooks) answer GetAccessibleAtPoint
		// with nothing although their pages hold the point: when the
		// descent stops short of an interactive node, read the tree.
		if last.Interactive() {
			return observe.Describe(last), true
		}
		return "", false
	}
	return "", false
}

// pickTop chooses the accessibility top-level that an X window shows. A
// managed window is found by its title. A popup (an open menu, which has
// no title) is the top-level whose box is the window's, or the smallest
// one inside the window that holds the point; never the main window
// beneath it. Applications in window coordinates (GTK 4) are
// matched by size. A popup with no top-level of its own is not found.
//
// Some applications draw their dialogs inside their main window, each a
// top-level of its own with no X window (Stellarium): a showing top-level
// that lies inside the window, holds the point, and is named by none of
// the app's other windows (others) is drawn over the window's own, and
// the smallest such is chosen.
func pickTop(tops []atspi.Top, win x11.Window, x, y int, windowCoords bool, others func() []string) (atspi.Top, bool) {
	if !win.Popup {
		t := managedTop(tops, win, windowCoords)
		if windowCoords {
			return t, true
		}
		wb := action.Box{X: win.X, Y: win.Y, W: win.W, H: win.H}
		best := -1
		var titles []string
		for i, in := range tops {
			b := in.Box
			if in == t || !b.Contains(x, y) || b.W*b.H >= t.Box.W*t.Box.H ||
				b.X < wb.X || b.Y < wb.Y || b.X+b.W > wb.X+wb.W || b.Y+b.H > wb.Y+wb.H {
				continue
			}
			if titles == nil {
				titles = others()
			}
			if namedBy(titles, in.Name) {
				continue
			}
			if best < 0 || b.W*b.H < tops[best].Box.W*tops[best].Box.H {
				best = i
			}
		}
		if best >= 0 {
			return tops[best], true
		}
		return t, true
	}
	best := -1
	for i, t := range tops {
		b := t.Box
		if windowCoords {
			if b.W == win.W && b.H == win.H {
				return t, true
			}
			continue
		}
		if b == (action.Box{X: win.X, Y: win.Y, W: win.W, H: win.H}) {
			return t, true
		}
		// A popup's top-level may carry a shadow margin: a box inside
		// the window, holding the point, is the popup's too.
		if b.Contains(x, y) && b.X >= win.X && b.Y >= win.Y && b.X+b.W <= win.X+win.W && b.Y+b.H <= win.Y+win.H &&
			(best < 0 || b.W*b.H < tops[best].Box.W*tops[best].Box.H) {
			best = i
		}
	}
	if best >= 0 {
		return tops[best], true
	}
	// Menus of a menu bar (GTK 3) and popovers (GTK 4) are no top-level
	// of their own: the caller reads the tree.
	return atspi.Top{}, false
}

// namedBy reports whether one of the window titles names a top-level: the
// title is its name, or begins with it (KDE adds " — APP").
func namedBy(titles []string, name string) bool {
	return slices.ContainsFunc(titles, func(t string) bool {
		return t == name || name != "" && strings.HasPrefix(t, name)
	})
}

// managedTop is the top-level of a managed window: the one its title
// names, else the one whose box it is, else the first.
func managedTop(tops []atspi.Top, win x11.Window, windowCoords bool) atspi.Top {
	for _, t := range tops {
		if t.Name == win.Title {
			return t
		}
	}
	// KDE adds " — APP" to a dialog's window title, which its
	// top-level's name lacks: the longest name that begins the title.
	best := -1
	for i, t := range tops {
		if t.Name != "" && strings.HasPrefix(win.Title, t.Name) && (best < 0 || len(t.Name) > len(tops[best].Name)) {
			best = i
		}
	}
	if best >= 0 {
		return tops[best]
	}
	// A frame with no name (KAlgebra's main window) is its box.
	for _, t := range tops {
		if !windowCoords && t.Box == (action.Box{X: win.X, Y: win.Y, W: win.W, H: win.H}) {
			return t
		}
	}
	return tops[0]
}
