package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/stats"
	"github.com/proctor-eval/proctor/store"
)

// StatOptions are the settings of a report's statistics: the k of pass@k
// and pass^k, and the bootstrap's seed, confidence and resamples.
type StatOptions struct {
	K          []int   `json:"k"`
	Seed       uint64  `json:"seed"`
	Confidence float64 `json:"confidence"`
	Resamples  int     `json:"resamples"`
}

// DefaultK are the k of pass@k and pass^k when none are asked for.
var DefaultK = []int{1, 3, 5}

// The bootstrap's settings when none are asked for: proctor report's
// and the viewer's, so that both give the same interval for a run.
const (
	DefaultSeed       = 1
	DefaultConfidence = 0.95
	DefaultResamples  = 2000
)

// DefaultStatOptions are the statistics' settings when none are asked
// for.
func DefaultStatOptions() StatOptions {
	return StatOptions{K: DefaultK, Seed: DefaultSeed, Confidence: DefaultConfidence, Resamples: DefaultResamples}
}

func (o StatOptions) norm() StatOptions {
	if len(o.K) == 0 {
		o.K = DefaultK
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = DefaultConfidence
	}
	if o.Resamples <= 0 {
		o.Resamples = DefaultResamples
	}
	return o
}

func (o StatOptions) bootstrap() stats.Options {
	return stats.Options{Resamples: o.Resamples, Confidence: o.Confidence, Seed: o.Seed}
}

// Stats are a run's statistics over its repeats and its tasks: intervals
// for its scores, and per task the successes over the repeats with pass@k,
// pass^k and flips. Infrastructure errors are left out of all of them and
// counted beside.
type Stats struct {
	Options StatOptions `json:"options"`
	// Groups is how many groups the bootstrap resamples: templates (a
	// template's instances together) and tasks of their own.
	Groups    int              `json:"groups"`
	Intervals []ScopeIntervals `json:"intervals"`
	Tasks     []TaskRepeats    `json:"tasks"`
	// MaxRepeats is the most decided tries of any task.
	MaxRepeats int `json:"max_repeats"`
	// Means are pass@k and pass^k averaged over the tasks tried at
	// least k times, one per k of Options.
	Means []KMean `json:"means"`
	// Flipped of Tried tasks (those decided at least twice) had mixed
	// outcomes; FlipRate is their share (0 when none was tried twice).
	Flipped  int      `json:"flipped"`
	Tried    int      `json:"tried"`
	FlipRate float64  `json:"flip_rate"`
	Flaky    []string `json:"flaky"`
}

// ScopeIntervals are the scores of the decided episodes of a scope (the
// run, a level, an app) with their bootstrap intervals.
type ScopeIntervals struct {
	Scope     string         `json:"scope"`
	Decided   int            `json:"decided"`
	Errors    int            `json:"errors"`
	Success   stats.Interval `json:"success_rate"`
	Weighted  stats.Interval `json:"weighted_score"`
	Milestone stats.Interval `json:"milestone_avg"`
}

// TaskRepeats is one task over its repeats: C successes of N decided
// tries, Errors apart; PassAtK and PassHatK follow Options.K, nil where k
// exceeds N.
type TaskRepeats struct {
	Task     string     `json:"task"`
	N        int        `json:"n"`
	C        int        `json:"c"`
	Errors   int        `json:"errors"`
	PassAtK  []*float64 `json:"pass_at_k"`
	PassHatK []*float64 `json:"pass_hat_k"`
	Flipped  bool       `json:"flipped"`
}

// KMean is pass@k and pass^k averaged over the Tasks tried at least k
// times.
type KMean struct {
	K        int     `json:"k"`
	Tasks    int     `json:"tasks"`
	PassAtK  float64 `json:"pass_at_k"`
	PassHatK float64 `json:"pass_hat_k"`
}

// groupOf is the bootstrap group of a result: its template, else its task.
func groupOf(x store.Result) string {
	if x.Template != "" {
		return "template " + x.Template
	}
	return "task " + x.Task
}

