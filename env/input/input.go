// Package input performs the pointer and keyboard actions of the unified
// action space on any screen that takes pointer and key events: a local X
// display through XTEST, a remote one over RFB. One interpreter serves
// every such environment, so a click, a drag or a hotkey means the same
// events, with the same timing, wherever it runs.
package input

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/internal/x11"
	"github.com/proctor-eval/proctor/observe"
)

// Timing of the input.
const (
	ClickGap = 40 * time.Millisecond // between the clicks of a double or triple click
	// PressGap separates a pointer move from the press and the press from
	// the release: toolkits (Qt) drop a click whose press arrives with the
	// move that brought the pointer onto the widget.
	PressGap     = 15 * time.Millisecond
	DragSteps    = 12 // pointer moves of a drag
	NotchPerPage = 10 // wheel notches of a page scroll
)

// Pointer buttons, as X numbers them: 4 to 7 are the wheel's notches
// (up, down, left, right).
const (
	Left      = 1
	Middle    = 2
	Right     = 3
	WheelUp   = 4
	WheelDown = 5
	WheelLeft = 6
	WheelRite = 7
)

// Device is a screen's pointer and keyboard.
type Device interface {
	// Size is the screen's size in pixels.
	Size() action.Size
	// Pointer is where the pointer is.
	Pointer() (x, y int, err error)
	// Move puts the pointer at (x, y), with the buttons held as they are.
	Move(x, y int) error
	// Button presses or releases button n (Left .. WheelRite) where the
	// pointer is.
	Button(n int, down bool) error
	// Key presses or releases the key of an X keysym.
	Key(sym uint32, down bool) error
	// TypeRune types one character, whatever the keyboard's layout.
	TypeRune(r rune) error
}

// Place is what actions beyond pointer and keys need of the environment.
type Place interface {
	// Target resolves an element target (a set-of-mark tag, a role and
	// name) to a point on the screen. matches is how many elements a role
	// and name matched when document order picked one, 0 otherwise. A
	// place without elements returns an error saying so.
	Target(ctx context.Context, t *action.Target) (x, y, matches int, err error)
	// Describe names the element under (x, y) for the step's record of
	// what a click touched; "" when none is known.
	Describe(ctx context.Context, x, y int) string
	// Shell runs a bash command for a code action and returns its exit
	// status and output as the step shows them.
	Shell(ctx context.Context, command string) (string, error)
}

// Interpreter turns actions into a device's events. It is not safe for
// concurrent use: an environment performs one action at a time.
type Interpreter struct {
	Device Device
	Place  Place
	// Name is the kind of place in errors: "an X11 desktop".
	Name string
	// Lag is how long an element target that the place does not find is
	// looked for again before a pointer action fails: a desktop's tree can
	// lag its screen for a moment (Chromium's after a scroll). 0: no retry.
	Lag time.Duration
	// Gapless says that the device hands its events to the page itself, in
	// order (the DevTools protocol's input): a click needs no PressGap
	// rests between its move, press and release. A drag keeps them: its
	// steps give the page time to follow the pointer.
	Gapless bool
	held    []uint32 // keysyms held down by key_down, in order
}

// pressGap is the rest between a pointer move and a press, and between a
// press and its release.
func (in *Interpreter) pressGap() time.Duration {
	if in.Gapless {
		return 0
	}
	return PressGap
}

// lagPoll is the pause between those looks.
const lagPoll = 250 * time.Millisecond

// Held lists the keys that key_down actions left held, in the order they
// went down.
func (in *Interpreter) Held() []uint32 { return append([]uint32(nil), in.held...) }

// Forget clears the record of held keys (after the caller released them).
func (in *Interpreter) Forget() { in.held = nil }

// onScreen refuses a point off the screen.
func (in *Interpreter) onScreen(x, y int) error {
	if s := in.Device.Size(); x < 0 || y < 0 || x >= s.W || y >= s.H {
		return fmt.Errorf("%w: point (%d, %d) is off the %dx%d screen", env.ErrBadAction, x, y, s.W, s.H)
	}
	return nil
}

