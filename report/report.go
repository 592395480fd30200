// Package report turns run folders into reports: success rate, weighted
// score, milestone average, outcome shares, time, steps, tokens and cost,
// breakdowns by level, app, domain, kind and difficulty, and the spread
// over repeats, for one run or several side by side, as text, Markdown or
// JSON.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/store"
)

// Report is one run's figures.
type Report struct {
	Dir        string                            `json:"dir"`
	Run        store.Run                         `json:"run"`
	Summary    score.Summary                     `json:"summary"`
	Breakdowns map[score.Dimension][]score.Group `json:"breakdowns"`
	Repeats    score.RepeatStats                 `json:"repeats"`
	Means      Means                             `json:"means"`
	Results    []store.Result                    `json:"results"`
	// ByDomain is the success by domain (a column each, and overall) of
	// each level, kind, difficulty and interface, as ScienceBoard lays
	// out its results; nil for a run of fewer than two domains.
	ByDomain *score.DomainTable `json:"by_domain,omitempty"`
	// Rejudged is the latest re-judging of the run (proctor rescore);
	// nil when it was never re-judged.
	Rejudged *Rejudged `json:"rejudged,omitempty"`
	// Lost are the environments that left the run's pool (a guest that
	// died); its episodes ran on the others.
	Lost []store.Lost `json:"lost_environments,omitempty"`
	// CC is the CC-Score against the tasks' gold solutions, when asked
	// for (CCScores).
	CC *CC `json:"cc_score,omitempty"`
	// Personas are SCUBA's metrics per persona, for runs whose tasks name
	// one, in the personas' order.
	Personas []Persona `json:"personas,omitempty"`
	// Milestones are the milestones each task's episodes reached, a
	// table for the tasks of the same milestones, for runs with any.
	Milestones []MilestoneTable `json:"milestone_tables,omitempty"`
	// Judges compares each judge of the run's judge checks with the
	// reviews and the rule-based checks.
	Judges []Trust `json:"judges,omitempty"`
	// Controls are the judges' answers on the suite's judge controls,
	// asked before the run or a proctor judge.
	Controls []store.JudgeControl `json:"judge_controls,omitempty"`
	// Stats are the intervals and the statistics over repeats, when
	// asked for (Analyse).
	Stats *Stats `json:"stats,omitempty"`
	// Problems are the reasons of the run's errors and of its agent's
	// unusable replies and refused actions, grouped, most frequent
	// first; Agent counts the latter.
	Problems []Problem   `json:"problems,omitempty"`
	Agent    AgentTotals `json:"agent_problems"`
	// SideEffects are the episodes whose state diff holds a violation (a
	// change outside what the task allows), by task and repeat; the
	// summaries count them (score.Summary.SucceededWithSideEffects).
	SideEffects []SideEffect `json:"side_effects,omitempty"`
	// diffs are the episodes' side effects: a key for each episode
	// whose diff was recorded, its violations.
	diffs map[store.ReviewKey]int
}

// Persona is the metrics of one persona's episodes: SCUBA reports the
// milestone score, success, time, steps, tokens and cost per persona.
type Persona struct {
	Name    string        `json:"name"`
	Summary score.Summary `json:"summary"`
	Means   Means         `json:"means"`
}

// Rejudged is the latest re-judging of a run: how many episodes were
// judged again and those whose outcome flipped. The run's own results,
// and the figures above, are the original ones.
type Rejudged struct {
	At        time.Time       `json:"at"`
	SuiteHash string          `json:"suite_hash"`
	Episodes  int             `json:"episodes"`
	Flipped   []store.Rescore `json:"flipped"`
}

// MakeRejudged summarises the rescores of one re-judging; nil for none.
func MakeRejudged(rs []store.Rescore) *Rejudged {
	if len(rs) == 0 {
		return nil
	}
	j := &Rejudged{At: rs[0].At, SuiteHash: rs[0].SuiteHash, Episodes: len(rs), Flipped: []store.Rescore{}}
	for _, r := range rs {
		if r.Flipped() {
			j.Flipped = append(j.Flipped, r)
		}
	}
	return j
}

