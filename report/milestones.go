package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/store"
)

// MilestoneTable is the milestones of tasks that share them (a
// template's instances): for each task, how many of its decided episodes
// reached each milestone, and over all its tasks' episodes the share
// that reached each. Infrastructure errors are left out.
type MilestoneTable struct {
	// Template is the tasks' template, when they are the instances of
	// one.
	Template   string          `json:"template,omitempty"`
	Milestones []string        `json:"milestones"`
	Tasks      []MilestoneTask `json:"tasks"`
	// Episodes are the decided episodes of the tasks; Reached counts
	// those that reached each milestone, Share is their share.
	Episodes int       `json:"episodes"`
	Reached  []int     `json:"reached"`
	Share    []float64 `json:"share"`
}

// MilestoneTask is one task's decided episodes and how many reached each
// milestone of its table.
type MilestoneTask struct {
	Task     string `json:"task"`
	Episodes int    `json:"episodes"`
	Reached  []int  `json:"reached"`
}

// milestoneTables groups the decided episodes whose verdicts scored
// milestones by their tasks' milestones (the same ids in the same order
// make a table), tasks by name, the tables in the order of their first
// task; none for a run without milestones.
func milestoneTables(rs []store.Result) []MilestoneTable {
	type episode struct {
		task, template string
		reached        []bool
	}
	byIDs := map[string][]episode{}
	for _, x := range rs {
		if len(x.Verdict) == 0 || check.Outcome(x.Outcome) == check.Error {
			continue
		}
		var v struct {
			Milestones []check.MilestoneResult `json:"milestones"`
		}
		if json.Unmarshal(x.Verdict, &v) != nil || len(v.Milestones) == 0 {
			continue
		}
		var ids []string
		e := episode{task: x.Task, template: x.Template}
		for _, m := range v.Milestones {
			ids = append(ids, m.ID)
			e.reached = append(e.reached, m.Pass)
		}
		key := strings.Join(ids, "\x00")
		byIDs[key] = append(byIDs[key], e)
	}
	var out []MilestoneTable
	for key, eps := range byIDs {
		ids := strings.Split(key, "\x00")
		t := MilestoneTable{Milestones: ids, Template: eps[0].template, Reached: make([]int, len(ids)), Share: make([]float64, len(ids))}
		tasks := map[string]*MilestoneTask{}
		for _, e := range eps {
			if e.template != t.Template {
				t.Template = ""
			}
			mt := tasks[e.task]
			if mt == nil {
				mt = &MilestoneTask{Task: e.task, Reached: make([]int, len(ids))}
				tasks[e.task] = mt
			}
			mt.Episodes++
			t.Episodes++
			for i, ok := range e.reached {
				if ok {
					mt.Reached[i]++
					t.Reached[i]++
				}
			}
		}
		for _, n := range slices.Sorted(maps.Keys(tasks)) {
			t.Tasks = append(t.Tasks, *tasks[n])
		}
		for i, n := range t.Reached {
			t.Share[i] = float64(n) / float64(t.Episodes)
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b MilestoneTable) int { return strings.Compare(a.Tasks[0].Task, b.Tasks[0].Task) })
	return out
}

// writeMilestones writes each run's milestone tables: a row per task, a
// column per milestone ("yes" or "no" for a task of one episode, how
// many of its episodes reached it for a task of several), and a last row
// with the share of all the episodes that reached each.
func writeMilestones(rs []*Report, pct func(float64) string, table func(string, []string, [][]string)) {
	for _, r := range rs {
		for _, t := range r.Milestones {
			header := append([]string{"task", "episodes"}, t.Milestones...)
			var rows [][]string
			for _, mt := range t.Tasks {
				row := []string{mt.Task, fmt.Sprint(mt.Episodes)}
				for _, n := range mt.Reached {
					switch {
					case mt.Episodes > 1:
						row = append(row, fmt.Sprintf("%d/%d", n, mt.Episodes))
					case n == 1:
						row = append(row, "yes")
					default:
						row = append(row, "no")
					}
				}
				rows = append(rows, row)
			}
			last := []string{"reached", fmt.Sprint(t.Episodes)}
			for i, n := range t.Reached {
				last = append(last, fmt.Sprintf("%d/%d %s", n, t.Episodes, pct(t.Share[i])))
			}
			what := t.Template
			if what == "" {
				what = plural(len(t.Tasks), "task")
			}
			table(fmt.Sprintf("Milestones reached (%s, %s; errors left out)", r.Run.ID, what), header, append(rows, last))
		}
	}
}
