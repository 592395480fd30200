// Package validate proves a suite's evaluators: for every task, the gold
// solution must pass (a task without one, unproven, is proven only to
// fail on what must fail); doing nothing, giving up on a feasible task (FAIL)
// or answering an infeasible one must not, and every declared wrong
// trajectory must not either. Each trajectory is replayed on a fresh
// desktop through the runner, so validation exercises exactly what a run
// does.
package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/internal/english"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/run"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// Trajectory names of the built-in cases: the gold solution; DONE at
// once; FAIL at once (for a feasible task, where giving up must fail) and
// an answer at once (for an infeasible task, where only FAIL is right).
const (
	Gold   = "gold"
	Noop   = "noop"
	GiveUp = "fail at once"
	Claim  = "answer at once"
)

// Row is the verdict of one trajectory of one task.
type Row struct {
	Task       string `json:"task"`
	Trajectory string `json:"trajectory"`
	Want       string `json:"want"` // "success" or "not success"
	Got        string `json:"got"`  // the outcome
	Reason     string `json:"reason"`
	OK         bool   `json:"ok"`
	// WantMilestone is the milestone score a wrong trajectory must reach,
	// where its task says; Milestone is the score it reached.
	WantMilestone *float64 `json:"want_milestone,omitempty"`
	Milestone     float64  `json:"milestone"`
}

// variant is a task replaying one trajectory.
type variant struct {
	task       *task.Task
	trajectory string
	wantPass   bool
	milestone  *float64 // the exact milestone score to reach, if stated
}

func variants(tasks []*task.Task) []variant {
	var out []variant
	for _, t := range tasks {
		mk := func(name string, acts []action.Action, pass bool, milestone ...*float64) {
			c := *t
			c.ID = fmt.Sprintf("%s [%s]", t.ID, name)
			c.Gold = acts
			v := variant{task: &c, trajectory: name, wantPass: pass}
			if len(milestone) > 0 {
				v.milestone = milestone[0]
			}
			out = append(out, v)
		}
		if len(t.Gold) > 0 || t.Unproven == "" {
			mk(Gold, t.Gold, true)
		}
		mk(Noop, []action.Action{{Kind: action.Done}}, false)
		if t.Kind == task.InfeasibleTask {
			mk(Claim, []action.Action{{Kind: action.Answer, Text: "done"}}, false)
		} else {
			mk(GiveUp, []action.Action{{Kind: action.Fail}}, false)
		}
		for _, w := range t.Wrong {
			mk(w.Name, w.Actions, false, w.Milestone)
		}
	}
	return out
}

// Unproven lists the tasks without a gold solution (an imported task
// that says why in unproven): validation proves only that their checks
// fail on the start state and on the wrong trajectories.
func Unproven(tasks []*task.Task) []string {
	var out []string
	for _, t := range tasks {
		if len(t.Gold) == 0 && t.Unproven != "" {
			out = append(out, t.ID)
		}
	}
	return out
}

// Config is one validation.
type Config struct {
	Suite *task.Suite
	Tasks []*task.Task
	// Sources are the pool's places (package provider); when empty,
	// Parallel places are made with NewEnv.
	Sources  []env.Source
	Parallel int
	NewEnv   func(ctx context.Context) (env.Env, error)
	Lost     func(store.Lost) // told when a place leaves the pool
	Store    *store.Store     // where the episodes are recorded
	Progress io.Writer
	// Judge decides the judge checks (a model, or an offline judge that
	// replays recorded verdicts).
	Judge judgment.Model
}

