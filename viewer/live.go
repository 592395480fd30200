package viewer

import (
	"html/template"
	"net/http"
	"net/url"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/store"
)

// LiveRefresh is how often, in seconds, the live page of a run in
// progress reloads itself.
const LiveRefresh = 5

// flightView is an episode in flight as the live page shows it.
type flightView struct {
	store.Flight
	Shot  string
	Icons template.HTML
	URL   string
}

// live shows a run in progress: how far it is, its running success rate
// and spend, an estimate of the time left, and the episodes in flight
// with their latest screen; it reloads itself until the run is done.
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	rn, err := s.find(r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	db, err := store.Open(rn.Dir)
	if err != nil {
		s.fail(w, err)
		return
	}
	flights, err := db.InFlight()
	db.Close()
	if err != nil {
		s.fail(w, err)
		return
	}
	info := rn.Report.Run
	results := rn.Report.Results
	done, passed := len(results), 0
	var spend, judge float64
	var took time.Duration
	for _, res := range results {
		if res.Outcome == string(check.Success) {
			passed++
		}
		spend += res.Cost
		judge += res.JudgeCost
		took += res.Setup + res.Duration // a place's time per episode, setup and all
	}
	var views []flightView
	for _, f := range flights {
		v := flightView{Flight: f, Icons: icons(f.Last), URL: episodeURL(rn.ID, f.Task, f.Repeat)}
		if f.Last.Shot != "" {
			v.Shot = "/run/" + url.PathEscape(rn.ID) + "/shot/" + url.PathEscape(f.Last.Shot)
		}
		views = append(views, v)
	}
	inProgress := info.Planned == 0 && len(flights) > 0 || info.Planned > done
	var left time.Duration
	if inProgress && done > 0 && info.Planned > done {
		left = took / time.Duration(done) * time.Duration(info.Planned-done) / time.Duration(max(info.Parallel, 1))
	}
	rate := 0.0
	if done > 0 {
		rate = float64(passed) / float64(done)
	}
	data := map[string]any{
		"Title": "Live: " + rn.ID, "Run": rn, "Done": done, "Planned": info.Planned, "Passed": passed, "Rate": rate,
		"Spend": spend, "Judge": judge, "Left": left.Round(time.Second), "Flights": views, "InProgress": inProgress,
		"RunURL": "/run/" + url.PathEscape(rn.ID),
	}
	if inProgress {
		data["Refresh"] = LiveRefresh
	}
	s.render(w, http.StatusOK, "live", data)
}
