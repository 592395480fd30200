package viewer

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"

	"github.com/proctor-eval/proctor/store"
)

// sideColumn is one run's episode on the side-by-side page.
type sideColumn struct {
	Run    *run
	Result store.Result
	URL    string
	Steps  []sideStep
}

// sideStep is a step as a column shows it: the screenshot with the
// actions drawn, and what the agent did.
type sideStep struct {
	Index         int
	Shot          string
	SVG           template.HTML
	Icons         template.HTML
	Actions       string
	Thought       string
	Elements      []string
	Error         string
	Width, Height int
}

// side shows one episode of several runs (?run=A&run=B&task=T&repeat=0)
// as trajectories that step together.
func (s *Server) side(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ids := q["run"]
	if len(ids) < 2 || len(ids) > 4 {
		s.fail(w, fmt.Errorf("%w: side by side shows two to four runs (?run=A&run=B&task=T&repeat=0)", errBadRequest))
		return
	}
	var cols []sideColumn
	most := 0
	for _, id := range ids {
		rn, err := s.find(id)
		if err != nil {
			s.fail(w, fmt.Errorf("run %q: %w", id, err))
			return
		}
		res, err := findEpisode(rn, q.Get("task"), q.Get("repeat"))
		if err != nil {
			s.fail(w, fmt.Errorf("run %s: %w", id, err))
			return
		}
		steps, _, err := s.episodeSteps(rn, res, false)
		if err != nil {
			s.fail(w, err)
			return
		}
		width, height := episodeScreen(rn, steps, res.FinalShot)
		col := sideColumn{Run: rn, Result: res, URL: episodeURL(rn.ID, res.Task, res.Repeat)}
		for _, st := range steps {
			ss := sideStep{Index: st.Index, Icons: icons(st), Actions: prettyJSON(st.Actions), Thought: st.Thought,
				Error: st.ParseError + st.EnvError, Width: width, Height: height}
			if st.Shot != "" {
				ss.Shot = "/run/" + url.PathEscape(rn.ID) + "/shot/" + url.PathEscape(st.Shot)
			}
			var marks []mark
			marks, ss.Elements, _ = overlay(st, width, height)
			ss.SVG = overlaySVG(marks, width, height, rn.ID+"-"+strconv.Itoa(st.Index))
			col.Steps = append(col.Steps, ss)
		}
		most = max(most, len(col.Steps))
		cols = append(cols, col)
	}
	s.render(w, http.StatusOK, "side", map[string]any{
		"Title": "Side by side: " + q.Get("task"), "Task": q.Get("task"), "Columns": cols, "Most": most,
	})
}