// Run replays every trajectory and compares each outcome with what it
// should be.
func Run(ctx context.Context, cfg Config) ([]Row, error) {
	vs := variants(cfg.Tasks)
	tasks := make([]*task.Task, len(vs))
	byID := map[string]variant{}
	for i, v := range vs {
		tasks[i] = v.task
		byID[v.task.ID] = v
	}
	replay, _ := agent.Lookup("replay")
	results, err := run.Run(ctx, run.Config{Suite: cfg.Suite, Tasks: tasks, Agent: replay, AgentName: "replay",
		Obs: run.ObsScreenshot, Sources: cfg.Sources, Parallel: cfg.Parallel, NewEnv: cfg.NewEnv, Lost: cfg.Lost, Store: cfg.Store, Progress: cfg.Progress, Judge: cfg.Judge, Validation: true})
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, r := range results {
		v, ok := byID[r.Task]
		if !ok {
			continue
		}
		rows = append(rows, rowOf(v, r))
	}
	return rows, nil
}

// rowOf compares a trajectory's outcome with what it should be.
func rowOf(v variant, r store.Result) Row {
	row := Row{Task: strings.TrimSuffix(r.Task, " ["+v.trajectory+"]"), Trajectory: v.trajectory, Got: r.Outcome, Reason: r.Reason,
		WantMilestone: v.milestone, Milestone: r.Milestone}
	passed := r.Outcome == "success"
	if v.wantPass {
		row.Want, row.OK = "success", passed
	} else {
		// An infrastructure error proves nothing either way.
		row.Want, row.OK = "not success", !passed && r.Outcome != "error"
	}
	if v.milestone != nil {
		// A partial success must reach the score its task states: the
		// milestones in between are judged too.
		row.Want += fmt.Sprintf(", milestone %.3f (±%g)", *v.milestone, MilestoneTolerance)
		row.Got += fmt.Sprintf(", milestone %.3f", r.Milestone)
		if math.Abs(r.Milestone-*v.milestone) > MilestoneTolerance+1e-9 {
			why := milestoneReason(*v.milestone, r)
			if row.OK || row.Reason == "" {
				row.Reason = why // the outcome is right: the score alone is wrong
			} else {
				row.Reason += "; " + why
			}
			row.OK = false
		}
	}
	return row
}

// MilestoneTolerance is how far a wrong trajectory's milestone score may
// lie from the score its task states: a score written with two decimals
// (0.33, 0.67) stands for thirds.
const MilestoneTolerance = 0.005

// milestoneReason says which milestones an episode reached and missed,
// when its score is not the one stated.
func milestoneReason(want float64, r store.Result) string {
	why := fmt.Sprintf("milestone score %.3f is not the stated %.3f (±%g)", r.Milestone, want, MilestoneTolerance)
	var v check.Verdict
	if len(r.Verdict) == 0 || json.Unmarshal(r.Verdict, &v) != nil || len(v.Milestones) == 0 {
		return why
	}
	var reached, missed []string
	for _, m := range v.Milestones {
		if m.Pass {
			reached = append(reached, m.ID)
		} else {
			missed = append(missed, m.ID)
		}
	}
	why += fmt.Sprintf(": %d of %s reached", len(reached), english.Count(len(v.Milestones), "milestone"))
	if len(reached) > 0 {
		why += " (" + strings.Join(reached, ", ") + ")"
	}
	if len(missed) > 0 {
		why += ", missed " + strings.Join(missed, ", ")
	}
	return why
}

// Violations counts the rows that are not as they should be.
func Violations(rows []Row) int {
	n := 0
	for _, r := range rows {
		if !r.OK {
			n++
		}
	}
	return n
}

// Write prints the rows as a table, violations marked.
func Write(w io.Writer, rows []Row) { write(w, rows, 90) }

// WriteVerbose prints the table with every reason whole.
func WriteVerbose(w io.Writer, rows []Row) { write(w, rows, 0) }

// write prints the table, cutting reasons to width characters (0: whole).
func write(w io.Writer, rows []Row, width int) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tTRAJECTORY\tWANT\tGOT\tOK\tREASON")
	for _, r := range rows {
		mark := "ok"
		if !r.OK {
			mark = "VIOLATION"
		}
		reason := strings.Join(strings.Fields(r.Reason), " ")
		if width > 0 && len([]rune(reason)) > width {
			reason = string([]rune(reason)[:width-1]) + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Task, r.Trajectory, r.Want, r.Got, mark, reason)
	}
	tw.Flush()
}