// target resolves an element target to a point on the screen.
func (in *Interpreter) target(ctx context.Context, t *action.Target, st *action.Step) (int, int, error) {
	x, y, matches, err := in.Place.Target(ctx, t)
	for deadline := time.Now().Add(in.Lag); errors.Is(err, env.ErrNotFound) && time.Now().Before(deadline); {
		if err := Sleep(ctx, lagPoll); err != nil {
			return 0, 0, err
		}
		x, y, matches, err = in.Place.Target(ctx, t)
	}
	if err != nil {
		return 0, 0, err
	}
	// An element below or above the screen (a page longer than its
	// window) is brought into view with the wheel, in its column, as a
	// person scrolls to it.
	s := in.Device.Size()
	for i := 0; i < ScrollSteps && (y >= s.H || y < 0) && x >= 0 && x < s.W; i++ {
		b := WheelDown
		if y < 0 {
			b = WheelUp
		}
		if err := in.wheel(ctx, x, s.H/2, b, ScrollNotches); err != nil {
			return 0, 0, err
		}
		if x, y, matches, err = in.Place.Target(ctx, t); err != nil {
			return 0, 0, err
		}
	}
	st.Ambiguous = matches
	return x, y, in.onScreen(x, y)
}

// wheel turns the wheel the given notches (button b) at (x, y) and
// lets the screen draw.
func (in *Interpreter) wheel(ctx context.Context, x, y, b, notches int) error {
	if err := in.Device.Move(x, y); err != nil {
		return err
	}
	for range notches {
		if err := in.Device.Button(b, true); err != nil {
			return err
		}
		if err := in.Device.Button(b, false); err != nil {
			return err
		}
	}
	return Sleep(ctx, scrollPause)
}

// point resolves where a pointer action acts: its target, its point, or
// where the pointer is (ok false).
func (in *Interpreter) point(ctx context.Context, a action.Action, st *action.Step) (x, y int, ok bool, err error) {
	switch {
	case a.Target != nil:
		x, y, err = in.target(ctx, a.Target, st)
		return x, y, err == nil, err
	case a.Point != nil:
		if x, y, err = a.Point.Pixels(in.Device.Size()); err != nil {
			return 0, 0, false, fmt.Errorf("%w: %v", env.ErrBadAction, err)
		}
		return x, y, true, nil
	}
	x, y, err = in.Device.Pointer()
	return x, y, false, err
}

// ButtonNumber is the X button of an action's button.
func ButtonNumber(b action.Button) int {
	switch b {
	case action.Right:
		return Right
	case action.Middle:
		return Middle
	}
	return Left
}

// Do performs one action and returns its record: where it acted, the
// element a click touched, the number of elements its target matched when
// the choice fell to document order, a code action's output.
func (in *Interpreter) Do(ctx context.Context, a action.Action) (action.Step, error) {
	st := action.Step{Action: a}
	if err := a.Validate(); err != nil {
		return st, fmt.Errorf("%w: %v", env.ErrBadAction, err)
	}
	// Every loop below looks at ctx too: no input once it is done.
	if err := ctx.Err(); err != nil {
		return st, err
	}
	var err error
	switch a.Kind {
	case action.Move:
		err = in.doMove(ctx, a, &st)
	case action.MoveRel, action.DragRel:
		err = in.doRelative(ctx, a, &st)
	case action.Click:
		err = in.doClick(ctx, a, &st)
	case action.Drag:
		err = in.doDrag(ctx, a, &st)
	case action.Scroll:
		err = in.doScroll(ctx, a, &st)
	case action.MouseDown, action.MouseUp:
		err = in.doButton(ctx, a, &st)
	case action.Type:
		err = in.doType(ctx, a, &st)
	case action.Key:
		err = in.keys(ctx, a.Keys, false)
	case action.Hotkey:
		err = in.keys(ctx, a.Keys, true)
	case action.KeyDown, action.KeyUp:
		err = in.doKeyHold(a)
	case action.Wait:
		err = in.doWait(ctx, a)
	case action.Code:
		err = in.doCode(ctx, a, &st)
	case action.Done, action.Fail, action.Answer, action.Plan, action.Reflect:
	case action.API:
		err = fmt.Errorf("%w: no API %q is registered on %s", env.ErrBadAction, a.Name, in.Name)
	case action.Select:
		return in.choose(ctx, a, st)
	case action.ScrollToText:
		err = in.doScrollToText(ctx, a)
	default:
		err = fmt.Errorf("%w: %s is for browsers or phones, not %s", env.ErrBadAction, a.Kind, in.Name)
	}
	return st, err
}

