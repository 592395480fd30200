package vnc

import (
	"context"
	"fmt"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/input"
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
		st, err := e.input.Do(ctx, a)
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

// device is the server's pointer and keyboard, over RFB. It keeps the
// pointer's position and the buttons held, which RFB cannot read back.
type device struct{ e *Env }

func (v device) Size() action.Size { return v.e.size() }

func (v device) Pointer() (int, int, error) {
	v.e.mu.Lock()
	defer v.e.mu.Unlock()
	return v.e.x, v.e.y, nil
}

func (v device) Move(x, y int) error {
	e := v.e
	e.mu.Lock()
	e.x, e.y = x, y
	e.mu.Unlock()
	return e.c.Pointer(x, y, e.buttons)
}

// Button sets or clears the button's bit of RFB's button mask: bit 0 is
// button 1, and so on to the wheel's notches.
func (v device) Button(n int, down bool) error {
	e := v.e
	bit := uint8(1) << (n - 1)
	if down {
		e.buttons |= bit
	} else {
		e.buttons &^= bit
	}
	return e.c.Pointer(e.x, e.y, e.buttons)
}

func (v device) Key(sym uint32, down bool) error { return v.e.c.Key(sym, down) }

// TypeRune sends the character's keysym (0x01000000 plus its code point
// beyond Latin-1); the server binds it to a key.
func (v device) TypeRune(r rune) error {
	sym := uint32(x11.RuneKeysym(r))
	if err := v.e.c.Key(sym, true); err != nil {
		return err
	}
	return v.e.c.Key(sym, false)
}

// place gives the interpreter the guest's tree and shell, or says that
// there are none.
type place struct{ e *Env }

// Target resolves an element target to a screen point with the guest's
// tree: a set-of-mark tag among the marks of the last screenshot, or a
// role and name.
func (p place) Target(ctx context.Context, t *action.Target) (x, y, matches int, err error) {
	e := p.e
	if e.guest == nil || !e.guestInfo.Has(task.CapTree) {
		return 0, 0, 0, e.missing("the element target "+t.String(), task.CapTree)
	}
	if t.Tag > 0 || t.Index != nil {
		e.mu.Lock()
		marks := e.marks
		e.mu.Unlock()
		m, err := observe.LookupTarget(marks, *t)
		if err != nil {
			return 0, 0, 0, err
		}
		x, y = m.Center()
		return x, y, 0, nil
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
	return x, y, matches, nil
}

// FindText finds a text in the guest's tree.
func (p place) FindText(ctx context.Context, text string) (observe.TextSpot, error) {
	e := p.e
	if e.guest == nil || !e.guestInfo.Has(task.CapTree) {
		return observe.TextSpot{}, e.missing("scroll_to_text", task.CapTree)
	}
	t, err := e.guest.Tree(ctx)
	if err != nil {
		return observe.TextSpot{}, err
	}
	return t.FindText(text, e.size()), nil
}

// Describe names the element under (x, y) for the process record, from
// the guest's tree; "" without one.
func (p place) Describe(ctx context.Context, x, y int) string {
	e := p.e
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

// Shell runs a code action's command through the guest.
func (p place) Shell(ctx context.Context, command string) (string, error) {
	e := p.e
	if e.guest == nil || !e.guestInfo.Has(task.CapCommands) {
		return "", e.missing("a code action", task.CapCommands)
	}
	res, err := e.guest.Run(ctx, command, codeTimeout)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr), nil
}

// Keysym resolves a key name in any convention action.NormalizeKey knows
// ("Return", "F5", "CTRL", "é") to the X keysym an RFB key event carries.
// Its errors match env.ErrBadAction.
func Keysym(name string) (uint32, error) { return input.Keysym(name) }
