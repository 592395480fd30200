package score

import (
	"math"
	"testing"

	"github.com/proctor-eval/proctor/action"
)

// The cases below are where Proctor's first CC-Score parted from
// ScreenAgent's reference implementation (client/action.py). Each value is
// computed by hand from the reference's rules; refWant is what the
// reference gives, oldWant what the earlier rules gave.

func TestCCScoreReferenceButtonsAndPositions(t *testing.T) {
	box := &action.Box{X: 90, Y: 90, W: 20, H: 20}
	rightClick := action.Action{Kind: action.Click, Button: action.Right, Point: action.At(100, 100), Box: box}
	tests := []struct {
		name       string
		gold, pred action.Action
		want       float64
	}{
		{
			// Gold click: 4 points. Type 1 (both mouse), mouse type 0
			// (click vs scroll_down), button 0 (left vs the scroll's
			// none; the earlier rules took it as left and gave 1),
			// position 0 (no position): 1/4.
			name: "gold click, predicted scroll",
			gold: click(100, 100, box),
			pred: action.Action{Kind: action.Scroll, DY: 3},
			want: 1.0 / 4,
		},
		{
			// Gold right click: type 1, mouse type 0, button 0 (right vs
			// none), position 1 (the scroll's position is in the box;
			// the earlier rules never looked at it): 2/4.
			name: "gold right click, predicted scroll in the box",
			gold: rightClick,
			pred: action.Action{Kind: action.Scroll, DY: 3, Point: action.At(95, 95)},
			want: 2.0 / 4,
		},
		{
			// Type 1, mouse type 0 (click vs move), button 0 (left vs
			// none; earlier 1), position 1: 2/4.
			name: "gold click, predicted move in the box",
			gold: click(100, 100, box),
			pred: action.Action{Kind: action.Move, Point: action.At(95, 95)},
			want: 2.0 / 4,
		},
		{
			// A move that names a button keeps it: type 1, mouse type 0,
			// button 1 (right = right), position 1: 3/4.
			name: "gold right click, predicted move naming the right button",
			gold: rightClick,
			pred: action.Action{Kind: action.Move, Button: action.Right, Point: action.At(95, 95)},
			want: 3.0 / 4,
		},
		{
			// Gold drag ends in the box: type 1, mouse type 0 (drag vs
			// scroll_up), button 0, position 0 (outside): 1/4.
			name: "gold drag, predicted scroll outside",
			gold: action.Action{Kind: action.Drag, To: action.At(100, 100), Box: box},
			pred: action.Action{Kind: action.Scroll, DY: -1, Point: action.At(500, 500)},
			want: 1.0 / 4,
		},
		{
			// A click that names no button is the unified space's left
			// click: type, mouse type, button and position all agree, 4/4.
			// (ScreenAgent's reference would give 3/4 to a MouseAction
			// without mouse_button; parsing cannot tell it from "left".)
			name: "gold click, predicted click without a button",
			gold: click(100, 100, box),
			pred: click(95, 95, nil),
			want: 1,
		},
		{
			// A gold scroll has no button or position: 2 points, type 1 and
			// mouse type 1, whatever the click's button: 2/2.
			name: "gold scroll, predicted scroll",
			gold: action.Action{Kind: action.Scroll, DY: 2},
			pred: action.Action{Kind: action.Scroll, DY: 7, Point: action.At(1, 1)},
			want: 1,
		},
	}
	for _, tc := range tests {
		r := CCScore([]action.Action{tc.gold}, []action.Action{tc.pred}, hd)
		if !r.Scored || !near(r.Score, tc.want) {
			t.Errorf("%s: CC-Score = %v (scored %v), want %v", tc.name, r.Score, r.Scored, tc.want)
		}
	}
}

