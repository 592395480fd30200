package report

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// CC is ScreenAgent's CC-Score of a run: each episode's performed actions
// against its task's gold solution, with the sub-metrics, over the run and
// per task. Episodes of tasks without a gold solution, or no longer in the
// suite, and error episodes are not scored.
type CC struct {
	score.CCMetrics          // over every scored episode
	Unscored        int      `json:"unscored"` // episodes not scored
	Tasks           []TaskCC `json:"tasks"`
}

// TaskCC is the CC-Score of one task's episodes.
type TaskCC struct {
	Task string `json:"task"`
	score.CCMetrics
}

// performedStep is what the runner records of each performed action (the
// env package's Step): the action and where a pointer action landed.
type performedStep struct {
	Action  action.Action `json:"action"`
	At      *[2]int       `json:"at,omitempty"`
	Element string        `json:"element,omitempty"`
}

// landed is the performed action with its position where it landed (in
// pixels) and the element it touched there, so that an action aimed at an
// element or a set-of-mark tag is scored where it acted.
func (p performedStep) landed() action.Action {
	a := p.Action
	if p.Element != "" {
		args := make(map[string]any, len(a.Args)+1)
		for k, v := range a.Args {
			args[k] = v
		}
		args[score.ElementArg] = p.Element
		a.Args = args
	}
	if p.At == nil {
		return a
	}
	pt := &action.Point{X: float64(p.At[0]), Y: float64(p.At[1])}
	switch a.Kind {
	case action.Click, action.Move, action.MouseDown, action.MouseUp:
		a.Point = pt
	case action.Drag:
		a.To = pt
	}
	return a
}

// Performed is the actions an episode actually performed, from its steps:
// each step's performed actions (Done), a pointer action at the pixel
// where it landed, and, on the step that ended the
// episode, the agent's final action (done, fail or answer) from the
// actions it replied. A final action after an action that failed or was
// refused was not reached, so a step with an environment error ends
// nothing.
func Performed(steps []store.Turn) ([]action.Action, error) {
	var out []action.Action
	for _, st := range steps {
		if len(st.Done) > 0 {
			var done []performedStep
			if err := json.Unmarshal(st.Done, &done); err != nil {
				return nil, fmt.Errorf("step %d: performed actions: %w", st.Index, err)
			}
			for _, d := range done {
				out = append(out, d.landed())
			}
		}
		if st.EnvError != "" || len(st.Actions) == 0 {
			continue
		}
		var acts []action.Action
		if err := json.Unmarshal(st.Actions, &acts); err != nil {
			return nil, fmt.Errorf("step %d: actions: %w", st.Index, err)
		}
		for _, a := range acts {
			if a.Kind.Terminal() {
				return append(out, a), nil
			}
		}
	}
	return out, nil
}

// CCScores computes the CC-Score of the run in dir against the gold
// solutions of the suite's tasks. A gold solution worth no points (only
// waits) gives no score, as in the reference, and counts as unscored.
func CCScores(dir string, s *task.Suite, o score.CCOptions) (*CC, error) {
	st, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if _, err := st.Run(); err != nil {
		return nil, err
	}
	rs, err := st.Results()
	if err != nil {
		return nil, err
	}
	cc := &CC{Tasks: []TaskCC{}}
	var all []score.CCResult
	byTask := map[string][]score.CCResult{}
	for _, r := range rs {
		t, ok := s.Task(r.Task)
		if !ok || len(t.Gold) == 0 || check.Outcome(r.Outcome) == check.Error {
			cc.Unscored++
			continue
		}
		size, err := t.Environment.Size()
		if err != nil {
			return nil, fmt.Errorf("%s: task %s: %w", dir, t.ID, err)
		}
		steps, err := st.Turns(r.Task, r.Repeat)
		if err != nil {
			return nil, fmt.Errorf("%s: task %s #%d: %w", dir, r.Task, r.Repeat, err)
		}
		pred, err := Performed(steps)
		if err != nil {
			return nil, fmt.Errorf("%s: task %s #%d: %w", dir, r.Task, r.Repeat, err)
		}
		res := score.CCScoreWith(t.Gold, pred, size, o)
		if !res.Scored {
			cc.Unscored++
		}
		all = append(all, res)
		byTask[r.Task] = append(byTask[r.Task], res)
	}
	cc.CCMetrics = score.Aggregate(all)
	ids := make([]string, 0, len(byTask))
	for id := range byTask {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		cc.Tasks = append(cc.Tasks, TaskCC{Task: id, CCMetrics: score.Aggregate(byTask[id])})
	}
	return cc, nil
}

// writeCC adds the CC-Score table when a report has one.
func writeCC(rs []*Report, header []string, row func(string, func(*Report) string) []string, table func(string, []string, [][]string)) {
	some := false
	for _, r := range rs {
		some = some || r.CC != nil
	}
	if !some {
		return
	}
	// A sub-metric over no aligned pairs (plan BLEU where the gold has no
	// plans) is n/a, not 0.
	metric := func(name string, f func(score.CCMetrics) (float64, int)) []string {
		return row(name, func(r *Report) string {
			if r.CC == nil {
				return "-"
			}
			v, pairs := f(r.CC.CCMetrics)
			if pairs == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.3f", v)
		})
	}
	rows := [][]string{
		metric("cc-score", func(m score.CCMetrics) (float64, int) { return m.CCScore, m.Sequences }),
		metric("action type F1", func(m score.CCMetrics) (float64, int) { return m.ActionTypeF1, m.TypePairs }),
		metric("mouse type F1", func(m score.CCMetrics) (float64, int) { return m.MouseTypeF1, m.MousePairs }),
		metric("mouse button F1", func(m score.CCMetrics) (float64, int) { return m.MouseButtonF1, m.ButtonPairs }),
		metric("mouse position accuracy", func(m score.CCMetrics) (float64, int) { return m.MousePositionAcc, m.PositionPairs }),
		metric("keyboard BLEU", func(m score.CCMetrics) (float64, int) { return m.KeyboardBLEU, m.KeyboardPairs }),
		metric("plan BLEU", func(m score.CCMetrics) (float64, int) { return m.PlanBLEU, m.PlanPairs }),
		metric("reflect F1", func(m score.CCMetrics) (float64, int) { return m.ReflectF1, m.ReflectPairs }),
		row("episodes scored (unscored)", func(r *Report) string {
			if r.CC == nil {
				return "-"
			}
			return fmt.Sprintf("%d (%d)", r.CC.Sequences, r.CC.Unscored)
		}),
	}
	table("CC-Score against the gold solutions", header, rows)
}
