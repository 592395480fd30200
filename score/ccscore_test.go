package score

import (
	"math"
	"testing"

	"github.com/proctor-eval/proctor/action"
)

var hd = action.Size{W: 1920, H: 1080}

func click(x, y float64, box *action.Box) action.Action {
	return action.Action{Kind: action.Click, Point: action.At(x, y), Box: box}
}

func TestPoints(t *testing.T) {
	tests := []struct {
		a    action.Action
		want float64
	}{
		{click(1, 1, nil), 4},
		{action.Action{Kind: action.Click, Count: 2}, 4},
		{action.Action{Kind: action.Drag, To: action.At(1, 1)}, 4},
		{action.Action{Kind: action.MouseDown}, 4},
		{action.Action{Kind: action.MouseUp}, 4},
		{action.Action{Kind: action.Move, Point: action.At(1, 1)}, 3},
		{action.Action{Kind: action.Scroll, DY: 3}, 2},
		{action.Action{Kind: action.Type, Text: "x"}, 2},
		{action.Action{Kind: action.Hotkey, Keys: []string{"ctrl", "c"}}, 2},
		{action.Action{Kind: action.Plan, Text: "p"}, 2},
		{action.Action{Kind: action.Reflect, Text: "need_retry"}, 1},
		{action.Action{Kind: action.Wait}, 0},
		{action.Action{Kind: action.Answer, Text: "4"}, 2},
	}
	for _, tc := range tests {
		if got := Points(tc.a); got != tc.want {
			t.Errorf("Points(%v) = %v, want %v", tc.a, got, tc.want)
		}
	}
}

func TestCCScore(t *testing.T) {
	box := &action.Box{X: 90, Y: 90, W: 20, H: 20}
	tests := []struct {
		name       string
		gold, pred []action.Action
		want       float64
	}{
		{
			// Gold points 4+2+0+1 = 7. The click earns 4 (inside the box), the
			// text 2, the wait nothing, the reflection 0 (retry vs success).
			name: "mixed",
			gold: []action.Action{click(100, 100, box), {Kind: action.Type, Text: "hello"}, {Kind: action.Wait}, {Kind: action.Reflect, Text: "sub_task_success"}},
			pred: []action.Action{{Kind: action.Move, Point: action.At(95, 95)}, click(95, 95, nil), {Kind: action.Type, Text: "hello"}, {Kind: action.Reflect, Text: "need_retry"}},
			want: 6.0 / 7,
		},
		{
			name: "box edge counts",
			gold: []action.Action{click(100, 100, box)},
			pred: []action.Action{click(110, 110, nil)},
			want: 1,
		},
		{
			name: "outside box loses the position point",
			gold: []action.Action{click(100, 100, box)},
			pred: []action.Action{click(111, 100, nil)},
			want: 3.0 / 4,
		},
		{
			name: "wrong button and type",
			gold: []action.Action{click(100, 100, box)},
			pred: []action.Action{{Kind: action.Click, Count: 2, Button: action.Right, Point: action.At(100, 100)}},
			want: 2.0 / 4,
		},
		{
			name: "order is kept",
			gold: []action.Action{{Kind: action.Type, Text: "a"}, click(100, 100, box)},
			pred: []action.Action{click(100, 100, nil), {Kind: action.Type, Text: "a"}},
			want: 4.0 / 6,
		},
		{
			// "Control_L+v" against "Control_L+c", 11 characters each:
			// matches 10/11, 9/10, 8/9, 7/8 of the 1- to 4-grams, whose
			// product is 7/11; no brevity penalty.
			name: "keyboard BLEU",
			gold: []action.Action{{Kind: action.Hotkey, Keys: []string{"ctrl", "c"}}},
			pred: []action.Action{{Kind: action.Hotkey, Keys: []string{"ctrl", "v"}}},
			want: (1 + math.Pow(7.0/11, 0.25)) / 2,
		},
		{
			name: "no box means the exact point",
			gold: []action.Action{{Kind: action.Move, Point: &action.Point{X: 0.5, Y: 0.5, Unit: action.Ratio}}},
			pred: []action.Action{{Kind: action.Move, Point: action.At(960, 540)}},
			want: 1,
		},
		{
			name: "scroll direction",
			gold: []action.Action{{Kind: action.Scroll, DY: 3}},
			pred: []action.Action{{Kind: action.Scroll, DY: -3}},
			want: 0.5,
		},
		{name: "empty prediction", gold: []action.Action{click(1, 1, nil)}, pred: nil, want: 0},
	}
	for _, tc := range tests {
		r := CCScore(tc.gold, tc.pred, hd)
		if !r.Scored {
			t.Errorf("%s: no score", tc.name)
		}
		if !near(r.Score, tc.want) {
			t.Errorf("%s: CC-Score = %v, want %v (pairs %+v)", tc.name, r.Score, tc.want, r.Pairs)
		}
		for i := 1; i < len(r.Pairs); i++ {
			if r.Pairs[i].Gold <= r.Pairs[i-1].Gold || r.Pairs[i].Pred <= r.Pairs[i-1].Pred {
				t.Errorf("%s: alignment breaks order: %+v", tc.name, r.Pairs)
			}
		}
	}
}

