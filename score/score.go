package score

import (
	"math"
	"sort"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/task"
)

// Result is one task's verdict with the task facts that scores group by.
type Result struct {
	Task       string        `json:"task"`
	Repeat     int           `json:"repeat"` // which run of the task (0 for the first)
	Level      string        `json:"level"`
	Weight     float64       `json:"weight"` // the level's weight in the weighted score
	Apps       []string      `json:"apps"`
	Domain     string        `json:"domain"`
	Kind       string        `json:"kind"`
	Difficulty string        `json:"difficulty"`
	Interface  string        `json:"interface,omitempty"` // gui, gui+cli or cli
	Outcome    check.Outcome `json:"outcome"`
	Milestone  float64       `json:"milestone"` // milestone score in [0, 1]
	// Diffed is set when the episode's state diff was recorded;
	// SideEffects counts its violations, the changes outside what the
	// task allows.
	Diffed      bool `json:"diffed,omitempty"`
	SideEffects int  `json:"side_effects,omitempty"`
}

// Passed reports whether the task succeeded.
func (r Result) Passed() bool { return r.Outcome == check.Success }

// Decided reports whether the result is the agent's: every outcome but an
// infrastructure error, which is left out of every rate and mean.
func (r Result) Decided() bool { return r.Outcome != check.Error }

// Summary is the scores of a set of results. The rates and the mean are
// over the decided results only (Decided of N): infrastructure errors are
// counted apart (Errors) and never scored as the agent's failure. With
// nothing decided (Decided 0) the rates are undefined: 0 here, shown as
// n/a (HasRates).
type Summary struct {
	N            int                   `json:"n"`
	Decided      int                   `json:"decided"` // n less the errors
	Errors       int                   `json:"errors"`  // infrastructure errors, left out of the rates
	Passed       int                   `json:"passed"`
	SuccessRate  float64               `json:"success_rate"`   // passed / decided
	Weighted     float64               `json:"weighted_score"` // sum of passed weights / sum of decided weights
	MilestoneAvg float64               `json:"milestone_avg"`  // over the decided results
	Outcomes     map[check.Outcome]int `json:"outcomes"`
	// Diffed counts the decided results whose state diff was recorded;
	// SideEffects those of them with a violation (any outcome), and
	// SucceededWithSideEffects the successes among them: collateral
	// damage, counted apart from a plain success. CollateralRate is
	// SucceededWithSideEffects / Diffed, CleanSuccessRate the successes
	// without a violation / Diffed (both 0 when nothing was diffed).
	Diffed                   int     `json:"diffed,omitempty"`
	SideEffects              int     `json:"side_effects,omitempty"`
	SucceededWithSideEffects int     `json:"succeeded_with_side_effects,omitempty"`
	CollateralRate           float64 `json:"collateral_rate,omitempty"`
	CleanSuccessRate         float64 `json:"clean_success_rate,omitempty"`
}

// HasDiffs reports whether any decided result's state diff was recorded,
// so that the side-effect counts mean something.
func (s Summary) HasDiffs() bool { return s.Diffed > 0 }

// HasRates reports whether anything was decided, so that the rates mean
// something.
func (s Summary) HasRates() bool { return s.Decided > 0 }

// Summarize scores a set of results: the success rate, the OSUniverse
// weighted score (each task counts its level's weight), the milestone
// average and the count of each outcome. Infrastructure errors are counted
// but left out of the rates and the mean.
func Summarize(rs []Result) Summary {
	s := Summary{N: len(rs), Outcomes: map[check.Outcome]int{}}
	var wPassed, wAll, ms float64
	passedUndiffed := 0
	for _, r := range rs {
		s.Outcomes[r.Outcome]++
		if !r.Decided() {
			s.Errors++
			continue
		}
		s.Decided++
		wAll += r.Weight
		ms += r.Milestone
		if r.Passed() {
			s.Passed++
			wPassed += r.Weight
		}
		if !r.Diffed {
			if r.Passed() {
				passedUndiffed++
			}
		} else {
			s.Diffed++
			if r.SideEffects > 0 {
				s.SideEffects++
				if r.Passed() {
					s.SucceededWithSideEffects++
				}
			}
		}
	}
	if s.Diffed > 0 {
		clean := s.Passed - s.SucceededWithSideEffects - passedUndiffed
		s.CollateralRate = float64(s.SucceededWithSideEffects) / float64(s.Diffed)
		s.CleanSuccessRate = float64(clean) / float64(s.Diffed)
	}
	if s.Decided > 0 {
		s.SuccessRate = float64(s.Passed) / float64(s.Decided)
		s.MilestoneAvg = ms / float64(s.Decided)
	}
	if wAll > 0 {
		s.Weighted = wPassed / wAll
	}
	return s
}

