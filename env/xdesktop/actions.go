package xdesktop

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/internal/atspi"
	"github.com/proctor-eval/proctor/internal/x11"
	"github.com/proctor-eval/proctor/observe"
)

// Timing of synthetic input.
const (
	clickGap = 40 * time.Millisecond // between the clicks of a double or triple click
	// pressGap separates a pointer move from the press and the press from
	// the release: toolkits (Qt) drop a click whose press arrives with the
	// move that brought the pointer onto the widget.
	pressGap     = 15 * time.Millisecond
	dragSteps    = 12              // pointer moves of a drag
	notchPerPage = 10              // wheel notches of a page scroll
	codeTimeout  = 2 * time.Minute // a CODE action's time limit
)

// onScreen refuses a point off the screen, where X would clamp or wrap it.
func (d *Desktop) onScreen(x, y int) error {
	if w, h := d.x.Size(); x < 0 || y < 0 || x >= w || y >= h {
		return fmt.Errorf("%w: point (%d, %d) is off the %dx%d screen", env.ErrBadAction, x, y, w, h)
	}
	return nil
}

// Do performs the actions in order and records each one. A click records
// the accessibility element under the pointer before the click. After the
// last action it waits for the screen to settle (see settle.go).
func (d *Desktop) Do(ctx context.Context, acts []action.Action) ([]action.Step, error) {
	began := time.Now()
	var steps []action.Step
	for i, a := range acts {
		if err := ctx.Err(); err != nil {
			return steps, err
		}
		if err := d.alive(); err != nil {
			return steps, err
		}
		st, err := d.do(ctx, a)
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

// target resolves the action's element target to a screen point.
func (d *Desktop) target(ctx context.Context, t *action.Target) (int, int, error) {
	switch {
	case t.Tag > 0 || t.Index != nil:
		tag := t.Tag
		if t.Index != nil {
			tag = *t.Index
		}
		d.mu.Lock()
		marks := d.marks
		d.mu.Unlock()
		if marks == nil {
			var err error
			if marks, err = d.Marks(ctx); err != nil {
				return 0, 0, err
			}
		}
		m, ok := observe.Lookup(marks, tag)
		if !ok {
			return 0, 0, fmt.Errorf("%w: no mark %s among the %d of the last observation", env.ErrNotFound, t, len(marks))
		}
		x, y := m.Center()
		return x, y, d.onScreen(x, y)
	default:
		tree, err := d.Tree(ctx)
		if err != nil {
			return 0, 0, err
		}
		r, err := tree.Resolve(*t, d.size())
		if err != nil {
			return 0, 0, err // observe.ErrNotFound is env.ErrNotFound
		}
		if r.Ambiguous {
			d.mu.Lock()
			d.ambiguous = r.Matches
			d.mu.Unlock()
		}
		x, y := r.Box.Center()
		return x, y, d.onScreen(x, y)
	}
}

// point resolves where a pointer action acts: its target, its point, or
// nowhere (the pointer stays).
func (d *Desktop) point(ctx context.Context, a action.Action) (x, y int, ok bool, err error) {
	switch {
	case a.Target != nil:
		x, y, err = d.target(ctx, a.Target)
		return x, y, err == nil, err
	case a.Point != nil:
		if x, y, err = a.Point.Pixels(d.size()); err != nil {
			return 0, 0, false, fmt.Errorf("%w: %v", env.ErrBadAction, err)
		}
		return x, y, true, nil
	}
	return 0, 0, false, nil
}

func buttonNumber(b action.Button) byte {
	switch b {
	case action.Right:
		return 3
	case action.Middle:
		return 2
	}
	return 1
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

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
	if n := t.At(x, y); n != nil {
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
		top, ok := pickTop(tops, win, x, y, app.WindowCoords)
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
func pickTop(tops []atspi.Top, win x11.Window, x, y int, windowCoords bool) (atspi.Top, bool) {
	if !win.Popup {
		for _, t := range tops {
			if t.Name == win.Title {
				return t, true
			}
		}
		return tops[0], true
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

// do performs one action and records it, with the number of elements its
// target matched when the choice among them fell to document order.
func (d *Desktop) do(ctx context.Context, a action.Action) (action.Step, error) {
	d.mu.Lock()
	d.ambiguous = 0
	d.mu.Unlock()
	st, err := d.act(ctx, a)
	d.mu.Lock()
	st.Ambiguous = d.ambiguous
	d.mu.Unlock()
	return st, err
}

func (d *Desktop) act(ctx context.Context, a action.Action) (action.Step, error) {
	st := action.Step{Action: a}
	if err := a.Validate(); err != nil {
		return st, fmt.Errorf("%w: %v", env.ErrBadAction, err)
	}
	// Every loop below looks at ctx too: no input once it is done.
	if err := ctx.Err(); err != nil {
		return st, err
	}
	x := d.x
	at := func(px, py int) { st.At = &[2]int{px, py} }
	switch a.Kind {
	case action.Move:
		px, py, _, err := d.point(ctx, a)
		if err != nil {
			return st, err
		}
		at(px, py)
		return st, x.Move(px, py)
	case action.MoveRel, action.DragRel:
		cx, cy, err := x.Pointer()
		if err != nil {
			return st, err
		}
		off := a.Point
		if a.Kind == action.DragRel {
			off = a.To
		}
		tx, ty := cx+int(math.Round(off.X)), cy+int(math.Round(off.Y))
		if err := d.onScreen(tx, ty); err != nil {
			return st, err
		}
		at(tx, ty)
		if a.Kind == action.MoveRel {
			return st, x.Move(tx, ty)
		}
		return st, d.drag(ctx, cx, cy, tx, ty, a)
	case action.Click:
		px, py, ok, err := d.point(ctx, a)
		if err != nil {
			return st, err
		}
		if !ok {
			if px, py, err = x.Pointer(); err != nil {
				return st, err
			}
		}
		at(px, py)
		if err := x.Move(px, py); err != nil {
			return st, err
		}
		// The element under the point is read while the pointer rests
		// before the press, so that the record costs no time of its own
		// up to that gap; the press waits for it.
		rec := make(chan string, 1)
		go func() { rec <- d.describeAt(ctx, px, py) }()
		b := buttonNumber(a.Button)
		for i := 0; i < a.Clicks(); i++ {
			gap := pressGap
			if i > 0 {
				gap = clickGap
			}
			if err := sleep(ctx, gap); err != nil {
				return st, err
			}
			if i == 0 {
				st.Element = <-rec
			}
			if err := x.Button(b, true); err != nil {
				return st, err
			}
			if err := sleep(ctx, pressGap); err != nil {
				x.Button(b, false)
				return st, err
			}
			if err := x.Button(b, false); err != nil {
				return st, err
			}
		}
		return st, nil
	case action.Drag:
		fx, fy, ok, err := d.point(ctx, action.Action{Point: a.Point})
		if err != nil {
			return st, err
		}
		if !ok {
			if fx, fy, err = x.Pointer(); err != nil {
				return st, err
			}
		}
		var tx, ty int
		if a.Target != nil {
			tx, ty, err = d.target(ctx, a.Target)
		} else {
			tx, ty, _, err = d.point(ctx, action.Action{Point: a.To})
		}
		if err != nil {
			return st, err
		}
		at(tx, ty)
		return st, d.drag(ctx, fx, fy, tx, ty, a)
	case action.Scroll:
		px, py, ok, err := d.point(ctx, a)
		if err != nil {
			return st, err
		}
		if ok {
			at(px, py)
			if err := x.Move(px, py); err != nil {
				return st, err
			}
		}
		dx, dy := a.DX, a.DY
		if a.Pages != 0 {
			dy = int(math.Round(a.Pages * notchPerPage))
		}
		for _, s := range []struct {
			n       int
			neg, ps byte
		}{{dy, 4, 5}, {dx, 6, 7}} {
			b := s.ps
			if s.n < 0 {
				b = s.neg
			}
			for i := 0; i < abs(s.n); i++ {
				if err := ctx.Err(); err != nil {
					return st, err
				}
				if err := x.Button(b, true); err != nil {
					return st, err
				}
				if err := x.Button(b, false); err != nil {
					return st, err
				}
			}
		}
		return st, nil
	case action.MouseDown, action.MouseUp:
		px, py, ok, err := d.point(ctx, a)
		if err != nil {
			return st, err
		}
		if ok {
			at(px, py)
			if a.Kind == action.MouseDown {
				st.Element = d.describeAt(ctx, px, py)
			}
			if err := x.Move(px, py); err != nil {
				return st, err
			}
		}
		return st, x.Button(buttonNumber(a.Button), a.Kind == action.MouseDown)
	case action.Type:
		if a.Target != nil {
			px, py, err := d.target(ctx, a.Target)
			if err != nil {
				return st, err
			}
			at(px, py)
			st.Element = d.describeAt(ctx, px, py)
			if err := x.Move(px, py); err != nil {
				return st, err
			}
			if err := click(x, 1); err != nil {
				return st, err
			}
		}
		if a.Clear {
			if err := d.keys(ctx, []string{"ctrl", "a"}, true); err != nil {
				return st, err
			}
			if err := d.keys(ctx, []string{"delete"}, false); err != nil {
				return st, err
			}
		}
		for _, r := range a.Text {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			if err := x.TypeRune(r); err != nil {
				return st, err
			}
		}
		return st, nil
	case action.Key:
		return st, d.keys(ctx, a.Keys, false)
	case action.Hotkey:
		return st, d.keys(ctx, a.Keys, true)
	case action.KeyDown, action.KeyUp:
		sym, err := keysym(a.Keys[0])
		if err != nil {
			return st, fmt.Errorf("%w: %v", env.ErrBadAction, err)
		}
		return st, x.KeySym(sym, a.Kind == action.KeyDown)
	case action.Wait:
		return st, sleep(ctx, time.Duration(a.WaitSeconds()*float64(time.Second)))
	case action.Code:
		if a.Lang != "" && a.Lang != "bash" && a.Lang != "sh" && a.Lang != "shell" {
			return st, fmt.Errorf("%w: code in %q cannot run on this desktop (bash only)", env.ErrBadAction, a.Lang)
		}
		res, err := d.Run(ctx, a.Text, codeTimeout)
		if err != nil {
			return st, err
		}
		st.Output = fmt.Sprintf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
		return st, nil
	case action.Done, action.Fail, action.Answer, action.Plan, action.Reflect:
		return st, nil
	case action.API:
		return st, fmt.Errorf("%w: no API %q is registered on this desktop", env.ErrBadAction, a.Name)
	default:
		return st, fmt.Errorf("%w: %s is for browsers or phones, not an X11 desktop", env.ErrBadAction, a.Kind)
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func click(x *x11.Conn, b byte) error {
	if err := x.Button(b, true); err != nil {
		return err
	}
	return x.Button(b, false)
}

// keys presses keys one after another, or together (a hotkey: pressed in
// order and released in reverse, never left half pressed).
func (d *Desktop) keys(ctx context.Context, names []string, together bool) error {
	x := d.x
	for i, n := range names {
		if err := ctx.Err(); err != nil && (!together || i == 0) {
			return err
		}
		sym, err := keysym(n)
		if err != nil {
			return fmt.Errorf("%w: %v", env.ErrBadAction, err)
		}
		if err := x.KeySym(sym, true); err != nil {
			return err
		}
		if !together {
			if err := x.KeySym(sym, false); err != nil {
				return err
			}
			continue
		}
		if i == len(names)-1 {
			for j := len(names) - 1; j >= 0; j-- {
				s, _ := keysym(names[j])
				if err := x.KeySym(s, false); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// drag presses at (fx, fy), moves to (tx, ty) in steps over the action's
// duration, and releases.
func (d *Desktop) drag(ctx context.Context, fx, fy, tx, ty int, a action.Action) error {
	x := d.x
	b := buttonNumber(a.Button)
	if err := x.Move(fx, fy); err != nil {
		return err
	}
	if err := x.Button(b, true); err != nil {
		return err
	}
	step := time.Duration(a.Duration * float64(time.Second) / dragSteps)
	for i := 1; i <= dragSteps; i++ {
		if err := ctx.Err(); err != nil {
			x.Button(b, false)
			return err
		}
		px := fx + (tx-fx)*i/dragSteps
		py := fy + (ty-fy)*i/dragSteps
		if err := x.Move(px, py); err != nil {
			return err
		}
		if step > 0 {
			if err := sleep(ctx, step); err != nil {
				x.Button(b, false)
				return err
			}
		}
	}
	return x.Button(b, false)
}

// keysym resolves a key name in any convention action.NormalizeKey knows
// ("Return", "F5", "CTRL"), so actions sent straight to the API work as
// parsed ones do.
func keysym(name string) (xproto.Keysym, error) {
	if k, ok := action.NormalizeKey(name); ok {
		name = k
	}
	return x11.KeyKeysym(name)
}
