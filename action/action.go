// Package action defines Proctor's unified action space and the parsers that
// turn a model's reply, in any of the supported output formats, into actions.
//
// Every action an agent can take on any environment (an X11 desktop, a
// browser, a VNC desktop, an Android device) is one Action value. Pointer
// positions carry their coordinate convention (Unit) and become screen pixels
// only through Point.Pixels, given the screen size.
package action

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind names one action of the unified space.
type Kind string

// The kinds of the unified action space.
const (
	// Pointer.
	Move      Kind = "move"       // move the pointer to Point
	MoveRel   Kind = "move_rel"   // move the pointer by Point (pixels)
	Click     Kind = "click"      // click Button Count times at Point or Target
	Drag      Kind = "drag"       // press at Point (or where the pointer is), move to To, release
	DragRel   Kind = "drag_rel"   // drag by To (pixels) from the current position
	Scroll    Kind = "scroll"     // wheel DX (right +) and DY (down +) clicks at Point, or Pages of a page
	MouseDown Kind = "mouse_down" // press Button at Point or where the pointer is
	MouseUp   Kind = "mouse_up"   // release Button at Point or where the pointer is

	// Keyboard.
	Type    Kind = "type"     // type Text, into Target when given (Clear empties it first)
	Key     Kind = "key"      // press and release each key of Keys in turn
	Hotkey  Kind = "hotkey"   // press Keys together (in order) and release them in reverse
	KeyDown Kind = "key_down" // hold Keys[0]
	KeyUp   Kind = "key_up"   // release Keys[0]

	// Elements and navigation.
	Select       Kind = "select"         // choose option Text of the element Target
	ScrollToText Kind = "scroll_to_text" // scroll until Text is visible
	Navigate     Kind = "navigate"       // open URL Text (NewTab for a new tab)
	Back         Kind = "back"           // browser back, or the Android back button
	TabSwitch    Kind = "tab_switch"     // switch to tab Tab
	TabClose     Kind = "tab_close"      // close tab Tab
	Swipe        Kind = "swipe"          // touch swipe from Point to To over Duration

	// Control.
	Done   Kind = "done"   // the agent says the task is finished
	Fail   Kind = "fail"   // the agent says the task is infeasible
	Wait   Kind = "wait"   // wait Duration seconds (default 5)
	Answer Kind = "answer" // the agent submits Text as its answer
	Code   Kind = "code"   // run Text as a command (Lang: bash by default, or an app's language)
	API    Kind = "api"    // call the registered API Name with Args

	// Annotations of the plan, act, reflect pipeline: they do nothing on the
	// environment but are recorded and scored (CC-Score).
	Plan    Kind = "plan"    // the agent's plan, Text
	Reflect Kind = "reflect" // the agent's assessment, Text: sub_task_success, need_retry or need_reformulate
)

// Kinds lists every kind, in a stable order.
var Kinds = []Kind{Move, MoveRel, Click, Drag, DragRel, Scroll, MouseDown, MouseUp,
	Type, Key, Hotkey, KeyDown, KeyUp, Select, ScrollToText, Navigate, Back, TabSwitch,
	TabClose, Swipe, Done, Fail, Wait, Answer, Code, API, Plan, Reflect}

// Known reports whether k is a kind of the unified space.
func (k Kind) Known() bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Terminal reports whether the action ends the episode.
func (k Kind) Terminal() bool { return k == Done || k == Fail || k == Answer }

// Button is a mouse button.
type Button string

// Mouse buttons.
const (
	Left   Button = "left"
	Right  Button = "right"
	Middle Button = "middle"
)

// Unit is the convention of a coordinate.
type Unit string

// Coordinate conventions.
const (
	Pixels   Unit = "px"    // screen pixels
	Ratio    Unit = "ratio" // fraction of the screen, 0..1
	Thousand Unit = "k"     // 0..1000 of the screen (Qwen, UI-TARS, OS-Atlas)
)

// Size is a screen size in pixels.
type Size struct {
	W int `json:"w" yaml:"w"`
	H int `json:"h" yaml:"h"`
}

// Point is a position in a stated convention.
type Point struct {
	X    float64 `json:"x" yaml:"x"`
	Y    float64 `json:"y" yaml:"y"`
	Unit Unit    `json:"unit,omitempty" yaml:"unit,omitempty"` // empty means pixels
}

