package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/stats"
	"github.com/proctor-eval/proctor/store"
)

// Comparison is run B against run A over the tasks both decided: the
// differences B − A of the success rate, weighted score and milestone
// average with their paired bootstrap intervals, the tasks B won and lost,
// and McNemar's exact test on them.
type Comparison struct {
	A       string      `json:"a"`
	B       string      `json:"b"`
	Options StatOptions `json:"options"`
	// Tasks were decided at least once in both runs; OnlyA and OnlyB were
	// run by one only; Undecided were run by both but left undecided
	// (infrastructure errors only) by one or both.
	Tasks     int            `json:"tasks"`
	OnlyA     int            `json:"only_a"`
	OnlyB     int            `json:"only_b"`
	Undecided int            `json:"undecided"`
	Success   stats.Interval `json:"success_rate"`
	Weighted  stats.Interval `json:"weighted_score"`
	Milestone stats.Interval `json:"milestone_avg"`
	// A task is won when B's success share over its decided tries beats
	// A's, lost when it falls short, tied otherwise.
	Won  int `json:"won"`
	Lost int `json:"lost"`
	Tied int `json:"tied"`
	// P is McNemar's exact two-sided p-value on the won and lost tasks
	// (for runs with repeats, the exact sign test on them).
	P     float64       `json:"p"`
	Lines []CompareLine `json:"lines"`
	// SideEffectsA and SideEffectsB count each run's successes with side
	// effects over the decided episodes of the compared tasks whose state
	// diff was recorded; nil when neither run recorded one.
	SideEffectsA *SideEffectCount `json:"side_effects_a,omitempty"`
	SideEffectsB *SideEffectCount `json:"side_effects_b,omitempty"`
	// Words say it in a sentence.
	Words string `json:"words"`
}

// SideEffectCount is a run's successes with side effects (Succeeded) of
// its diffed decided episodes (Diffed), and their share (Rate).
type SideEffectCount struct {
	Diffed    int     `json:"diffed"`
	Succeeded int     `json:"succeeded_with_side_effects"`
	Rate      float64 `json:"rate"`
}

// countSideEffects counts a report's successes with side effects over
// the decided episodes of the tasks named.
func countSideEffects(r *Report, tasks map[string]bool) *SideEffectCount {
	c := &SideEffectCount{}
	for _, x := range r.Results {
		n, ok := r.diffs[store.ReviewKey{Task: x.Task, Repeat: x.Repeat}]
		if !ok || !tasks[x.Task] || check.Outcome(x.Outcome) == check.Error {
			continue
		}
		c.Diffed++
		if n > 0 && check.Outcome(x.Outcome) == check.Success {
			c.Succeeded++
		}
	}
	if c.Diffed > 0 {
		c.Rate = float64(c.Succeeded) / float64(c.Diffed)
	}
	return c
}

// text is "2 of 10 (20.0%)", or "n/a" with nothing diffed.
func (c *SideEffectCount) text() string {
	if c.Diffed == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%d of %d (%.1f%%)", c.Succeeded, c.Diffed, 100*c.Rate)
}

// CompareLine is one discordant task: its successes of decided tries in
// each run, won or lost by B.
type CompareLine struct {
	Task   string `json:"task"`
	A      string `json:"a"`
	B      string `json:"b"`
	Result string `json:"result"`
}

// taskTally is a task's decided tries, successes and milestone sum in a
// run.
type taskTally struct {
	n, c      int
	ms, w     float64
	template  string
	attempted bool
}

func tally(rs []store.Result) map[string]*taskTally {
	out := map[string]*taskTally{}
	for _, x := range rs {
		t := out[x.Task]
		if t == nil {
			t = &taskTally{template: groupOf(x), w: x.Weight}
			out[x.Task] = t
		}
		t.attempted = true
		if check.Outcome(x.Outcome) == check.Error {
			continue
		}
		t.n++
		t.ms += x.Milestone
		if check.Outcome(x.Outcome) == check.Success {
			t.c++
		}
	}
	return out
}

// Compare pairs run b with run a over the tasks both decided. A task's
// value in a run is its share of successes (and its mean milestone) over
// its decided tries, so repeats count once per task; the tasks of one
// template are resampled together.
func Compare(a, b *Report, o StatOptions) *Comparison {
	o = o.norm()
	c := &Comparison{A: a.Run.ID, B: b.Run.ID, Options: o, Lines: []CompareLine{}}
	ta, tb := tally(a.Results), tally(b.Results)
	var names []string
	for t := range ta {
		if tb[t] == nil {
			c.OnlyA++
			continue
		}
		names = append(names, t)
	}
	for t := range tb {
		if ta[t] == nil {
			c.OnlyB++
		}
	}
	slices.Sort(names)
	type sums struct{ a, b, w float64 }
	succ, weighted, ms := map[string]*sums{}, map[string]*sums{}, map[string]*sums{}
	add := func(m map[string]*sums, g string, x, y, w float64) {
		s := m[g]
		if s == nil {
			s = &sums{}
			m[g] = s
		}
		s.a, s.b, s.w = s.a+w*x, s.b+w*y, s.w+w
	}
	for _, name := range names {
		x, y := ta[name], tb[name]
		if x.n == 0 || y.n == 0 {
			c.Undecided++
			continue
		}
		c.Tasks++
		sa, sb := float64(x.c)/float64(x.n), float64(y.c)/float64(y.n)
		g := x.template
		add(succ, g, sa, sb, 1)
		add(weighted, g, sa, sb, x.w)
		add(ms, g, x.ms/float64(x.n), y.ms/float64(y.n), 1)
		line := CompareLine{Task: name, A: fmt.Sprintf("%d/%d", x.c, x.n), B: fmt.Sprintf("%d/%d", y.c, y.n)}
		switch {
		case sb > sa:
			c.Won++
			line.Result = "won"
		case sb < sa:
			c.Lost++
			line.Result = "lost"
		default:
			c.Tied++
			continue
		}
		c.Lines = append(c.Lines, line)
	}
	pairs := func(m map[string]*sums) []stats.Pair {
		var out []stats.Pair
		for g, s := range m {
			out = append(out, stats.Pair{Group: g, A: s.a, B: s.b, W: s.w})
		}
		return out
	}
	bo := o.bootstrap()
	c.Success, c.Weighted, c.Milestone = stats.PairedBootstrap(pairs(succ), bo), stats.PairedBootstrap(pairs(weighted), bo), stats.PairedBootstrap(pairs(ms), bo)
	c.P = stats.McNemarExact(c.Lost, c.Won)
	if len(a.diffs) > 0 || len(b.diffs) > 0 {
		compared := map[string]bool{}
		for _, name := range names {
			if ta[name].n > 0 && tb[name].n > 0 {
				compared[name] = true
			}
		}
		c.SideEffectsA, c.SideEffectsB = countSideEffects(a, compared), countSideEffects(b, compared)
	}
	c.Words = c.words()
	return c
}

