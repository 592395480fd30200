package viewer

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agreement"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// boardRow is one run on the leaderboard.
type boardRow struct {
	ID, Agent, Model, Obs, Harness string
	Started                        time.Time
	N                              int
	Weighted, Success, Milestone   float64
	Uncompleted, EarlyStop         float64
	Duration                       time.Duration // mean per episode, without the reset and setup
	Setup                          time.Duration // mean reset and setup per episode
	Tokens                         float64       // mean per episode, input and output
	Cost                           float64       // mean per episode
	TotalCost                      float64
	Groups                         map[string]string
}

func rowOf(r *run, dims []score.Dimension) boardRow {
	rep := r.Report
	s := rep.Summary
	share := func(o check.Outcome) float64 {
		if s.N == 0 {
			return 0
		}
		return float64(s.Outcomes[o]) / float64(s.N)
	}
	row := boardRow{ID: r.ID, Agent: rep.Run.Agent, Model: rep.Run.Model, Obs: rep.Run.ObsMode, Harness: rep.Run.Harness,
		Started: rep.Run.Started, N: s.N, Weighted: s.Weighted, Success: s.SuccessRate, Milestone: s.MilestoneAvg,
		Uncompleted: share(check.Uncompleted), EarlyStop: share(check.EarlyStopped), Duration: rep.Means.Duration,
		Setup: rep.Means.Setup, Tokens: rep.Means.InputTokens + rep.Means.OutputTokens, Cost: rep.Means.Cost,
		TotalCost: rep.Means.TotalCost, Groups: map[string]string{}}
	for _, d := range dims {
		for _, g := range rep.Breakdowns[d] {
			row.Groups[groupLabel(dims, d, g.Key)] = fmt.Sprintf("%d/%d · %.0f%%", g.Summary.Passed, g.Summary.N, 100*g.Summary.SuccessRate)
		}
	}
	return row
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
	var cols []column
	for _, c := range [][3]string{{"agent", "Agent / model", ""}, {"date", "Date", ""}, {"tasks", "Eps.", "episodes"},
		{"weighted", "Weighted", "weighted score"}, {"success", "Success", "success rate"}, {"milestone", "Miles.", "milestones reached, mean share"},
		{"uncompleted", "Uncompl.", "uncompleted: the budget or wall time ran out"}, {"early", "Early", "early stopped: repeated actions"},
		{"time", "Time / ep.", "mean time per episode, without the reset and setup"}, {"tokens", "Tokens / ep.", "mean tokens per episode, input and output"},
		{"cost", "Cost / ep.", "mean cost per episode (the run page has the total)"}} {
		v := url.Values{"sort": {c[0]}, "by": {by}, "q": {q.Get("q")}}
		mark := ""
		if c[0] == sortKey {
			if desc {
				v.Set("desc", "0")
				mark = "▼"
			} else {
				mark = "▲"
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
		"Query": q.Get("q"), "All": len(runs), "ClearURL": "/?" + clear.Encode(), "Sort": sortKey, "Desc": desc, "Root": s.Root,
		"CostPlot": s.plot("cost", shown, costPlot), "TimePlot": s.plot("time", shown, timePlot), "LevelPlot": s.plot("level", shown, levelPlot),
	})
}

// sortedGroups orders the breakdown columns: dimension by dimension,
// levels from paper to gold, other keys by name.
func sortedGroups(set map[string]bool, dims []score.Dimension) []string {
	var out []string
	for _, d := range dims {
		prefix := groupLabel(dims, d, "")
		var keys []string
		for g := range set {
			if strings.HasPrefix(g, prefix) {
				keys = append(keys, strings.TrimPrefix(g, prefix))
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			if d == score.ByLevel && task.LevelRank(keys[i]) != task.LevelRank(keys[j]) {
				return task.LevelRank(keys[i]) < task.LevelRank(keys[j])
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			out = append(out, prefix+k)
		}
	}
	return out
}

// key names an episode.
func key(task string, repeat int) string { return task + "#" + strconv.Itoa(repeat) }

// compare shows the chosen runs' outcomes task by task, marking the tasks
// whose outcome flipped.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	ids := r.URL.Query()["run"]
	if len(ids) < 2 {
		s.fail(w, fmt.Errorf("%w: pick at least two runs to compare", errBadRequest))
		return
	}
	var runs []*run
	for _, id := range ids {
		run, err := s.find(id)
		if err != nil {
			s.fail(w, fmt.Errorf("run %q: %w", id, err))
			return
		}
		runs = append(runs, run)
	}
	lines, apart, rates := compareRuns(runs)
	onlyFlipped := r.URL.Query().Get("flipped") == "1"
	flipped := 0
	var shown []compareLine
	for _, l := range lines {
		if l.Flipped {
			flipped++
		}
		if onlyFlipped && !l.Flipped {
			continue
		}
		shown = append(shown, l)
	}
	v := r.URL.Query()
	v.Set("flipped", "1")
	s.render(w, http.StatusOK, "compare", map[string]any{
		"Title": "Compare runs", "Runs": runs, "Rates": rates, "Lines": shown, "Flipped": flipped, "Total": len(lines),
		"Apart": apart, "OnlyFlipped": onlyFlipped, "FlippedURL": "/compare?" + v.Encode(),
	})
}

// compareCell is one run's outcome of an episode; URL is empty where the
// run did not attempt it.
type compareCell struct {
	Outcome, URL string
}

// compareLine is an episode across the compared runs.
type compareLine struct {
	Episode string
	Cells   []compareCell
	Flipped bool
	// Side opens the episode of every compared run side by side.
	Side string
}

// compareGroup is the episodes that only some of the compared runs
// attempted: those runs, and the episodes' tasks.
type compareGroup struct {
	Runs  []string
	Tasks []string
	Lines []compareLine
}

// compareRate is a run's success over the episodes every compared run
// attempted.
type compareRate struct {
	Passed, N int
}

func (c compareRate) Rate() float64 {
	if c.N == 0 {
		return 0
	}
	return float64(c.Passed) / float64(c.N)
}

// compareRuns lines the runs' episodes up: the episodes every run
// attempted (flipped when their outcomes differ between success and not),
// with each run's success over them, and apart, the episodes only some
// runs attempted, grouped by those runs.
func compareRuns(runs []*run) (shared []compareLine, apart []compareGroup, rates []compareRate) {
	byEp := map[string]*compareLine{}
	present := map[string][]bool{}
	taskOf := map[string]string{}
	repeatOf := map[string]int{}
	var order []string
	for i, run := range runs {
		for _, res := range run.Report.Results {
			k := key(res.Task, res.Repeat)
			l := byEp[k]
			if l == nil {
				l = &compareLine{Episode: res.Task, Cells: make([]compareCell, len(runs))}
				if res.Repeat > 0 {
					l.Episode += fmt.Sprintf(" (repeat %d)", res.Repeat)
				}
				byEp[k] = l
				present[k] = make([]bool, len(runs))
				taskOf[k], repeatOf[k] = res.Task, res.Repeat
				order = append(order, k)
			}
			l.Cells[i] = compareCell{Outcome: res.Outcome, URL: episodeURL(run.ID, res.Task, res.Repeat)}
			present[k][i] = true
		}
	}
	sort.Strings(order)
	rates = make([]compareRate, len(runs))
	groups := map[string]*compareGroup{}
	var groupOrder []string
	for _, k := range order {
		l := byEp[k]
		var in []string
		for i, ok := range present[k] {
			if ok {
				in = append(in, runs[i].ID)
			}
		}
		if len(in) < len(runs) {
			gk := strings.Join(in, "\x00")
			g := groups[gk]
			if g == nil {
				g = &compareGroup{Runs: in}
				groups[gk] = g
				groupOrder = append(groupOrder, gk)
			}
			if n := len(g.Tasks); n == 0 || g.Tasks[n-1] != taskOf[k] {
				g.Tasks = append(g.Tasks, taskOf[k])
			}
			g.Lines = append(g.Lines, *l)
			continue
		}
		pass := map[bool]bool{}
		for i, c := range l.Cells {
			ok := c.Outcome == string(check.Success)
			pass[ok] = true
			rates[i].N++
			if ok {
				rates[i].Passed++
			}
		}
		l.Flipped = len(pass) > 1
		v := url.Values{"task": {taskOf[k]}, "repeat": {strconv.Itoa(repeatOf[k])}}
		for _, run := range runs {
			v.Add("run", run.ID)
		}
		l.Side = "/side?" + v.Encode()
		shared = append(shared, *l)
	}
	sort.Strings(groupOrder)
	for _, gk := range groupOrder {
		apart = append(apart, *groups[gk])
	}
	return shared, apart, rates
}

func episodeURL(runID, task string, repeat int) string {
	return "/run/" + url.PathEscape(runID) + "/episode?" + url.Values{"task": {task}, "repeat": {strconv.Itoa(repeat)}}.Encode()
}

// reviewAgreement counts reviewed episodes and those where the reviewer and the
// checks disagree (OSUniverse's disagreement rate).
type reviewAgreement struct {
	Reviewed, Disagree int
	// The disagreements split: the checks passed and the reviewer failed
	// the episode, and the reverse.
	ChecksPassed, ChecksFailed int
	// Categories count the reviews' failure categories, in
	// store.Categories' order (those given at least once).
	Categories []categoryCount
}

type categoryCount struct {
	store.Category
	N int
}

func (a reviewAgreement) Rate() float64 {
	if a.Reviewed == 0 {
		return 0
	}
	return float64(a.Disagree) / float64(a.Reviewed)
}

func agree(r *run) reviewAgreement {
	var a reviewAgreement
	counts := map[string]int{}
	for _, res := range r.Report.Results {
		rv, ok := r.Reviews[store.ReviewKey{Task: res.Task, Repeat: res.Repeat}]
		if !ok {
			continue
		}
		a.Reviewed++
		passed := res.Outcome == string(check.Success)
		if rv.Pass != passed {
			a.Disagree++
			if passed {
				a.ChecksPassed++
			} else {
				a.ChecksFailed++
			}
		}
		if rv.Category != "" {
			counts[rv.Category]++
		}
	}
	for _, c := range store.Categories {
		if counts[c.Key] > 0 {
			a.Categories = append(a.Categories, categoryCount{c, counts[c.Key]})
		}
	}
	return a
}

// episodeRow is one episode on a run page.
type episodeRow struct {
	store.Result
	URL      string
	Review   *store.Review
	Disagree bool
}

// episodeSorts are the run page's sortable columns, each with its order.
var episodeSorts = map[string]func(a, b store.Result) int{
	"task":  func(a, b store.Result) int { return cmpBoth(strings.Compare(a.Task, b.Task), a.Repeat-b.Repeat) },
	"level": func(a, b store.Result) int { return cmpFloat(a.Weight, b.Weight) },
	"app": func(a, b store.Result) int {
		return strings.Compare(strings.Join(a.Apps, ","), strings.Join(b.Apps, ","))
	},
	"outcome":   func(a, b store.Result) int { return strings.Compare(a.Outcome, b.Outcome) },
	"milestone": func(a, b store.Result) int { return cmpFloat(a.Milestone, b.Milestone) },
	"steps":     func(a, b store.Result) int { return a.Steps - b.Steps },
	"time":      func(a, b store.Result) int { return cmpFloat(float64(a.Duration), float64(b.Duration)) },
	"tokens": func(a, b store.Result) int {
		return (a.InputTokens + a.OutputTokens) - (b.InputTokens + b.OutputTokens)
	},
	"cost":   func(a, b store.Result) int { return cmpFloat(a.Cost, b.Cost) },
	"reason": func(a, b store.Result) int { return strings.Compare(a.Reason, b.Reason) },
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpBoth(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// runQuery is what the run page shows: its filters, search and order, as
// the URL's query gives them.
type runQuery struct {
	Show, Text, Outcome, Level, App, Sort string
	Desc, InSteps                         bool
}

func parseRunQuery(q url.Values) (runQuery, error) {
	rq := runQuery{Show: q.Get("show"), Text: strings.TrimSpace(q.Get("q")), Outcome: q.Get("outcome"), Level: q.Get("level"),
		App: q.Get("app"), Sort: q.Get("sort"), Desc: q.Get("desc") == "1", InSteps: q.Get("in") == "steps"}
	if rq.Sort != "" && episodeSorts[rq.Sort] == nil {
		return rq, fmt.Errorf("%w: unknown sort %q (task, level, app, outcome, milestone, steps, time, tokens, cost, reason)", errBadRequest, rq.Sort)
	}
	if rq.Outcome != "" && !slices.Contains(check.Outcomes, check.Outcome(rq.Outcome)) {
		return rq, fmt.Errorf("%w: unknown outcome %q", errBadRequest, rq.Outcome)
	}
	return rq, nil
}

// matches reports whether an episode passes the query's outcome, level
// and app filters and holds its text (in the task, instruction, reason or
// answer, or, where inSteps has the episode, in its steps).
func (rq runQuery) matches(res store.Result, inSteps map[store.ReviewKey]bool) bool {
	if rq.Outcome != "" && res.Outcome != rq.Outcome || rq.Level != "" && res.Level != rq.Level ||
		rq.App != "" && !slices.Contains(res.Apps, rq.App) {
		return false
	}
	text := strings.ToLower(rq.Text)
	return text == "" || strings.Contains(strings.ToLower(res.Task+" "+res.Instruction+" "+res.Reason+" "+res.Answer), text) ||
		inSteps[store.ReviewKey{Task: res.Task, Repeat: res.Repeat}]
}

// values is the query in a URL, with page set when above 1.
func (rq runQuery) values(page int) url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("show", rq.Show)
	set("q", rq.Text)
	set("outcome", rq.Outcome)
	set("level", rq.Level)
	set("app", rq.App)
	set("sort", rq.Sort)
	if rq.Desc {
		v.Set("desc", "1")
	}
	if rq.InSteps {
		v.Set("in", "steps")
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	return v
}

// configRow is one setting of a run's configuration.
type configRow struct{ Key, Value string }

// runConfig lists a run's configuration as it recorded it: what tells
// runs apart (suite and prompt hashes, resolution, parallel places,
// repeats) and every option it was given (model, output format,
// sampling, history, budgets, environments, judge), flattened to
// dotted keys in order.
func runConfig(r store.Run) []configRow {
	rows := []configRow{{"suite hash", r.SuiteHash}, {"prompt hash", r.PromptHash}, {"resolution", r.Resolution},
		{"parallel", strconv.Itoa(r.Parallel)}, {"repeat", strconv.Itoa(r.Repeat)}}
	var cfg any
	if len(r.Config) > 0 && json.Unmarshal(r.Config, &cfg) == nil {
		var walk func(prefix string, v any)
		walk = func(prefix string, v any) {
			switch x := v.(type) {
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(x)) {
					key := k
					if prefix != "" {
						key = prefix + "." + k
					}
					walk(key, x[k])
				}
			case nil:
			default:
				b, _ := json.Marshal(x)
				rows = append(rows, configRow{prefix, strings.Trim(string(b), `"`)})
			}
		}
		walk("", cfg)
	}
	var out []configRow
	for _, c := range rows {
		if c.Value != "" && c.Value != "0" {
			out = append(out, c)
		}
	}
	return out
}

// sortColumn is a header of the episodes' table: a link that sorts by it,
// the other way round when it is the order already.
type sortColumn struct {
	Label, URL, Mark string
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	rn, err := s.find(r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	q := r.URL.Query()
	rq, err := parseRunQuery(q)
	if err != nil {
		s.fail(w, err)
		return
	}
	text := strings.ToLower(rq.Text)
	var inSteps map[store.ReviewKey]bool
	if rq.InSteps && text != "" {
		db, err := store.Open(rn.Dir)
		if err != nil {
			s.fail(w, err)
			return
		}
		inSteps, err = db.StepsMatching(text)
		db.Close()
		if err != nil {
			s.fail(w, err)
			return
		}
	}
	levels, apps := map[string]bool{}, map[string]bool{}
	var rows []episodeRow
	for _, res := range rn.Report.Results {
		levels[res.Level] = true
		for _, a := range res.Apps {
			apps[a] = true
		}
		row := episodeRow{Result: res, URL: episodeURL(rn.ID, res.Task, res.Repeat)}
		if rv, ok := rn.Reviews[store.ReviewKey{Task: res.Task, Repeat: res.Repeat}]; ok {
			row.Review = &rv
			row.Disagree = rv.Pass != (res.Outcome == string(check.Success))
		}
		switch rq.Show {
		case "unreviewed":
			if row.Review != nil {
				continue
			}
		case "disagree":
			if !row.Disagree {
				continue
			}
		case "failed":
			if res.Outcome == string(check.Success) {
				continue
			}
		}
		if !rq.matches(res, inSteps) {
			continue
		}
		rows = append(rows, row)
	}
	if by := episodeSorts[rq.Sort]; by != nil {
		slices.SortStableFunc(rows, func(a, b episodeRow) int {
			if rq.Desc {
				return by(b.Result, a.Result)
			}
			return by(a.Result, b.Result)
		})
	}
	page, _ := strconv.Atoi(q.Get("page"))
	size := s.pageSize()
	pages := max(1, (len(rows)+size-1)/size)
	page = min(max(page, 1), pages)
	from, to := (page-1)*size, min(page*size, len(rows))
	base := "/run/" + url.PathEscape(rn.ID) + "?"
	var prev, next string
	if page > 1 {
		prev = base + rq.values(page-1).Encode()
	}
	if page < pages {
		next = base + rq.values(page+1).Encode()
	}
	var filters []column
	for _, f := range [][2]string{{"", "all"}, {"unreviewed", "unreviewed"}, {"disagree", "disagreeing"}, {"failed", "not successful"}} {
		fq := rq
		fq.Show = f[0]
		mark := ""
		if f[0] == rq.Show {
			mark = "current"
		}
		filters = append(filters, column{Key: f[0], Label: f[1], URL: base + fq.values(1).Encode(), Mark: mark})
	}
	var sorts []sortColumn
	for _, c := range [][2]string{{"task", "Task"}, {"level", "Level"}, {"app", "App"}, {"outcome", "Outcome"}, {"reason", "Reason"},
		{"milestone", "Milestones"}, {"steps", "Steps"}, {"time", "Time"}, {"tokens", "Tokens"}, {"cost", "Cost"}} {
		sq := rq
		sq.Sort, sq.Desc = c[0], false
		mark := ""
		if rq.Sort == c[0] {
			sq.Desc = !rq.Desc
			mark = "sorted-up"
			if rq.Desc {
				mark = "sorted-down"
			}
		}
		sorts = append(sorts, sortColumn{Label: c[1], URL: base + sq.values(1).Encode(), Mark: mark})
	}
	var outcomes []string
	for _, o := range check.Outcomes {
		outcomes = append(outcomes, string(o))
	}
	s.render(w, http.StatusOK, "run", map[string]any{
		"Title": "Run " + rn.ID, "Run": rn, "Row": rowOf(rn, []score.Dimension{score.ByLevel}), "Rows": rows[from:to], "Matching": len(rows),
		"Page": page, "Pages": pages, "Prev": prev, "Next": next, "Agreement": agree(rn), "Filters": filters,
		"Show": rq.Show, "Query": rq.Text, "LevelPlot": s.plot("level", []*run{rn}, levelPlot), "Judges": judgeRows(rn),
		"RQ": rq, "Sorts": sorts, "Config": runConfig(rn.Report.Run), "Outcomes": outcomes, "Levels": slices.Sorted(maps.Keys(levels)), "Apps": slices.Sorted(maps.Keys(apps)),
	})
}

// judgeRow is one comparison of a judge with a reference, as the run
// page's judges table shows it.
type judgeRow struct {
	Judge, Evidence, Against string
	Stats                    agreement.Stats
	Disagree                 []judgeDisagreement
}

// judgeDisagreement is an episode a judge and a reference rate apart.
type judgeDisagreement struct {
	Task        string
	Repeat      int
	URL         string
	Judge, Them string
}

// judgeRows lays out the run's judge trust: each judge against people and
// against the rules, over all its checks, then per evidence kind.
func judgeRows(rn *run) []judgeRow {
	var out []judgeRow
	for _, j := range rn.Report.Judges {
		add := func(evidence, against string, st agreement.Stats) {
			row := judgeRow{Judge: j.Judge, Evidence: evidence, Against: against, Stats: st}
			for _, d := range st.Disagree {
				row.Disagree = append(row.Disagree, judgeDisagreement{Task: d.Task, Repeat: d.Repeat,
					URL: episodeURL(rn.ID, d.Task, d.Repeat), Judge: passWord(d.A), Them: passWord(d.B)})
			}
			out = append(out, row)
		}
		add("all", "people", j.VsHuman)
		add("all", "rules", j.VsRules)
		for _, e := range j.ByEvidence {
			add(e.Evidence, "people", e.VsHuman)
			add(e.Evidence, "rules", e.VsRules)
		}
	}
	return out
}

func passWord(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

// stepView is one step of a trajectory as the page shows it.
type stepView struct {
	store.Step
	Shot     string
	SVG      template.HTML
	Marks    int
	Actions  string
	Elements []string
	Outputs  []string
	Width    int
	Height   int
	// TreeLines counts the lines of the accessibility tree the agent saw.
	TreeLines int
	// Icons sum up the step's actions for the filmstrip; ThumbHeight is
	// its thumbnail's height at 96 pixels wide.
	Icons       string
	ThumbHeight int
	// Prompt is what the model was sent, where the agent recorded it.
	Prompt []promptMessage
	// MarkTable is the set-of-mark table shown with the screenshot.
	MarkTable []somMark
}

// somMark is a numbered element of a set-of-mark screenshot, as a step's
// record keeps it (observe.Mark).
type somMark struct {
	Tag  int    `json:"tag"`
	App  string `json:"app,omitempty"`
	Role string `json:"role"`
	Name string `json:"name,omitempty"`
	Text string `json:"text,omitempty"`
	Box  struct {
		X int `json:"x"`
		Y int `json:"y"`
		W int `json:"w"`
		H int `json:"h"`
	} `json:"box"`
}

// actionIcons are the filmstrip's signs of the kinds of actions.
var actionIcons = map[action.Kind]string{
	action.Click: "🖱", action.Drag: "↔", action.DragRel: "↔", action.Swipe: "↔", action.Scroll: "↕", action.Type: "⌨",
	action.Key: "⌨", action.Hotkey: "⌨", action.Select: "☰", action.Navigate: "🌐", action.Back: "←", action.Done: "✓",
	action.Fail: "✗", action.Answer: "💬", action.Wait: "⏳", action.Code: "$", action.API: "ƒ", action.Move: "➚",
	action.ScrollToText: "↕", action.Plan: "✎", action.Reflect: "✎",
}

// icons sums up a step's actions, one sign each ("·" for other kinds),
// "?" for a reply that could not be parsed.
func icons(st store.Step) string {
	var acts []action.Action
	if len(st.Actions) == 0 || json.Unmarshal(st.Actions, &acts) != nil || len(acts) == 0 {
		if st.ParseError != "" {
			return "?"
		}
		return ""
	}
	var b strings.Builder
	for _, a := range acts {
		if ic, ok := actionIcons[a.Kind]; ok {
			b.WriteString(ic)
		} else {
			b.WriteString("·")
		}
	}
	return b.String()
}

// episodeData reads an episode, its steps and, when history is set, all
// the reviews it has had.
func (s *Server) episodeData(r *http.Request, history bool) (*run, store.Result, []store.Step, []store.Review, error) {
	run, err := s.find(r.PathValue("id"))
	if err != nil {
		return nil, store.Result{}, nil, nil, err
	}
	res, err := findEpisode(run, r.URL.Query().Get("task"), r.URL.Query().Get("repeat"))
	if err != nil {
		return nil, res, nil, nil, err
	}
	steps, reviews, err := s.episodeSteps(run, res, history)
	return run, res, steps, reviews, err
}

// episodeSteps reads an episode's steps and, when history is set, all
// the reviews it has had.
func (s *Server) episodeSteps(run *run, res store.Result, history bool) ([]store.Step, []store.Review, error) {
	db, err := store.Open(run.Dir)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	steps, err := db.Steps(res.Task, res.Repeat)
	if err != nil || !history {
		return steps, nil, err
	}
	reviews, err := db.ReviewHistory(res.Task, res.Repeat)
	return steps, reviews, err
}

// findEpisode finds a run's episode by task and repeat (as given in a
// query; the task's first repeat when empty). A repeat that is not a
// number is a bad request, one the task does not have is not found; both
// errors name the task's repeats.
func findEpisode(run *run, task, repeatText string) (store.Result, error) {
	var repeats []string
	var first *store.Result
	for i, x := range run.Report.Results {
		if x.Task != task {
			continue
		}
		if first == nil || x.Repeat < first.Repeat {
			first = &run.Report.Results[i]
		}
		repeats = append(repeats, strconv.Itoa(x.Repeat))
		if strconv.Itoa(x.Repeat) == repeatText {
			return x, nil
		}
	}
	if first == nil {
		return store.Result{}, fmt.Errorf("episode %q of run %s: %w", task, run.ID, errNotFound)
	}
	if repeatText == "" {
		return *first, nil
	}
	valid := fmt.Sprintf("the valid repeats of task %q are %s", task, strings.Join(repeats, ", "))
	if _, err := strconv.Atoi(repeatText); err != nil {
		return store.Result{}, fmt.Errorf("%w: repeat %q is not a number: %s", errBadRequest, repeatText, valid)
	}
	return store.Result{}, fmt.Errorf("repeat %s: %s: %w", repeatText, valid, errNotFound)
}

func (s *Server) episode(w http.ResponseWriter, r *http.Request) {
	run, res, steps, reviews, err := s.episodeData(r, true)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.renderEpisode(w, http.StatusOK, run, res, steps, reviews, reviewForm{})
}

// reviewForm is what a reviewer typed in a review that was refused,
// given back in the form with the reason (never the token).
type reviewForm struct {
	Error                             string
	Verdict, Reviewer, Note, Category string
	BadToken                          bool
}

// renderEpisode writes an episode's page.
func (s *Server) renderEpisode(w http.ResponseWriter, code int, run *run, res store.Result, steps []store.Step, reviews []store.Review, form reviewForm) {
	var v check.Verdict
	if len(res.Verdict) > 0 {
		_ = json.Unmarshal(res.Verdict, &v)
	}
	width, height := screenSize(run.Report.Run.Resolution)
	views := make([]stepView, len(steps))
	for i, st := range steps {
		sv := stepView{Step: st, Width: width, Height: height, Icons: icons(st), ThumbHeight: max(1, 96*height/max(width, 1))}
		if len(st.Prompt) > 0 {
			_ = json.Unmarshal(st.Prompt, &sv.Prompt)
		}
		if len(st.Marks) > 0 {
			_ = json.Unmarshal(st.Marks, &sv.MarkTable)
		}
		if st.Shot != "" {
			sv.Shot = "/run/" + url.PathEscape(run.ID) + "/shot/" + url.PathEscape(st.Shot)
		}
		var marks []mark
		marks, sv.Elements, sv.Outputs = overlay(st, width, height)
		sv.SVG, sv.Marks = overlaySVG(marks, width, height, strconv.Itoa(st.Index)), len(marks)
		sv.Actions = prettyJSON(st.Actions)
		if st.Tree != "" {
			sv.TreeLines = strings.Count(strings.TrimRight(st.Tree, "\n"), "\n") + 1
		}
		views[i] = sv
	}
	var review *store.Review
	if rv, ok := run.Reviews[store.ReviewKey{Task: res.Task, Repeat: res.Repeat}]; ok {
		review = &rv
	}
	zip := url.Values{"task": {res.Task}, "repeat": {strconv.Itoa(res.Repeat)}}
	final := ""
	if res.FinalShot != "" {
		final = "/run/" + url.PathEscape(run.ID) + "/shot/" + url.PathEscape(res.FinalShot)
	}
	s.render(w, code, "episode", map[string]any{
		"FinalShot": final, "Width": width, "Height": height,
		"Title": res.Task, "Run": run, "Result": res, "Verdict": v, "Steps": views, "Review": review, "Earlier": earlier(reviews),
		"Writable": s.Token != "", "Zip": "/run/" + url.PathEscape(run.ID) + "/episode.zip?" + zip.Encode(),
		"GIF":         "/run/" + url.PathEscape(run.ID) + "/episode.gif?" + zip.Encode(),
		"TimingChart": timingChart(steps), "TokenChart": tokenChart(steps), "CostChart": costChart(steps), "ByModel": usageByModel(steps),
		"RunURL": "/run/" + url.PathEscape(run.ID), "Success": res.Outcome == string(check.Success),
		"Form": form, "NextUnreviewed": nextUnreviewed(run, res), "Categories": store.Categories,
	})
}

// nextUnreviewed links to the run's next episode (in the run page's
// order, wrapping around) that has no review; empty when every other
// episode has one.
func nextUnreviewed(run *run, cur store.Result) string {
	rs := run.Report.Results
	at := -1
	for i, x := range rs {
		if x.Task == cur.Task && x.Repeat == cur.Repeat {
			at = i
			break
		}
	}
	for n := 1; n < len(rs); n++ {
		x := rs[(at+n+len(rs))%len(rs)]
		if _, ok := run.Reviews[store.ReviewKey{Task: x.Task, Repeat: x.Repeat}]; !ok {
			return episodeURL(run.ID, x.Task, x.Repeat)
		}
	}
	return ""
}

func prettyJSON(b json.RawMessage) string {
	if len(b) == 0 || string(b) == "null" || string(b) == "[]" {
		return ""
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return string(out)
}

// screenSize reads a WIDTHxHEIGHT resolution, 1920x1080 when unknown.
func screenSize(res string) (int, int) {
	w, h, ok := strings.Cut(res, "x")
	if ok {
		wi, err1 := strconv.Atoi(w)
		hi, err2 := strconv.Atoi(h)
		if err1 == nil && err2 == nil && wi > 0 && hi > 0 {
			return wi, hi
		}
	}
	return 1920, 1080
}

// episodeZip sends the episode as a zip: trajectory.json (the result and
// every step) and each step's screenshot, named by step.
func (s *Server) episodeZip(w http.ResponseWriter, r *http.Request) {
	run, res, steps, _, err := s.episodeData(r, false)
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%d.zip"`, fileName(res.Task), res.Repeat))
	db, err := store.Open(run.Dir)
	if err != nil {
		s.fail(w, err)
		return
	}
	defer db.Close()
	// Each step's screenshot is shots/step-NNN.EXT, and the steps in
	// trajectory.json name those files; every file is dated when the
	// episode finished (the store keeps no time per step).
	when := zipTime(run, res)
	files := make([]string, len(steps))
	named := make([]store.Step, len(steps))
	for i, st := range steps {
		named[i] = st
		if st.Shot != "" {
			ext := filepath.Ext(st.Shot)
			if ext == "" {
				ext = ".png"
			}
			files[i] = fmt.Sprintf("shots/step-%03d%s", st.Index, ext)
			named[i].Shot = files[i]
		}
	}
	zw := zip.NewWriter(w)
	create := func(name string) (io.Writer, error) {
		return zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: when})
	}
	traj, _ := json.MarshalIndent(map[string]any{"run": run.Report.Run, "result": res, "steps": named}, "", "  ")
	f, err := create("trajectory.json")
	if err == nil {
		_, err = f.Write(traj)
	}
	for i, st := range steps {
		if err != nil || files[i] == "" {
			continue
		}
		var b []byte
		if b, err = db.Shot(st.Shot); err != nil {
			break
		}
		var f2 io.Writer
		if f2, err = create(files[i]); err == nil {
			_, err = f2.Write(b)
		}
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		// Headers are sent; the truncated zip is the only signal left.
		fmt.Fprintf(os.Stderr, "proctor view: zip of %s: %v\n", res.Task, err)
	}
}

// promptMessage is a message of what a model was sent, as a step's record
// keeps it (the agents' PromptMessage; the viewer reads records and
// imports no agent).
type promptMessage struct {
	Role   string   `json:"role"`
	Text   string   `json:"text,omitempty"`
	Images []string `json:"images,omitempty"`
}

// modelUsage is what one model of a step spent (the agents' ModelUsage).
type modelUsage struct {
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	Cost         float64 `json:"cost,omitempty"`
}

// usageByModel sums an episode's tokens and cost by model, for agents
// that ask several (a planner and a grounder); nil for one model.
func usageByModel(steps []store.Step) []modelUsage {
	var out []modelUsage
	for _, st := range steps {
		var ms []modelUsage
		if len(st.Models) == 0 || json.Unmarshal(st.Models, &ms) != nil {
			continue
		}
		for _, m := range ms {
			i := slices.IndexFunc(out, func(o modelUsage) bool { return o.Role == m.Role && o.Model == m.Model })
			if i < 0 {
				out = append(out, modelUsage{Role: m.Role, Model: m.Model})
				i = len(out) - 1
			}
			out[i].InputTokens += m.InputTokens
			out[i].OutputTokens += m.OutputTokens
			out[i].Cost += m.Cost
		}
	}
	return out
}

// fileName makes a task id safe as a downloaded file's name.
func fileName(task string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			return c
		}
		return '_'
	}, task)
}

// zipTime dates the files of an episode's zip: when the episode finished,
// else when its run started, else now.
func zipTime(run *run, res store.Result) time.Time {
	switch {
	case !res.Finished.IsZero():
		return res.Finished
	case !run.Report.Run.Started.IsZero():
		return run.Report.Run.Started
	}
	return time.Now()
}

func (s *Server) shot(w http.ResponseWriter, r *http.Request) {
	run, err := s.find(r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	name := r.PathValue("name")
	if !filepath.IsLocal(name) || strings.ContainsAny(name, `/\`) {
		s.fail(w, fmt.Errorf("%w: bad screenshot name", errBadRequest))
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable") // named by content hash
	http.ServeFile(w, r, filepath.Join(run.Dir, store.ShotDir, name))
}

// review records a reviewer's verdict on an episode. A review refused for
// a wrong token or a missing field answers with the episode's page, the
// reason and the form as it was typed, so that the note is not lost.
func (s *Server) review(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		s.fail(w, fmt.Errorf("%w: %v", errBadRequest, err))
		return
	}
	if s.Token == "" {
		s.fail(w, errReadOnly)
		return
	}
	run, err := s.find(r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	task, repeatText := r.PostFormValue("task"), r.PostFormValue("repeat")
	if task == "" || repeatText == "" {
		s.fail(w, fmt.Errorf("%w: a review needs task, repeat, verdict (pass or fail) and reviewer", errBadRequest))
		return
	}
	res, err := findEpisode(run, task, repeatText)
	if err != nil {
		s.fail(w, err)
		return
	}
	verdict := r.PostFormValue("verdict")
	reviewer := strings.TrimSpace(r.PostFormValue("reviewer"))
	note := strings.TrimSpace(r.PostFormValue("note"))
	category := r.PostFormValue("category")
	err = s.authorized(r)
	switch {
	case err != nil:
	case (verdict != "pass" && verdict != "fail") || reviewer == "":
		err = fmt.Errorf("%w: a review needs a verdict (pass or fail) and a reviewer", errBadRequest)
	case !store.ValidCategory(category):
		err = fmt.Errorf("%w: unknown failure category %q", errBadRequest, category)
	}
	if err != nil {
		steps, reviews, err2 := s.episodeSteps(run, res, true)
		if err2 != nil {
			s.fail(w, err2)
			return
		}
		code := statusOf(err)
		form := reviewForm{Error: fmt.Sprintf("%d %s: %v. The review was not recorded; it is kept in the form below.", code, http.StatusText(code), err),
			Verdict: verdict, Reviewer: reviewer, Note: note, Category: category, BadToken: errors.Is(err, errBadToken)}
		s.renderEpisode(w, code, run, res, steps, reviews, form)
		return
	}
	db, err := store.Open(run.Dir)
	if err != nil {
		s.fail(w, err)
		return
	}
	defer db.Close()
	rv := store.Review{Task: res.Task, Repeat: res.Repeat, Pass: verdict == "pass", Category: category, Note: note, Reviewer: reviewer, At: time.Now().UTC()}
	if err := db.SaveReview(rv); err != nil {
		s.fail(w, err)
		return
	}
	http.Redirect(w, r, episodeURL(run.ID, res.Task, res.Repeat)+"#review", http.StatusSeeOther)
}

// earlier drops the current review (the newest) from an episode's review
// history.
func earlier(history []store.Review) []store.Review {
	if len(history) < 2 {
		return nil
	}
	return history[1:]
}