// Pixels converts p to integer screen pixels on a screen of the given size.
// It is the one place where coordinate conventions are resolved. Ratio and
// thousandth coordinates are clamped to the last pixel; pixel coordinates
// outside the screen are an error that matches ErrInvalid.
func (p Point) Pixels(s Size) (x, y int, err error) {
	if s.W <= 0 || s.H <= 0 {
		return 0, 0, fmt.Errorf("screen size %dx%d is not positive", s.W, s.H)
	}
	if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
		return 0, 0, invalidf("coordinate (%v, %v) is not a number", p.X, p.Y)
	}
	var fx, fy float64
	switch p.Unit {
	case "", Pixels:
		fx, fy = p.X, p.Y
		if fx < 0 || fy < 0 || fx >= float64(s.W) || fy >= float64(s.H) {
			return 0, 0, invalidf("point (%g, %g) is outside the %dx%d screen", p.X, p.Y, s.W, s.H)
		}
		return int(math.Round(math.Min(fx, float64(s.W-1)))), int(math.Round(math.Min(fy, float64(s.H-1)))), nil
	case Ratio:
		if p.X < 0 || p.Y < 0 || p.X > 1 || p.Y > 1 {
			return 0, 0, invalidf("ratio point (%g, %g) is outside 0..1", p.X, p.Y)
		}
		fx, fy = p.X*float64(s.W), p.Y*float64(s.H)
	case Thousand:
		if p.X < 0 || p.Y < 0 || p.X > 1000 || p.Y > 1000 {
			return 0, 0, invalidf("point (%g, %g) is outside 0..1000", p.X, p.Y)
		}
		fx, fy = p.X/1000*float64(s.W), p.Y/1000*float64(s.H)
	default:
		return 0, 0, invalidf("unknown coordinate unit %q", p.Unit)
	}
	x = int(math.Min(math.Floor(fx), float64(s.W-1)))
	y = int(math.Min(math.Floor(fy), float64(s.H-1)))
	return x, y, nil
}

// Box is a rectangle in pixels; X, Y is its top-left corner.
type Box struct {
	X int `json:"x" yaml:"x"`
	Y int `json:"y" yaml:"y"`
	W int `json:"w" yaml:"w"`
	H int `json:"h" yaml:"h"`
}

// Contains reports whether (x, y) lies inside b, edges included.
func (b Box) Contains(x, y int) bool {
	return x >= b.X && y >= b.Y && x <= b.X+b.W && y <= b.Y+b.H
}

// Center is the box's centre pixel.
func (b Box) Center() (int, int) { return b.X + b.W/2, b.Y + b.H/2 }

// Target names an element instead of a position: a set-of-mark tag, an
// element index (browser DOM), or an accessibility role and name, resolved by
// the environment at run time.
type Target struct {
	Tag   int  `json:"tag,omitempty" yaml:"tag,omitempty"`     // set-of-mark tag N (tag_N)
	Index *int `json:"index,omitempty" yaml:"index,omitempty"` // element index in the observation
	// ID is an element's id in the observation's tree, which stays the
	// same across steps while the element lives (a browser's DOM node).
	ID   int64  `json:"id,omitempty" yaml:"id,omitempty"`
	Role string `json:"role,omitempty" yaml:"role,omitempty"` // accessibility role, e.g. "push button"
	Name string `json:"name,omitempty" yaml:"name,omitempty"` // accessibility name, e.g. "Save"
	// Narrowing fields of a role and name target, for a name that more
	// than one element carries: the application, the title of the
	// top-level window, a text the element holds, and which of the
	// remaining matches (1 is the first in document order, -1 the last:
	// counting from the end skips what a desktop shows before a page,
	// such as a browser's address bar).
	App    string `json:"app,omitempty" yaml:"app,omitempty"`
	Window string `json:"window,omitempty" yaml:"window,omitempty"`
	Text   string `json:"text,omitempty" yaml:"text,omitempty"`
	Nth    int    `json:"nth,omitempty" yaml:"nth,omitempty"`
}

