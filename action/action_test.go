package action

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func idx(n int) *int { return &n }

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		a    Action
		err  string // "" means valid
	}{
		{"move", Action{Kind: Move, Point: At(1, 2)}, ""},
		{"move needs point", Action{Kind: Move}, "needs a point"},
		{"move to element", Action{Kind: Move, Target: &Target{Role: "push button", Name: "OK"}}, ""},
		{"move_rel", Action{Kind: MoveRel, Point: At(-5, 5)}, ""},
		{"move_rel needs offset", Action{Kind: MoveRel}, "needs an offset"},
		{"click", Action{Kind: Click, Point: At(1, 2), Count: 2, Button: Right}, ""},
		{"click here", Action{Kind: Click}, ""},
		{"click count", Action{Kind: Click, Count: 4}, "count 4"},
		{"click button", Action{Kind: Click, Button: "thumb"}, "unknown mouse button"},
		{"click by tag", Action{Kind: Click, Target: &Target{Tag: 3}}, ""},
		{"click by index", Action{Kind: Click, Target: &Target{Index: idx(0)}}, ""},
		{"target twice", Action{Kind: Click, Target: &Target{Tag: 3, Name: "OK"}}, "exactly one"},
		{"negative index", Action{Kind: Click, Target: &Target{Index: idx(-1)}}, "negative"},
		{"drag", Action{Kind: Drag, Point: At(1, 1), To: At(5, 5), Duration: 0.5}, ""},
		{"drag needs end", Action{Kind: Drag, Point: At(1, 1)}, "needs an end point"},
		{"drag_rel", Action{Kind: DragRel, To: At(10, 0)}, ""},
		{"drag_rel needs offset", Action{Kind: DragRel}, "needs an offset"},
		{"scroll", Action{Kind: Scroll, DY: 3, DX: -1}, ""},
		{"scroll pages", Action{Kind: Scroll, Pages: 0.5}, ""},
		{"scroll nothing", Action{Kind: Scroll}, "needs an amount"},
		{"mouse_down", Action{Kind: MouseDown, Button: Middle}, ""},
		{"mouse_up", Action{Kind: MouseUp, Point: At(3, 3)}, ""},
		{"type", Action{Kind: Type, Text: "héllo"}, ""},
		{"type empty", Action{Kind: Type}, "needs text"},
		{"type clear", Action{Kind: Type, Clear: true, Target: &Target{Index: idx(2)}}, ""},
		{"key", Action{Kind: Key, Keys: []string{"enter"}}, ""},
		{"key empty", Action{Kind: Key}, "needs keys"},
		{"key empty name", Action{Kind: Key, Keys: []string{""}}, "empty key"},
		{"hotkey", Action{Kind: Hotkey, Keys: []string{"ctrl", "s"}}, ""},
		{"key_down", Action{Kind: KeyDown, Keys: []string{"shift"}}, ""},
		{"key_up", Action{Kind: KeyUp, Keys: []string{"shift"}}, ""},
		{"select", Action{Kind: Select, Target: &Target{Index: idx(4)}, Text: "Red"}, ""},
		{"select needs option", Action{Kind: Select, Target: &Target{Index: idx(4)}}, "needs an option"},
		{"select needs target", Action{Kind: Select, Text: "Red"}, "needs a target"},
		{"scroll_to_text", Action{Kind: ScrollToText, Text: "Terms"}, ""},
		{"navigate", Action{Kind: Navigate, Text: "http://127.0.0.1/", NewTab: true}, ""},
		{"navigate needs url", Action{Kind: Navigate}, "needs a URL"},
		{"back", Action{Kind: Back}, ""},
		{"tab_switch", Action{Kind: TabSwitch, Tab: "1"}, ""},
		{"tab_close", Action{Kind: TabClose, Tab: "1"}, ""},
		{"swipe", Action{Kind: Swipe, Point: At(1, 1), To: At(1, 100)}, ""},
		{"swipe needs points", Action{Kind: Swipe, Point: At(1, 1)}, "needs a start"},
		{"done", Action{Kind: Done}, ""},
		{"fail", Action{Kind: Fail}, ""},
		{"wait", Action{Kind: Wait, Duration: 2}, ""},
		{"wait negative", Action{Kind: Wait, Duration: -1}, "negative"},
		{"answer", Action{Kind: Answer, Text: "42"}, ""},
		{"code", Action{Kind: Code, Text: "ls", Lang: "bash"}, ""},
		{"code empty", Action{Kind: Code, Text: "  "}, "needs code"},
		{"api", Action{Kind: API, Name: "open_file", Args: map[string]any{"path": "/tmp/x"}}, ""},
		{"api needs name", Action{Kind: API}, "needs a name"},
		{"plan", Action{Kind: Plan, Text: "open the menu"}, ""},
		{"reflect", Action{Kind: Reflect, Text: "need_retry"}, ""},
		{"unknown kind", Action{Kind: "teleport"}, "unknown action kind"},
		{"bad unit", Action{Kind: Click, Point: &Point{X: 1, Y: 1, Unit: "inch"}}, "unknown coordinate unit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.a.Validate()
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.err)
			}
		})
	}
	// Every kind appears in the table above.
	seen := map[Kind]bool{}
	for _, tc := range tests {
		seen[tc.a.Kind] = true
	}
	for _, k := range Kinds {
		if !seen[k] {
			t.Errorf("kind %s has no validation case", k)
		}
	}
}