// Analyse computes the run's statistics (Stats) with the options given.
func (r *Report) Analyse(o StatOptions) {
	o = o.norm()
	s := &Stats{Options: o, Flaky: []string{}}
	groups := map[string]bool{}
	for _, x := range r.Results {
		groups[groupOf(x)] = true
	}
	s.Groups = len(groups)
	s.Intervals = append(s.Intervals, intervals("all", r.Results, o))
	for _, d := range []score.Dimension{score.ByLevel, score.ByApp} {
		for _, g := range r.Breakdowns[d] {
			var sub []store.Result
			for _, x := range r.Results {
				if d == score.ByLevel && x.Level == g.Key || d == score.ByApp && (slices.Contains(x.Apps, g.Key) || g.Key == "" && len(x.Apps) == 0) {
					sub = append(sub, x)
				}
			}
			s.Intervals = append(s.Intervals, intervals(string(d)+": "+orDash(g.Key), sub, o))
		}
	}
	s.Tasks, s.Means = repeats(r.Results, o.K)
	for _, t := range s.Tasks {
		s.MaxRepeats = max(s.MaxRepeats, t.N)
		if t.N >= 2 {
			s.Tried++
		}
		if t.Flipped {
			s.Flipped++
			s.Flaky = append(s.Flaky, t.Task)
		}
	}
	if s.Tried > 0 {
		s.FlipRate = float64(s.Flipped) / float64(s.Tried)
	}
	r.Stats = s
}

// intervals bootstraps a scope's success rate, weighted score and
// milestone average over its decided episodes.
func intervals(scope string, rs []store.Result, o StatOptions) ScopeIntervals {
	out := ScopeIntervals{Scope: scope}
	var succ, weighted, ms []stats.Item
	for _, x := range rs {
		if check.Outcome(x.Outcome) == check.Error {
			out.Errors++
			continue
		}
		out.Decided++
		g, pass := groupOf(x), 0.0
		if check.Outcome(x.Outcome) == check.Success {
			pass = 1
		}
		succ = append(succ, stats.Item{Group: g, Value: pass, Weight: 1})
		weighted = append(weighted, stats.Item{Group: g, Value: pass, Weight: x.Weight})
		ms = append(ms, stats.Item{Group: g, Value: x.Milestone, Weight: 1})
	}
	b := o.bootstrap()
	out.Success, out.Weighted, out.Milestone = stats.Bootstrap(succ, b), stats.Bootstrap(weighted, b), stats.Bootstrap(ms, b)
	return out
}

// repeats counts each task's successes over its decided repeats, in the
// order of the tasks' names, with pass@k and pass^k for each k, and their
// means over the tasks tried at least k times.
func repeats(rs []store.Result, ks []int) ([]TaskRepeats, []KMean) {
	by := map[string]*TaskRepeats{}
	var names []string
	for _, x := range rs {
		t := by[x.Task]
		if t == nil {
			t = &TaskRepeats{Task: x.Task}
			by[x.Task] = t
			names = append(names, x.Task)
		}
		switch check.Outcome(x.Outcome) {
		case check.Error:
			t.Errors++
		case check.Success:
			t.N++
			t.C++
		default:
			t.N++
		}
	}
	slices.Sort(names)
	means := make([]KMean, len(ks))
	var out []TaskRepeats
	for _, n := range names {
		t := by[n]
		t.Flipped = stats.Flipped(t.N, t.C)
		for i, k := range ks {
			means[i].K = k
			at, ok := stats.PassAtK(t.N, t.C, k)
			hat, _ := stats.PassHatK(t.N, t.C, k)
			if !ok {
				t.PassAtK, t.PassHatK = append(t.PassAtK, nil), append(t.PassHatK, nil)
				continue
			}
			t.PassAtK, t.PassHatK = append(t.PassAtK, &at), append(t.PassHatK, &hat)
			means[i].Tasks++
			means[i].PassAtK += at
			means[i].PassHatK += hat
		}
		out = append(out, *t)
	}
	for i := range means {
		if means[i].Tasks > 0 {
			means[i].PassAtK /= float64(means[i].Tasks)
			means[i].PassHatK /= float64(means[i].Tasks)
		}
	}
	return out, means
}