func (t Target) String() string {
	switch {
	case t.Tag > 0:
		return "tag_" + strconv.Itoa(t.Tag)
	case t.Index != nil:
		return "#" + strconv.Itoa(*t.Index)
	case t.ID != 0:
		return "id " + strconv.FormatInt(t.ID, 10)
	}
	var s string
	switch {
	case t.Role != "" && t.Name != "":
		s = t.Role + " " + strconv.Quote(t.Name)
	case t.Role != "":
		s = t.Role
	default:
		s = strconv.Quote(t.Name)
	}
	if t.Text != "" {
		s += " with text " + strconv.Quote(t.Text)
	}
	if t.Window != "" {
		s += " in window " + strconv.Quote(t.Window)
	}
	if t.App != "" {
		s += " of " + t.App
	}
	switch {
	case t.Nth == -1:
		s += " (last match)"
	case t.Nth < 0:
		s += " (match " + strconv.Itoa(-t.Nth) + " from the end)"
	case t.Nth > 0:
		s += " (match " + strconv.Itoa(t.Nth) + ")"
	}
	return s
}

func (t Target) valid() error {
	n := 0
	if t.Tag > 0 {
		n++
	}
	if t.Index != nil {
		n++
		if *t.Index < 0 {
			return fmt.Errorf("element index %d is negative", *t.Index)
		}
	}
	if t.Role != "" || t.Name != "" {
		n++
	}
	if t.ID != 0 {
		n++
		if t.ID < 0 {
			return fmt.Errorf("element id %d is negative", t.ID)
		}
	}
	if t.Tag < 0 {
		return fmt.Errorf("tag %d is negative", t.Tag)
	}
	if (t.App != "" || t.Window != "" || t.Text != "" || t.Nth != 0) && t.Role == "" && t.Name == "" {
		return fmt.Errorf("app, window, text and nth narrow a role and name target; a tag, index or id names one element already")
	}
	if n != 1 {
		return fmt.Errorf("target needs exactly one of tag, index, id, or role/name")
	}
	return nil
}

// Action is one action of the unified space. Which fields matter depends on
// Kind; Validate says which are required.
type Action struct {
	Kind     Kind           `json:"kind" yaml:"kind"`
	Point    *Point         `json:"point,omitempty" yaml:"point,omitempty"`
	To       *Point         `json:"to,omitempty" yaml:"to,omitempty"`
	Target   *Target        `json:"target,omitempty" yaml:"target,omitempty"`
	Button   Button         `json:"button,omitempty" yaml:"button,omitempty"`
	Count    int            `json:"count,omitempty" yaml:"count,omitempty"`
	DX       int            `json:"dx,omitempty" yaml:"dx,omitempty"`
	DY       int            `json:"dy,omitempty" yaml:"dy,omitempty"`
	Pages    float64        `json:"pages,omitempty" yaml:"pages,omitempty"`
	Text     string         `json:"text,omitempty" yaml:"text,omitempty"`
	Keys     []string       `json:"keys,omitempty" yaml:"keys,omitempty"`
	Duration float64        `json:"duration,omitempty" yaml:"duration,omitempty"`
	Clear    bool           `json:"clear,omitempty" yaml:"clear,omitempty"`
	NewTab   bool           `json:"new_tab,omitempty" yaml:"new_tab,omitempty"`
	Tab      string         `json:"tab,omitempty" yaml:"tab,omitempty"`
	Lang     string         `json:"lang,omitempty" yaml:"lang,omitempty"`
	Name     string         `json:"name,omitempty" yaml:"name,omitempty"`
	Args     map[string]any `json:"args,omitempty" yaml:"args,omitempty"`
	// Box is the area a gold click may land in (CC-Score's feasible box).
	Box *Box `json:"box,omitempty" yaml:"box,omitempty"`
}

// DefaultWait is the wait, in seconds, of a WAIT without a number.
const DefaultWait = 5.0

// invalid is an error that matches ErrInvalid and keeps its own message.
type invalid struct{ msg string }

func (e invalid) Error() string        { return e.msg }
func (e invalid) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, args ...any) error { return invalid{fmt.Sprintf(format, args...)} }

// Limits on one action's amounts, so that no single action can keep an
// environment busy for days. An action over a limit is invalid.
const (
	MaxScroll  = 100     // wheel clicks on each axis
	MaxPages   = 50      // pages of one scroll
	MaxText    = 20000   // characters typed, selected or searched by one action
	MaxCode    = 100000  // bytes of one command
	MaxKeys    = 32      // keys of one key or hotkey action
	MaxWait    = 300.0   // seconds of one wait
	MaxSeconds = 60.0    // seconds of one drag or swipe
	MaxOffset  = 1000000 // pixels of a relative move or drag
	// MaxPerTurn is the most actions one reply may hold; a longer reply
	// is refused whole.
	MaxPerTurn = 100
)