// Means are per-episode averages and totals.
type Means struct {
	Duration     time.Duration `json:"duration"` // the agent's episode, without the reset and setup
	Steps        float64       `json:"steps"`
	InputTokens  float64       `json:"input_tokens"`
	OutputTokens float64       `json:"output_tokens"`
	Cost         float64       `json:"cost"`
	TotalCost    float64       `json:"total_cost"`
	// What judge checks' models spent over the run, apart from the
	// agent's.
	JudgeInputTokens  int     `json:"judge_input_tokens,omitempty"`
	JudgeOutputTokens int     `json:"judge_output_tokens,omitempty"`
	JudgeCost         float64 `json:"judge_cost,omitempty"`
	// Setup is the mean reset and setup before an episode, where the run
	// recorded it.
	Setup time.Duration `json:"setup,omitempty"`
}

// Load reads a run folder.
func Load(dir string) (*Report, error) {
	st, err := store.OpenRun(dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	run, err := st.Run()
	if err != nil {
		return nil, err
	}
	rs, err := st.Results()
	if err != nil {
		return nil, err
	}
	re, err := st.Rescores()
	if err != nil {
		return nil, err
	}
	lost, err := st.LostEnvironments()
	if err != nil {
		return nil, err
	}
	js, err := st.Judgements()
	if err != nil {
		return nil, err
	}
	reviews, err := st.Reviews()
	if err != nil {
		return nil, err
	}
	diffs, err := st.AllChanges()
	if err != nil {
		return nil, err
	}
	r := MakeWithChanges(dir, run, rs, diffs)
	r.Rejudged, r.Lost, r.Judges = MakeRejudged(re), lost, MakeTrust(js, rs, reviews)
	if r.Controls, err = st.JudgeControls(); err != nil {
		return nil, err
	}
	return r, nil
}

// Make computes a report from results.
func Make(dir string, run store.Run, rs []store.Result) *Report {
	return MakeWithChanges(dir, run, rs, nil)
}

// MakeWithChanges computes a report from results and the episodes' state
// diffs (store.AllChanges), which count the successes with side effects
// apart.
func MakeWithChanges(dir string, run store.Run, rs []store.Result, diffs map[store.ReviewKey]*statediff.Diff) *Report {
	r := &Report{Dir: dir, Run: run, Results: rs, Breakdowns: map[score.Dimension][]score.Group{}}
	var scored []score.Result
	m := means(rs)
	r.SideEffects, r.diffs = sideEffects(rs, diffs)
	for _, x := range rs {
		n, diffed := r.diffs[store.ReviewKey{Task: x.Task, Repeat: x.Repeat}]
		scored = append(scored, score.Result{Task: x.Task, Repeat: x.Repeat, Level: x.Level, Weight: x.Weight, Apps: x.Apps,
			Domain: x.Domain, Kind: x.Kind, Difficulty: x.Difficulty, Interface: x.Interface, Outcome: check.Outcome(x.Outcome), Milestone: x.Milestone,
			Diffed: diffed, SideEffects: n})
	}
	r.Means = m
	r.Personas = personas(rs, scored)
	r.Summary = score.Summarize(scored)
	for _, d := range score.Dimensions {
		r.Breakdowns[d] = score.Breakdown(scored, d)
	}
	r.ByDomain = score.DomainBreakdown(scored, score.DomainRows...)
	r.Repeats = score.Repeats(scored)
	r.Problems, r.Agent = problems(rs)
	r.Milestones = milestoneTables(rs)
	return r
}

// means averages the episodes' time, steps and tokens, and sums and
// averages their cost.
func means(rs []store.Result) Means {
	var m Means
	for _, x := range rs {
		m.Duration += x.Duration
		m.Setup += x.Setup
		m.Steps += float64(x.Steps)
		m.InputTokens += float64(x.InputTokens)
		m.OutputTokens += float64(x.OutputTokens)
		m.TotalCost += x.Cost
		m.JudgeInputTokens += x.JudgeInputTokens
		m.JudgeOutputTokens += x.JudgeOutputTokens
		m.JudgeCost += x.JudgeCost
	}
	if n := len(rs); n > 0 {
		m.Duration /= time.Duration(n)
		m.Setup /= time.Duration(n)
		m.Steps /= float64(n)
		m.InputTokens /= float64(n)
		m.OutputTokens /= float64(n)
		m.Cost = m.TotalCost / float64(n)
	}
	return m
}

// personas groups the results by persona, sorted by name (episodes of no
// persona last, as "-"); none when no task names one.
func personas(rs []store.Result, scored []score.Result) []Persona {
	by := map[string][]int{}
	for i, x := range rs {
		by[x.Persona] = append(by[x.Persona], i)
	}
	if len(by) == 1 && by[""] != nil {
		return nil
	}
	names := slices.Sorted(maps.Keys(by))
	if names[0] == "" {
		names = append(names[1:], "")
	}
	var out []Persona
	for _, n := range names {
		var sub []store.Result
		var sc []score.Result
		for _, i := range by[n] {
			sub = append(sub, rs[i])
			sc = append(sc, scored[i])
		}
		out = append(out, Persona{Name: orDash(n), Summary: score.Summarize(sc), Means: means(sub)})
	}
	return out
}

// Formats are the output formats of Write.
var Formats = []string{"text", "markdown", "json"}

// Write renders reports side by side.
func Write(w io.Writer, rs []*Report, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rs)
	case "text", "markdown", "md":
	default:
		return fmt.Errorf("unknown report format %q (text, markdown, json)", format)
	}
	md := format != "text"
	table := tabler(w, md)
	pct := func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }
	header := []string{"metric"}
	for _, r := range rs {
		header = append(header, r.Run.ID)
	}
	row := func(name string, f func(*Report) string) []string {
		out := []string{name}
		for _, r := range rs {
			out = append(out, f(r))
		}
		return out
	}
	stat := func(s score.Stat) string {
		if s.N == 0 {
			return "n/a"
		}
		if s.N < 2 {
			return pct(s.Mean)
		}
		return fmt.Sprintf("%s ± %s", pct(s.Mean), pct(s.Std))
	}
	rows := [][]string{
		row("agent", func(r *Report) string { return r.Run.Agent }),
		row("observation", func(r *Report) string { return r.Run.ObsMode }),
		row("environment", func(r *Report) string { return r.Environments() }),
		row("tasks", func(r *Report) string { return fmt.Sprint(len(taskSet(r))) }),
		row("episodes", func(r *Report) string { return fmt.Sprint(r.Summary.N) }),
		row("errors (left out)", func(r *Report) string { return fmt.Sprint(r.Summary.Errors) }),
		row("success rate", func(r *Report) string { return rate(r.Summary, pct(r.Summary.SuccessRate)) }),
		row("weighted score", func(r *Report) string { return rate(r.Summary, pct(r.Summary.Weighted)) }),
		row("milestone average", func(r *Report) string { return rate(r.Summary, fmt.Sprintf("%.3f", r.Summary.MilestoneAvg)) }),
	}
	rows = append(rows, sideEffectRows(rs, row, pct)...)
	for _, o := range check.Outcomes {
		if o == check.Success {
			continue
		}
		rows = append(rows, row(string(o), func(r *Report) string {
			if r.Summary.N == 0 {
				return "0"
			}
			return fmt.Sprintf("%d (%s)", r.Summary.Outcomes[o], pct(float64(r.Summary.Outcomes[o])/float64(r.Summary.N)))
		}))
	}
	rows = append(rows,
		row("success over repeats", func(r *Report) string { return stat(r.Repeats.SuccessRate) }),
		row("weighted over repeats", func(r *Report) string { return stat(r.Repeats.Weighted) }),
		row("time per episode", func(r *Report) string { return r.Means.Duration.Round(10 * time.Millisecond).String() }),
		row("steps per episode", func(r *Report) string { return fmt.Sprintf("%.1f", r.Means.Steps) }),
		row("replies not usable", func(r *Report) string { return agentCount(r.Agent.Unparsed, r) }),
		row("actions refused", func(r *Report) string { return agentCount(r.Agent.Refused, r) }),
		row("tokens per episode (in/out)", func(r *Report) string {
			return fmt.Sprintf("%.0f / %.0f", r.Means.InputTokens, r.Means.OutputTokens)
		}),
		row("cost (per episode / total)", func(r *Report) string {
			return fmt.Sprintf("$%.4f / $%.4f", r.Means.Cost, r.Means.TotalCost)
		}),
	)
	if slices.ContainsFunc(rs, func(r *Report) bool { return r.Means.JudgeInputTokens+r.Means.JudgeOutputTokens > 0 }) {
		rows = append(rows,
			row("judge tokens, total (in/out)", func(r *Report) string {
				return fmt.Sprintf("%d / %d", r.Means.JudgeInputTokens, r.Means.JudgeOutputTokens)
			}),
			row("judge cost, total", func(r *Report) string { return fmt.Sprintf("$%.4f", r.Means.JudgeCost) }))
	}
	if md {
		fmt.Fprintln(w, "## Proctor report")
	} else {
		fmt.Fprintln(w, "Proctor report")
	}
	table("Summary", header, rows)
	if note := differentTasks(rs); note != "" {
		if md {
			fmt.Fprintf(w, "\n> %s\n", note)
		} else {
			fmt.Fprintf(w, "\nNote: %s\n", note)
		}
	}
	for _, d := range score.Dimensions {
		keys := map[string]bool{}
		for _, r := range rs {
			for _, g := range r.Breakdowns[d] {
				keys[g.Key] = true
			}
		}
		var order []string
		for k := range keys {
			order = append(order, k)
		}
		sort.Slice(order, func(i, j int) bool { return score.Before(d, order[i], order[j]) })
		if d == score.ByInterface && len(order) == 1 && order[0] == "" {
			continue // no task names its interface (runs made before results kept it)
		}
		var brows [][]string
		for _, k := range order {
			brows = append(brows, row(orDash(k), func(r *Report) string {
				for _, g := range r.Breakdowns[d] {
					if g.Key == k {
						return passedOf(g.Summary, pct)
					}
				}
				return "-"
			}))
		}
		table("By "+string(d), append([]string{string(d)}, header[1:]...), brows)
	}
	writeByDomain(rs, pct, table)
	writeStats(w, rs, table)
	writePersonas(rs, pct, table)
	writeMilestones(rs, pct, table)
	writeCC(rs, header, row, table)
	writeControls(rs, table)
	writeTrust(rs, table)
	writeSideEffects(rs, md, table)
	writeProblems(w, rs, md, table)
	for _, r := range rs {
		if len(r.Lost) == 0 {
			continue
		}
		var lrows [][]string
		for _, l := range r.Lost {
			lrows = append(lrows, []string{l.Name, l.At.Format("15:04:05"), strings.Join(strings.Fields(l.Reason), " ")})
		}
		table(fmt.Sprintf("Lost environments (%s): %d", r.Run.ID, len(r.Lost)), []string{"environment", "at", "reason"}, lrows)
	}
	for _, r := range rs {
		j := r.Rejudged
		if j == nil {
			continue
		}
		title := fmt.Sprintf("Re-judged: %d flipped (%s, %d episodes, %s)", len(j.Flipped), r.Run.ID, j.Episodes, j.At.Format("2006-01-02 15:04 MST"))
		var frows [][]string
		for _, f := range j.Flipped {
			reason := strings.Join(strings.Fields(f.Reason), " ")
			if md {
				reason = strings.ReplaceAll(reason, "|", `\|`)
			}
			frows = append(frows, []string{f.Task, fmt.Sprint(f.Repeat), f.OldOutcome + " -> " + f.Outcome, reason})
		}
		if len(frows) == 0 {
			if md {
				fmt.Fprintf(w, "\n### %s\n", title)
			} else {
				fmt.Fprintf(w, "\n%s\n", title)
			}
			continue
		}
		table(title, []string{"task", "repeat", "old -> new", "reason"}, frows)
	}
	return nil
}

