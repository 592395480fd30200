package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/usage"
)

// Outcome is how a task ended.
type Outcome string

// Task outcomes.
const (
	Success      Outcome = "success"       // the agent ended the task and every check passed
	Failure      Outcome = "failure"       // the agent ended the task and a check failed
	Uncompleted  Outcome = "uncompleted"   // a budget ran out before the agent ended the task
	EarlyStopped Outcome = "early_stopped" // the agent repeated one action too often
	Error        Outcome = "error"         // the infrastructure failed; not the agent's fault
)

// Outcomes lists the outcomes in report order.
var Outcomes = []Outcome{Success, Failure, Uncompleted, EarlyStopped, Error}

// End says why the episode stopped.
type End string

// Episode ends.
const (
	EndAgent     End = "agent"      // the agent said DONE, FAIL or ANS
	EndBudget    End = "budget"     // max steps, time or cost reached
	EndEarlyStop End = "early_stop" // repeated actions
	EndError     End = "error"      // the environment or model API failed
)

// Milestone is a weighted part of a task with a rubric; it passes when all
// its checks pass (SCUBA's milestone scores).
type Milestone struct {
	ID     string  `json:"id" yaml:"id"`
	Weight float64 `json:"weight" yaml:"weight"`
	Rubric string  `json:"rubric" yaml:"rubric"`
	Checks []Spec  `json:"checks" yaml:"checks"`
}

// Compiled is a task's compiled checks and milestones.
type Compiled struct {
	Checks     []*Check
	Milestones []compiledMilestone
	// Judge decides the judge checks; nil where no judge is configured
	// (a judge check is then an infrastructure error).
	Judge judgment.Model
}

// Judged reports whether any check, in a milestone or not, is a judge
// check.
func (s *Compiled) Judged() bool {
	for _, c := range s.all() {
		if c.Spec.Kind == JudgeKind {
			return true
		}
	}
	return false
}

// JudgeChecks lists the judge checks, milestones' first.
func (s *Compiled) JudgeChecks() []*Check {
	var out []*Check
	for _, c := range s.all() {
		if c.Spec.Kind == JudgeKind {
			out = append(out, c)
		}
	}
	return out
}

// all lists the milestones' checks, then the task's.
func (s *Compiled) all() []*Check {
	var out []*Check
	for _, m := range s.Milestones {
		out = append(out, m.checks...)
	}
	return append(out, s.Checks...)
}

type compiledMilestone struct {
	Milestone
	checks []*Check
}

// PathError is a problem at a place in a task: Path is the chain of keys
// and indexes from the task's root, such as checks, 2, expr.
type PathError struct {
	Path   []any // string keys and int indexes
	Reason string
}

func (e *PathError) Error() string { return FormatPath(e.Path) + ": " + e.Reason }

// FormatPath renders a path of keys and indexes as checks[1].expr.
func FormatPath(path []any) string {
	var b strings.Builder
	for i, p := range path {
		switch v := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", v)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, v)
		}
	}
	return b.String()
}

func pathErr(reason string, path ...any) error {
	return &PathError{Path: path, Reason: reason}
}

func fieldPathErr(err error, path ...any) error {
	if fe, ok := err.(*FieldError); ok {
		return &PathError{Path: append(path, fe.Field), Reason: fe.Reason}
	}
	if pe, ok := err.(*PathError); ok {
		return &PathError{Path: append(path, pe.Path...), Reason: pe.Reason}
	}
	return &PathError{Path: path, Reason: err.Error()}
}

// CompileAll compiles a task's checks and milestones. Errors are
// *PathError values naming the place, such as checks[2].expr.
func CompileAll(checks []Spec, milestones []Milestone) (*Compiled, error) {
	s := &Compiled{}
	ids := map[string]bool{}
	for i, m := range milestones {
		if m.ID == "" {
			return nil, pathErr("is required", "milestones", i, "id")
		}
		if ids[m.ID] {
			return nil, pathErr(fmt.Sprintf("%q is used twice", m.ID), "milestones", i, "id")
		}
		ids[m.ID] = true
		if m.Weight <= 0 {
			return nil, pathErr("must be positive", "milestones", i, "weight")
		}
		cm := compiledMilestone{Milestone: m}
		for j, sp := range m.Checks {
			if sp.Kind == Milestones {
				return nil, pathErr("a milestone cannot score milestones", "milestones", i, "checks", j, "kind")
			}
			c, err := Compile(sp)
			if err != nil {
				return nil, fieldPathErr(err, "milestones", i, "checks", j)
			}
			cm.checks = append(cm.checks, c)
		}
		if len(cm.checks) == 0 {
			return nil, pathErr("a milestone needs at least one check", "milestones", i, "checks")
		}
		s.Milestones = append(s.Milestones, cm)
	}
	for i, sp := range checks {
		c, err := Compile(sp)
		if err != nil {
			return nil, fieldPathErr(err, "checks", i)
		}
		for _, id := range sp.Milestones {
			if !ids[id] {
				return nil, pathErr(fmt.Sprintf("no milestone has id %q", id), "checks", i, "milestones")
			}
		}
		s.Checks = append(s.Checks, c)
	}
	return s, nil
}