func TestCCScoreReferenceKeys(t *testing.T) {
	key := func(keys ...string) action.Action {
		if len(keys) == 1 {
			return action.Action{Kind: action.Key, Keys: keys}
		}
		return action.Action{Kind: action.Hotkey, Keys: keys}
	}
	tests := []struct {
		name       string
		gold, pred action.Action
		want       float64 // ScreenAgent's spelling (the default)
		canonical  float64 // CCOptions{CanonicalKeys: true}
	}{
		{
			// Reference: "Control_L+v" vs "Control_L+c", 11 characters each:
			// n-gram precisions 10/11, 9/10, 8/9, 7/8 (product 7/11), so the
			// BLEU is (7/11)^(1/4) = 0.8932 and the score (1 + 0.8932)/2.
			// Canonical: "ctrl+v" vs "ctrl+c": 5/6, 4/5, 3/4, 2/3 (product
			// 1/3), BLEU (1/3)^(1/4) = 0.7598.
			name:      "ctrl+c vs ctrl+v",
			gold:      key("ctrl", "c"),
			pred:      key("ctrl", "v"),
			want:      (1 + math.Pow(7.0/11, 0.25)) / 2,
			canonical: (1 + math.Pow(1.0/3, 0.25)) / 2,
		},
		{
			// Reference: the key is "Return", the typed text "Return":
			// identical, similarity 1, score 2/2. Canonical: "Return" vs
			// "enter" shares no bigram (Re et tu ur rn vs en nt te er), so
			// the BLEU is 0 and the score 1/2.
			name:      "key enter vs typed Return",
			gold:      key("enter"),
			pred:      action.Action{Kind: action.Type, Text: "Return"},
			want:      1,
			canonical: 0.5,
		},
		{
			// Reference: "Alt_L+f5" vs "Alt_L+f4", 8 characters each:
			// 7/8, 6/7, 5/6, 4/5 (product 1/2), BLEU (1/2)^(1/4) = 0.8409.
			// Canonical: "alt+f5" vs "alt+f4": 5/6, 4/5, 3/4, 2/3, (1/3)^(1/4).
			name:      "alt+f4 vs alt+f5",
			gold:      key("alt", "f4"),
			pred:      key("alt", "f5"),
			want:      (1 + math.Pow(0.5, 0.25)) / 2,
			canonical: (1 + math.Pow(1.0/3, 0.25)) / 2,
		},
		{
			// Reference: "Super_L" (the converter's spelling of win) vs the
			// typed text "Super_L": identical, 1. Canonical: "Super_L" vs
			// "super": 1-grams u p e r match (4/7), bigrams up pe er (3/6),
			// trigrams upe per (2/5), 4-gram uper (1/4); product 1/35; the
			// candidate is longer, no penalty: BLEU (1/35)^(1/4) = 0.4114.
			name:      "key super vs typed Super_L",
			gold:      key("super"),
			pred:      action.Action{Kind: action.Type, Text: "Super_L"},
			want:      1,
			canonical: (1 + math.Pow(1.0/35, 0.25)) / 2,
		},
	}
	for _, tc := range tests {
		g, p := []action.Action{tc.gold}, []action.Action{tc.pred}
		if r := CCScore(g, p, hd); !near(r.Score, tc.want) {
			t.Errorf("%s: CC-Score = %v, want %v", tc.name, r.Score, tc.want)
		}
		if r := CCScoreWith(g, p, hd, CCOptions{CanonicalKeys: true}); !near(r.Score, tc.canonical) {
			t.Errorf("%s: CC-Score with canonical keys = %v, want %v", tc.name, r.Score, tc.canonical)
		}
	}
}

func TestScreenAgentKeys(t *testing.T) {
	// The reference's converter on the same keys spelled as its prompt
	// asks (short modifiers, keysyms) gives the right-hand column.
	tests := []struct {
		keys []string
		want string
	}{
		{[]string{"ctrl", "shift", "t"}, "Control_L+Shift_L+t"}, // Ctrl+Shift+T
		{[]string{"ctrl", "a"}, "Control_L+a"},                  // Ctrl+A
		{[]string{"super", "r"}, "Super_L+r"},                   // Win+R
		{[]string{"alt", "f4"}, "Alt_L+f4"},                     // Alt+F4
		{[]string{"ctrl", "pageup"}, "Control_L+page_up"},       // Ctrl+Page_Up
		{[]string{"ctrl", "+"}, "Control_L++"},                  // ctrl++
		{[]string{"ctrl", "space"}, "Control_L+space"},          // Ctrl+Space
		{[]string{"ctrl", "shift", "`"}, "Control_L+Shift_L+`"}, // Ctrl+Shift+`
		{[]string{"enter"}, "Return"},
		{[]string{"esc"}, "Escape"},
		{[]string{"backspace"}, "BackSpace"},
		{[]string{"super"}, "Super_L"},
		{[]string{"printscreen"}, "3270_PrintScreen"},
		{[]string{"f5"}, "F5"},
		{[]string{"f12"}, "F12"},
		{[]string{"left"}, "Left"},
		{[]string{"pageup"}, "Page_Up"},
		{[]string{"capslock"}, "Caps_Lock"},
		{[]string{"space"}, "space"},
		{[]string{"+"}, "plus"},
		{[]string{"a"}, "a"},
		{[]string{"7"}, "7"},
		{[]string{"f"}, "f"},
	}
	for _, tc := range tests {
		if got := screenAgentKeys(tc.keys); got != tc.want {
			t.Errorf("screenAgentKeys(%q) = %q, want %q", tc.keys, got, tc.want)
		}
	}
}

func TestCCScoreNoPoints(t *testing.T) {
	waits := []action.Action{{Kind: action.Wait}, {Kind: action.Wait, Duration: 2}}
	// Gold points 0 + 0: the reference returns no score (NaN), not 0.
	r := CCScore(waits, waits, hd)
	if r.Scored || r.Points != 0 || r.Score != 0 {
		t.Fatalf("only waits: %+v, want no score", r)
	}
	full := CCScore([]action.Action{{Kind: action.Type, Text: "abc"}}, []action.Action{{Kind: action.Type, Text: "abc"}}, hd)
	if !full.Scored || full.Score != 1 {
		t.Fatalf("typed text: %+v", full)
	}
	// The mean leaves the unscored sequence out: 1/1, not (1 + 0)/2.
	m := Aggregate([]CCResult{r, full})
	if m.CCScore != 1 || m.Sequences != 1 || m.NoPoints != 1 {
		t.Fatalf("Aggregate = %+v, want cc_score 1 over 1 sequence, 1 without points", m)
	}
	if m := Aggregate([]CCResult{r}); m.CCScore != 0 || m.Sequences != 0 || m.NoPoints != 1 {
		t.Fatalf("Aggregate of unscored only = %+v", m)
	}
}
