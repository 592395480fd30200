package validate

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/store"
)

func TestSettling(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ms := time.Millisecond
	move := action.Action{Kind: action.Move, Point: &action.Point{X: 1, Y: 1}}
	turn := func(waits ...time.Duration) json.RawMessage {
		var steps []action.Step
		for _, w := range waits {
			steps = append(steps, action.Step{Action: move, Settle: w})
		}
		b, _ := json.Marshal(steps)
		return b
	}
	// Episode a: three turns that acted (the wait is on each turn's last
	// step) and a final turn that performed nothing. Episode b: one turn
	// without a wait recorded.
	episodes := map[string][]json.RawMessage{
		"a": {turn(0, 300*ms), turn(100 * ms), turn(0, 0, 2000*ms), nil},
		"b": {turn(0)},
	}
	for task, turns := range episodes {
		if err := st.SaveResult(store.Result{Task: task, Outcome: "success"}); err != nil {
			t.Fatal(err)
		}
		for i, done := range turns {
			if err := st.SaveTurn(store.Turn{Task: task, Index: i + 1, Done: done}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := Settling(st)
	if err != nil {
		t.Fatal(err)
	}
	want := SettleCost{Turns: 4, Waited: 3, Median: 100 * ms, P90: 2000 * ms, Max: 2000 * ms, Total: 2400 * ms}
	if got != want {
		t.Fatalf("Settling = %+v, want %+v", got, want)
	}
	if s := got.String(); !strings.Contains(s, "median 100ms, p90 2s, max 2s, total 2.4s over 4 turns") {
		t.Errorf("summary %q", s)
	}
}

func TestQuantile(t *testing.T) {
	d := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n))
		}
		return out
	}
	tests := []struct {
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{d(5), 0.5, 5},
		{d(1, 2), 0.5, 1},
		{d(1, 2, 3), 0.5, 2},
		{d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.9, 9},
		{d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), 0.9, 10},
		{d(1, 2, 3), 1, 3},
		{d(1, 2, 3), 0, 1},
	}
	for _, tc := range tests {
		if got := quantile(tc.sorted, tc.q); got != tc.want {
			t.Errorf("quantile(%v, %g) = %v, want %v", tc.sorted, tc.q, got, tc.want)
		}
	}
	if s := (SettleCost{Turns: 3}).String(); !strings.Contains(s, "none recorded over 3 turns") {
		t.Errorf("no waits: %q", s)
	}
}