// Infeasible reports whether the task expects the agent to say FAIL.
func (s *Compiled) Infeasible() bool {
	for _, c := range s.Checks {
		if c.Spec.Kind == Infeasible {
			return true
		}
	}
	return false
}

// Verdict is a task's evaluation: its outcome, each check's result, and the
// milestone score in [0, 1].
type Verdict struct {
	Outcome        Outcome           `json:"outcome"`
	Reason         string            `json:"reason"`
	Checks         []Result          `json:"checks"`
	Milestones     []MilestoneResult `json:"milestones,omitempty"`
	MilestoneScore float64           `json:"milestone_score"`
	// JudgeUsage is what the judge checks' models spent, apart from the
	// agent's.
	JudgeUsage usage.Usage `json:"judge_usage"`
}

// Evaluate evaluates the suite on the evidence of an episode that stopped
// for the reason end. Milestones are scored whatever the end, so partial
// progress shows; success requires that the agent ended the task itself.
// Without milestones, the score of an episode the agent ended is the
// product of its checks' values (Result.Value): 1 when all pass, and a
// judge check's criteria give partial credit.
func (s *Compiled) Evaluate(ctx context.Context, ev Evidence, end End) Verdict {
	var v Verdict
	ms := MilestoneScores{}
	var got, total float64
	infra := ""
	for _, m := range s.Milestones {
		mr := MilestoneResult{ID: m.ID, Weight: m.Weight, Rubric: m.Rubric, Pass: true}
		for _, c := range m.checks {
			r := c.EvaluateWith(ctx, ev, nil, s.Judge)
			v.addJudge(r)
			if r.Err != "" && infra == "" {
				infra = r.Err
			}
			mr.Pass = mr.Pass && r.Pass
			mr.Checks = append(mr.Checks, r)
		}
		total += m.Weight
		if mr.Pass {
			got += m.Weight
		}
		ms[m.ID] = mr
		v.Milestones = append(v.Milestones, mr)
	}
	if total > 0 {
		v.MilestoneScore = got / total
	}
	allPass := true
	product := 1.0
	var failed []string
	for _, c := range s.Checks {
		r := c.EvaluateWith(ctx, ev, ms, s.Judge)
		v.addJudge(r)
		product *= r.Value()
		if r.Err != "" && infra == "" {
			infra = r.Err
		}
		if !r.Pass {
			allPass = false
			failed = append(failed, r.Name+": "+r.Reason)
		}
		v.Checks = append(v.Checks, r)
	}
	if len(s.Milestones) == 0 && len(s.Checks) > 0 && end == EndAgent {
		v.MilestoneScore = product
		if allPass {
			v.MilestoneScore = 1
		}
	}
	final, ended := ev.Trajectory().Final()
	switch {
	case end == EndError:
		v.Outcome, v.Reason = Error, "the episode stopped on an infrastructure error"
	case infra != "":
		v.Outcome, v.Reason = Error, "evidence could not be read: "+infra
	case end == EndEarlyStop:
		v.Outcome, v.Reason = EarlyStopped, "the agent repeated the same action and was stopped"
	case end == EndBudget || !ended:
		v.Outcome, v.Reason = Uncompleted, "the budget ran out before the agent ended the task"
	case final.Kind == action.Fail && !s.Infeasible():
		v.Outcome, v.Reason = Failure, "the agent said FAIL on a feasible task"
	case len(s.Checks) == 0:
		v.Outcome, v.Reason = Error, "the task has no checks"
	case allPass:
		v.Outcome, v.Reason = Success, "all checks passed"
	default:
		v.Outcome, v.Reason = Failure, strings.Join(failed, "; ")
	}
	return v
}

// addJudge adds a judge check's usage to the verdict's.
func (v *Verdict) addJudge(r Result) {
	if r.Judge != nil {
		v.JudgeUsage = v.JudgeUsage.Add(r.Judge.Usage)
	}
}
