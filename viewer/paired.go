package viewer

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"

	"github.com/proctor-eval/proctor/report"
)

// The comparison page of two runs says their paired comparison as proctor
// report --compare A B does (report.Compare, with the report's default
// seed, confidence and resamples): the difference with its paired
// bootstrap interval, McNemar's exact test, the tasks won and lost, each
// opening the two runs' episodes side by side. Of more runs it shows a
// matrix of tasks won and lost by each run against each other, each cell
// opening that pair's page.

// pairView is the paired comparison of run B against run A.
type pairView struct {
	A, B *run
	C    *report.Comparison
	// Common is whether the runs decided a task in common; the figures
	// below mean nothing without.
	Common   bool
	Diffs    []pairDiff
	P        string
	Conf     string
	Won      []pairTask
	Lost     []pairTask
	Settings string
}

// pairDiff is a score's difference B − A in points, with its interval.
type pairDiff struct{ Metric, Text string }

// pairTask is a task won or lost by B: its successes of decided tries in
// each run, and links to the runs' episodes side by side, a repeat each.
type pairTask struct {
	Task, A, B string
	Sides      []link
}

// link is a labelled address.
type link struct{ Label, URL string }

// repeatsOf are the repeats of each task a run attempted.
func repeatsOf(r *run) map[string][]int {
	out := map[string][]int{}
	for _, x := range r.Report.Results {
		out[x.Task] = append(out[x.Task], x.Repeat)
	}
	return out
}

// maxCachedPairs bounds the comparisons a server keeps.
const maxCachedPairs = 256

// comparison is run b against run a, or the server's copy of it while
// neither run has changed: a matrix of n runs makes n(n−1)/2 of them.
func (s *Server) comparison(a, b *run) *report.Comparison {
	key := a.ID + "\x00" + a.stamp + "\x01" + b.ID + "\x00" + b.stamp
	s.mu.Lock()
	c, ok := s.pairs[key]
	s.mu.Unlock()
	if ok {
		return c
	}
	c = report.Compare(a.Report, b.Report, report.DefaultStatOptions())
	s.mu.Lock()
	if s.pairs == nil || len(s.pairs) >= maxCachedPairs {
		s.pairs = map[string]*report.Comparison{}
	}
	s.pairs[key] = c
	s.mu.Unlock()
	return c
}

// pairOf compares run b with run a.
func (s *Server) pairOf(a, b *run) pairView {
	c := s.comparison(a, b)
	v := pairView{A: a, B: b, C: c, Common: c.Success.OK(), P: report.PValueText(c.P), Conf: fmt.Sprintf("%g%%", 100*c.Options.Confidence),
		Settings: fmt.Sprintf("paired bootstrap, %g%%, %d resamples, seed %d; the tasks of one template resampled together",
			100*c.Options.Confidence, c.Options.Resamples, c.Options.Seed)}
	v.Diffs = []pairDiff{
		{"success rate (points)", report.DiffText(c.Success)},
		{"weighted score (points)", report.DiffText(c.Weighted)},
		{"milestone average (×100)", report.DiffText(c.Milestone)},
	}
	ra, rb := repeatsOf(a), repeatsOf(b)
	for _, l := range c.Lines {
		t := pairTask{Task: l.Task, A: l.A, B: l.B}
		var both []int
		for _, r := range ra[l.Task] {
			if slices.Contains(rb[l.Task], r) && !slices.Contains(both, r) {
				both = append(both, r)
			}
		}
		slices.Sort(both)
		for _, r := range both {
			q := url.Values{"run": {a.ID, b.ID}, "task": {l.Task}, "repeat": {strconv.Itoa(r)}}
			label := "side by side"
			if len(both) > 1 || r > 0 {
				label = "repeat " + strconv.Itoa(r)
			}
			t.Sides = append(t.Sides, link{label, "/side?" + q.Encode()})
		}
		if l.Result == "won" {
			v.Won = append(v.Won, t)
		} else {
			v.Lost = append(v.Lost, t)
		}
	}
	return v
}

// pairURL is the comparison page of run b against run a.
func pairURL(a, b *run) string {
	return "/compare?" + url.Values{"run": {a.ID, b.ID}}.Encode()
}

// matrixView is the tasks won and lost by each run (a row) against each
// other (a column).
type matrixView struct {
	Runs []*run
	Rows []matrixRow
	Conf string
}

type matrixRow struct {
	Run   *run
	Cells []matrixCell
}

// matrixCell is the row's run against the column's: the tasks it won and
// lost, its pair's page, a tooltip with the difference, and a mark where
// the difference's interval leaves 0 out (better, worse). Self is the
// diagonal; None, runs that decided no task in common.
type matrixCell struct {
	Self, None bool
	Won, Lost  int
	URL, Title string
	Mark       string
}

// pairMatrix compares every two of the runs, once each pair.
func (s *Server) pairMatrix(runs []*run) matrixView {
	m := matrixView{Runs: runs, Rows: make([]matrixRow, len(runs))}
	for i, r := range runs {
		m.Rows[i] = matrixRow{Run: r, Cells: make([]matrixCell, len(runs))}
		m.Rows[i].Cells[i] = matrixCell{Self: true}
	}
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			// The row's run is B against the column's A; the mirror cell
			// is the same comparison turned round.
			c := s.comparison(runs[j], runs[i])
			m.Conf = fmt.Sprintf("%g%%", 100*c.Options.Confidence)
			m.Rows[i].Cells[j] = matrixCellOf(runs[i], runs[j], c.Won, c.Lost, c, 1)
			m.Rows[j].Cells[i] = matrixCellOf(runs[j], runs[i], c.Lost, c.Won, c, -1)
		}
	}
	return m
}

// matrixCellOf is the cell of run b against run a, from a comparison of
// the pair in either order (sign −1 turns it round).
func matrixCellOf(b, a *run, won, lost int, c *report.Comparison, sign float64) matrixCell {
	cell := matrixCell{Won: won, Lost: lost, URL: pairURL(a, b)}
	if !c.Success.OK() {
		cell.None = true
		cell.Title = fmt.Sprintf("%s and %s decided no task in common", b.ID, a.ID)
		return cell
	}
	d, lo, hi := sign*c.Success.Estimate, sign*c.Success.Lo, sign*c.Success.Hi
	if sign < 0 {
		lo, hi = hi, lo
	}
	cell.Title = fmt.Sprintf("%s against %s: %d won, %d lost, %d tied; success %+.1f points (%g%% CI %+.1f to %+.1f); McNemar %s",
		b.ID, a.ID, won, lost, c.Tied, 100*d, 100*c.Options.Confidence, 100*lo, 100*hi, report.PValueText(c.P))
	switch {
	case lo > 0:
		cell.Mark = "better"
	case hi < 0:
		cell.Mark = "worse"
	}
	return cell
}
