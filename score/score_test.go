package score

import (
	"fmt"
	"math"
	"testing"

	"github.com/proctor-eval/proctor/check"
)

var weights = map[string]float64{"paper": 0.5, "wood": 1, "bronze": 2, "silver": 4, "gold": 8}

// suite makes results with the given number of tasks and passes per level.
func suite(repeat int, counts map[string][2]int) []Result {
	var rs []Result
	for lvl, c := range counts {
		for i := 0; i < c[0]; i++ {
			o := check.Failure
			if i < c[1] {
				o = check.Success
			}
			rs = append(rs, Result{Task: fmt.Sprintf("%s-%d", lvl, i), Repeat: repeat, Level: lvl, Weight: weights[lvl], Outcome: o})
		}
	}
	return rs
}

func TestWeightedScoreMatchesOSUniverse(t *testing.T) {
	// OSUniverse has 11 paper, 58 wood, 48 bronze, 32 silver and 11 gold
	// tests; its published per-level rates and weighted scores (47.80% and
	// 28.36% for two agents) follow from these pass counts.
	tests := []struct {
		passed [5]int
		want   float64
	}{
		{[5]int{11, 50, 36, 11, 1}, 0.4780},
		{[5]int{11, 31, 21, 7, 0}, 0.2836},
	}
	for _, tc := range tests {
		rs := suite(0, map[string][2]int{"paper": {11, tc.passed[0]}, "wood": {58, tc.passed[1]},
			"bronze": {48, tc.passed[2]}, "silver": {32, tc.passed[3]}, "gold": {11, tc.passed[4]}})
		s := Summarize(rs)
		if math.Abs(s.Weighted-tc.want) > 0.00005 {
			t.Errorf("weighted = %.4f, want %.4f", s.Weighted, tc.want)
		}
		want := float64(tc.passed[0]+tc.passed[1]+tc.passed[2]+tc.passed[3]+tc.passed[4]) / 160
		if !near(s.SuccessRate, want) {
			t.Errorf("success rate = %v, want %v", s.SuccessRate, want)
		}
	}
}

func TestSummarizeOutcomesAndMilestones(t *testing.T) {
	rs := []Result{
		{Outcome: check.Success, Weight: 1, Milestone: 1},
		{Outcome: check.Failure, Weight: 1, Milestone: 0.5},
		{Outcome: check.Uncompleted, Weight: 2, Milestone: 0.25},
		{Outcome: check.EarlyStopped, Weight: 2},
		{Outcome: check.Error, Weight: 2},
	}
	s := Summarize(rs)
	// The error is counted but left out: 1 of 4 decided, weight 1 of 6,
	// milestones 1.75 over 4.
	if s.N != 5 || s.Decided != 4 || s.Errors != 1 || s.Passed != 1 || !near(s.SuccessRate, 0.25) || !near(s.Weighted, 1.0/6) ||
		!near(s.MilestoneAvg, 0.4375) || !s.HasRates() {
		t.Fatalf("summary = %+v", s)
	}
	for _, o := range check.Outcomes {
		if s.Outcomes[o] != 1 {
			t.Errorf("outcome %s counted %d times", o, s.Outcomes[o])
		}
	}
	if z := Summarize(nil); z.SuccessRate != 0 || z.Weighted != 0 {
		t.Fatalf("empty summary = %+v", z)
	}
}

// TestErrorsLeftOut: infrastructure errors never count as the agent's
// failure; with nothing decided there is no rate to give.
func TestErrorsLeftOut(t *testing.T) {
	tests := []struct {
		name                    string
		outcomes                []check.Outcome
		decided, errors, passed int
		rate                    float64
	}{
		{"all errors", []check.Outcome{check.Error, check.Error, check.Error}, 0, 3, 0, 0},
		{"mixed", []check.Outcome{check.Success, check.Error, check.Failure, check.Error, check.Success, check.Error}, 3, 3, 2, 2.0 / 3},
		{"no errors", []check.Outcome{check.Success, check.Failure}, 2, 0, 1, 0.5},
	}
	for _, tc := range tests {
		var rs []Result
		for i, o := range tc.outcomes {
			rs = append(rs, Result{Task: fmt.Sprint(i), Outcome: o, Weight: 2, Milestone: map[bool]float64{true: 1}[o == check.Success]})
		}
		s := Summarize(rs)
		if s.Decided != tc.decided || s.Errors != tc.errors || s.Passed != tc.passed || !near(s.SuccessRate, tc.rate) ||
			!near(s.Weighted, tc.rate) || !near(s.MilestoneAvg, tc.rate) || s.HasRates() != (tc.decided > 0) {
			t.Errorf("%s: %+v", tc.name, s)
		}
	}
	// A repeat of errors only is left out of the spread over repeats.
	rs := []Result{{Task: "a", Repeat: 0, Outcome: check.Success, Weight: 1}, {Task: "a", Repeat: 1, Outcome: check.Error, Weight: 1}}
	if st := Repeats(rs); st.SuccessRate.N != 1 || st.SuccessRate.Mean != 1 || len(st.Runs) != 2 {
		t.Errorf("repeats with an all-error repeat: %+v", st)
	}
}

