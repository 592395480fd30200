package viewer

import (
	"encoding/json"
	"fmt"
	"html/template"
	"image"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

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

func episodeURL(runID, task string, repeat int) string {
	return "/run/" + url.PathEscape(runID) + "/episode?" + url.Values{"task": {task}, "repeat": {strconv.Itoa(repeat)}}.Encode()
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
	"cost":    func(a, b store.Result) int { return cmpFloat(a.Cost, b.Cost) },
	"reason":  func(a, b store.Result) int { return strings.Compare(a.Reason, b.Reason) },
	"persona": func(a, b store.Result) int { return strings.Compare(a.Persona, b.Persona) },
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
	Show, Text, Outcome, Level, App, Persona, Sort string
	Desc, InSteps                                  bool
}

func parseRunQuery(q url.Values) (runQuery, error) {
	rq := runQuery{Show: q.Get("show"), Text: strings.TrimSpace(q.Get("q")), Outcome: q.Get("outcome"), Level: q.Get("level"),
		App: q.Get("app"), Persona: q.Get("persona"), Sort: q.Get("sort"), Desc: q.Get("desc") == "1", InSteps: q.Get("in") == "steps"}
	if rq.Sort != "" && episodeSorts[rq.Sort] == nil {
		return rq, fmt.Errorf("%w: unknown sort %q (task, level, app, persona, outcome, milestone, steps, time, tokens, cost, reason)", errBadRequest, rq.Sort)
	}
	if rq.Outcome != "" && !slices.Contains(check.Outcomes, check.Outcome(rq.Outcome)) {
		return rq, fmt.Errorf("%w: unknown outcome %q", errBadRequest, rq.Outcome)
	}
	return rq, nil
}

// matches reports whether an episode passes the query's outcome, level,
// app and persona filters and holds its text (in the task, instruction, reason or
// answer, or, where inSteps has the episode, in its steps).
func (rq runQuery) matches(res store.Result, inSteps map[store.ReviewKey]bool) bool {
	if rq.Outcome != "" && res.Outcome != rq.Outcome || rq.Level != "" && res.Level != rq.Level ||
		rq.App != "" && !slices.Contains(res.Apps, rq.App) || rq.Persona != "" && res.Persona != rq.Persona {
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
	set("persona", rq.Persona)
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

// icons sums up a step's actions, an icon each named by the action's
// kind, "?" for a reply that could not be parsed.
func icons(st store.Turn) template.HTML {
	var acts []action.Action
	if len(st.Actions) == 0 || json.Unmarshal(st.Actions, &acts) != nil || len(acts) == 0 {
		if st.ParseError != "" {
			return "?"
		}
		return ""
	}
	var b strings.Builder
	for _, a := range acts {
		b.WriteString(string(icon(actionIcons[a.Kind], string(a.Kind))))
	}
	return template.HTML(b.String())
}

// actionWords names a step's actions in words, for a tooltip.
func actionWords(st store.Turn) string {
	var acts []action.Action
	if len(st.Actions) == 0 || json.Unmarshal(st.Actions, &acts) != nil || len(acts) == 0 {
		if st.ParseError != "" {
			return "reply not parsed"
		}
		return "no action"
	}
	words := make([]string, len(acts))
	for i, a := range acts {
		words[i] = string(a.Kind)
	}
	return strings.Join(words, ", ")
}

// episodeData reads an episode, its steps and, when history is set, all
// the reviews it has had.
func (s *Server) episodeData(r *http.Request, history bool) (*run, store.Result, []store.Turn, []store.Review, error) {
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
func (s *Server) episodeSteps(run *run, res store.Result, history bool) ([]store.Turn, []store.Review, error) {
	db, err := store.Open(run.Dir)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	steps, err := db.Turns(res.Task, res.Repeat)
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

// screenSize reads a WIDTHxHEIGHT resolution (the first of a run's
// list, "1920x1080, 1080x2400"), 1920x1080 when unknown.
func screenSize(res string) (int, int) {
	res, _, _ = strings.Cut(res, ",")
	w, h, ok := strings.Cut(strings.TrimSpace(res), "x")
	if ok {
		wi, err1 := strconv.Atoi(w)
		hi, err2 := strconv.Atoi(h)
		if err1 == nil && err2 == nil && wi > 0 && hi > 0 {
			return wi, hi
		}
	}
	return 1920, 1080
}

// episodeScreen is the size of an episode's screen: that of its first
// screenshot (the screen's own pixels; a run of tasks of several screen
// sizes, a phone's and a desktop's, records them all as its resolution),
// else the run's resolution.
func episodeScreen(rn *run, steps []store.Turn, final string) (int, int) {
	names := []string{final}
	for _, st := range steps {
		if st.Shot != "" {
			names = []string{st.Shot}
			break
		}
	}
	if f, err := store.OpenShot(rn.Dir, names[0]); err == nil {
		cfg, _, err := image.DecodeConfig(f)
		f.Close()
		if err == nil && cfg.Width > 0 && cfg.Height > 0 {
			return cfg.Width, cfg.Height
		}
	}
	return screenSize(rn.Report.Run.Resolution)
}

// aspect is a screen's width over its height, for the style that fits a
// screenshot to the window's height (--aspect in viewer.css).
func aspect(w, h int) string {
	return strconv.FormatFloat(float64(w)/float64(max(h, 1)), 'f', 4, 64)
}

// modelUsage is what one model of a step spent (the agents' ModelUsage).
type modelUsage struct {
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	Cost         float64 `json:"cost,omitempty"`
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
