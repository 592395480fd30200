package viewer

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/store"
)

// boardRow is one run on the leaderboard.
type boardRow struct {
	ID, Agent, Model, Obs, Harness string
	Env                            string // the kinds of environment the episodes ran in
	Started                        time.Time
	N                              int
	Decided, Errors                int // N less the infrastructure errors, which the rates leave out (n/a when none decided)
	Weighted, Success, Milestone   float64
	Uncompleted, EarlyStop         float64
	Duration                       time.Duration // mean per episode, without the reset and setup
	Setup                          time.Duration // mean reset and setup per episode
	Tokens                         float64       // mean per episode, input and output
	Cost                           float64       // mean per episode
	TotalCost                      float64
	Groups                         map[string]template.HTML // a breakdown's cells: the success rate over passed/decided and errors
	// Repeats sums up the tasks' repeats: flip rate and pass^k, for runs
	// with repeats.
	Repeats report.RepeatBrief
}

func rowOf(r *run, dims []score.Dimension) boardRow {
	rep := r.Report
	s := rep.Summary
	share := func(o check.Outcome) float64 { // of the decided episodes
		if s.Decided == 0 {
			return 0
		}
		return float64(s.Outcomes[o]) / float64(s.Decided)
	}
	row := boardRow{ID: r.ID, Agent: rep.Run.Agent, Model: rep.Run.Model, Obs: rep.Run.ObsMode, Harness: rep.Run.Harness,
		Env: rep.Environments(), Started: rep.Run.Started, N: s.N, Decided: s.Decided, Errors: s.Errors, Weighted: s.Weighted, Success: s.SuccessRate, Milestone: s.MilestoneAvg,
		Uncompleted: share(check.Uncompleted), EarlyStop: share(check.EarlyStopped), Duration: rep.Means.Duration,
		Setup: rep.Means.Setup, Tokens: rep.Means.InputTokens + rep.Means.OutputTokens, Cost: rep.Means.Cost,
		TotalCost: rep.Means.TotalCost, Groups: map[string]template.HTML{}, Repeats: report.BriefRepeats(rep.Results)}
	for _, d := range dims {
		for _, g := range rep.Breakdowns[d] {
			// The rate over its counts, two short lines: five levels'
			// columns fit beside the others in a 1400 pixel window.
			rate := fmt.Sprintf("%.0f%%", 100*g.Summary.SuccessRate)
			if !g.Summary.HasRates() {
				rate = "n/a"
			}
			cell := fmt.Sprintf("%s <small>%d/%d</small>", rate, g.Summary.Passed, g.Summary.Decided)
			if g.Summary.Errors > 0 {
				cell += fmt.Sprintf(" <small>%d err.</small>", g.Summary.Errors)
			}
			row.Groups[groupLabel(dims, d, g.Key)] = template.HTML(cell)
		}
	}
	return row
}

