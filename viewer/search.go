package viewer

import (
	"maps"
	"net/http"
	"slices"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/store"
)

// searchRow is an episode of some run that a search found.
type searchRow struct {
	store.Result
	Run *run
	URL string
}

// searchLimit bounds the episodes a search lists.
const searchLimit = 500

// search finds episodes across every run (?q= text, and in=steps for the
// steps' thoughts and actions; outcome, level and app filters), newest
// run first.
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	rq, err := parseRunQuery(r.URL.Query())
	if err != nil {
		s.fail(w, err)
		return
	}
	runs, err := s.runs()
	if err != nil {
		s.fail(w, err)
		return
	}
	searched := rq.Text != "" || rq.Outcome != "" || rq.Level != "" || rq.App != ""
	levels, apps := map[string]bool{}, map[string]bool{}
	var rows []searchRow
	total := 0
	for _, rn := range runs {
		var inSteps map[store.ReviewKey]bool
		if searched && rq.InSteps && rq.Text != "" {
			db, err := store.Open(rn.Dir)
			if err != nil {
				s.fail(w, err)
				return
			}
			inSteps, err = db.StepsMatching(rq.Text)
			db.Close()
			if err != nil {
				s.fail(w, err)
				return
			}
		}
		for _, res := range rn.Report.Results {
			levels[res.Level] = true
			for _, a := range res.Apps {
				apps[a] = true
			}
			if !searched || !rq.matches(res, inSteps) {
				continue
			}
			total++
			if len(rows) < searchLimit {
				rows = append(rows, searchRow{Result: res, Run: rn, URL: episodeURL(rn.ID, res.Task, res.Repeat)})
			}
		}
	}
	if by := episodeSorts[rq.Sort]; by != nil {
		slices.SortStableFunc(rows, func(a, b searchRow) int {
			if rq.Desc {
				return by(b.Result, a.Result)
			}
			return by(a.Result, b.Result)
		})
	}
	var outcomes []string
	for _, o := range check.Outcomes {
		outcomes = append(outcomes, string(o))
	}
	s.render(w, http.StatusOK, "search", map[string]any{
		"Title": "Find episodes", "RQ": rq, "Searched": searched, "Rows": rows, "Total": total, "Limit": searchLimit,
		"Runs": len(runs), "Outcomes": outcomes, "Levels": slices.Sorted(maps.Keys(levels)), "Apps": slices.Sorted(maps.Keys(apps)),
	})
}