func TestAggregate(t *testing.T) {
	box := &action.Box{X: 0, Y: 0, W: 10, H: 10}
	r1 := CCScore(
		[]action.Action{{Kind: action.Plan, Text: "open file"}, click(5, 5, box), {Kind: action.Type, Text: "abc"}, {Kind: action.Reflect, Text: "sub_task_success"}},
		[]action.Action{{Kind: action.Plan, Text: "open file"}, click(50, 50, nil), {Kind: action.Type, Text: "abc"}, {Kind: action.Reflect, Text: "sub_task_success"}}, hd)
	r2 := CCScore(
		[]action.Action{click(5, 5, box)},
		[]action.Action{{Kind: action.Click, Button: action.Right, Point: action.At(5, 5)}}, hd)
	m := Aggregate([]CCResult{r1, r2})
	if m.Sequences != 2 || !near(m.PlanBLEU, 1) || !near(m.KeyboardBLEU, 1) || !near(m.MousePositionAcc, 0.5) || !near(m.ReflectF1, 1) {
		t.Fatalf("metrics = %+v", m)
	}
	// Buttons: gold left,left; predicted left,right. Left: p=1, r=1/2, F1=2/3; right: 0. Macro = 1/3.
	if !near(m.MouseButtonF1, 1.0/3) {
		t.Fatalf("button F1 = %v", m.MouseButtonF1)
	}
	if !near(m.ActionTypeF1, 1) || !near(m.MouseTypeF1, 1) {
		t.Fatalf("type F1s = %v %v", m.ActionTypeF1, m.MouseTypeF1)
	}
	want := ((2+3+2+1)/9.0 + 3/4.0) / 2
	if !near(m.CCScore, want) {
		t.Fatalf("mean CC-Score = %v, want %v", m.CCScore, want)
	}
	if m.PlanPairs != 1 || m.ReflectPairs != 1 || m.KeyboardPairs != 1 || m.PositionPairs != 2 || m.MousePairs != 2 {
		t.Fatalf("pairs = plan %d reflect %d keyboard %d position %d mouse %d", m.PlanPairs, m.ReflectPairs, m.KeyboardPairs, m.PositionPairs, m.MousePairs)
	}
	// A gold without plans or reflections gives those sub-metrics no pairs.
	if m := Aggregate([]CCResult{r2}); m.PlanPairs != 0 || m.ReflectPairs != 0 || m.KeyboardPairs != 0 || m.PositionPairs != 1 {
		t.Fatalf("pairs of a click-only gold = %+v", m)
	}
}

func TestMacroF1(t *testing.T) {
	if got := MacroF1([]string{"a", "a", "b"}, []string{"a", "b", "b"}); !near(got, 2.0/3) {
		// a: p=1 r=1/2 F1=2/3; b: p=1/2 r=1 F1=2/3.
		t.Fatalf("MacroF1 = %v", got)
	}
	if MacroF1(nil, nil) != 0 {
		t.Fatal("empty MacroF1 should be 0")
	}
}

// TestCCScoreElementTargets: a gold click aimed at an element by role and
// name earns the position point when the prediction touched that element
// (the runner's record), wherever its pixels were; a target naming only a
// role is met by any element of the role.
func TestCCScoreElementTargets(t *testing.T) {
	s := action.Size{W: 1000, H: 1000}
	touched := func(el string) []action.Action {
		return []action.Action{{Kind: action.Click, Point: action.At(5, 5), Args: map[string]any{ElementArg: el}}}
	}
	save := []action.Action{{Kind: action.Click, Target: &action.Target{Role: "push button", Name: " Save "}}}
	text := []action.Action{{Kind: action.Click, Target: &action.Target{Role: "text"}}}
	cases := []struct {
		name string
		gold []action.Action
		pred []action.Action
		want float64
	}{
		{"the element named", save, touched("push button Save"), 1},
		{"another element", save, touched("push button Cancel"), 0.75},
		{"no record", save, []action.Action{{Kind: action.Click, Point: action.At(5, 5)}}, 0.75},
		{"any element of the role", text, touched("text bread eggs"), 1},
		{"an element of another role", text, touched("textual thing"), 0.75},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if r := CCScoreWith(c.gold, c.pred, s, CCOptions{}); r.Score != c.want {
				t.Fatalf("score %v, want %v", r.Score, c.want)
			}
		})
	}
}