// pseudoVersion is a Go pseudo-version (what go build stamps on a
// checkout between tags), with "+dirty" when it had changes; devel is
// what a build without a module version says.
var (
	pseudoVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+-(?:[0-9A-Za-z.]*\.)?\d{14}-([0-9a-f]{12})(\+dirty)?$`)
	develVersion  = regexp.MustCompile(`^devel ([0-9a-f]{12})(-dirty)?$`)
)

// shortVersion shortens a harness version built from a checkout to its
// commit, as git abbreviates it ("5a1c0ff+dirty", "devel 5a1c0ff"), for
// the leaderboard's narrow column; a released version stays whole.
func shortVersion(v string) string {
	if m := pseudoVersion.FindStringSubmatch(v); m != nil {
		return m[1][:7] + m[2]
	}
	if m := develVersion.FindStringSubmatch(v); m != nil {
		return "devel " + m[1][:7] + m[2]
	}
	return v
}

// byAll asks the leaderboard for the columns of every dimension at once.
const byAll = "all"

// boardDims are the dimensions the leaderboard can break scores down by.
var boardDims = []score.Dimension{score.ByLevel, score.ByApp, score.ByDomain}

// dimsOf reads the by= parameter: one dimension, or all of them; level
// when absent or unknown.
func dimsOf(by string) (string, []score.Dimension) {
	if by == byAll {
		return by, boardDims
	}
	for _, d := range boardDims {
		if string(d) == by {
			return by, []score.Dimension{d}
		}
	}
	return string(score.ByLevel), []score.Dimension{score.ByLevel}
}

// dimNames are the names of boardDims.
func dimNames() []string {
	out := make([]string, len(boardDims))
	for i, d := range boardDims {
		out[i] = string(d)
	}
	return out
}

// groupLabel is a breakdown column's header: the group's key, with its
// dimension in front when several dimensions are shown.
func groupLabel(dims []score.Dimension, d score.Dimension, key string) string {
	if len(dims) == 1 {
		return key
	}
	return string(d) + ": " + key
}

// sortKeys are the leaderboard's sortable columns.
var sortKeys = map[string]func(a, b boardRow) bool{
	"weighted":    func(a, b boardRow) bool { return a.Weighted < b.Weighted },
	"success":     func(a, b boardRow) bool { return a.Success < b.Success },
	"milestone":   func(a, b boardRow) bool { return a.Milestone < b.Milestone },
	"uncompleted": func(a, b boardRow) bool { return a.Uncompleted < b.Uncompleted },
	"early":       func(a, b boardRow) bool { return a.EarlyStop < b.EarlyStop },
	"time":        func(a, b boardRow) bool { return a.Duration < b.Duration },
	"tokens":      func(a, b boardRow) bool { return a.Tokens < b.Tokens },
	"cost":        func(a, b boardRow) bool { return a.Cost < b.Cost },
	"date":        func(a, b boardRow) bool { return a.Started.Before(b.Started) },
	"agent":       func(a, b boardRow) bool { return a.Agent+a.Model < b.Agent+b.Model },
	"tasks":       func(a, b boardRow) bool { return a.N < b.N },
	"errors":      func(a, b boardRow) bool { return a.Errors < b.Errors },
	"env":         func(a, b boardRow) bool { return a.Env < b.Env },
	"flips":       func(a, b boardRow) bool { return repeatKey(a, a.Repeats.FlipRate) < repeatKey(b, b.Repeats.FlipRate) },
	"passk":       func(a, b boardRow) bool { return repeatKey(a, a.Repeats.PassHatK) < repeatKey(b, b.Repeats.PassHatK) },
}

// repeatKey sorts a figure over repeats, a run without repeats below
// every run with them.
func repeatKey(r boardRow, v float64) float64 {
	if !r.Repeats.Repeated() {
		return -1
	}
	return v
}

// column is a sortable header; Title, where set, is the label written
// out, shown as a tooltip.
type column struct {
	Key, Label, URL, Mark, Title string
}

// groupHead is a dimension's breakdown columns on the leaderboard: the
// dimension over its groups, each column's Key indexing boardRow.Groups.
type groupHead struct {
	Dim  string
	Cols []column
}

// groupHeads lays the breakdown columns out under their dimensions.
func groupHeads(groups []string, dims []score.Dimension) []groupHead {
	var out []groupHead
	for _, d := range dims {
		h := groupHead{Dim: string(d)}
		prefix := groupLabel(dims, d, "")
		for _, g := range groups {
			if strings.HasPrefix(g, prefix) {
				h.Cols = append(h.Cols, column{Key: g, Label: strings.TrimPrefix(g, prefix), Title: string(d) + ": " + strings.TrimPrefix(g, prefix)})
			}
		}
		if len(h.Cols) > 0 {
			out = append(out, h)
		}
	}
	return out
}

func (s *Server) leaderboard(w http.ResponseWriter, r *http.Request) {
	runs, err := s.runs()
	if err != nil {
		s.fail(w, err)
		return
	}
	q := r.URL.Query()
	by, dims := dimsOf(q.Get("by"))
	filter := strings.ToLower(strings.TrimSpace(q.Get("q")))
	sortKey := q.Get("sort")
	if sortKeys[sortKey] == nil {
		sortKey = "weighted"
	}
	desc := q.Get("desc") != "0"
	var rows []boardRow
	groupSet := map[string]bool{}
	var shown []*run
	for _, run := range runs {
		if run.Report.Run.Kind == store.RunValidation {
			continue // a validation's outcomes are meant to differ: not a score
		}
		row := rowOf(run, dims)
		hay := strings.ToLower(strings.Join([]string{row.ID, row.Agent, row.Model, row.Obs, row.Harness}, " "))
		if filter != "" && !strings.Contains(hay, filter) {
			continue
		}
		for k := range row.Groups {
			groupSet[k] = true
		}
		rows = append(rows, row)
		shown = append(shown, run)
	}
	less := sortKeys[sortKey]
	sort.SliceStable(rows, func(i, j int) bool {
		if desc {
			return less(rows[j], rows[i])
		}
		return less(rows[i], rows[j])
	})
	groups := sortedGroups(groupSet, dims)
	// The columns over repeats are there where a run has repeats.
	repeated := false
	for _, r := range rows {
		repeated = repeated || r.Repeats.Repeated()
	}
	var cols []column
	for _, c := range [][3]string{{"agent", "Agent / model", ""}, {"env", "Env.", "the environments the episodes ran in"}, {"date", "Date", ""},
		{"tasks", "Eps.", "episodes"}, {"errors", "Errors", "infrastructure errors, left out of every rate and mean"},
		{"weighted", "Weighted", "weighted score, errors left out"}, {"success", "Success", "success rate, errors left out"},
		{"milestone", "Miles.", "milestones reached, mean share, errors left out"},
		{"flips", "Flips", "flip rate: the share of the tasks tried twice or more whose outcomes were mixed (runs with --repeat)"},
		{"passk", "pass^k", "pass^k: the chance that k tries of a task all succeed, averaged over the tasks, k the run's repeats"},
		{"uncompleted", "Uncompl.", "uncompleted: the budget or wall time ran out"}, {"early", "Early", "early stopped: repeated actions"},
		{"time", "Time / ep.", "mean time per episode, without the reset and setup"}, {"tokens", "Tokens / ep.", "mean tokens per episode, input and output"},
		{"cost", "Cost / ep.", "mean cost per episode (the run page has the total)"}} {
		if !repeated && (c[0] == "flips" || c[0] == "passk") {
			continue
		}
		v := url.Values{"sort": {c[0]}, "by": {by}, "q": {q.Get("q")}}
		mark := ""
		if c[0] == sortKey {
			if desc {
				v.Set("desc", "0")
				mark = "sorted-down"
			} else {
				mark = "sorted-up"
			}
		}
		cols = append(cols, column{Key: c[0], Label: c[1], URL: "/?" + v.Encode(), Mark: mark, Title: c[2]})
	}
	var byLinks []column
	for _, d := range append(dimNames(), byAll) {
		v := url.Values{"sort": {sortKey}, "by": {d}, "q": {q.Get("q")}}
		if !desc {
			v.Set("desc", "0")
		}
		mark := ""
		if d == by {
			mark = "current"
		}
		byLinks = append(byLinks, column{Key: d, Label: d, URL: "/?" + v.Encode(), Mark: mark})
	}
	clear := url.Values{"sort": {sortKey}, "by": {by}}
	if !desc {
		clear.Set("desc", "0")
	}
	s.render(w, http.StatusOK, "leaderboard", map[string]any{
		"Title": "Runs", "Rows": rows, "Columns": cols, "Groups": groups, "GroupHeads": groupHeads(groups, dims), "By": by, "ByLinks": byLinks,
		"Query": q.Get("q"), "All": len(runs), "ClearURL": "/?" + clear.Encode(), "Sort": sortKey, "Desc": desc, "Root": s.Root, "Repeated": repeated,
		"CostPlot": s.plot("cost", shown, costPlot), "TimePlot": s.plot("time", shown, timePlot), "LevelPlot": s.plot("level", shown, levelPlot),
		"ScorePlot": s.plot("scores", shown, scorePlot), "AppPlot": s.plot("app", shown, appPlot),
	})
}
