package mem

import (
	"context"
	"fmt"
	"slices"
	"unicode"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/input"
	"github.com/proctor-eval/proctor/observe"
)

// X keysyms the in-memory desktop acts on (what package input presses).
const (
	symSpace     = 0x20
	symBackspace = 0xff08
	symTab       = 0xff09
	symEnter     = 0xff0d
	symEscape    = 0xff1b
	symHome      = 0xff50
	symLeft      = 0xff51
	symUp        = 0xff52
	symRight     = 0xff53
	symDown      = 0xff54
	symEnd       = 0xff57
	symKPEnter   = 0xff8d
	symF4        = 0xffc1
	symShiftL    = 0xffe1
	symShiftR    = 0xffe2
	symCtrlL     = 0xffe3
	symCtrlR     = 0xffe4
	symAltL      = 0xffe9
	symAltR      = 0xffea
	symSuperL    = 0xffeb
	symSuperR    = 0xffec
	symDelete    = 0xffff
)

var modifiers = []uint32{symShiftL, symShiftR, symCtrlL, symCtrlR, symAltL, symAltR, symSuperL, symSuperR, 0xffe7, 0xffe8}

// keyRune is the character a keysym types, or 0.
func keyRune(sym uint32) rune {
	switch {
	case sym >= 0x20 && sym <= 0x7e || sym >= 0xa0 && sym <= 0xff:
		return rune(sym)
	case sym&0xff000000 == 0x01000000:
		return rune(sym & 0xffffff)
	}
	return 0
}

// runeSym is the keysym that types r (as package x11 maps it).
func runeSym(r rune) uint32 {
	switch {
	case r == '\n' || r == '\r':
		return symEnter
	case r == '\t':
		return symTab
	case r >= 0x20 && r <= 0x7e || r >= 0xa0 && r <= 0xff:
		return uint32(r)
	}
	return 0x01000000 | uint32(r)
}