func TestBreakdown(t *testing.T) {
	rs := []Result{
		{Task: "a", Level: "wood", Apps: []string{"mousepad"}, Domain: "office", Kind: "state", Difficulty: "easy", Outcome: check.Success, Weight: 1},
		{Task: "b", Level: "wood", Apps: []string{"mousepad", "xterm"}, Domain: "office", Kind: "process", Difficulty: "hard", Outcome: check.Failure, Weight: 1},
		{Task: "c", Level: "gold", Apps: []string{"gimp"}, Domain: "art", Kind: "state", Difficulty: "hard", Outcome: check.Success, Weight: 8},
	}
	tests := []struct {
		d    Dimension
		want map[string][2]int // key -> n, passed
	}{
		{ByLevel, map[string][2]int{"wood": {2, 1}, "gold": {1, 1}}},
		{ByApp, map[string][2]int{"mousepad": {2, 1}, "xterm": {1, 0}, "gimp": {1, 1}}},
		{ByDomain, map[string][2]int{"office": {2, 1}, "art": {1, 1}}},
		{ByKind, map[string][2]int{"state": {2, 2}, "process": {1, 0}}},
		{ByDifficulty, map[string][2]int{"easy": {1, 1}, "hard": {2, 1}}},
	}
	for _, tc := range tests {
		gs := Breakdown(rs, tc.d)
		if len(gs) != len(tc.want) {
			t.Fatalf("%s: %d groups, want %d", tc.d, len(gs), len(tc.want))
		}
		for i, g := range gs {
			w := tc.want[g.Key]
			if g.Summary.N != w[0] || g.Summary.Passed != w[1] {
				t.Errorf("%s %s: n=%d passed=%d, want %v", tc.d, g.Key, g.Summary.N, g.Summary.Passed, w)
			}
			if i > 0 && tc.d != ByLevel && gs[i-1].Key >= g.Key {
				t.Errorf("%s: groups not sorted", tc.d)
			}
		}
		if tc.d == ByLevel && (gs[0].Key != "wood" || gs[1].Key != "gold") {
			t.Errorf("levels in the order %s, %s; want wood before gold", gs[0].Key, gs[1].Key)
		}
	}
}

func TestRepeats(t *testing.T) {
	var rs []Result
	// Three runs of a 4-task suite passing 1, 2 and 3 tasks.
	for run, passed := range []int{1, 2, 3} {
		rs = append(rs, suite(run, map[string][2]int{"wood": {4, passed}})...)
	}
	st := Repeats(rs)
	if len(st.Runs) != 3 || !near(st.SuccessRate.Mean, 0.5) || !near(st.SuccessRate.Std, 0.25) || st.SuccessRate.N != 3 {
		t.Fatalf("repeats = %+v", st.SuccessRate)
	}
	if one := MeanStd([]float64{0.7}); one.Std != 0 || one.Mean != 0.7 {
		t.Fatalf("single value stat = %+v", one)
	}
}

// TestSideEffects: a success with a violation in its state diff is
// counted apart (succeeded with side effects); the rates are over the
// decided episodes whose diff was recorded, errors and episodes without
// a diff left out.
func TestSideEffects(t *testing.T) {
	tests := []struct {
		name                          string
		rs                            []Result
		diffed, side, succeeded       int
		collateral, clean, successAll float64
	}{
		{"no diffs", []Result{{Outcome: check.Success}, {Outcome: check.Failure}}, 0, 0, 0, 0, 0, 0.5},
		{"clean successes", []Result{{Outcome: check.Success, Diffed: true}, {Outcome: check.Success, Diffed: true}}, 2, 0, 0, 0, 1, 1},
		{"one of each", []Result{
			{Outcome: check.Success, Diffed: true, SideEffects: 2},
			{Outcome: check.Success, Diffed: true},
			{Outcome: check.Failure, Diffed: true, SideEffects: 1},
			{Outcome: check.Failure, Diffed: true},
		}, 4, 2, 1, 0.25, 0.25, 0.5},
		{"errors and undiffed left out", []Result{
			{Outcome: check.Success, Diffed: true, SideEffects: 1},
			{Outcome: check.Success},
			{Outcome: check.Error, Diffed: true, SideEffects: 3},
		}, 1, 1, 1, 1, 0, 1},
	}
	for _, tc := range tests {
		s := Summarize(tc.rs)
		if s.Diffed != tc.diffed || s.SideEffects != tc.side || s.SucceededWithSideEffects != tc.succeeded ||
			!near(s.CollateralRate, tc.collateral) || !near(s.CleanSuccessRate, tc.clean) || !near(s.SuccessRate, tc.successAll) {
			t.Errorf("%s: %+v", tc.name, s)
		}
		if s.HasDiffs() != (tc.diffed > 0) {
			t.Errorf("%s: HasDiffs %v", tc.name, s.HasDiffs())
		}
	}
}