// rate is a rate or mean of a summary as written, or "n/a" when nothing
// was decided (every episode an infrastructure error).
// agentCount is a count of the agent's problems, with the episodes that
// had any.
func agentCount(n int, r *Report) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (in %d of %d episodes)", n, r.Agent.Episodes, r.Summary.N)
}

func rate(s score.Summary, v string) string {
	if !s.HasRates() {
		return "n/a"
	}
	return v
}

// passedOf is "passed/decided rate", with the errors left out beside it.
func passedOf(s score.Summary, pct func(float64) string) string {
	out := fmt.Sprintf("%d/%d %s", s.Passed, s.Decided, rate(s, pct(s.SuccessRate)))
	if s.Errors > 0 {
		out += fmt.Sprintf(" +%d error", s.Errors)
		if s.Errors > 1 {
			out += "s"
		}
	}
	if s.SucceededWithSideEffects > 0 {
		out += fmt.Sprintf(" (%d with side effects)", s.SucceededWithSideEffects)
	}
	return out
}

// taskSet is the tasks of a run's episodes.
func taskSet(r *Report) map[string]bool {
	set := map[string]bool{}
	for _, res := range r.Results {
		set[res.Task] = true
	}
	return set
}

// differentTasks says so when reports side by side hold different tasks,
// whose rates then compare different sets; "" when they hold the same.
func differentTasks(rs []*Report) string {
	if len(rs) < 2 {
		return ""
	}
	sets := make([]map[string]bool, len(rs))
	same := true
	for i, r := range rs {
		sets[i] = taskSet(r)
		if i > 0 && !maps.Equal(sets[i], sets[0]) {
			same = false
		}
	}
	if same {
		return ""
	}
	common := 0
	for t := range sets[0] {
		in := true
		for _, s := range sets[1:] {
			in = in && s[t]
		}
		if in {
			common++
		}
	}
	var counts []string
	for i, r := range rs {
		counts = append(counts, fmt.Sprintf("%s %d", r.Run.ID, len(sets[i])))
	}
	return fmt.Sprintf("the runs hold different tasks (%s; %d in common), so their rates compare different sets", strings.Join(counts, ", "), common)
}

