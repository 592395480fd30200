package check

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/usage"
)

// JudgeKind: a judge model decides whether an expectation, written in
// natural language, holds, from the evidence the check names. Where the
// state cannot be read by a program (a canvas, a game, a page of another
// company) this is the only check there is; see package judge.
const JudgeKind Kind = "judge"

// The evidence a judge check shows the model.
const (
	// ReturnedResult: the agent's answer and the final screen.
	ReturnedResult = "returned_result"
	// FinalScreenshot: the screen after the last action (the state the
	// checks judge).
	FinalScreenshot = "final_screenshot"
	// CommandOutput: the output of the check's command, run after the
	// episode.
	CommandOutput = "command_output"
	// ExpectedFlow: every step's actions, with the screens of some steps
	// (at most images, spread over the episode) and the final screen.
	ExpectedFlow = "expected_flow"
	// ProcessInfo: the process information - the element under each click
	// and every other action, in order - with the screens before the
	// clicks (at most images) and the final screen.
	ProcessInfo = "process"
)

// JudgeError is a sentinel error of the judge check kind.
type JudgeError string

// Error returns the sentinel's text.
func (e JudgeError) Error() string { return string(e) }

// ErrUndecided: the judge model gave no verdict on a judge check (down,
// timed out, a reply that stayed malformed, a refusal: see package judge).
// The check's Result.Err begins with its text, the judge's name and the
// judge's error following. It is an infrastructure error, never a failure
// of the agent, and not a fault of the episode's evidence either, which
// was read: the runner keeps the evidence and does not run the agent again,
// and proctor judge decides the check later (see UndecidedJudge).
const ErrUndecided JudgeError = "judge undecided"

// Undecided reports whether r is a judge check whose judge gave no
// verdict (ErrUndecided).
func (r Result) Undecided() bool {
	return r.Kind == JudgeKind && strings.HasPrefix(r.Err, string(ErrUndecided))
}

// UndecidedJudge reports whether v is an error only because judges gave
// no verdict: at least one judge check is undecided, and no other check
// failed to read its evidence. It returns the first undecided check's
// error, which names the judge and what went wrong.
func UndecidedJudge(v Verdict) (string, bool) {
	if v.Outcome != Error {
		return "", false
	}
	first := ""
	var results []Result
	for _, m := range v.Milestones {
		results = append(results, m.Checks...)
	}
	results = append(results, v.Checks...)
	for _, r := range results {
		switch {
		case r.Err == "":
		case r.Undecided():
			if first == "" {
				first = r.Err
			}
		default:
			return "", false
		}
	}
	return first, first != ""
}

// JudgeEvidence lists the evidence kinds of a judge check.
var JudgeEvidence = []string{ReturnedResult, FinalScreenshot, CommandOutput, ExpectedFlow, ProcessInfo}

// DefaultJudgeImages is the image budget of an expected_flow or process
// judge check that sets no images: the final screen and up to five
// steps' screens.
const DefaultJudgeImages = 6

// Criterion is a weighted part of a judge check's expectation: the judge
// decides each, and the check's score is the passed weights over the
// total, as milestones give partial credit.
type Criterion struct {
	ID     string  `json:"id" yaml:"id"`
	Weight float64 `json:"weight,omitempty" yaml:"weight,omitempty"` // 0 counts as 1
	Text   string  `json:"text" yaml:"text"`
}

// Screen is a screenshot.
type Screen struct {
	Data   []byte
	Format string // png or jpeg
}

// Screens is Evidence that can show the episode's screens, which judge
// checks need. A live episode's evidence and a stored run's implement it.
type Screens interface {
	// FinalScreen is the screen after the episode's last action.
	FinalScreen(ctx context.Context) (Screen, error)
	// StepScreen is the screenshot the agent was shown at its step turn
	// (from 1); observe.ErrNotFound when that step had none.
	StepScreen(ctx context.Context, turn int) (Screen, error)
}

// JudgeDetail is what a judge check's Result adds: who judged, on what,
// and what it decided of each criterion.
type JudgeDetail struct {
	Judge    string                      `json:"judge"`    // the judge's name (judgment.Model)
	Model    string                      `json:"model"`    // the model as its API named it
	Evidence string                      `json:"evidence"` // the evidence kind
	Images   int                         `json:"images"`   // screens shown
	Score    float64                     `json:"score"`
	Criteria []judgment.CriterionVerdict `json:"criteria,omitempty"`
	Votes    []Vote                      `json:"votes,omitempty"` // a panel's judges
	Usage    usage.Usage                 `json:"usage"`
	Cached   bool                        `json:"cached,omitempty"`
}

