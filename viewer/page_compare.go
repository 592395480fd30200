package viewer

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/check"
)

// key names an episode.
func key(task string, repeat int) string { return task + "#" + strconv.Itoa(repeat) }

// compare shows the chosen runs' outcomes task by task, marking the tasks
// whose outcome flipped, with the paired comparison of two runs or the
// matrix of tasks won and lost of more (paired.go).
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	ids := r.URL.Query()["run"]
	if len(ids) < 2 {
		s.fail(w, fmt.Errorf("%w: pick at least two runs to compare", errBadRequest))
		return
	}
	var runs []*run
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			s.fail(w, fmt.Errorf("%w: run %q is chosen twice: pick different runs to compare", errBadRequest, id))
			return
		}
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
	var pair *pairView
	var matrix *matrixView
	if len(runs) == 2 {
		p := s.pairOf(runs[0], runs[1])
		pair = &p
	} else {
		m := s.pairMatrix(runs)
		matrix = &m
	}
	s.render(w, http.StatusOK, "compare", map[string]any{
		"Pair": pair, "Matrix": matrix,
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
// attempted: N decided episodes, the infrastructure errors (Errors) left
// out.
type compareRate struct {
	Passed, N, Errors int
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
			if c.Outcome == string(check.Error) {
				rates[i].Errors++ // neither a success nor the agent's failure
				continue
			}
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
