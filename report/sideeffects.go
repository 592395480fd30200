package report

import (
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/store"
)

// SideEffect is an episode whose state diff holds violations: what else
// the agent changed, outside what its task allows.
type SideEffect struct {
	Task    string `json:"task"`
	Repeat  int    `json:"repeat"`
	Outcome string `json:"outcome"`
	// Violations names the first violations ("deleted file ~/Documents/a.txt");
	// Count is how many there were.
	Violations []string `json:"violations"`
	Count      int      `json:"count"`
}

// maxNamed is how many violations an episode's line names.
const maxNamed = 3

// sideEffects lists the decided episodes with violations, in the
// results' order, and counts each diffed episode's violations.
func sideEffects(rs []store.Result, diffs map[store.ReviewKey]*statediff.Diff) ([]SideEffect, map[store.ReviewKey]int) {
	if len(diffs) == 0 {
		return nil, nil
	}
	var out []SideEffect
	counts := map[store.ReviewKey]int{}
	for _, x := range rs {
		k := store.ReviewKey{Task: x.Task, Repeat: x.Repeat}
		d, ok := diffs[k]
		if !ok {
			continue
		}
		vs := d.Violations()
		counts[k] = len(vs)
		if len(vs) == 0 || check.Outcome(x.Outcome) == check.Error {
			continue
		}
		e := SideEffect{Task: x.Task, Repeat: x.Repeat, Outcome: x.Outcome, Count: len(vs)}
		for _, v := range vs[:min(len(vs), maxNamed)] {
			e.Violations = append(e.Violations, v.String())
		}
		out = append(out, e)
	}
	return out, counts
}

// anyDiffs reports whether any of the reports recorded a state diff.
func anyDiffs(rs []*Report) bool {
	for _, r := range rs {
		if r.Summary.HasDiffs() {
			return true
		}
	}
	return false
}

// sideEffectRows are the summary's rows of collateral damage, for runs
// that recorded state diffs: the successes with side effects counted
// apart, the success rate without them, and the episodes of any outcome
// with side effects, each of the decided episodes diffed.
func sideEffectRows(rs []*Report, row func(string, func(*Report) string) []string, pct func(float64) string) [][]string {
	if !anyDiffs(rs) {
		return nil
	}
	of := func(r *Report, n int) string {
		s := r.Summary
		if !s.HasDiffs() {
			return "n/a"
		}
		return fmt.Sprintf("%d of %d (%s)", n, s.Diffed, pct(float64(n)/float64(s.Diffed)))
	}
	return [][]string{
		row("succeeded with side effects", func(r *Report) string { return of(r, r.Summary.SucceededWithSideEffects) }),
		row("success without side effects", func(r *Report) string {
			if !r.Summary.HasDiffs() {
				return "n/a"
			}
			return pct(r.Summary.CleanSuccessRate)
		}),
		row("side effects (any outcome)", func(r *Report) string { return of(r, r.Summary.SideEffects) }),
	}
}

// writeSideEffects lists, per run, the episodes with side effects and
// the violations of each.
func writeSideEffects(rs []*Report, md bool, table func(string, []string, [][]string)) {
	for _, r := range rs {
		if len(r.SideEffects) == 0 {
			continue
		}
		var rows [][]string
		for _, e := range r.SideEffects {
			named := strings.Join(e.Violations, "; ")
			if more := e.Count - len(e.Violations); more > 0 {
				named += fmt.Sprintf("; and %d more", more)
			}
			named = strings.Join(strings.Fields(named), " ")
			if md {
				named = strings.ReplaceAll(named, "|", `\|`)
			}
			rows = append(rows, []string{e.Task, fmt.Sprint(e.Repeat), e.Outcome, named})
		}
		table(fmt.Sprintf("Side effects (%s): %d succeeded with side effects, %s with any",
			r.Run.ID, r.Summary.SucceededWithSideEffects, plural(len(r.SideEffects), "episode")),
			[]string{"task", "repeat", "outcome", "violations"}, rows)
	}
}
