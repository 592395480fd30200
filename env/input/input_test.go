package input

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
)

// rec is a device that records its events; failKey makes the key event
// of that keysym fail.
type rec struct {
	x, y    int
	events  []string
	failKey uint32
}

func (r *rec) Size() action.Size          { return action.Size{W: 100, H: 50} }
func (r *rec) Pointer() (int, int, error) { return r.x, r.y, nil }
func (r *rec) Move(x, y int) error {
	r.x, r.y = x, y
	r.events = append(r.events, fmt.Sprintf("move %d,%d", x, y))
	return nil
}
func (r *rec) Button(n int, down bool) error {
	r.events = append(r.events, fmt.Sprintf("button %d %s", n, updown(down)))
	return nil
}
func (r *rec) Key(sym uint32, down bool) error {
	if sym == r.failKey && down {
		return errors.New("key refused")
	}
	r.events = append(r.events, fmt.Sprintf("key %#x %s", sym, updown(down)))
	return nil
}
func (r *rec) TypeRune(c rune) error {
	r.events = append(r.events, "rune "+string(c))
	return nil
}

func updown(down bool) string {
	if down {
		return "down"
	}
	return "up"
}

// elements is a place with one element, "push button OK" at (40, 20).
type elements struct{ shell bool }

func (elements) Target(_ context.Context, t *action.Target) (int, int, int, error) {
	if t.Name != "OK" {
		return 0, 0, 0, fmt.Errorf("%w: %s", env.ErrNotFound, t)
	}
	return 40, 20, 2, nil
}

func (elements) Describe(_ context.Context, x, y int) string {
	if x == 40 && y == 20 {
		return "push button OK"
	}
	return ""
}

func (p elements) Shell(_ context.Context, command string) (string, error) {
	if !p.shell {
		return "", errors.New("no shell here")
	}
	return "exit 0\n" + command, nil
}

func TestDo(t *testing.T) {
	ok := &action.Target{Role: "push button", Name: "OK"}
	cases := []struct {
		name    string
		act     action.Action
		events  string
		element string
		at      string
		matches int
		output  string
	}{
		{name: "click", act: action.Action{Kind: action.Click, Point: action.At(10, 5)},
			events: "move 10,5 | button 1 down | button 1 up", at: "10,5"},
		{name: "double right click", act: action.Action{Kind: action.Click, Point: action.At(10, 5), Button: action.Right, Count: 2},
			events: "move 10,5 | button 3 down | button 3 up | button 3 down | button 3 up", at: "10,5"},
		{name: "click on a target", act: action.Action{Kind: action.Click, Target: ok},
			events: "move 40,20 | button 1 down | button 1 up", at: "40,20", element: "push button OK", matches: 2},
		{name: "click where the pointer is", act: action.Action{Kind: action.Click},
			events: "move 1,1 | button 1 down | button 1 up", at: "1,1"},
		{name: "move relative", act: action.Action{Kind: action.MoveRel, Point: &action.Point{X: 5, Y: -1}},
			events: "move 6,0", at: "6,0"},
		{name: "scroll a page up and a notch right", act: action.Action{Kind: action.Scroll, Point: action.At(3, 3), Pages: -0.2, DX: 1},
			events: "move 3,3 | button 4 down | button 4 up | button 4 down | button 4 up | button 7 down | button 7 up", at: "3,3"},
		{name: "mouse down on a target", act: action.Action{Kind: action.MouseDown, Target: ok},
			events: "move 40,20 | button 1 down", at: "40,20", element: "push button OK", matches: 2},
		{name: "type into a target, cleared", act: action.Action{Kind: action.Type, Target: ok, Text: "hé", Clear: true},
			events: "move 40,20 | button 1 down | button 1 up | key 0xffe3 down | key 0x61 down | key 0x61 up | key 0xffe3 up | key 0xffff down | key 0xffff up | rune h | rune é",
			at:     "40,20", element: "push button OK", matches: 2},
		{name: "hotkey", act: action.Action{Kind: action.Hotkey, Keys: []string{"ctrl", "shift", "t"}},
			events: "key 0xffe3 down | key 0xffe1 down | key 0x74 down | key 0x74 up | key 0xffe1 up | key 0xffe3 up"},
		{name: "keys in turn", act: action.Action{Kind: action.Key, Keys: []string{"Return", "F5"}},
			events: "key 0xff0d down | key 0xff0d up | key 0xffc2 down | key 0xffc2 up"},
		{name: "code", act: action.Action{Kind: action.Code, Text: "ls"}, output: "exit 0\nls"},
		{name: "done", act: action.Action{Kind: action.Done}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &rec{x: 1, y: 1}
			in := &Interpreter{Device: d, Place: elements{shell: true}, Name: "a test screen"}
			st, err := in.Do(context.Background(), c.act)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(d.events, " | "); got != c.events {
				t.Errorf("events\n got %s\nwant %s", got, c.events)
			}
			at := ""
			if st.At != nil {
				at = fmt.Sprintf("%d,%d", st.At[0], st.At[1])
			}
			if at != c.at || st.Element != c.element || st.Ambiguous != c.matches || st.Output != c.output {
				t.Errorf("step at %q element %q ambiguous %d output %q, want %q %q %d %q",
					at, st.Element, st.Ambiguous, st.Output, c.at, c.element, c.matches, c.output)
			}
		})
	}
}