// Vote is one judge's verdict in a panel.
type Vote struct {
	Model  string  `json:"model"`
	Pass   bool    `json:"pass"`
	Score  float64 `json:"score"`
	Reason string  `json:"reason"`
}

func init() {
	register(JudgeKind, kindDef{
		fields:   []string{"evidence", "expectation", "criteria", "images", "command", "timeout"},
		compile:  compileJudge,
		evaluate: evalJudge,
	})
}

func compileJudge(c *Check) error {
	s := c.Spec
	if !slices.Contains(JudgeEvidence, s.Evidence) {
		if s.Evidence == "" {
			return ferr("evidence", "a judge check needs evidence: one of %s", strings.Join(JudgeEvidence, ", "))
		}
		return ferr("evidence", "unknown evidence %q (known: %s)", s.Evidence, strings.Join(JudgeEvidence, ", "))
	}
	if strings.TrimSpace(s.Expectation) == "" {
		return ferr("expectation", "a judge check needs an expectation: what must hold, in words")
	}
	if (s.Command != "") != (s.Evidence == CommandOutput) {
		if s.Command == "" {
			return ferr("command", "command_output evidence needs the command to run after the episode")
		}
		return ferr("command", "applies to command_output evidence only")
	}
	if s.Timeout != 0 && s.Evidence != CommandOutput {
		return ferr("timeout", "applies to command_output evidence only")
	}
	if s.Images != 0 && s.Evidence != ExpectedFlow && s.Evidence != ProcessInfo {
		return ferr("images", "applies to expected_flow and process evidence only")
	}
	if s.Images < 0 || s.Images == 1 {
		return ferr("images", "must be at least 2 (the final screen and one step's), not %d", s.Images)
	}
	seen := map[string]bool{}
	for i, cr := range s.Criteria {
		switch {
		case strings.TrimSpace(cr.ID) == "":
			return ferr("criteria", "criterion %d has no id", i+1)
		case seen[cr.ID]:
			return ferr("criteria", "criterion id %q is used twice", cr.ID)
		case strings.TrimSpace(cr.Text) == "":
			return ferr("criteria", "criterion %q has no text", cr.ID)
		case cr.Weight < 0:
			return ferr("criteria", "criterion %q has a negative weight", cr.ID)
		}
		seen[cr.ID] = true
	}
	return nil
}

func evalJudge(ctx context.Context, c *Check, in input) (bool, string, error) {
	if in.judge == nil {
		return false, "", infraError{errors.New("no judge model is configured for this judge check")}
	}
	req, images, err := c.judgeRequest(ctx, in.ev)
	if err != nil {
		return false, "", err
	}
	v, err := in.judge.Judge(ctx, req)
	if err != nil {
		// No verdict: down, timed out, malformed or refused. Never a
		// failure of the agent.
		return false, "", infraError{fmt.Errorf("%w: judge %s: %w", ErrUndecided, in.judge.Name(), err)}
	}
	d := &JudgeDetail{Judge: in.judge.Name(), Model: v.Model, Evidence: c.Spec.Evidence, Images: images,
		Score: v.Score, Criteria: v.Criteria, Usage: v.Usage, Cached: v.Cached}
	for _, vote := range v.Votes {
		d.Votes = append(d.Votes, Vote{Model: vote.Model, Pass: vote.Pass, Score: vote.Score, Reason: vote.Reason})
	}
	if in.res != nil {
		in.res.Judge = d
		score := v.Score
		in.res.Score = &score
	}
	return v.Pass, v.Reason, nil
}