func TestPixels(t *testing.T) {
	hd := Size{W: 1920, H: 1080}
	tests := []struct {
		p      Point
		s      Size
		x, y   int
		hasErr bool
	}{
		{Point{X: 100, Y: 200}, hd, 100, 200, false},
		{Point{X: 100.6, Y: 0.4, Unit: Pixels}, hd, 101, 0, false},
		{Point{X: 1920, Y: 5}, hd, 0, 0, true},
		{Point{X: -1, Y: 5}, hd, 0, 0, true},
		{Point{X: 0.5, Y: 0.5, Unit: Ratio}, hd, 960, 540, false},
		{Point{X: 1, Y: 1, Unit: Ratio}, hd, 1919, 1079, false},
		{Point{X: 1.2, Y: 0, Unit: Ratio}, hd, 0, 0, true},
		{Point{X: 500, Y: 250, Unit: Thousand}, hd, 960, 270, false},
		{Point{X: 1000, Y: 1000, Unit: Thousand}, hd, 1919, 1079, false},
		{Point{X: 991, Y: 19, Unit: Thousand}, hd, 1902, 20, false},
		{Point{X: 1001, Y: 0, Unit: Thousand}, hd, 0, 0, true},
		{Point{X: 10, Y: 10, Unit: "cm"}, hd, 0, 0, true},
		{Point{X: 10, Y: 10}, Size{}, 0, 0, true},
		{Point{X: 500, Y: 500, Unit: Thousand}, Size{W: 1280, H: 720}, 640, 360, false},
	}
	for _, tc := range tests {
		x, y, err := tc.p.Pixels(tc.s)
		if tc.hasErr != (err != nil) {
			t.Errorf("%v.Pixels(%v) error = %v, want error %v", tc.p, tc.s, err, tc.hasErr)
			continue
		}
		if !tc.hasErr && (x != tc.x || y != tc.y) {
			t.Errorf("%v.Pixels(%v) = %d,%d, want %d,%d", tc.p, tc.s, x, y, tc.x, tc.y)
		}
	}
}

func TestBoxContainsEdges(t *testing.T) {
	b := Box{X: 10, Y: 20, W: 30, H: 40}
	for _, p := range [][2]int{{10, 20}, {40, 60}, {25, 40}} {
		if !b.Contains(p[0], p[1]) {
			t.Errorf("box %v should contain %v", b, p)
		}
	}
	for _, p := range [][2]int{{9, 20}, {41, 60}, {25, 61}} {
		if b.Contains(p[0], p[1]) {
			t.Errorf("box %v should not contain %v", b, p)
		}
	}
}