// Do performs the actions in order through the desktops' interpreter
// (package env/input) and records each one.
func (e *Env) Do(ctx context.Context, acts []action.Action) ([]action.Step, error) {
	if err := e.enter(ctx, "Do"); err != nil {
		return nil, err
	}
	in := &input.Interpreter{Device: device{e}, Place: place{e}, Name: "the in-memory desktop", Gapless: true}
	var steps []action.Step
	for i, a := range acts {
		if err := ctx.Err(); err != nil {
			return steps, err
		}
		if err := e.alive(); err != nil {
			return steps, err
		}
		st, err := e.do(ctx, in, a)
		if err != nil {
			return steps, fmt.Errorf("action %d (%s): %w", i+1, a, err)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// do performs one action. What the interpreter does with real time or a
// real list (the pause between a typing target's click and its keys, a
// select's list, scrolling to a text) is done here at once.
func (e *Env) do(ctx context.Context, in *input.Interpreter, a action.Action) (action.Step, error) {
	st := action.Step{Action: a}
	switch a.Kind {
	case action.Type, action.Select, action.ScrollToText:
		if err := a.Validate(); err != nil {
			return st, fmt.Errorf("%w: %v", env.ErrBadAction, err)
		}
	default:
		return in.Do(ctx, a)
	}
	switch {
	case a.Kind == action.Type && a.Target != nil:
		click, err := in.Do(ctx, action.Action{Kind: action.Click, Target: a.Target})
		st.At, st.Element, st.Ambiguous = click.At, click.Element, click.Ambiguous
		if err != nil {
			return st, err
		}
		keys := a
		keys.Target = nil
		_, err = in.Do(ctx, keys)
		return st, err
	case a.Kind == action.Select:
		return e.choose(a, st)
	case a.Kind == action.ScrollToText:
		e.mu.Lock()
		spot := e.treeLocked().FindText(a.Text, e.size)
		e.mu.Unlock()
		if !spot.Showing {
			return st, fmt.Errorf("%w: the text %q is not on the screen (nothing scrolls on the in-memory desktop)", env.ErrNotFound, a.Text)
		}
		return st, nil
	}
	return in.Do(ctx, a)
}

// choose sets a combo box to one of its options.
func (e *Env) choose(a action.Action, st action.Step) (action.Step, error) {
	x, y, matches, err := e.target(a.Target)
	if err != nil {
		return st, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st.At, st.Ambiguous = &[2]int{x, y}, matches
	e.ptr.X, e.ptr.Y = x, y
	w, c := e.hit(x, y)
	if c == nil || c.Role != RoleComboBox {
		return st, fmt.Errorf("%w: %s is not a combo box", env.ErrBadAction, a.Target)
	}
	st.Element = observe.Describe(c.node(false))
	if !slices.Contains(c.Options, a.Text) {
		return st, fmt.Errorf("%w: no option %q in the list of %s", env.ErrNotFound, a.Text, a.Target)
	}
	e.raise(w)
	w.focus = c
	c.Text = a.Text
	c.caret, c.all = len([]rune(c.Text)), false
	return st, nil
}

// target resolves an element target to the middle of its box, with the
// number of elements a role and name matched when document order picked
// one, as the desktop resolves it.
func (e *Env) target(t *action.Target) (x, y, matches int, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case t.Tag > 0 || t.Index != nil:
		if e.marks == nil {
			e.marks = observe.Marks(e.treeLocked().Filter(observe.Options{Screen: e.size}))
		}
		m, err := observe.LookupTarget(e.marks, *t)
		if err != nil {
			return 0, 0, 0, err
		}
		x, y := m.Center()
		return x, y, 0, nil
	case t.ID != 0:
		for _, w := range e.wins {
			for _, c := range w.widgets {
				if c.id == t.ID {
					x, y := c.box.Center()
					return x, y, 0, nil
				}
			}
		}
		return 0, 0, 0, fmt.Errorf("%w: no element %s is showing", env.ErrNotFound, t)
	}
	r, err := e.treeLocked().Resolve(*t, e.size)
	if err != nil {
		return 0, 0, 0, err
	}
	if r.Ambiguous {
		matches = r.Matches
	}
	x, y = r.Box.Center()
	return x, y, matches, nil
}

// place gives the interpreter the desktop's elements; it has no shell.
type place struct{ e *Env }

func (p place) Target(_ context.Context, t *action.Target) (int, int, int, error) {
	return p.e.target(t)
}

func (p place) Describe(_ context.Context, x, y int) string {
	p.e.mu.Lock()
	defer p.e.mu.Unlock()
	if _, c := p.e.hit(x, y); c != nil {
		return observe.Describe(c.node(false))
	}
	return ""
}

func (p place) Shell(context.Context, string) (string, error) {
	return "", errNoCommands("a code action")
}

// device is the desktop's pointer and keyboard.
type device struct{ e *Env }

func (d device) Size() action.Size { return d.e.size }

func (d device) Pointer() (int, int, error) {
	d.e.mu.Lock()
	defer d.e.mu.Unlock()
	return d.e.ptr.X, d.e.ptr.Y, nil
}

func (d device) Move(x, y int) error {
	if x < 0 || y < 0 || x >= d.e.size.W || y >= d.e.size.H {
		return fmt.Errorf("%w: point (%d, %d) is off the %dx%d screen", env.ErrBadAction, x, y, d.e.size.W, d.e.size.H)
	}
	d.e.mu.Lock()
	defer d.e.mu.Unlock()
	d.e.ptr.X, d.e.ptr.Y = x, y
	return nil
}

func (d device) Button(n int, down bool) error {
	d.e.mu.Lock()
	defer d.e.mu.Unlock()
	return d.e.buttonLocked(n, down)
}

func (d device) Key(sym uint32, down bool) error {
	d.e.mu.Lock()
	defer d.e.mu.Unlock()
	if slices.Contains(modifiers, sym) {
		d.e.held[sym] = down
		return nil
	}
	if !down {
		return nil
	}
	return d.e.keyLocked(sym)
}

func (d device) TypeRune(r rune) error {
	d.e.mu.Lock()
	defer d.e.mu.Unlock()
	return d.e.keyLocked(runeSym(r))
}

// buttonLocked presses or releases a pointer button: a press raises the
// window under the pointer and, with the left button, focuses the widget
// there; a release of the left button on the widget it went down on
// toggles a check box or presses a push button. The wheel scrolls
// nothing.
func (e *Env) buttonLocked(n int, down bool) error {
	if n != input.Left && n != input.Middle && n != input.Right {
		return nil
	}
	w, c := e.hit(e.ptr.X, e.ptr.Y)
	if down {
		if w != nil {
			e.raise(w)
		}
		if n != input.Left {
			return nil
		}
		e.press = c
		if c != nil && c.focusable() {
			w.focus = c
			c.caret, c.all = len([]rune(c.Text)), false
		}
		return nil
	}
	if n != input.Left {
		return nil
	}
	p := e.press
	e.press = nil
	if p == nil || p != c {
		return nil
	}
	return e.activateLocked(w, c)
}

// activateLocked does what a click (or space) on a widget does.
func (e *Env) activateLocked(w *window, c *widget) error {
	switch c.Role {
	case RoleCheckBox:
		c.Checked = !c.Checked
	case RoleButton:
		return e.pressLocked(w, c)
	}
	return nil
}

// pressLocked presses a push button: its effect.
func (e *Env) pressLocked(w *window, c *widget) error {
	p := c.Press
	if p == nil {
		return nil
	}
	if p.Write != "" {
		if err := e.writeLocked(p.Write, []byte(w.expand(p.Content))); err != nil {
			return fmt.Errorf("the button %q of %q: %w", c.Name, w.title, err)
		}
	}
	if p.Close {
		e.closeWindow(w)
	}
	return nil
}

func (e *Env) holding(a, b uint32) bool { return e.held[a] || e.held[b] }

// keyLocked acts on a key pressed: on the focused widget of the window on
// top, or on that window.
func (e *Env) keyLocked(sym uint32) error {
	w := e.top()
	if w == nil {
		return nil // the keys of an empty desktop go nowhere
	}
	f := w.focus
	ctrl, alt, shift := e.holding(symCtrlL, symCtrlR), e.holding(symAltL, symAltR), e.holding(symShiftL, symShiftR)
	switch {
	case alt && sym == symF4:
		e.closeWindow(w)
		return nil
	case ctrl:
		if f != nil && f.Role == RoleText {
			e.editKey(f, unicode.ToLower(keyRune(sym)))
		}
		return nil
	case alt || e.holding(symSuperL, symSuperR):
		return nil
	}
	switch sym {
	case symTab:
		focusNext(w, shift)
	case symEscape:
		if w.dialog {
			e.closeWindow(w)
		}
	case symEnter, symKPEnter:
		switch {
		case f != nil && f.Role == RoleText && f.Multiline:
			f.insert("\n")
		case f != nil && f.Role == RoleButton:
			return e.pressLocked(w, f)
		default:
			for _, c := range w.widgets {
				if c.Role == RoleButton && c.Default {
					return e.pressLocked(w, c)
				}
			}
		}
	case symSpace:
		if f != nil && (f.Role == RoleButton || f.Role == RoleCheckBox) {
			return e.activateLocked(w, f)
		}
		if f != nil && f.Role == RoleText {
			f.insert(" ")
		}
	case symBackspace, symDelete, symLeft, symRight, symHome, symEnd:
		if f != nil && f.Role == RoleText {
			f.move(sym)
		}
	case symUp, symDown:
		if f != nil && f.Role == RoleComboBox && len(f.Options) > 0 {
			i := slices.Index(f.Options, f.Text)
			if sym == symDown {
				i = min(i+1, len(f.Options)-1)
			} else {
				i = max(i-1, 0)
			}
			f.Text = f.Options[i]
		}
	default:
		r := keyRune(sym)
		if r != 0 && f != nil && f.Role == RoleText {
			if shift {
				r = unicode.ToUpper(r)
			}
			f.insert(string(r))
		}
	}
	return nil
}

// editKey does a text field's ctrl shortcut: select all, copy, cut, paste.
func (e *Env) editKey(f *widget, r rune) {
	switch r {
	case 'a':
		f.all, f.caret = true, len([]rune(f.Text))
	case 'c', 'x':
		if f.all {
			e.clip = f.Text
			if r == 'x' {
				f.insert("")
			}
		}
	case 'v':
		f.insert(e.clip)
	}
}

// insert types s at the caret, over the selection.
func (f *widget) insert(s string) {
	rs := []rune(f.Text)
	if f.all {
		rs, f.caret, f.all = nil, 0, false
	}
	f.caret = min(f.caret, len(rs))
	add := []rune(s)
	rs = slices.Insert(rs, f.caret, add...)
	f.caret += len(add)
	f.Text = string(rs)
}

// move does an editing key that types nothing.
func (f *widget) move(sym uint32) {
	rs := []rune(f.Text)
	f.caret = min(f.caret, len(rs))
	if f.all && (sym == symBackspace || sym == symDelete) {
		f.insert("")
		return
	}
	all := f.all
	f.all = false
	switch sym {
	case symBackspace:
		if f.caret > 0 {
			f.Text = string(slices.Delete(rs, f.caret-1, f.caret))
			f.caret--
		}
	case symDelete:
		if f.caret < len(rs) {
			f.Text = string(slices.Delete(rs, f.caret, f.caret+1))
		}
	case symLeft:
		if all {
			f.caret = 0
		} else {
			f.caret = max(f.caret-1, 0)
		}
	case symRight:
		f.caret = min(f.caret+1, len(rs))
		if all {
			f.caret = len(rs)
		}
	case symHome:
		f.caret = 0
	case symEnd:
		f.caret = len(rs)
	}
}

// focusNext moves the focus to the next (or previous) widget that takes it.
func focusNext(w *window, back bool) {
	var can []*widget
	for _, c := range w.widgets {
		if c.focusable() {
			can = append(can, c)
		}
	}
	if len(can) == 0 {
		return
	}
	i := slices.Index(can, w.focus)
	switch {
	case i < 0 && back:
		i = len(can) - 1
	case i < 0:
		i = 0
	case back:
		i = (i + len(can) - 1) % len(can)
	default:
		i = (i + 1) % len(can)
	}
	w.focus = can[i]
	w.focus.caret, w.focus.all = len([]rune(w.focus.Text)), false
}
