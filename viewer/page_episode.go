package viewer

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/store"
)

// stepView is one step of a trajectory as the page shows it.
type stepView struct {
	store.Turn
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
	Icons       template.HTML
	Words       string // the actions named, for the filmstrip's tooltip
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
func (s *Server) renderEpisode(w http.ResponseWriter, code int, run *run, res store.Result, steps []store.Turn, reviews []store.Review, form reviewForm) {
	var v check.Verdict
	if len(res.Verdict) > 0 {
		_ = json.Unmarshal(res.Verdict, &v)
	}
	width, height := episodeScreen(run, steps, res.FinalShot)
	views := make([]stepView, len(steps))
	for i, st := range steps {
		sv := stepView{Turn: st, Width: width, Height: height, Icons: icons(st), Words: actionWords(st), ThumbHeight: max(1, 96*height/max(width, 1))}
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
	changes, err := episodeChanges(run.Dir, res)
	if err != nil {
		s.fail(w, err)
		return
	}
	final := ""
	if res.FinalShot != "" {
		final = "/run/" + url.PathEscape(run.ID) + "/shot/" + url.PathEscape(res.FinalShot)
	}
	s.render(w, code, "episode", map[string]any{
		"FinalShot": final, "Width": width, "Height": height, "Aspect": aspect(width, height),
		"Title": res.Task, "Run": run, "Result": res, "Verdict": v, "Steps": views, "Review": review, "Earlier": earlier(reviews),
		"Writable": s.Token != "", "Zip": "/run/" + url.PathEscape(run.ID) + "/episode.zip?" + zip.Encode(),
		"GIF":         "/run/" + url.PathEscape(run.ID) + "/episode.gif?" + zip.Encode(),
		"TimingChart": timingChart(steps), "TokenChart": tokenChart(steps), "CostChart": costChart(steps), "ByModel": usageByModel(steps),
		"RunURL": "/run/" + url.PathEscape(run.ID), "Success": res.Outcome == string(check.Success),
		"Form": form, "NextUnreviewed": nextUnreviewed(run, res), "Categories": store.Categories,
		"Changes": changes,
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

// promptMessage is a message of what a model was sent, as a step's record
// keeps it (the agents' PromptMessage; the viewer reads records and
// imports no agent).
type promptMessage struct {
	Role   string   `json:"role"`
	Text   string   `json:"text,omitempty"`
	Images []string `json:"images,omitempty"`
}

// usageByModel sums an episode's tokens and cost by model, for agents
// that ask several (a planner and a grounder); nil for one model.
func usageByModel(steps []store.Turn) []modelUsage {
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

// earlier drops the current review (the newest) from an episode's review
// history.
func earlier(history []store.Review) []store.Review {
	if len(history) < 2 {
		return nil
	}
	return history[1:]
}
