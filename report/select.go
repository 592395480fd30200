package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/store"
)

// Selection is a cut of a suite to the tasks that tell agents apart, made
// from runs of several agents (or repeats of one): proctor tasks select.
type Selection struct {
	Stable         bool     `json:"stable"`
	Discriminating bool     `json:"discriminating"`
	Runs           []string `json:"runs"`
	// Tasks are the tasks every run decided at least once; Kept those of
	// them that pass the cut, in order of id.
	Tasks int      `json:"tasks"`
	Kept  []string `json:"kept"`
	// Flaky are the tasks that flipped in some run (mixed outcomes over
	// its repeats); Agreed those every run scored alike (the same share of
	// successes); Undecided those some run did not decide (not run, or
	// only errors), left out of the cut.
	Flaky     []string `json:"flaky"`
	Agreed    []string `json:"agreed"`
	Undecided []string `json:"undecided"`
}

// SelectTasks cuts the tasks of runs: with stable, to those that never
// flipped within a run (every decided repeat of a run had the same
// outcome); with discriminating, to those whose share of successes
// differs between runs (some run did better than another); with both, to
// those that are both. Errors are left out; a task that some run did not
// decide is left out and listed as undecided. names name the runs.
func SelectTasks(names []string, runs [][]store.Result, stable, discriminating bool) Selection {
	sel := Selection{Stable: stable, Discriminating: discriminating, Runs: names}
	type tally struct{ n, c int }
	per := make([]map[string]tally, len(runs))
	all := map[string]bool{}
	for i, rs := range runs {
		per[i] = map[string]tally{}
		tr, _ := repeats(rs, nil)
		for _, t := range tr {
			all[t.Task] = true
			if t.N > 0 {
				per[i][t.Task] = tally{t.N, t.C}
			}
		}
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		flaky, decided := false, true
		lo, hi := 2.0, -1.0
		for i := range runs {
			t, ok := per[i][id]
			if !ok {
				decided = false
				break
			}
			flaky = flaky || t.c > 0 && t.c < t.n
			share := float64(t.c) / float64(t.n)
			lo, hi = min(lo, share), max(hi, share)
		}
		if !decided {
			sel.Undecided = append(sel.Undecided, id)
			continue
		}
		sel.Tasks++
		if flaky {
			sel.Flaky = append(sel.Flaky, id)
		}
		agreed := lo == hi
		if agreed {
			sel.Agreed = append(sel.Agreed, id)
		}
		if (!stable || !flaky) && (!discriminating || !agreed) {
			sel.Kept = append(sel.Kept, id)
		}
	}
	return sel
}

// Cut names the selection's cut in words.
func (s Selection) Cut() string {
	switch {
	case s.Stable && s.Discriminating:
		return "stable in every run and discriminating between runs"
	case s.Stable:
		return "stable in every run"
	case s.Discriminating:
		return "discriminating between runs"
	}
	return "decided by every run"
}

// WriteFilter writes the selection as a filter file of proctor run
// --filter @FILE: a comment saying how it was made, then the kept tasks'
// ids, one a line.
func (s Selection) WriteFilter(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# proctor tasks select: %d of %d tasks, %s\n", len(s.Kept), s.Tasks, s.Cut())
	fmt.Fprintf(&b, "# runs: %s\n", strings.Join(s.Runs, ", "))
	for _, id := range s.Kept {
		b.WriteString(id + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary says in a line what the cut kept and left out.
func (s Selection) Summary() string {
	out := fmt.Sprintf("%d of %d tasks kept (%s): %d flaky, %d scored alike by every run",
		len(s.Kept), s.Tasks, s.Cut(), len(s.Flaky), len(s.Agreed))
	if n := len(s.Undecided); n > 0 {
		out += fmt.Sprintf("; %d left out, undecided by some run", n)
	}
	return out
}

// RepeatBrief is a run's repeats in brief, for a list of runs: the most
// decided tries of a task, the tasks tried twice or more and those of
// them that flipped, and pass^k averaged over the tasks tried at least k
// times, k the most tries (every try succeeds).
type RepeatBrief struct {
	MaxRepeats int     `json:"max_repeats"`
	Tried      int     `json:"tried"`
	Flipped    int     `json:"flipped"`
	FlipRate   float64 `json:"flip_rate"`
	K          int     `json:"k"`
	PassHatK   float64 `json:"pass_hat_k"`
}

// Repeated reports whether some task was decided twice or more.
func (b RepeatBrief) Repeated() bool { return b.MaxRepeats >= 2 }

// BriefRepeats sums up the repeats of a run's results; errors are left
// out.
func BriefRepeats(rs []store.Result) RepeatBrief {
	var b RepeatBrief
	tasks, _ := repeats(rs, nil)
	for _, t := range tasks {
		b.MaxRepeats = max(b.MaxRepeats, t.N)
		if t.N >= 2 {
			b.Tried++
		}
		if t.Flipped {
			b.Flipped++
		}
	}
	if b.Tried > 0 {
		b.FlipRate = float64(b.Flipped) / float64(b.Tried)
	}
	if b.MaxRepeats >= 2 {
		b.K = b.MaxRepeats
		_, means := repeats(rs, []int{b.K})
		b.PassHatK = means[0].PassHatK
	}
	return b
}