// PValueText writes a p-value as the comparison does: "p = 0.03".
func PValueText(p float64) string { return pValue(p) }

// DiffText writes a difference of rates with its interval, in points, as
// the comparison does: "+6.2 [+1.8, +10.5]"; "n/a" when nothing was
// compared.
func DiffText(iv stats.Interval) string {
	if !iv.OK() {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f [%+.1f, %+.1f]", 100*iv.Estimate, 100*iv.Lo, 100*iv.Hi)
}

// pValue writes a p-value as people read it.
func pValue(p float64) string {
	switch {
	case p < 0.001:
		return "p < 0.001"
	case p < 0.01:
		return fmt.Sprintf("p = %.3f", p)
	}
	return fmt.Sprintf("p = %.2f", p)
}

// words is the comparison in a sentence: "B is better by 6.2 points (95 %
// CI 1.8 to 10.5; 14 tasks won, 5 lost; p = 0.03)".
func (c *Comparison) words() string {
	if !c.Success.OK() {
		return fmt.Sprintf("%s and %s decided no task in common, so they cannot be compared.", c.A, c.B)
	}
	d := 100 * c.Success.Estimate
	detail := fmt.Sprintf("(%g%% CI %.1f to %.1f; %s won, %d lost; %s)", 100*c.Options.Confidence,
		100*c.Success.Lo, 100*c.Success.Hi, plural(c.Won, "task"), c.Lost, pValue(c.P))
	var s string
	switch {
	case math.Abs(d) < 0.05:
		s = fmt.Sprintf("%s and %s succeed equally often %s", c.B, c.A, detail)
	case d > 0:
		s = fmt.Sprintf("%s is better than %s by %.1f points %s", c.B, c.A, d, detail)
	default:
		s = fmt.Sprintf("%s is worse than %s by %.1f points %s", c.B, c.A, -d, detail)
	}
	if c.Success.Lo <= 0 && c.Success.Hi >= 0 && math.Abs(d) >= 0.05 {
		s += "; the interval holds 0, so the difference may be chance"
	}
	s += "."
	if c.SideEffectsA != nil {
		s += fmt.Sprintf(" Succeeded with side effects: %s %s, %s %s.", c.B, c.SideEffectsB.text(), c.A, c.SideEffectsA.text())
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// WriteComparison renders a comparison as text, Markdown or JSON.
func WriteComparison(w io.Writer, c *Comparison, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	case "text", "markdown", "md":
	default:
		return fmt.Errorf("unknown report format %q (text, markdown, json)", format)
	}
	md := format != "text"
	table := tabler(w, md)
	if md {
		fmt.Fprintf(w, "## Proctor comparison: %s against %s\n\n%s\n", c.B, c.A, c.Words)
	} else {
		fmt.Fprintf(w, "Proctor comparison: %s against %s\n\n%s\n", c.B, c.A, c.Words)
	}
	conf := fmt.Sprintf("%g%%", 100*c.Options.Confidence)
	table(fmt.Sprintf("Difference %s − %s over %d tasks both decided: paired bootstrap, %s, %d resamples, seed %d",
		c.B, c.A, c.Tasks, conf, c.Options.Resamples, c.Options.Seed),
		[]string{"metric", "difference [" + conf + " CI]"}, [][]string{
			{"success rate (points)", DiffText(c.Success)},
			{"weighted score (points)", DiffText(c.Weighted)},
			{"milestone average (×100)", DiffText(c.Milestone)},
		})
	table("Tasks", []string{"won by " + c.B, "lost by " + c.B, "tied", "McNemar's exact test", "only in " + c.A, "only in " + c.B, "undecided in one (errors)"},
		[][]string{{fmt.Sprint(c.Won), fmt.Sprint(c.Lost), fmt.Sprint(c.Tied), pValue(c.P), fmt.Sprint(c.OnlyA), fmt.Sprint(c.OnlyB), fmt.Sprint(c.Undecided)}})
	if c.SideEffectsA != nil {
		table("Succeeded with side effects (of the decided episodes diffed)", []string{c.A, c.B},
			[][]string{{c.SideEffectsA.text(), c.SideEffectsB.text()}})
	}
	if len(c.Lines) > 0 {
		var rows [][]string
		for _, l := range c.Lines {
			rows = append(rows, []string{l.Task, l.A, l.B, l.Result})
		}
		table("Tasks won and lost by "+c.B+" (successes of decided tries)", []string{"task", c.A, c.B, "result"}, rows)
	}
	return nil
}