// judgeRequest gathers the evidence the check names; it returns the
// number of screens shown.
func (c *Check) judgeRequest(ctx context.Context, ev Evidence) (judgment.Request, int, error) {
	s := c.Spec
	req := judgment.Request{Expectation: s.Expectation}
	for _, cr := range s.Criteria {
		req.Criteria = append(req.Criteria, judgment.Criterion{ID: cr.ID, Weight: cr.Weight, Text: cr.Text})
	}
	images := 0
	final := func() error {
		sc, ok := ev.(Screens)
		if !ok {
			return infraError{errors.New("this evidence holds no screens, which a judge check needs")}
		}
		shot, err := sc.FinalScreen(ctx)
		if err != nil {
			return infraError{fmt.Errorf("the final screen: %w", err)}
		}
		req.Evidence = append(req.Evidence, judgment.Image("the screen after the agent's last action", shot.Format, shot.Data))
		images++
		return nil
	}
	traj := ev.Trajectory()
	switch s.Evidence {
	case FinalScreenshot:
		if err := final(); err != nil {
			return req, 0, err
		}
	case ReturnedResult:
		answer, ok := traj.Answer()
		if !ok {
			answer = "(the agent returned no answer: " + endedWith(traj) + ")"
		}
		req.Evidence = append(req.Evidence, judgment.Text("the agent's answer", answer))
		if err := final(); err != nil {
			return req, 0, err
		}
	case CommandOutput:
		res, err := ev.Command(ctx, s.Command, c.timeout())
		if err != nil {
			return req, 0, infraError{err}
		}
		out := res.Stdout
		if res.Stderr != "" {
			out += "\n[standard error]\n" + res.Stderr
		}
		req.Evidence = append(req.Evidence, judgment.Text(fmt.Sprintf("the output of `%s` run after the episode (exit status %d)", s.Command, res.ExitCode), out))
	case ExpectedFlow, ProcessInfo:
		budget := s.Images
		if budget == 0 {
			budget = DefaultJudgeImages
		}
		var turns []int // the steps whose screens may be shown
		if s.Evidence == ExpectedFlow {
			turns = traj.Turns()
		} else {
			turns = traj.clickTurns()
		}
		shown := sample(turns, budget-1)
		label := "the steps the agent took, in order"
		if s.Evidence == ProcessInfo {
			label = "the process information: each action in order, with the element under each click"
		}
		req.Evidence = append(req.Evidence, judgment.Text(label, traj.describe(s.Evidence == ProcessInfo, shown)))
		sc, ok := ev.(Screens)
		if !ok {
			return req, 0, infraError{errors.New("this evidence holds no screens, which a judge check needs")}
		}
		for _, t := range shown {
			shot, err := sc.StepScreen(ctx, t)
			if errors.Is(err, observe.ErrNotFound) {
				continue // that step showed no screenshot (a tree-only run)
			}
			if err != nil {
				return req, 0, infraError{fmt.Errorf("the screen of step %d: %w", t, err)}
			}
			req.Evidence = append(req.Evidence, judgment.Image(fmt.Sprintf("the screen the agent saw at step %d", t), shot.Format, shot.Data))
			images++
		}
		if err := final(); err != nil {
			return req, 0, err
		}
	}
	return req, images, nil
}

// endedWith says how a trajectory without an answer ended.
func endedWith(t Trajectory) string {
	a, ok := t.Final()
	switch {
	case len(t.Steps) == 0:
		return "it took no action"
	case !ok:
		return "it never ended the task"
	case a.Kind == action.Fail:
		return "it said the task cannot be done"
	default:
		return "it ended with " + a.String()
	}
}

// Turns lists the agent's steps that performed an action, in order.
func (t Trajectory) Turns() []int {
	var out []int
	for _, s := range t.Steps {
		if s.Turn > 0 && (len(out) == 0 || out[len(out)-1] != s.Turn) {
			out = append(out, s.Turn)
		}
	}
	return out
}

// clickTurns lists the steps that clicked, where the process evidence's
// key screens are; the steps of all actions where none clicked.
func (t Trajectory) clickTurns() []int {
	var out []int
	for _, s := range t.Steps {
		if s.Turn > 0 && clicks(s.Action.Kind) && (len(out) == 0 || out[len(out)-1] != s.Turn) {
			out = append(out, s.Turn)
		}
	}
	if len(out) == 0 {
		return t.Turns()
	}
	return out
}

// clicks tells the actions that act on the element under the pointer.
func clicks(k action.Kind) bool {
	return k == action.Click || k == action.MouseDown || k == action.Drag || k == action.Select
}

// describe lists the steps one a line, marking those whose screen is
// shown; with elements, each click names the element under it.
func (t Trajectory) describe(elements bool, shown []int) string {
	if len(t.Steps) == 0 {
		return "(the agent took no action)"
	}
	var b strings.Builder
	for i, s := range t.Steps {
		fmt.Fprintf(&b, "%d.", i+1)
		if s.Turn > 0 {
			fmt.Fprintf(&b, " (step %d)", s.Turn)
		}
		b.WriteString(" " + s.Action.String())
		if elements && s.Element != "" {
			b.WriteString(" -> on " + s.Element)
		}
		if s.Turn > 0 && slices.Contains(shown, s.Turn) && (i == 0 || t.Steps[i-1].Turn != s.Turn) {
			fmt.Fprintf(&b, "  [the screen of step %d is shown]", s.Turn)
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// sample picks at most n of xs, spread evenly, the first and the last
// always among them.
func sample(xs []int, n int) []int {
	if n <= 0 || len(xs) == 0 {
		return nil
	}
	if len(xs) <= n {
		return xs
	}
	if n == 1 {
		return xs[len(xs)-1:]
	}
	out := make([]int, 0, n)
	for i := range n {
		j := i * (len(xs) - 1) / (n - 1)
		out = append(out, xs[j])
	}
	return out
}