func TestNormalizeKey(t *testing.T) {
	tests := map[string]string{
		"ctrl": "ctrl", "Control_L": "ctrl", "CTRL": "ctrl", "command": "super", "win": "super",
		"Return": "enter", "enter": "enter", "KP_Enter": "enter", "Escape": "esc", "BackSpace": "backspace",
		"Page_Down": "pagedown", "pgdn": "pagedown", "ArrowUp": "up", "F5": "f5", "f12": "f12",
		"A": "a", "é": "é", " ": "space", "space": "space", "Tab": "tab", "plus": "+", "Meta": "super",
	}
	for in, want := range tests {
		got, ok := NormalizeKey(in)
		if !ok || got != want {
			t.Errorf("NormalizeKey(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "hyperdrive", "f99", "ctrl+c"} {
		if got, ok := NormalizeKey(bad); ok {
			t.Errorf("NormalizeKey(%q) = %q, want not a key", bad, got)
		}
	}
}

func TestStringIsStable(t *testing.T) {
	a := Action{Kind: API, Name: "f", Args: map[string]any{"b": 1, "a": "x"}}
	if a.String() != a.String() || a.String() != `api f a="x" b=1` {
		t.Fatalf("String() = %q", a.String())
	}
	c := Action{Kind: Click, Point: &Point{X: 5, Y: 6, Unit: Ratio}, Count: 2, Button: Right}
	if got := c.String(); got != "click (5,6)ratio right x2" {
		t.Fatalf("String() = %q", got)
	}
}

func TestLimitsAndInvalidErrors(t *testing.T) {
	long := strings.Repeat("x", MaxText+1)
	tests := []struct {
		name string
		a    Action
		want string // "" when valid
	}{
		{"huge scroll", Action{Kind: Scroll, DY: 1e9}, "vertical scroll 1000000000 is over the limit of 100"},
		{"huge negative scroll", Action{Kind: Scroll, DX: -101}, "horizontal scroll"},
		{"scroll at the limit", Action{Kind: Scroll, DY: MaxScroll}, ""},
		{"huge pages", Action{Kind: Scroll, Pages: 1e6}, "page count"},
		{"huge wait", Action{Kind: Wait, Duration: 1e9}, "wait (seconds) 1e+09 is over the limit of 300"},
		{"wait at the limit", Action{Kind: Wait, Duration: MaxWait}, ""},
		{"infinite wait", Action{Kind: Wait, Duration: math.Inf(1)}, "not a number"},
		{"long typing", Action{Kind: Type, Text: long}, "text length (characters) 20001"},
		{"typing at the limit", Action{Kind: Type, Text: long[1:]}, ""},
		{"long command", Action{Kind: Code, Text: strings.Repeat("x", MaxCode+1)}, "command length"},
		{"many keys", Action{Kind: Hotkey, Keys: strings.Fields(strings.Repeat("a ", MaxKeys+1))}, "key count"},
		{"slow drag", Action{Kind: Drag, To: At(1, 1), Duration: 3600}, "duration (seconds)"},
		{"far relative move", Action{Kind: MoveRel, Point: At(1e308, 0)}, "offset"},
		{"unknown kind", Action{Kind: "teleport"}, "unknown action kind"},
		{"missing text", Action{Kind: Type}, "type needs text"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.a.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tc.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate() = %v does not match ErrInvalid", err)
			}
		})
	}
}

func TestOffScreenPointIsInvalid(t *testing.T) {
	screen := Size{W: 1920, H: 1080}
	for _, p := range []Point{{X: 99999, Y: 5}, {X: -1, Y: 5}, {X: 1e308, Y: 1e308}, {X: 5, Y: 2000}, {X: 1.5, Y: 0, Unit: Ratio}, {X: math.NaN(), Y: 0}} {
		if _, _, err := p.Pixels(screen); !errors.Is(err, ErrInvalid) {
			t.Errorf("Pixels(%v) = %v, want an error matching ErrInvalid", p, err)
		}
	}
	if _, _, err := (Point{X: 5, Y: 5}).Pixels(Size{}); err == nil || errors.Is(err, ErrInvalid) {
		t.Errorf("a zero screen size is the environment's problem, not an invalid action: %v", err)
	}
}

func TestTargetNth(t *testing.T) {
	for _, c := range []struct {
		nth  int
		want string
	}{{0, `entry "To"`}, {2, `entry "To" (match 2)`}, {-1, `entry "To" (last match)`}, {-3, `entry "To" (match 3 from the end)`}} {
		tg := Target{Role: "entry", Name: "To", Nth: c.nth}
		if got := tg.String(); got != c.want {
			t.Errorf("nth %d: %q, want %q", c.nth, got, c.want)
		}
		if err := tg.valid(); err != nil {
			t.Errorf("nth %d refused: %v", c.nth, err)
		}
	}
}
