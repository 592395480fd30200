// Package rescore judges the episodes of a finished run again, from the
// evidence their checks read when the run judged them (check.Recorded,
// kept in the run's store), with the checks of the suite as it is now.
// A task whose checks were fixed after the run is scored anew without its
// desktop; the run's results stay as they were and the new verdicts are
// stored beside them.
package rescore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/internal/english"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/run"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// Flip is an episode whose outcome changed when judged again.
type Flip struct {
	Task   string        `json:"task"`
	Repeat int           `json:"repeat"`
	Old    check.Outcome `json:"old"`
	New    check.Outcome `json:"new"`
	Reason string        `json:"reason"`
}

// Broken is a task whose current checks do not compile.
type Broken struct {
	Task     string `json:"task"`
	Err      string `json:"error"`
	Episodes int    `json:"episodes"` // not judged
}

// Summary is what a re-judging did.
type Summary struct {
	Dir       string    `json:"dir"`
	At        time.Time `json:"at"`
	SuiteHash string    `json:"suite_hash"` // of the run's tasks as they are now
	RunHash   string    `json:"run_suite_hash"`
	Rejudged  int       `json:"rejudged"` // episodes judged again
	Flipped   []Flip    `json:"flipped"`
	Errors    int       `json:"skipped_errors"` // error episodes, not judged
	// NoEvidence counts episodes without recorded evidence (runs made
	// before evidence was kept).
	NoEvidence int `json:"no_evidence"`
	// NotInSuite gives, for each task of the run that the suite no longer
	// has, its number of episodes.
	NotInSuite map[string]int `json:"not_in_suite,omitempty"`
	Broken     []Broken       `json:"broken,omitempty"`
}

// End is why a recorded episode stopped, as far as its record tells: the
// agent ended it when its trajectory ends with done, fail or answer; else
// the old outcome says (early stop, or a budget).
func End(ev *check.Recorded, old check.Outcome) check.End {
	if _, ended := ev.Trajectory().Final(); ended {
		return check.EndAgent
	}
	switch old {
	case check.EarlyStopped:
		return check.EndEarlyStop
	case check.Error:
		return check.EndError
	}
	return check.EndBudget
}

// Run judges every episode of the run in st again with the checks of the
// suite s, from its recorded evidence (the suite's assets serve the asset
// checks), stores the new verdicts beside the old ones, all at time at,
// and returns what changed. Error episodes are skipped: they were not
// judged the first time either.
//
// Judge checks are decided by jm, from the episode's stored screens; a
// judge that answers from the run's cache of verdicts (judge.Config's
// Offline) decides them again at no cost where their evidence did not
// change. Without jm they are errors.
func Run(ctx context.Context, st *store.Store, s *task.Suite, at time.Time, jm judgment.Model) (*Summary, error) {
	info, err := st.Run()
	if err != nil {
		return nil, err
	}
	results, err := st.Results()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Dir, err)
	}
	sum := &Summary{Dir: st.Dir, At: at.UTC(), RunHash: info.SuiteHash, NotInSuite: map[string]int{}}
	suites := map[string]*check.Compiled{}
	broken := map[string]int{} // index in sum.Broken
	var tasks []*task.Task
	for _, r := range results {
		if _, seen := suites[r.Task]; seen {
			continue
		}
		t, ok := s.Task(r.Task)
		if !ok {
			suites[r.Task] = nil
			continue
		}
		tasks = append(tasks, t)
		cs, err := check.CompileAll(t.Checks, t.Milestones)
		if err != nil {
			broken[t.ID] = len(sum.Broken)
			sum.Broken = append(sum.Broken, Broken{Task: t.ID, Err: err.Error()})
		}
		suites[r.Task] = cs
	}
	sum.SuiteHash = run.SuiteHash(tasks)
	var pending []store.Rescore
	for _, r := range results {
		t, inSuite := s.Task(r.Task)
		cs := suites[r.Task]
		switch {
		case !inSuite:
			sum.NotInSuite[r.Task]++
			continue
		case cs == nil:
			sum.Broken[broken[r.Task]].Episodes++
			continue
		case check.Outcome(r.Outcome) == check.Error:
			sum.Errors++
			continue
		}
		ev, err := Stored(st, r)
		if errors.Is(err, store.ErrNoEvidence) {
			sum.NoEvidence++
			continue
		}
		if err != nil {
			return nil, err
		}
		ev.AssetDir = s.AssetPath("")
		old := check.Outcome(r.Outcome)
		cs.Judge = jm
		v := cs.Evaluate(ctx, ev, End(ev.Recorded, old))
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if v.Outcome == check.Uncompleted && old == check.Uncompleted {
			v.Reason = r.Reason // the runner's reason: which budget ran out
		}
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: task %s #%d: %w", st.Dir, t.ID, r.Repeat, err)
		}
		pending = append(pending, store.Rescore{Task: r.Task, Repeat: r.Repeat, At: sum.At, SuiteHash: sum.SuiteHash,
			OldOutcome: r.Outcome, Outcome: string(v.Outcome), Reason: v.Reason, Milestone: v.MilestoneScore, Verdict: vb})
		sum.Rejudged++
		if v.Outcome != old {
			sum.Flipped = append(sum.Flipped, Flip{Task: r.Task, Repeat: r.Repeat, Old: old, New: v.Outcome, Reason: v.Reason})
		}
	}
	for _, p := range pending {
		if err := st.SaveRescore(p); err != nil {
			return nil, fmt.Errorf("%s: save the verdict of %s #%d: %w", st.Dir, p.Task, p.Repeat, err)
		}
	}
	return sum, nil
}

// Write prints the flipped episodes, the tasks that could not be judged
// and the totals.
func (s *Summary) Write(w io.Writer) {
	if len(s.Flipped) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tREPEAT\tOLD -> NEW\tREASON")
		for _, f := range s.Flipped {
			fmt.Fprintf(tw, "%s\t%d\t%s -> %s\t%s\n", f.Task, f.Repeat, f.Old, f.New, oneLine(f.Reason))
		}
		tw.Flush()
	} else if s.Rejudged > 0 {
		fmt.Fprintln(w, "no outcome flipped")
	}
	if len(s.NotInSuite) > 0 {
		ids := make([]string, 0, len(s.NotInSuite))
		for id := range s.NotInSuite {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			fmt.Fprintf(w, "task %s is no longer in the suite (%s not judged)\n", id, episodes(s.NotInSuite[id]))
		}
	}
	for _, b := range s.Broken {
		fmt.Fprintf(w, "task %s: its checks do not compile (%s not judged): %s\n", b.Task, episodes(b.Episodes), b.Err)
	}
	parts := []string{episodes(s.Rejudged) + " re-judged", fmt.Sprintf("%d flipped", len(s.Flipped)),
		fmt.Sprintf("%d skipped (error)", s.Errors)}
	if n := s.notInSuite(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d not in the suite", n))
	}
	if s.NoEvidence > 0 {
		parts = append(parts, fmt.Sprintf("%d without recorded evidence", s.NoEvidence))
	}
	if len(s.Broken) > 0 {
		parts = append(parts, english.Count(len(s.Broken), "task")+" with broken checks")
	}
	fmt.Fprintln(w, strings.Join(parts, ", "))
}

func (s *Summary) notInSuite() int {
	n := 0
	for _, c := range s.NotInSuite {
		n += c
	}
	return n
}

func episodes(n int) string {
	if n == 1 {
		return "1 episode"
	}
	return fmt.Sprintf("%d episodes", n)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