// TestDrag: a drag presses where it starts, moves in DragSteps and lets
// go where it ends.
func TestDrag(t *testing.T) {
	d := &rec{}
	in := &Interpreter{Device: d, Place: elements{}, Name: "a test screen"}
	if _, err := in.Do(context.Background(), action.Action{Kind: action.Drag, Point: action.At(0, 0), To: action.At(24, 12)}); err != nil {
		t.Fatal(err)
	}
	want := []string{"move 0,0", "button 1 down"}
	for i := 1; i <= DragSteps; i++ {
		want = append(want, fmt.Sprintf("move %d,%d", 24*i/DragSteps, 12*i/DragSteps))
	}
	want = append(want, "button 1 up")
	if got, w := strings.Join(d.events, " | "), strings.Join(want, " | "); got != w {
		t.Fatalf("drag\n got %s\nwant %s", got, w)
	}
}

func TestRefused(t *testing.T) {
	cases := []struct {
		name string
		act  action.Action
		want error
		says string
	}{
		{"off the screen", action.Action{Kind: action.Click, Point: action.At(100, 10)}, env.ErrBadAction, "(100, 10) is outside the 100x50 screen"},
		{"moved off the screen", action.Action{Kind: action.MoveRel, Point: &action.Point{X: -5}}, env.ErrBadAction, "off the"},
		{"no such element", action.Action{Kind: action.Click, Target: &action.Target{Name: "Cancel"}}, env.ErrNotFound, "Cancel"},
		{"unknown key", action.Action{Kind: action.Key, Keys: []string{"nosuchkey"}}, env.ErrBadAction, "nosuchkey"},
		{"python", action.Action{Kind: action.Code, Lang: "python", Text: "1"}, env.ErrBadAction, `code in "python" cannot run on a test screen`},
		{"a browser's action", action.Action{Kind: action.Navigate, Text: "https://example.org"}, env.ErrBadAction, "not a test screen"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &rec{}
			in := &Interpreter{Device: d, Place: elements{}, Name: "a test screen"}
			_, err := in.Do(context.Background(), c.act)
			if !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.says) {
				t.Fatalf("%v, want %v saying %q", err, c.want, c.says)
			}
			if len(d.events) > 0 {
				t.Fatalf("a refused action sent %v", d.events)
			}
		})
	}
}

// TestHotkeyNeverHalfPressed: when a key of a hotkey cannot go down, the
// keys already down are released.
func TestHotkeyNeverHalfPressed(t *testing.T) {
	d := &rec{failKey: 0x74}
	in := &Interpreter{Device: d, Place: elements{}, Name: "a test screen"}
	_, err := in.Do(context.Background(), action.Action{Kind: action.Hotkey, Keys: []string{"ctrl", "shift", "t"}})
	if err == nil {
		t.Fatal("no error")
	}
	want := "key 0xffe3 down | key 0xffe1 down | key 0xffe1 up | key 0xffe3 up"
	if got := strings.Join(d.events, " | "); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
}