// tabler renders tables as text or as Markdown.
func tabler(w io.Writer, md bool) func(title string, header []string, rows [][]string) {
	return func(title string, header []string, rows [][]string) {
		if md {
			fmt.Fprintf(w, "\n### %s\n\n| %s |\n|%s\n", title, strings.Join(header, " | "), strings.Repeat("---|", len(header)))
			for _, r := range rows {
				fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
			}
			return
		}
		fmt.Fprintf(w, "\n%s\n", title)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		tw.Flush()
	}
}

// WriteJudges renders only the judges' agreement and spending, as text
// or Markdown.
func WriteJudges(w io.Writer, rs []*Report, md bool) {
	writeControls(rs, tabler(w, md))
	writeTrust(rs, tabler(w, md))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Environments names the kinds of environment the run's episodes ran in
// (x11, browser, vnc), so that runs of one suite in the browser and on a
// desktop can be told apart side by side; "-" for episodes that did not
// record it.
func (r *Report) Environments() string {
	seen := map[string]bool{}
	var out []string
	for _, res := range r.Results {
		k := res.Env
		if k == "" {
			k = "-"
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

// writePersonas writes SCUBA's metrics per persona, a row for each
// persona of each run, where any run's tasks name personas.
func writePersonas(rs []*Report, pct func(float64) string, table func(string, []string, [][]string)) {
	var rows [][]string
	for _, r := range rs {
		for _, p := range r.Personas {
			rows = append(rows, []string{p.Name, r.Run.ID, fmt.Sprint(p.Summary.N),
				passedOf(p.Summary, pct), rate(p.Summary, fmt.Sprintf("%.3f", p.Summary.MilestoneAvg)), p.Means.Duration.Round(10 * time.Millisecond).String(),
				fmt.Sprintf("%.1f", p.Means.Steps), fmt.Sprintf("%.0f / %.0f", p.Means.InputTokens, p.Means.OutputTokens),
				fmt.Sprintf("$%.4f / $%.4f", p.Means.Cost, p.Means.TotalCost)})
		}
	}
	if len(rows) == 0 {
		return
	}
	table("By persona", []string{"persona", "run", "episodes", "success", "milestone score", "time per episode", "steps per episode",
		"tokens per episode (in/out)", "cost (per episode / total)"}, rows)
}

// writeByDomain writes each run's success by domain (a column each, and
// overall) of each level, kind, difficulty and interface: ScienceBoard's
// layout, for runs of several domains.
func writeByDomain(rs []*Report, pct func(float64) string, table func(string, []string, [][]string)) {
	for _, r := range rs {
		t := r.ByDomain
		if t == nil {
			continue
		}
		header := []string{""}
		for _, d := range t.Domains {
			header = append(header, orDash(d))
		}
		header = append(header, "overall")
		var rows [][]string
		for _, row := range append(slices.Clone(t.Rows), t.Total) {
			cells := []string{orDash(row.Key)}
			for _, c := range row.Cells {
				if c.N == 0 {
					cells = append(cells, "-") // nothing of the row in the domain
					continue
				}
				cells = append(cells, passedOf(c, pct))
			}
			rows = append(rows, append(cells, passedOf(row.Overall, pct)))
		}
		table(fmt.Sprintf("By domain (columns) and level, kind, difficulty, interface (%s)", r.Run.ID), header, rows)
	}
}