// doMove performs a move.
func (in *Interpreter) doMove(ctx context.Context, a action.Action, st *action.Step) error {
	x, y, _, err := in.point(ctx, a, st)
	if err != nil {
		return err
	}
	st.At = &[2]int{x, y}
	return in.Device.Move(x, y)
}

// doRelative performs a move_rel or a drag_rel, by an offset from where
// the pointer is.
func (in *Interpreter) doRelative(ctx context.Context, a action.Action, st *action.Step) error {
	dev := in.Device
	fx, fy, err := dev.Pointer()
	if err != nil {
		return err
	}
	off := a.Point
	if a.Kind == action.DragRel {
		off = a.To
	}
	tx, ty := fx+int(math.Round(off.X)), fy+int(math.Round(off.Y))
	if err := in.onScreen(tx, ty); err != nil {
		return err
	}
	st.At = &[2]int{tx, ty}
	if a.Kind == action.MoveRel {
		return dev.Move(tx, ty)
	}
	return in.drag(ctx, fx, fy, tx, ty, a)
}

// doClick performs a click, double or triple click.
func (in *Interpreter) doClick(ctx context.Context, a action.Action, st *action.Step) error {
	dev := in.Device
	x, y, _, err := in.point(ctx, a, st)
	if err != nil {
		return err
	}
	st.At = &[2]int{x, y}
	if err := dev.Move(x, y); err != nil {
		return err
	}
	// The element under the point is read while the pointer rests
	// before the press, so that the record costs no time of its own
	// up to that gap; the press waits for it.
	rec := make(chan string, 1)
	go func() { rec <- in.Place.Describe(ctx, x, y) }()
	b := ButtonNumber(a.Button)
	for i := 0; i < a.Clicks(); i++ {
		gap := in.pressGap()
		if i > 0 {
			gap = ClickGap
		}
		if err := Sleep(ctx, gap); err != nil {
			if i == 0 {
				<-rec
			}
			return err
		}
		if i == 0 {
			st.Element = <-rec
		}
		if err := dev.Button(b, true); err != nil {
			return err
		}
		if err := Sleep(ctx, in.pressGap()); err != nil {
			dev.Button(b, false)
			return err
		}
		if err := dev.Button(b, false); err != nil {
			return err
		}
	}
	return nil
}

// doDrag performs a drag from its point (or where the pointer is) to its
// target or its To.
func (in *Interpreter) doDrag(ctx context.Context, a action.Action, st *action.Step) error {
	fx, fy, _, err := in.point(ctx, action.Action{Point: a.Point}, st)
	if err != nil {
		return err
	}
	var tx, ty int
	if a.Target != nil {
		tx, ty, err = in.target(ctx, a.Target, st)
	} else {
		tx, ty, _, err = in.point(ctx, action.Action{Point: a.To}, st)
	}
	if err != nil {
		return err
	}
	st.At = &[2]int{tx, ty}
	return in.drag(ctx, fx, fy, tx, ty, a)
}

