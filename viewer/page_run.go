package viewer

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/agreement"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/receipt"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/store"
)

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
			case float64:
				if isDuration(prefix) && x == math.Trunc(x) && x != 0 {
					rows = append(rows, configRow{prefix, time.Duration(int64(x)).String()})
					return
				}
				b, _ := json.Marshal(x)
				rows = append(rows, configRow{prefix, string(b)})
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

// durationNames are the configuration's settings that are durations,
// recorded in nanoseconds (Go's time.Duration in JSON): the last part of
// a dotted key, or its end after an underscore.
var durationNames = []string{"timeout", "settle", "backoff", "grace", "wall_time", "delay", "interval"}

// isDuration reports whether a configuration key names a duration.
func isDuration(key string) bool {
	last := key[strings.LastIndex(key, ".")+1:]
	for _, n := range durationNames {
		if last == n || strings.HasSuffix(last, "_"+n) {
			return true
		}
	}
	return false
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
	levels, apps, personas := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var rows []episodeRow
	for _, res := range rn.Report.Results {
		levels[res.Level] = true
		for _, a := range res.Apps {
			apps[a] = true
		}
		if res.Persona != "" {
			personas[res.Persona] = true
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
	// The persona column and filter are there where the run's episodes
	// have personas (a suite of personas' tasks).
	cols := [][2]string{{"task", "Task"}, {"level", "Level"}, {"app", "App"}}
	if len(personas) > 0 {
		cols = append(cols, [2]string{"persona", "Persona"})
	}
	cols = append(cols, [][2]string{{"outcome", "Outcome"}, {"reason", "Reason"},
		{"milestone", "Milestones"}, {"steps", "Steps"}, {"time", "Time"}, {"tokens", "Tokens"}, {"cost", "Cost"}}...)
	var sorts []sortColumn
	for _, c := range cols {
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
	rec, err := runReceipt(rn)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, http.StatusOK, "run", map[string]any{
		"Receipt": rec, "Flaky": flaky(rn.Report.Results),
		"Title": "Run " + rn.ID, "Run": rn, "Row": rowOf(rn, []score.Dimension{score.ByLevel}), "Rows": rows[from:to], "Matching": len(rows),
		"Page": page, "Pages": pages, "Prev": prev, "Next": next, "Agreement": agree(rn), "Filters": filters,
		"Show": rq.Show, "Query": rq.Text, "LevelPlot": s.plot("level", []*run{rn}, levelPlot), "Judges": judgeRows(rn),
		"ScorePlot": s.plot("scores", []*run{rn}, scorePlot), "AppPlot": s.plot("app", []*run{rn}, appPlot),
		"RQ": rq, "Sorts": sorts, "Config": runConfig(rn.Report.Run), "Outcomes": outcomes, "Levels": slices.Sorted(maps.Keys(levels)), "Apps": slices.Sorted(maps.Keys(apps)),
		"Personas": slices.Sorted(maps.Keys(personas)), "Lost": lostRows(rn),
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

// receiptView is a run's receipt as the run page shows it: a line of what
// matters most, and the whole receipt as proctor report --receipt writes
// it. Text is empty for a run made before receipts were kept.
type receiptView struct {
	store.Receipt
	Text string
}

// runReceipt reads the receipt of a run.
func runReceipt(rn *run) (receiptView, error) {
	db, err := store.Open(rn.Dir)
	if err != nil {
		return receiptView{}, err
	}
	defer db.Close()
	r, err := db.Receipt()
	if errors.Is(err, store.ErrNoReceipt) {
		return receiptView{}, nil
	}
	if err != nil {
		return receiptView{}, err
	}
	var b strings.Builder
	if err := receipt.Write(&b, rn.ID, r); err != nil {
		return receiptView{}, err
	}
	return receiptView{Receipt: r, Text: b.String()}, nil
}

// flaky lists the tasks whose decided outcomes were mixed over their
// repeats.
func flaky(rs []store.Result) []string {
	seen := map[string][2]bool{} // success, other
	for _, r := range rs {
		if r.Outcome == string(check.Error) {
			continue
		}
		v := seen[r.Task]
		if r.Outcome == string(check.Success) {
			v[0] = true
		} else {
			v[1] = true
		}
		seen[r.Task] = v
	}
	var out []string
	for t, v := range seen {
		if v[0] && v[1] {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// lostRow is an environment lost from the run's pool, with a link to the
// episode it was running (none in run folders from before it was kept).
type lostRow struct {
	store.Lost
	Episode, URL string
}

func lostRows(rn *run) []lostRow {
	var out []lostRow
	for _, l := range rn.Report.Lost {
		r := lostRow{Lost: l}
		if l.Task != "" {
			r.Episode, r.URL = l.Task, episodeURL(rn.ID, l.Task, l.Repeat)
			if rn.Report.Run.Repeat > 1 {
				r.Episode = fmt.Sprintf("%s (repeat %d)", l.Task, l.Repeat+1)
			}
		}
		out = append(out, r)
	}
	return out
}