// Validate reports the first problem that makes a an impossible action.
// Its errors match ErrInvalid.
func (a Action) Validate() error {
	err := a.validate()
	if err == nil {
		err = a.withinLimits()
	}
	if err != nil && !errors.Is(err, ErrInvalid) {
		err = invalid{err.Error()}
	}
	return err
}

func (a Action) validate() error {
	if !a.Kind.Known() {
		return fmt.Errorf("unknown action kind %q", a.Kind)
	}
	if a.Target != nil {
		if err := a.Target.valid(); err != nil {
			return fmt.Errorf("%s: %w", a.Kind, err)
		}
	}
	for _, p := range []*Point{a.Point, a.To} {
		if p == nil {
			continue
		}
		switch p.Unit {
		case "", Pixels, Ratio, Thousand:
		default:
			return fmt.Errorf("%s: unknown coordinate unit %q", a.Kind, p.Unit)
		}
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			return fmt.Errorf("%s: coordinate is not a number", a.Kind)
		}
	}
	switch a.Button {
	case "", Left, Right, Middle:
	default:
		return fmt.Errorf("%s: unknown mouse button %q", a.Kind, a.Button)
	}
	need := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("%s needs %s", a.Kind, what)
		}
		return nil
	}
	switch a.Kind {
	case Move:
		return need(a.Point != nil || a.Target != nil, "a point or a target")
	case MoveRel:
		return need(a.Point != nil, "an offset")
	case Click:
		if a.Count < 0 || a.Count > 3 {
			return fmt.Errorf("click count %d is not 1, 2 or 3", a.Count)
		}
	case Drag:
		return need(a.To != nil || a.Target != nil, "an end point or a target")
	case DragRel:
		return need(a.To != nil, "an offset")
	case Scroll:
		return need(a.DX != 0 || a.DY != 0 || a.Pages != 0, "an amount")
	case Type:
		return need(a.Text != "" || a.Clear, "text")
	case Key, Hotkey, KeyDown, KeyUp:
		if err := need(len(a.Keys) > 0, "keys"); err != nil {
			return err
		}
		for _, k := range a.Keys {
			if k == "" {
				return fmt.Errorf("%s: empty key name", a.Kind)
			}
		}
	case Select:
		if err := need(a.Target != nil, "a target"); err != nil {
			return err
		}
		return need(a.Text != "", "an option")
	case ScrollToText, Plan, Reflect:
		return need(a.Text != "", "text")
	case Navigate:
		return need(a.Text != "", "a URL")
	case Swipe:
		return need(a.Point != nil && a.To != nil, "a start and an end point")
	case Wait:
		if a.Duration < 0 {
			return fmt.Errorf("wait of %g s is negative", a.Duration)
		}
	case Code:
		return need(strings.TrimSpace(a.Text) != "", "code")
	case API:
		return need(a.Name != "", "a name")
	}
	if a.Duration < 0 {
		return fmt.Errorf("%s: duration %g is negative", a.Kind, a.Duration)
	}
	return nil
}

// Check is Validate on a screen of the given size: it also refuses points
// off the screen. Its errors match ErrInvalid.
func (a Action) Check(screen Size) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if a.Kind == MoveRel || a.Kind == DragRel {
		return nil // offsets, not positions
	}
	for _, p := range []*Point{a.Point, a.To} {
		if p == nil {
			continue
		}
		if _, _, err := p.Pixels(screen); err != nil {
			return fmt.Errorf("%s: %w", a.Kind, err)
		}
	}
	return nil
}

// withinLimits checks the action's amounts against the limits.
func (a Action) withinLimits() error {
	over := func(what string, got, limit any) error {
		return fmt.Errorf("%s: %s %v is over the limit of %v", a.Kind, what, got, limit)
	}
	switch {
	case a.DX > MaxScroll || a.DX < -MaxScroll:
		return over("horizontal scroll", a.DX, MaxScroll)
	case a.DY > MaxScroll || a.DY < -MaxScroll:
		return over("vertical scroll", a.DY, MaxScroll)
	case math.Abs(a.Pages) > MaxPages || math.IsNaN(a.Pages):
		return over("page count", a.Pages, MaxPages)
	case len(a.Keys) > MaxKeys:
		return over("key count", len(a.Keys), MaxKeys)
	case math.IsNaN(a.Duration) || math.IsInf(a.Duration, 0):
		return fmt.Errorf("%s: duration is not a number", a.Kind)
	case a.Kind == Wait && a.Duration > MaxWait:
		return over("wait (seconds)", a.Duration, MaxWait)
	case a.Kind != Wait && a.Duration > MaxSeconds:
		return over("duration (seconds)", a.Duration, MaxSeconds)
	}
	if a.Kind == Code {
		if len(a.Text) > MaxCode {
			return over("command length (bytes)", len(a.Text), MaxCode)
		}
	} else if n := utf8.RuneCountInString(a.Text); n > MaxText {
		return over("text length (characters)", n, MaxText)
	}
	if a.Kind == MoveRel || a.Kind == DragRel {
		for _, p := range []*Point{a.Point, a.To} {
			if p != nil && (math.Abs(p.X) > MaxOffset || math.Abs(p.Y) > MaxOffset) {
				return over("offset", p.String(), MaxOffset)
			}
		}
	}
	return nil
}