// ivText is an interval as "50.0% [31.2%, 68.8%]" (f formats a value),
// "n/a" when there was nothing to estimate, and the estimate alone for a
// single group.
func ivText(iv stats.Interval, f func(float64) string) string {
	switch iv.Groups {
	case 0:
		return "n/a"
	case 1: // resampling one group shows no spread: there is no interval
		return f(iv.Estimate) + " [n/a: 1 group]"
	}
	return fmt.Sprintf("%s [%s, %s]", f(iv.Estimate), f(iv.Lo), f(iv.Hi))
}

// RateText writes a rate's interval as the report does: "50.0% [31.2%,
// 68.8%]".
func RateText(iv stats.Interval) string { return ivText(iv, pct1) }

// MeanText writes a milestone average's interval as the report does:
// "0.500 [0.312, 0.688]".
func MeanText(iv stats.Interval) string { return ivText(iv, dec3) }

func pct1(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }
func dec3(f float64) string { return fmt.Sprintf("%.3f", f) }

// writeStats writes each analysed run's intervals, its tasks over their
// repeats with pass@k, pass^k and flips, and its flaky tasks.
func writeStats(w io.Writer, rs []*Report, table func(string, []string, [][]string)) {
	for _, r := range rs {
		s := r.Stats
		if s == nil {
			continue
		}
		o := s.Options
		conf := fmt.Sprintf("%g%%", 100*o.Confidence)
		var rows [][]string
		for _, iv := range s.Intervals {
			rows = append(rows, []string{iv.Scope, fmt.Sprint(iv.Decided), fmt.Sprint(iv.Errors),
				ivText(iv.Success, pct1), ivText(iv.Weighted, pct1), ivText(iv.Milestone, dec3)})
		}
		table(fmt.Sprintf("Intervals (%s): %s, percentile bootstrap of %d resamples of %d groups (a template's instances together), seed %d; errors left out",
			r.Run.ID, conf, o.Resamples, s.Groups, o.Seed),
			[]string{"scope", "decided", "errors", "success rate [" + conf + " CI]", "weighted score [" + conf + " CI]", "milestone average [" + conf + " CI]"}, rows)
		if s.MaxRepeats < 2 {
			continue // one try per task: pass@1 is the success rate and nothing can flip
		}
		header := []string{"task", "c/n", "errors"}
		for _, k := range o.K {
			header = append(header, fmt.Sprintf("pass@%d", k))
		}
		for _, k := range o.K {
			header = append(header, fmt.Sprintf("pass^%d", k))
		}
		header = append(header, "flipped")
		rows = rows[:0]
		opt := func(p *float64) string {
			if p == nil {
				return "n/a"
			}
			return pct1(*p)
		}
		for _, t := range s.Tasks {
			row := []string{t.Task, fmt.Sprintf("%d/%d", t.C, t.N), fmt.Sprint(t.Errors)}
			for _, p := range t.PassAtK {
				row = append(row, opt(p))
			}
			for _, p := range t.PassHatK {
				row = append(row, opt(p))
			}
			row = append(row, map[bool]string{true: "yes", false: "-"}[t.Flipped])
			rows = append(rows, row)
		}
		mean := []string{"mean over tasks", "", ""}
		kmean := func(m KMean, v float64) string {
			switch {
			case m.Tasks == 0:
				return "n/a"
			case m.Tasks < len(s.Tasks):
				return fmt.Sprintf("%s (%d tasks)", pct1(v), m.Tasks)
			}
			return pct1(v)
		}
		for _, m := range s.Means {
			mean = append(mean, kmean(m, m.PassAtK))
		}
		for _, m := range s.Means {
			mean = append(mean, kmean(m, m.PassHatK))
		}
		rows = append(rows, append(mean, ""))
		table(fmt.Sprintf("Repeats (%s): %d tasks, up to %d decided tries each; flip rate %s (%d of %d tasks tried twice or more flipped)",
			r.Run.ID, len(s.Tasks), s.MaxRepeats, pct1(s.FlipRate), s.Flipped, s.Tried), header, rows)
		flaky := "none"
		if len(s.Flaky) > 0 {
			flaky = strings.Join(s.Flaky, ", ")
		}
		fmt.Fprintf(w, "\nFlaky tasks (%s): %s\n", r.Run.ID, flaky)
	}
}