// doScroll turns the wheel, at the action's point when it has one.
func (in *Interpreter) doScroll(ctx context.Context, a action.Action, st *action.Step) error {
	dev := in.Device
	x, y, ok, err := in.point(ctx, a, st)
	if err != nil {
		return err
	}
	if ok {
		st.At = &[2]int{x, y}
		if err := dev.Move(x, y); err != nil {
			return err
		}
	}
	dx, dy := a.DX, a.DY
	if a.Pages != 0 {
		dy = int(math.Round(a.Pages * NotchPerPage))
	}
	for _, s := range []struct{ n, neg, pos int }{{dy, WheelUp, WheelDown}, {dx, WheelLeft, WheelRite}} {
		b := s.pos
		if s.n < 0 {
			b = s.neg
		}
		for range abs(s.n) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := dev.Button(b, true); err != nil {
				return err
			}
			if err := dev.Button(b, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// doButton performs a mouse_down or a mouse_up, at the action's point when
// it has one.
func (in *Interpreter) doButton(ctx context.Context, a action.Action, st *action.Step) error {
	dev := in.Device
	x, y, ok, err := in.point(ctx, a, st)
	if err != nil {
		return err
	}
	if ok {
		st.At = &[2]int{x, y}
		if a.Kind == action.MouseDown {
			st.Element = in.Place.Describe(ctx, x, y)
		}
		if err := dev.Move(x, y); err != nil {
			return err
		}
	}
	return dev.Button(ButtonNumber(a.Button), a.Kind == action.MouseDown)
}

// doType types the action's text, first clicking its target and emptying
// the field when asked.
func (in *Interpreter) doType(ctx context.Context, a action.Action, st *action.Step) error {
	dev := in.Device
	if a.Target != nil {
		x, y, err := in.target(ctx, a.Target, st)
		if err != nil {
			return err
		}
		st.At = &[2]int{x, y}
		st.Element = in.Place.Describe(ctx, x, y)
		if err := dev.Move(x, y); err != nil {
			return err
		}
		if err := dev.Button(Left, true); err != nil {
			return err
		}
		if err := dev.Button(Left, false); err != nil {
			return err
		}
		// As a person does: the field takes the focus, then the keys
		// come. An application that moves the focus late (Chromium's
		// password fields, with their password manager) would otherwise
		// give the first keys to the field before.
		if err := Sleep(ctx, FocusPause); err != nil {
			return err
		}
	}
	if a.Clear {
		if err := in.keys(ctx, []string{"ctrl", "a"}, true); err != nil {
			return err
		}
		if err := in.keys(ctx, []string{"delete"}, false); err != nil {
			return err
		}
	}
	for _, r := range a.Text {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := dev.TypeRune(r); err != nil {
			return err
		}
	}
	return nil
}

// doKeyHold performs a key_down or a key_up, and records the keys held.
func (in *Interpreter) doKeyHold(a action.Action) error {
	sym, err := Keysym(a.Keys[0])
	if err != nil {
		return err
	}
	down := a.Kind == action.KeyDown
	in.hold(sym, down)
	return in.Device.Key(sym, down)
}

// doWait waits the action's time, or until its target shows.
func (in *Interpreter) doWait(ctx context.Context, a action.Action) error {
	if a.Target != nil {
		return in.waitFor(ctx, a.Target, time.Duration(a.WaitSeconds()*float64(time.Second)))
	}
	return Sleep(ctx, time.Duration(a.WaitSeconds()*float64(time.Second)))
}

// doCode runs a bash code action through the place and records its output.
func (in *Interpreter) doCode(ctx context.Context, a action.Action, st *action.Step) error {
	if a.Lang != "" && a.Lang != "bash" && a.Lang != "sh" && a.Lang != "shell" {
		return fmt.Errorf("%w: code in %q cannot run on %s (bash only)", env.ErrBadAction, a.Lang, in.Name)
	}
	out, err := in.Place.Shell(ctx, a.Text)
	if err != nil {
		return err
	}
	st.Output = out
	return nil
}

// doScrollToText scrolls until the action's text shows, where the place
// can read its text.
func (in *Interpreter) doScrollToText(ctx context.Context, a action.Action) error {
	if tp, ok := in.Place.(TextPlace); ok {
		return in.scrollToText(ctx, tp, a.Text)
	}
	return fmt.Errorf("%w: %s cannot read its text to find %q", env.ErrBadAction, in.Name, a.Text)
}

// hold records a key held down by key_down, so that a reset lets go of it.
func (in *Interpreter) hold(sym uint32, down bool) {
	for i, k := range in.held {
		if k == sym {
			in.held = append(in.held[:i], in.held[i+1:]...)
			break
		}
	}
	if down {
		in.held = append(in.held, sym)
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Keysym resolves a key name in any convention action.NormalizeKey knows
// ("Return", "F5", "CTRL", "é") to its X keysym. Its errors match
// env.ErrBadAction.
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

// keys presses keys one after another, or together (a hotkey: pressed in
// order and released in reverse, never left half pressed). Every name is
// resolved before the first key goes down.
func (in *Interpreter) keys(ctx context.Context, names []string, together bool) error {
	syms := make([]uint32, len(names))
	for i, n := range names {
		s, err := Keysym(n)
		if err != nil {
			return err
		}
		syms[i] = s
	}
	dev := in.Device
	if !together {
		for _, s := range syms {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := dev.Key(s, true); err != nil {
				return err
			}
			if err := dev.Key(s, false); err != nil {
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
		if err = dev.Key(s, true); err != nil {
			break
		}
		pressed++
	}
	for i := pressed - 1; i >= 0; i-- {
		if rerr := dev.Key(syms[i], false); err == nil {
			err = rerr
		}
	}
	return err
}

// drag presses at (fx, fy), moves to (tx, ty) in steps over the action's
// duration (a press gap at least between moves), and releases. A drag cut
// short lets go of the button.
func (in *Interpreter) drag(ctx context.Context, fx, fy, tx, ty int, a action.Action) error {
	dev := in.Device
	b := ButtonNumber(a.Button)
	if err := dev.Move(fx, fy); err != nil {
		return err
	}
	if err := Sleep(ctx, PressGap); err != nil {
		return err
	}
	if err := dev.Button(b, true); err != nil {
		return err
	}
	step := max(time.Duration(a.Duration*float64(time.Second)/DragSteps), PressGap)
	for i := 1; i <= DragSteps; i++ {
		if err := Sleep(ctx, step); err != nil {
			dev.Button(b, false)
			return err
		}
		if err := dev.Move(fx+(tx-fx)*i/DragSteps, fy+(ty-fy)*i/DragSteps); err != nil {
			dev.Button(b, false)
			return err
		}
	}
	if err := Sleep(ctx, PressGap); err != nil {
		dev.Button(b, false)
		return err
	}
	return dev.Button(b, false)
}

// FocusPause is how long a type action with a target waits between its
// click and its first key.
const FocusPause = 150 * time.Millisecond

// TextPlace is a Place that can find a text among its screen's elements
// (in an element's name or text), which scroll_to_text needs.
type TextPlace interface {
	FindText(ctx context.Context, text string) (observe.TextSpot, error)
}

// Scrolling of scroll_to_text: a few notches at a time, down at most
// ScrollSteps times, then up twice as far (the text may be above).
const (
	ScrollNotches = 3
	ScrollSteps   = 40
)

// scrollPause lets the page draw between scrolls (a variable for tests).
var scrollPause = 60 * time.Millisecond

// Settling of scroll_to_text: after each turn of the wheel the text is
// looked for again until two reads settleGap apart agree (a toolkit may
// give the boxes of before the scroll for a moment: Chromium does), for
// at most settleReads reads.
const settleReads = 10

// settleGap is the pause between those reads (a variable for tests).
var settleGap = 150 * time.Millisecond

// scrollToText scrolls with the wheel until the text shows, as a person
// scrolls looking for it. Where the tree has the element out of view, the
// wheel turns over the region that holds it (a list that scrolls inside
// the page, or the page), towards it, a notch at a time once it is less
// than the region's height away; where the tree has no such element (a
// page that loads more as it scrolls), it turns at the screen's centre,
// first down, then back up. A text that never shows fails, naming it.
func (in *Interpreter) scrollToText(ctx context.Context, tp TextPlace, text string) error {
	size := in.Device.Size()
	spot, err := tp.FindText(ctx, text)
	if err != nil {
		return err
	}
	blind := 0     // turns made without knowing where the text is
	stuck := false // a turn beside a list moved nothing: turn in the list
	nudges := 0    // notches turned to bring a text cut by an edge in whole
	for i := 0; !spot.Showing || !spot.Inside && nudges < maxNudges; i++ {
		if i == 3*ScrollSteps {
			return fmt.Errorf("%w: the text %q never showed while scrolling", env.ErrNotFound, text)
		}
		x, y, b, notches := spot.X, spot.Y, WheelDown, ScrollNotches
		if spot.Showing {
			nudges++
		}
		if spot.Found {
			if !spot.Down {
				b = WheelUp
			}
			r, e := spot.Region, spot.Box
			beyond := e.Y + e.H - (r.Y + r.H)
			if !spot.Down {
				beyond = r.Y - e.Y
			}
			if beyond < r.H || spot.Showing {
				notches = 1
			}
		} else {
			x, y = size.W/2, size.H/2
			if blind >= ScrollSteps {
				b = WheelUp
			}
			blind++
		}
		reveal := spot.Found && spot.Reveal && !stuck
		if reveal {
			x, y, notches = spot.RevealX, spot.RevealY, ScrollNotches
		}
		if err := in.wheel(ctx, x, y, b, notches); err != nil {
			return err
		}
		before := spot
		if spot, err = in.settledText(ctx, tp, text); err != nil {
			return err
		}
		stuck = stuck || reveal && spot == before
	}
	return nil
}

// maxNudges bounds the notches turned to bring a shown text that an edge
// cuts in whole.
const maxNudges = 3

// settledText looks for the text until two reads agree.
func (in *Interpreter) settledText(ctx context.Context, tp TextPlace, text string) (observe.TextSpot, error) {
	var last observe.TextSpot
	for i := range settleReads {
		if err := Sleep(ctx, settleGap); err != nil {
			return last, err
		}
		next, err := tp.FindText(ctx, text)
		if err != nil {
			return last, err
		}
		if i > 0 && next == last {
			break
		}
		last = next
	}
	return last, nil
}

// optionRoles are the roles an open list's options take on a desktop:
// Chromium's and GTK's combo boxes show menu items, others list items.
var optionRoles = []string{"menu item", "list item", "radio menu item", "check menu item", "option"}

// OptionWait bounds how long select waits for the opened list to show
// its option.
const OptionWait = 5 * time.Second

// choose performs a select as a person does on a screen: a click on the
// box opens its list, then a click on the option whose name is the text.
// An option that never shows closes the list (Escape) and fails, naming
// the option: the box is left as it was.
func (in *Interpreter) choose(ctx context.Context, a action.Action, st action.Step) (action.Step, error) {
	if in.Place == nil {
		return st, fmt.Errorf("%w: %s has no elements to select from", env.ErrBadAction, in.Name)
	}
	open := action.Action{Kind: action.Click, Target: a.Target}
	ost, err := in.Do(ctx, open)
	if err != nil {
		return st, err
	}
	st.At, st.Element, st.Ambiguous = ost.At, ost.Element, ost.Ambiguous
	wctx, cancel := context.WithTimeout(ctx, OptionWait)
	defer cancel()
	for {
		for _, r := range optionRoles {
			opt := &action.Target{Role: r, Name: a.Text}
			if _, _, _, err := in.Place.Target(wctx, opt); err == nil {
				_, err := in.Do(ctx, action.Action{Kind: action.Click, Target: opt})
				return st, err
			}
		}
		// A list drawn by the page's own script (a styled select) shows
		// its options as plain text: the element of that name nearest
		// below the box.
		if st.At != nil {
			if x, y, ok := in.nearestBelow(wctx, a.Text, st.At[0], st.At[1]); ok {
				_, err := in.Do(ctx, action.Action{Kind: action.Click, Point: action.At(float64(x), float64(y))})
				return st, err
			}
		}
		if Sleep(wctx, WaitPoll) != nil {
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			in.keys(ctx, []string{"escape"}, false)
			return st, fmt.Errorf("%w: no option %q showed in the list of %s", env.ErrNotFound, a.Text, a.Target)
		}
	}
}

// nearestBelow finds the showing element named name that lies below
// (x, y) and nearest to it, among the first 20 of that name.
func (in *Interpreter) nearestBelow(ctx context.Context, name string, x, y int) (int, int, bool) {
	best, bx, by := -1, 0, 0
	for i := 1; i <= 20; i++ {
		ex, ey, _, err := in.Place.Target(ctx, &action.Target{Name: name, Nth: i})
		if err != nil {
			break
		}
		if ey <= y {
			continue
		}
		if d := (ey - y) + abs(ex-x)/4; best < 0 || d < best {
			best, bx, by = d, ex, ey
		}
	}
	return bx, by, best >= 0
}

// WaitPoll is how often a wait for an element looks for it.
const WaitPoll = 250 * time.Millisecond

// waitFor waits until the target element shows, at most d: a wait with a
// target ends as soon as the page or window it waits for is there, so a
// trajectory need not guess how long a slow machine takes. After d it
// fails with the last reason the element was not found.
func (in *Interpreter) waitFor(ctx context.Context, t *action.Target, d time.Duration) error {
	if in.Place == nil {
		return fmt.Errorf("%w: %s has no elements to wait for", env.ErrBadAction, in.Name)
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	last := fmt.Errorf("%w: no element %s is showing", env.ErrNotFound, t)
	for {
		_, _, _, err := in.Place.Target(wctx, t)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, env.ErrNotFound):
			last = err
		case wctx.Err() == nil || ctx.Err() != nil:
			return err
		}
		if Sleep(wctx, WaitPoll) != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("waited %s: %w", d, last)
		}
	}
}

// Sleep waits d or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