// Clicks is the click count of a click action, 1 when unset.
func (a Action) Clicks() int {
	if a.Count == 0 {
		return 1
	}
	return a.Count
}

// MouseButton is the action's button, left when unset.
func (a Action) MouseButton() Button {
	if a.Button == "" {
		return Left
	}
	return a.Button
}

// WaitSeconds is the wait of a Wait action, DefaultWait when unset.
func (a Action) WaitSeconds() float64 {
	if a.Duration == 0 {
		return DefaultWait
	}
	return a.Duration
}

// String renders a in one compact line; equal actions render equally, so the
// runner can compare strings to detect repeated actions.
func (a Action) String() string {
	var b strings.Builder
	b.WriteString(string(a.Kind))
	arg := func(s string) {
		b.WriteByte(' ')
		b.WriteString(s)
	}
	if a.Target != nil {
		arg(a.Target.String())
	}
	if a.Point != nil {
		arg(a.Point.String())
	}
	if a.To != nil {
		arg("to " + a.To.String())
	}
	if a.Button != "" && a.Button != Left {
		arg(string(a.Button))
	}
	if a.Count > 1 {
		arg("x" + strconv.Itoa(a.Count))
	}
	if a.DX != 0 || a.DY != 0 {
		arg(fmt.Sprintf("dx=%d dy=%d", a.DX, a.DY))
	}
	if a.Pages != 0 {
		arg(fmt.Sprintf("pages=%g", a.Pages))
	}
	if len(a.Keys) > 0 {
		arg(strings.Join(a.Keys, "+"))
	}
	if a.Name != "" {
		arg(a.Name)
	}
	if len(a.Args) > 0 {
		keys := make([]string, 0, len(a.Args))
		for k := range a.Args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, _ := json.Marshal(a.Args[k])
			arg(k + "=" + string(v))
		}
	}
	if a.Text != "" {
		arg(strconv.Quote(a.Text))
	}
	if a.Clear {
		arg("clear")
	}
	if a.NewTab {
		arg("new-tab")
	}
	if a.Tab != "" {
		arg("tab=" + a.Tab)
	}
	if a.Lang != "" {
		arg("lang=" + a.Lang)
	}
	if a.Duration != 0 {
		arg(fmt.Sprintf("%gs", a.Duration))
	}
	return b.String()
}

func (p Point) String() string {
	switch p.Unit {
	case "", Pixels:
		return fmt.Sprintf("(%g,%g)", p.X, p.Y)
	default:
		return fmt.Sprintf("(%g,%g)%s", p.X, p.Y, p.Unit)
	}
}

// At returns a pixel point.
func At(x, y float64) *Point { return &Point{X: x, Y: y} }

// Step is the record of one performed action, as an environment reports
// it and a run stores it.
type Step struct {
	Action Action `json:"action"`
	// Element describes the accessibility element under a click, as the
	// process checks read it (ProBench's structure description).
	Element string `json:"element,omitempty"`
	// At is where a pointer action landed, in screen pixels.
	At *[2]int `json:"at,omitempty"`
	// Ambiguous is how many showing elements a role and name target
	// matched when neither a modal nor the active window singled one out
	// and the first was taken: the target should be narrowed.
	Ambiguous int `json:"ambiguous,omitempty"`
	// Output is what a code action printed, with its exit status.
	Output string `json:"output,omitempty"`
	// Settle is how long the environment waited after the turn for the
	// screen to stop changing before it could be observed; on the turn's
	// last step (nanoseconds in JSON, as the store's latencies).
	Settle time.Duration `json:"settle,omitempty"`
}
