package vnc

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/internal/x11"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// Do performs the actions in order as RFB pointer and key events and
// records each one. The server's pointer position cannot be read over
// RFB: actions without a point act where this environment last put the
// pointer (the top-left corner before the first). Element targets and the
// record of the element under a click need the guest's tree.
func (e *Env) Do(ctx context.Context, acts []action.Action) ([]action.Step, error) {
	e.in.Lock()
	defer e.in.Unlock()
	var steps []action.Step
	for i, a := range acts {
		if err := ctx.Err(); err != nil {
			return steps, err
		}
		if err := e.alive(); err != nil {
			return steps, err
		}
		st, err := e.act(ctx, a)
		if err != nil {
			if aerr := e.alive(); aerr != nil && !env.AgentsFault(err) {
				err = aerr
			}
			return steps, fmt.Errorf("action %d (%s): %w", i+1, a, err)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// onScreen refuses a point off the framebuffer.
func (e *Env) onScreen(x, y int) error {
	if s := e.size(); x < 0 || y < 0 || x >= s.W || y >= s.H {
		return fmt.Errorf("%w: point (%d, %d) is off the %dx%d screen", env.ErrBadAction, x, y, s.W, s.H)
	}
	return nil
}

// target resolves an element target to a screen point with the guest's
// tree: a set-of-mark tag among the marks of the last screenshot, or a
// role and name. matches is how many elements a role and name matched
// when document order picked one.
func (e *Env) target(ctx context.Context, t *action.Target) (x, y, matches int, err error) {
	if e.guest == nil || !e.guestInfo.Has(task.CapTree) {
		return 0, 0, 0, e.missing("the element target "+t.String(), task.CapTree)
	}
	if t.Tag > 0 || t.Index != nil {
		tag := t.Tag
		if t.Index != nil {
			tag = *t.Index
		}
		e.mu.Lock()
		marks := e.marks
		e.mu.Unlock()
		m, ok := observe.Lookup(marks, tag)
		if !ok {
			return 0, 0, 0, fmt.Errorf("%w: no mark %s among the %d of the last screenshot with marks", env.ErrNotFound, t, len(marks))
		}
		x, y = m.Center()
		return x, y, 0, e.onScreen(x, y)
	}
	tree, err := e.guest.Tree(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	r, err := tree.Resolve(*t, e.size())
	if err != nil {
		return 0, 0, 0, err
	}
	if r.Ambiguous {
		matches = r.Matches
	}
	x, y = r.Box.Center()
	return x, y, matches, e.onScreen(x, y)
}

// describeAt names the element under (x, y) for the process record, from
// the guest's tree; "" without one.
func (e *Env) describeAt(ctx context.Context, x, y int) string {
	if e.guest == nil || !e.guestInfo.Has(task.CapTree) {
		return ""
	}
	t, err := e.guest.Tree(ctx)
	if err != nil {
		return ""
	}
	if n := t.At(x, y); n != nil {
		return observe.Describe(n.Node)
	}
	return ""
}

// point resolves where a pointer action acts: its target, its point, or
// where the pointer is (ok false).
func (e *Env) point(ctx context.Context, a action.Action, st *action.Step) (x, y int, ok bool, err error) {
	switch {
	case a.Target != nil:
		x, y, st.Ambiguous, err = e.target(ctx, a.Target)
		return x, y, err == nil, err
	case a.Point != nil:
		if x, y, err = a.Point.Pixels(e.size()); err != nil {
			return 0, 0, false, fmt.Errorf("%w: %v", env.ErrBadAction, err)
		}
		return x, y, true, nil
	}
	return e.x, e.y, false, nil
}

func buttonBit(b action.Button) uint8 {
	switch b {
	case action.Right:
		return bitRight
	case action.Middle:
		return bitMiddle
	}
	return bitLeft
}

// move puts the pointer at (x, y) with the held buttons.
func (e *Env) move(x, y int) error {
	e.mu.Lock()
	e.x, e.y = x, y
	e.mu.Unlock()
	return e.c.Pointer(x, y, e.buttons)
}

// button presses or releases the buttons of bit where the pointer is.
func (e *Env) button(bit uint8, down bool) error {
	if down {
		e.buttons |= bit
	} else {
		e.buttons &^= bit
	}
	return e.c.Pointer(e.x, e.y, e.buttons)
}

func (e *Env) act(ctx context.Context, a action.Action) (action.Step, error) {
	st := action.Step{Action: a}
	if err := a.Validate(); err != nil {
		return st, fmt.Errorf("%w: %v", env.ErrBadAction, err)
	}
	at := func(x, y int) { st.At = &[2]int{x, y} }
	switch a.Kind {
	case action.Move:
		x, y, _, err := e.point(ctx, a, &st)
		if err != nil {
			return st, err
		}
		at(x, y)
		return st, e.move(x, y)
	case action.MoveRel, action.DragRel:
		off := a.Point
		if a.Kind == action.DragRel {
			off = a.To
		}
		fx, fy := e.x, e.y
		tx, ty := fx+int(math.Round(off.X)), fy+int(math.Round(off.Y))
		if err := e.onScreen(tx, ty); err != nil {
			return st, err
		}
		at(tx, ty)
		if a.Kind == action.MoveRel {
			return st, e.move(tx, ty)
		}
		return st, e.drag(ctx, fx, fy, tx, ty, a)
	case action.Click:
		x, y, _, err := e.point(ctx, a, &st)
		if err != nil {
			return st, err
		}
		at(x, y)
		st.Element = e.describeAt(ctx, x, y)
		if err := e.move(x, y); err != nil {
			return st, err
		}
		bit := buttonBit(a.Button)
		for i := 0; i < a.Clicks(); i++ {
			gap := pressGap
			if i > 0 {
				gap = clickGap
			}
			if err := sleep(ctx, gap); err != nil {
				return st, err
			}
			if err := e.button(bit, true); err != nil {
				return st, err
			}
			if err := sleep(ctx, pressGap); err != nil {
				e.button(bit, false)
				return st, err
			}
			if err := e.button(bit, false); err != nil {
				return st, err
			}
		}
		return st, nil
	case action.Drag:
		fx, fy, _, err := e.point(ctx, action.Action{Point: a.Point}, &st)
		if err != nil {
			return st, err
		}
		var tx, ty int
		if a.Target != nil {
			tx, ty, st.Ambiguous, err = e.target(ctx, a.Target)
		} else {
			tx, ty, _, err = e.point(ctx, action.Action{Point: a.To}, &st)
		}
		if err != nil {
			return st, err
		}
		at(tx, ty)
		return st, e.drag(ctx, fx, fy, tx, ty, a)
	case action.Scroll:
		x, y, ok, err := e.point(ctx, a, &st)
		if err != nil {
			return st, err
		}
		if ok {
			at(x, y)
			if err := e.move(x, y); err != nil {
				return st, err
			}
		}
		dx, dy := a.DX, a.DY
		if a.Pages != 0 {
			dy = int(math.Round(a.Pages * notchPerPage))
		}
		for _, s := range []struct {
			n        int
			neg, pos uint8
		}{{dy, bitWheelUp, bitWheelDown}, {dx, bitWheelLeft, bitWheelRite}} {
			bit := s.pos
			if s.n < 0 {
				bit = s.neg
			}
			for range abs(s.n) {
				if err := ctx.Err(); err != nil {
					return st, err
				}
				if err := e.button(bit, true); err != nil {
					return st, err
				}
				if err := e.button(bit, false); err != nil {
					return st, err
				}
			}
		}
		return st, nil
	case action.MouseDown, action.MouseUp:
		x, y, ok, err := e.point(ctx, a, &st)
		if err != nil {
			return st, err
		}
		if ok {
			at(x, y)
			if a.Kind == action.MouseDown {
				st.Element = e.describeAt(ctx, x, y)
			}
			if err := e.move(x, y); err != nil {
				return st, err
			}
		}
		return st, e.button(buttonBit(a.Button), a.Kind == action.MouseDown)
	case action.Type:
		if a.Target != nil {
			x, y, matches, err := e.target(ctx, a.Target)
			if err != nil {
				return st, err
			}
			st.Ambiguous = matches
			at(x, y)
			st.Element = e.describeAt(ctx, x, y)
			if err := e.move(x, y); err != nil {
				return st, err
			}
			if err := e.button(bitLeft, true); err != nil {
				return st, err
			}
			if err := e.button(bitLeft, false); err != nil {
				return st, err
			}
		}
		if a.Clear {
			if err := e.keyNames(ctx, []string{"ctrl", "a"}, true); err != nil {
				return st, err
			}
			if err := e.keyNames(ctx, []string{"delete"}, false); err != nil {
				return st, err
			}
		}
		for _, r := range a.Text {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			sym := uint32(x11.RuneKeysym(r))
			if err := e.c.Key(sym, true); err != nil {
				return st, err
			}
			if err := e.c.Key(sym, false); err != nil {
				return st, err
			}
		}
		return st, nil
	case action.Key:
		return st, e.keyNames(ctx, a.Keys, false)
	case action.Hotkey:
		return st, e.keyNames(ctx, a.Keys, true)
	case action.KeyDown, action.KeyUp:
		sym, err := Keysym(a.Keys[0])
		if err != nil {
			return st, err
		}
		down := a.Kind == action.KeyDown
		e.holdKey(sym, down)
		return st, e.c.Key(sym, down)
	case action.Wait:
		return st, sleep(ctx, time.Duration(a.WaitSeconds()*float64(time.Second)))
	case action.Code:
		if e.guest == nil || !e.guestInfo.Has(task.CapCommands) {
			return st, e.missing("a code action", task.CapCommands)
		}
		if a.Lang != "" && a.Lang != "bash" && a.Lang != "sh" && a.Lang != "shell" {
			return st, fmt.Errorf("%w: code in %q cannot run on %s (bash only)", env.ErrBadAction, a.Lang, e.Name())
		}
		res, err := e.guest.Run(ctx, a.Text, codeTimeout)
		if err != nil {
			return st, err
		}
		st.Output = fmt.Sprintf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
		return st, nil
	case action.Done, action.Fail, action.Answer, action.Plan, action.Reflect:
		return st, nil
	case action.API:
		return st, fmt.Errorf("%w: no API %q is registered on %s", env.ErrBadAction, a.Name, e.Name())
	default:
		return st, fmt.Errorf("%w: %s is for browsers or phones, not a VNC desktop", env.ErrBadAction, a.Kind)
	}
}

// holdKey records a key held down by key_down, so that Reset lets go of it.
func (e *Env) holdKey(sym uint32, down bool) {
	for i, k := range e.keys {
		if k == sym {
			e.keys = append(e.keys[:i], e.keys[i+1:]...)
			break
		}
	}
	if down {
		e.keys = append(e.keys, sym)
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Keysym resolves a key name in any convention action.NormalizeKey knows
// ("Return", "F5", "CTRL", "é") to the X keysym an RFB key event carries.
// Its errors match env.ErrBadAction.
func Keysym(name string) (uint32, error) {
	if k, ok := action.NormalizeKey(name); ok {
		name = k
	}
	s, err := x11.KeyKeysym(name)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", env.ErrBadAction, err)
	}
	return uint32(s), nil
}

// keyNames presses keys one after another, or together (a hotkey: pressed
// in order and released in reverse, never left half pressed). Every name
// is resolved before the first key goes down.
func (e *Env) keyNames(ctx context.Context, names []string, together bool) error {
	syms := make([]uint32, len(names))
	for i, n := range names {
		s, err := Keysym(n)
		if err != nil {
			return err
		}
		syms[i] = s
	}
	if !together {
		for _, s := range syms {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := e.c.Key(s, true); err != nil {
				return err
			}
			if err := e.c.Key(s, false); err != nil {
				return err
			}
		}
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var pressed int
	var err error
	for _, s := range syms {
		if err = e.c.Key(s, true); err != nil {
			break
		}
		pressed++
	}
	for i := pressed - 1; i >= 0; i-- {
		if rerr := e.c.Key(syms[i], false); err == nil {
			err = rerr
		}
	}
	return err
}

// drag presses at (fx, fy), moves to (tx, ty) in steps over the action's
// duration, and releases.
func (e *Env) drag(ctx context.Context, fx, fy, tx, ty int, a action.Action) error {
	bit := buttonBit(a.Button)
	if err := e.move(fx, fy); err != nil {
		return err
	}
	if err := sleep(ctx, pressGap); err != nil {
		return err
	}
	if err := e.button(bit, true); err != nil {
		return err
	}
	step := time.Duration(a.Duration * float64(time.Second) / dragSteps)
	if step < pressGap {
		step = pressGap
	}
	for i := 1; i <= dragSteps; i++ {
		if err := sleep(ctx, step); err != nil {
			e.button(bit, false)
			return err
		}
		if err := e.move(fx+(tx-fx)*i/dragSteps, fy+(ty-fy)*i/dragSteps); err != nil {
			return err
		}
	}
	if err := sleep(ctx, pressGap); err != nil {
		e.button(bit, false)
		return err
	}
	return e.button(bit, false)
}