// TestHeld: key_down is remembered until key_up, so that a reset can let
// go of what an agent left held.
func TestHeld(t *testing.T) {
	in := &Interpreter{Device: &rec{}, Place: elements{}, Name: "a test screen"}
	ctx := context.Background()
	for _, a := range []action.Action{
		{Kind: action.KeyDown, Keys: []string{"shift"}},
		{Kind: action.KeyDown, Keys: []string{"ctrl"}},
		{Kind: action.KeyDown, Keys: []string{"a"}},
		{Kind: action.KeyUp, Keys: []string{"ctrl"}},
	} {
		if _, err := in.Do(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprintf("%#x", in.Held()); got != "[0xffe1 0x61]" {
		t.Fatalf("held %s", got)
	}
	in.Forget()
	if len(in.Held()) != 0 {
		t.Fatal("Forget kept keys")
	}
}

// TestCancelled: a done context sends nothing, and a drag cut short lets
// go of its button.
func TestCancelled(t *testing.T) {
	d := &rec{}
	in := &Interpreter{Device: d, Place: elements{}, Name: "a test screen"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, a := range []action.Action{
		{Kind: action.Type, Text: "abc"},
		{Kind: action.Scroll, DY: 5},
		{Kind: action.Click, Point: action.At(1, 1)},
	} {
		if _, err := in.Do(ctx, a); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: %v", a.Kind, err)
		}
	}
	if len(d.events) > 0 {
		t.Fatalf("sent %v", d.events)
	}
	ctx, cancel = context.WithCancel(context.Background())
	d.failKey = 0
	done := make(chan error, 1)
	go func() {
		_, err := in.Do(ctx, action.Action{Kind: action.Drag, Point: action.At(0, 0), To: action.At(9, 9), Duration: 60})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("drag: %v", err)
	}
	if n := len(d.events); n > 0 && d.events[n-1] != "button 1 up" && d.events[n-1] != "move 0,0" {
		t.Fatalf("a cancelled drag ended with %q", d.events[n-1])
	}
}

// later is a place whose element shows after a number of looks.
type later struct {
	elements
	looks, after int
}

func (p *later) Target(ctx context.Context, t *action.Target) (int, int, int, error) {
	p.looks++
	if p.looks <= p.after {
		return 0, 0, 0, fmt.Errorf("%w: no element %s is showing", env.ErrNotFound, t)
	}
	return p.elements.Target(ctx, t)
}

// TestWaitForElement: a wait with a target ends when the element shows,
// and fails naming it when it never does; a place without elements
// refuses it.
func TestWaitForElement(t *testing.T) {
	ok := &action.Target{Role: "push button", Name: "OK"}
	p := &later{after: 3}
	in := &Interpreter{Device: &rec{}, Place: p, Name: "a test screen"}
	if _, err := in.Do(context.Background(), action.Action{Kind: action.Wait, Target: ok, Duration: 30}); err != nil {
		t.Fatalf("wait for a showing element: %v", err)
	}
	if p.looks != 4 {
		t.Errorf("looked %d times, want 4 (three misses, then the element)", p.looks)
	}
	never := &action.Target{Role: "push button", Name: "Never"}
	_, err := in.Do(context.Background(), action.Action{Kind: action.Wait, Target: never, Duration: 0.6})
	if !errors.Is(err, env.ErrNotFound) || !strings.Contains(err.Error(), "waited 600ms") || !strings.Contains(err.Error(), `"Never"`) {
		t.Errorf("wait for an element that never shows: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := in.Do(ctx, action.Action{Kind: action.Wait, Target: never, Duration: 30}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
	bare := &Interpreter{Device: &rec{}, Name: "a bare screen"}
	if _, err := bare.Do(context.Background(), action.Action{Kind: action.Wait, Target: ok}); !errors.Is(err, env.ErrBadAction) {
		t.Errorf("wait for an element without elements: %v", err)
	}
}

// combo is a place with a combo box at (40, 20) whose list, once the box
// is clicked (the click reads the element under the pointer), shows the
// menu item "High" at (40, 45).
type combo struct {
	elements
	open bool
}

func (p *combo) Target(_ context.Context, t *action.Target) (int, int, int, error) {
	switch {
	case t.Role == "combo box":
		return 40, 20, 0, nil
	case p.open && t.Role == "menu item" && t.Name == "High":
		return 40, 45, 0, nil
	case p.open && t.Role == "" && t.Name == "Medium" && t.Nth == 1:
		return 10, 5, 0, nil // the same text above the box: not the option
	case p.open && t.Role == "" && t.Name == "Medium" && t.Nth == 2:
		return 60, 40, 0, nil
	}
	return 0, 0, 0, fmt.Errorf("%w: no element %s is showing", env.ErrNotFound, t)
}

func (p *combo) Describe(_ context.Context, x, y int) string {
	if x == 40 && y == 20 {
		p.open = true
		return "combo box"
	}
	return "menu item"
}

// TestSelectOnAScreen: select opens the box with a click and clicks the
// option in its list; an option that never shows closes the list with
// Escape and fails naming it.
func TestSelectOnAScreen(t *testing.T) {
	box := &action.Target{Role: "combo box", Text: "Low"}
	dev := &rec{}
	in := &Interpreter{Device: dev, Place: &combo{}, Name: "a test screen"}
	st, err := in.Do(context.Background(), action.Action{Kind: action.Select, Target: box, Text: "High"})
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	got := strings.Join(dev.events, "; ")
	if want := "move 40,20; button 1 down; button 1 up; move 40,45; button 1 down; button 1 up"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if st.Element != "combo box" || st.At == nil || *st.At != [2]int{40, 20} {
		t.Errorf("step records %+v, want the box", st)
	}
	// A styled list: its option is plain text, the nearest below the box.
	dev = &rec{}
	in = &Interpreter{Device: dev, Place: &combo{}, Name: "a test screen"}
	if _, err := in.Do(context.Background(), action.Action{Kind: action.Select, Target: box, Text: "Medium"}); err != nil {
		t.Fatalf("select in a styled list: %v", err)
	}
	if got := strings.Join(dev.events, "; "); !strings.HasSuffix(got, "move 60,40; button 1 down; button 1 up") {
		t.Errorf("styled list events %q, want a click at 60,40", got)
	}
	dev = &rec{}
	in = &Interpreter{Device: dev, Place: &combo{}, Name: "a test screen"}
	_, err = in.Do(context.Background(), action.Action{Kind: action.Select, Target: box, Text: "Urgent"})
	if !errors.Is(err, env.ErrNotFound) || !strings.Contains(err.Error(), `no option "Urgent"`) {
		t.Errorf("select of a missing option: %v", err)
	}
	if !strings.Contains(strings.Join(dev.events, "; "), "key 0xff1b down") {
		t.Errorf("the list was not closed with Escape: %v", dev.events)
	}
}

// page is a place whose text "Data Warehouse" shows once the wheel has
// gone down (or up, when below is negative) far enough: it counts the
// wheel's notches in the device's events.
type page struct {
	elements
	dev   *rec
	below int // notches down to the text; negative: up
}

func (p *page) FindText(_ context.Context, text string) (observe.TextSpot, error) {
	shows, err := p.shows(text)
	return observe.TextSpot{Showing: shows, Inside: shows, X: 50, Y: 25, Down: true}, err
}

func (p *page) shows(text string) (bool, error) {
	pos := 0
	for _, e := range p.dev.events {
		switch e {
		case "button 5 down":
			pos++
		case "button 4 down":
			pos--
		}
	}
	if text != "Data Warehouse" {
		return false, nil
	}
	if p.below >= 0 {
		return pos >= p.below, nil
	}
	return pos <= p.below, nil
}

// TestScrollToText: scroll_to_text wheels down at the screen's centre
// until the text shows, then back up past the start; a text that never
// shows fails naming it; a place that cannot read text refuses it.
func TestScrollToText(t *testing.T) {
	scrollPause, settleGap = 0, 0
	defer func() { scrollPause, settleGap = 60*time.Millisecond, 100*time.Millisecond }()
	for _, c := range []struct {
		name  string
		below int
		text  string
		err   string
	}{
		{"below", 10, "Data Warehouse", ""},
		{"above", -5, "Data Warehouse", ""},
		{"never", 0, "Nowhere", `the text "Nowhere" never showed`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dev := &rec{}
			in := &Interpreter{Device: dev, Place: &page{dev: dev, below: c.below}, Name: "a test screen"}
			_, err := in.Do(context.Background(), action.Action{Kind: action.ScrollToText, Text: c.text})
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("err %v, want %q", err, c.err)
			}
			if dev.events[0] != "move 50,25" {
				t.Errorf("first event %q, want the pointer at the centre", dev.events[0])
			}
		})
	}
	in := &Interpreter{Device: &rec{}, Place: elements{}, Name: "a test screen"}
	if _, err := in.Do(context.Background(), action.Action{Kind: action.ScrollToText, Text: "x"}); !errors.Is(err, env.ErrBadAction) {
		t.Errorf("a place without text: %v", err)
	}
}

// inner is a screen 100x50 whose page holds a list that scrolls inside
// it, at (5,5) 30x20, with ten projects 8 pixels apart. A wheel notch
// turned over the list moves its items 8 pixels; one turned anywhere else
// does nothing (the page does not scroll). After each turn the tree gives
// the boxes of before it for stale more reads, as Chromium's does for a
// moment.
type inner struct {
	elements
	dev   *rec
	stale int
	reads []int // the list's offset each read reported
	truth int   // the list's offset at the last change
	left  int   // stale reads left since that change
}

func (p *inner) offset() int {
	off := 0
	for _, e := range p.dev.events {
		if e == "button 5 down" && (action.Box{X: 5, Y: 5, W: 30, H: 20}).Contains(p.dev.x, p.dev.y) {
			off += 8
		}
		if e == "button 4 down" && (action.Box{X: 5, Y: 5, W: 30, H: 20}).Contains(p.dev.x, p.dev.y) {
			off -= 8
		}
	}
	return off
}

func (p *inner) FindText(_ context.Context, text string) (observe.TextSpot, error) {
	off := p.offset()
	if off != p.truth {
		p.truth, p.left = off, p.stale
	}
	if p.left > 0 && len(p.reads) > 0 {
		p.left--
		off = p.reads[len(p.reads)-1]
	}
	p.reads = append(p.reads, off)
	list := &observe.Node{Role: "list", States: []string{"visible", "showing"}, Box: action.Box{X: 5, Y: 5, W: 30, H: 20}}
	for i := range 10 {
		y := 5 + 8*i - off
		st := []string{"visible", "enabled"}
		if y >= 5 && y+8 <= 25 {
			st = append(st, "showing")
		}
		list.Children = append(list.Children, &observe.Node{Role: "check box", Name: fmt.Sprintf("Project %d", i), States: st, Box: action.Box{X: 7, Y: y, W: 20, H: 8}})
	}
	doc := &observe.Node{Role: "document web", States: []string{"visible", "showing"}, Box: action.Box{W: 100, H: 50}, Children: []*observe.Node{list}}
	win := &observe.Node{Role: "frame", States: []string{"visible", "showing", "active"}, Box: action.Box{W: 100, H: 50}, Children: []*observe.Node{doc}}
	tree := &observe.Tree{Apps: []*observe.Node{{Role: "application", App: "chromium", Children: []*observe.Node{win}}}}
	return tree.FindText(text, action.Size{W: 100, H: 50}), nil
}

// TestScrollToTextInAList: a text in a list that scrolls inside the page
// is brought into view by turning the wheel over that list, towards it
// (down, then up for one above), and scroll_to_text returns only once the
// text's box reads the same twice.
func TestScrollToTextInAList(t *testing.T) {
	scrollPause, settleGap = 0, 0
	defer func() { scrollPause, settleGap = 60*time.Millisecond, 100*time.Millisecond }()
	dev := &rec{}
	p := &inner{dev: dev, stale: 1}
	in := &Interpreter{Device: dev, Place: p, Name: "a test screen"}
	if _, err := in.Do(context.Background(), action.Action{Kind: action.ScrollToText, Text: "Project 7"}); err != nil {
		t.Fatalf("scroll to a project below the list's end: %v", err)
	}
	if dev.events[0] != "move 20,15" {
		t.Errorf("first event %q, want the pointer over the list's middle", dev.events[0])
	}
	if off := p.offset(); off < 44 || off > 56 {
		t.Errorf("the list scrolled %d pixels, want 44 to 56 to show Project 7 (no further)", off)
	}
	last := p.reads[len(p.reads)-2:]
	if last[0] != last[1] || last[1] != p.offset() {
		t.Errorf("the last two reads gave offsets %v, the list is at %d: the box was not read until it settled", last, p.offset())
	}
	if _, err := in.Do(context.Background(), action.Action{Kind: action.ScrollToText, Text: "Project 0"}); err != nil {
		t.Fatalf("scroll back up to the first project: %v", err)
	}
	if !strings.Contains(strings.Join(dev.events, "; "), "button 4 down") || p.offset() > 0 {
		t.Errorf("the list was not scrolled back up (offset %d)", p.offset())
	}
}

// long is a page whose button "Create" starts at y 80 on a screen 50
// high and moves up 10 pixels a wheel notch down.
type long struct {
	elements
	dev *rec
}

func (p *long) Target(_ context.Context, t *action.Target) (int, int, int, error) {
	if t.Name != "Create" {
		return 0, 0, 0, fmt.Errorf("%w: %s", env.ErrNotFound, t)
	}
	y := 80
	for _, e := range p.dev.events {
		if e == "button 5 down" {
			y -= 10
		}
	}
	return 30, y, 0, nil
}

// TestTargetBelowTheScreen: an element below the screen is scrolled into
// view with the wheel, in its column, before the click.
func TestTargetBelowTheScreen(t *testing.T) {
	scrollPause = 0
	defer func() { scrollPause = 60 * time.Millisecond }()
	dev := &rec{}
	in := &Interpreter{Device: dev, Place: &long{dev: dev}, Name: "a test screen"}
	st, err := in.Do(context.Background(), action.Action{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "Create"}})
	if err != nil {
		t.Fatalf("click below the screen: %v", err)
	}
	if st.At == nil || *st.At != [2]int{30, 20} {
		t.Errorf("clicked at %v, want (30, 20) after two turns of three notches", st.At)
	}
	if dev.events[0] != "move 30,25" {
		t.Errorf("first event %q, want the wheel in the element's column", dev.events[0])
	}
}

// lagging is a place whose tree lacks the button "OK" for its first misses
// looks, as a desktop's tree may just after a scroll.
type lagging struct {
	elements
	misses int
}

func (p *lagging) Target(ctx context.Context, t *action.Target) (int, int, int, error) {
	if p.misses > 0 {
		p.misses--
		return 0, 0, 0, fmt.Errorf("%w: %s", env.ErrNotFound, t)
	}
	return p.elements.Target(ctx, t)
}

// TestTargetLag: with Lag set, a pointer action looks again for an element
// the place does not find at first; without it, it fails at once.
func TestTargetLag(t *testing.T) {
	click := action.Action{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "OK"}}
	in := &Interpreter{Device: &rec{}, Place: &lagging{misses: 2}, Name: "a test screen", Lag: time.Second}
	if st, err := in.Do(context.Background(), click); err != nil || st.At == nil || *st.At != [2]int{40, 20} {
		t.Fatalf("click with a lagging tree: %v at %v", err, st.At)
	}
	in = &Interpreter{Device: &rec{}, Place: &lagging{misses: 2}, Name: "a test screen"}
	if _, err := in.Do(context.Background(), click); !errors.Is(err, env.ErrNotFound) {
		t.Errorf("click without Lag: %v, want ErrNotFound", err)
	}
}

func TestPressGap(t *testing.T) {
	for _, tt := range []struct {
		in   Interpreter
		want time.Duration
	}{
		{Interpreter{}, PressGap},               // X and VNC: toolkits drop a press that comes with the move
		{Interpreter{Gapless: true}, 0},         // CDP input: the page gets the events in order
		{Interpreter{Gapless: true, Lag: 1}, 0}, // whatever else is set
	} {
		if got := tt.in.pressGap(); got != tt.want {
			t.Errorf("%+v: press gap %v, want %v", tt.in, got, tt.want)
		}
	}
	// A gapless click still presses and releases where it moved to.
	dev := &rec{}
	in := &Interpreter{Device: dev, Place: &lagging{}, Name: "a test screen", Gapless: true}
	if _, err := in.Do(context.Background(), action.Action{Kind: action.Click, Point: &action.Point{X: 5, Y: 6}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(dev.events, "; "); got != "move 5,6; button 1 down; button 1 up" {
		t.Errorf("events %q", got)
	}
}