// Dimension names a way to group results.
type Dimension string

// Breakdown dimensions.
const (
	ByLevel      Dimension = "level"
	ByApp        Dimension = "app"
	ByDomain     Dimension = "domain"
	ByKind       Dimension = "kind"
	ByDifficulty Dimension = "difficulty"
	ByInterface  Dimension = "interface" // gui, gui+cli, cli: ScienceBoard's split
)

// Dimensions lists the breakdown dimensions.
var Dimensions = []Dimension{ByLevel, ByApp, ByDomain, ByKind, ByDifficulty, ByInterface}

func keys(r Result, d Dimension) []string {
	switch d {
	case ByLevel:
		return []string{r.Level}
	case ByApp:
		if len(r.Apps) == 0 {
			return []string{""}
		}
		return r.Apps // a multi-app task counts under each of its apps
	case ByDomain:
		return []string{r.Domain}
	case ByKind:
		return []string{r.Kind}
	case ByInterface:
		return []string{r.Interface}
	default:
		return []string{r.Difficulty}
	}
}

// Group is one value of a breakdown.
type Group struct {
	Key     string  `json:"key"`
	Summary Summary `json:"summary"`
}

// Breakdown groups results by a dimension and summarizes each group,
// sorted by key (levels from paper to gold). A task with several apps
// counts once under each.
func Breakdown(rs []Result, d Dimension) []Group {
	by := map[string][]Result{}
	for _, r := range rs {
		for _, k := range keys(r, d) {
			by[k] = append(by[k], r)
		}
	}
	out := make([]Group, 0, len(by))
	for k, g := range by {
		out = append(out, Group{Key: k, Summary: Summarize(g)})
	}
	sort.Slice(out, func(i, j int) bool { return Before(d, out[i].Key, out[j].Key) })
	return out
}

// Before orders the keys of a dimension: levels from paper to gold, any
// other dimension by name. Every list of groups uses it.
func Before(d Dimension, a, b string) bool {
	if d == ByLevel {
		if ra, rb := task.LevelRank(a), task.LevelRank(b); ra != rb {
			return ra < rb
		}
	}
	return a < b
}

// Stat is a mean and a sample standard deviation.
type Stat struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"` // sample standard deviation (n-1); 0 for one value
	N    int     `json:"n"`
}

// MeanStd computes the mean and sample standard deviation of xs.
func MeanStd(xs []float64) Stat {
	s := Stat{N: len(xs)}
	if s.N == 0 {
		return s
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(s.N)
	if s.N > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.Std = math.Sqrt(ss / float64(s.N-1))
	}
	return s
}

// RepeatStats are the scores' mean and standard deviation over the
// repeated runs of a suite (OSUniverse's multiple runs).
type RepeatStats struct {
	Runs         []Summary `json:"runs"`
	SuccessRate  Stat      `json:"success_rate"`
	Weighted     Stat      `json:"weighted_score"`
	MilestoneAvg Stat      `json:"milestone_avg"`
}

// Repeats summarizes each repeat of the suite, then the spread across
// them; a repeat with nothing decided (all errors) is left out of the
// spread.
func Repeats(rs []Result) RepeatStats {
	by := map[int][]Result{}
	for _, r := range rs {
		by[r.Repeat] = append(by[r.Repeat], r)
	}
	idx := make([]int, 0, len(by))
	for k := range by {
		idx = append(idx, k)
	}
	sort.Ints(idx)
	var st RepeatStats
	var sr, ws, ma []float64
	for _, k := range idx {
		s := Summarize(by[k])
		st.Runs = append(st.Runs, s)
		if !s.HasRates() {
			continue
		}
		sr, ws, ma = append(sr, s.SuccessRate), append(ws, s.Weighted), append(ma, s.MilestoneAvg)
	}
	st.SuccessRate, st.Weighted, st.MilestoneAvg = MeanStd(sr), MeanStd(ws), MeanStd(ma)
	return st
}
