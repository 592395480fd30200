package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/judge"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/usage"
)

// fakeJudge decides in process and keeps what it was asked.
type fakeJudge struct {
	name   string
	decide func(judgment.Request) (judgment.Verdict, error)
	mu     sync.Mutex
	asked  []judgment.Request
}

func (f *fakeJudge) Name() string { return f.name }

func (f *fakeJudge) Judge(_ context.Context, req judgment.Request) (judgment.Verdict, error) {
	f.mu.Lock()
	f.asked = append(f.asked, req)
	f.mu.Unlock()
	return f.decide(req)
}

// screened is recorded evidence with screens: step n's screen is the
// bytes "png n", the final one "png final".
type screened struct {
	*Recorded
	noShot map[int]bool // steps without a screenshot
}

func (s screened) FinalScreen(context.Context) (Screen, error) {
	return Screen{Data: []byte("\x89PNG final"), Format: "png"}, nil
}

func (s screened) StepScreen(_ context.Context, n int) (Screen, error) {
	if s.noShot[n] {
		return Screen{}, observe.ErrNotFound
	}
	return Screen{Data: fmt.Appendf(nil, "\x89PNG %d", n), Format: "png"}, nil
}

// episode is a trajectory of ten steps: step 1 clicks Save As, steps 2
// to 9 type, step 10 clicks Save and answers.
func episode() Trajectory {
	steps := []Step{{Action: action.Action{Kind: action.Click, Point: &action.Point{X: 5, Y: 5}}, Element: "menu item 'Save As'", Turn: 1}}
	for n := 2; n <= 9; n++ {
		steps = append(steps, Step{Action: action.Action{Kind: action.Type, Text: fmt.Sprint("part ", n)}, Turn: n})
	}
	steps = append(steps,
		Step{Action: action.Action{Kind: action.Click, Point: &action.Point{X: 9, Y: 9}}, Element: "push button 'Save'", Turn: 10},
		Step{Action: action.Action{Kind: action.Answer, Text: "saved as report.odt"}, Turn: 10})
	return Trajectory{Steps: steps}
}

func passAll(req judgment.Request) (judgment.Verdict, error) {
	v := judgment.Verdict{Pass: true, Score: 1, Reason: "fine", Model: "fake-1", Usage: usage.Usage{InputTokens: 100, OutputTokens: 10, Cost: 0.01}}
	for _, c := range req.Criteria {
		v.Criteria = append(v.Criteria, judgment.CriterionVerdict{ID: c.ID, Pass: true, Reason: "ok"})
	}
	return v, nil
}

// TestJudgeEvidence checks what each evidence kind shows the judge.
func TestJudgeEvidence(t *testing.T) {
	ev := screened{Recorded: &Recorded{Steps: episode(), Commands: map[string]observe.CommandResult{
		"cat /root/out.txt": {Stdout: "total 12\n", Stderr: "warning: old\n", ExitCode: 0}}}}
	labels := func(req judgment.Request) []string {
		var out []string
		for _, p := range req.Evidence {
			out = append(out, p.Label)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		spec   Spec
		labels []string
		text   []string // in the text parts
		images int
	}{
		{"final screenshot", Spec{Evidence: FinalScreenshot},
			[]string{"the screen after the agent's last action"}, nil, 1},
		{"returned result", Spec{Evidence: ReturnedResult},
			[]string{"the agent's answer", "the screen after the agent's last action"}, []string{"saved as report.odt"}, 1},
		{"command output", Spec{Evidence: CommandOutput, Command: "cat /root/out.txt"},
			[]string{"the output of `cat /root/out.txt` run after the episode (exit status 0)"}, []string{"total 12", "[standard error]\nwarning: old"}, 0},
		{"expected flow, default budget", Spec{Evidence: ExpectedFlow},
			[]string{"the steps the agent took, in order", "the screen the agent saw at step 1", "the screen the agent saw at step 3",
				"the screen the agent saw at step 5", "the screen the agent saw at step 7", "the screen the agent saw at step 10",
				"the screen the agent saw at step 10"}[:0], []string{"1. (step 1) click", "type \"part 2\"", "[the screen of step 1 is shown]"}, 6},
		{"expected flow, three images", Spec{Evidence: ExpectedFlow, Images: 3},
			[]string{"the steps the agent took, in order", "the screen the agent saw at step 1", "the screen the agent saw at step 10", "the screen after the agent's last action"},
			[]string{"[the screen of step 10 is shown]"}, 3},
		{"process", Spec{Evidence: ProcessInfo},
			[]string{"the process information: each action in order, with the element under each click", "the screen the agent saw at step 1", "the screen the agent saw at step 10", "the screen after the agent's last action"},
			[]string{"-> on menu item 'Save As'", "-> on push button 'Save'"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Kind, tc.spec.Expectation = JudgeKind, "the report was saved"
			c, err := Compile(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			j := &fakeJudge{name: "fake:1", decide: passAll}
			r := c.EvaluateWith(context.Background(), ev, nil, j)
			if !r.Pass || r.Err != "" || r.Judge == nil {
				t.Fatalf("result %+v", r)
			}
			req := j.asked[0]
			if len(tc.labels) > 0 && !slices.Equal(labels(req), tc.labels) {
				t.Errorf("labels %q\nwant   %q", labels(req), tc.labels)
			}
			var text strings.Builder
			images := 0
			for _, p := range req.Evidence {
				text.WriteString(p.Text + "\n")
				if p.IsImage() {
					images++
				}
			}
			for _, want := range tc.text {
				if !strings.Contains(text.String(), want) {
					t.Errorf("the text evidence lacks %q:\n%s", want, text.String())
				}
			}
			if images != tc.images || r.Judge.Images != tc.images {
				t.Errorf("%d images shown (detail says %d), want %d", images, r.Judge.Images, tc.images)
			}
			if r.Judge.Evidence != tc.spec.Evidence || r.Judge.Judge != "fake:1" || r.Judge.Model != "fake-1" || r.Value() != 1 {
				t.Errorf("detail %+v", r.Judge)
			}
		})
	}
}

// A step without a screenshot is left out; the rest are shown.
func TestJudgeFlowSkipsMissingScreens(t *testing.T) {
	ev := screened{Recorded: &Recorded{Steps: episode()}, noShot: map[int]bool{1: true}}
	c, err := Compile(Spec{Kind: JudgeKind, Evidence: ExpectedFlow, Images: 3, Expectation: "x"})
	if err != nil {
		t.Fatal(err)
	}
	r := c.EvaluateWith(context.Background(), ev, nil, &fakeJudge{name: "f", decide: passAll})
	if r.Err != "" || r.Judge.Images != 2 {
		t.Fatalf("%+v %+v", r, r.Judge)
	}
}

// No verdict is ever a failure of the agent: a judge that errs, no judge,
// and evidence without screens are infrastructure errors.
func TestJudgeWithoutVerdictIsInfrastructure(t *testing.T) {
	ev := screened{Recorded: &Recorded{Steps: episode()}}
	down := &fakeJudge{name: "down", decide: func(judgment.Request) (judgment.Verdict, error) {
		return judgment.Verdict{}, fmt.Errorf("%w: 503", judge.ErrUnavailable)
	}}
	c, err := Compile(Spec{Kind: JudgeKind, Evidence: FinalScreenshot, Expectation: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ev   Evidence
		j    judgment.Model
		want string
	}{
		{"judge down", ev, down, "judge down: judge unavailable: 503"},
		{"no judge", ev, nil, "no judge model is configured"},
		{"no screens", ev.Recorded, &fakeJudge{name: "f", decide: passAll}, "holds no screens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.EvaluateWith(context.Background(), tc.ev, nil, tc.j)
			if r.Pass || !strings.Contains(r.Err, tc.want) {
				t.Fatalf("%+v, want an infrastructure error with %q", r, tc.want)
			}
		})
	}
	s, err := CompileAll([]Spec{{Kind: JudgeKind, Evidence: FinalScreenshot, Expectation: "x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Judge = down
	if v := s.Evaluate(context.Background(), ev, EndAgent); v.Outcome != Error {
		t.Fatalf("outcome %s (%s), want error", v.Outcome, v.Reason)
	}
}

// Criteria give partial credit: a task without milestones scores the
// judge's weighted criteria, and the judge's usage is kept apart.
func TestJudgeCriteriaScore(t *testing.T) {
	partial := &fakeJudge{name: "p", decide: func(req judgment.Request) (judgment.Verdict, error) {
		return judgment.Verdict{Pass: false, Score: 0.75, Reason: "the title is missing", Model: "m",
			Criteria: []judgment.CriterionVerdict{{ID: "chart", Pass: true}, {ID: "title", Pass: false}},
			Usage:    usage.Usage{InputTokens: 50, OutputTokens: 5, Cost: 0.002}}, nil
	}}
	s, err := CompileAll([]Spec{
		{Kind: JudgeKind, Evidence: FinalScreenshot, Expectation: "a titled chart",
			Criteria: []Criterion{{ID: "chart", Weight: 3, Text: "a chart shows"}, {ID: "title", Text: "it has a title"}}},
		{Kind: AnswerKind, Probe: &Probe{Answer: true}, Accepted: Strings{"saved as report.odt"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Judge = partial
	if !s.Judged() {
		t.Error("Judged() is false")
	}
	v := s.Evaluate(context.Background(), screened{Recorded: &Recorded{Steps: episode()}}, EndAgent)
	if v.Outcome != Failure || v.MilestoneScore != 0.75 || v.JudgeUsage.InputTokens != 50 || v.JudgeUsage.Cost != 0.002 {
		t.Fatalf("verdict %+v", v)
	}
	req := partial.asked[0]
	if len(req.Criteria) != 2 || req.Criteria[0].Weight != 3 || req.Criteria[1].Text != "it has a title" {
		t.Errorf("criteria asked %+v", req.Criteria)
	}
	if r := v.Checks[0]; r.Score == nil || *r.Score != 0.75 || len(r.Judge.Criteria) != 2 {
		t.Errorf("judge result %+v", r)
	}
	// Without an end by the agent, there is no score.
	if v := s.Evaluate(context.Background(), screened{Recorded: &Recorded{Steps: episode()}}, EndBudget); v.MilestoneScore != 0 {
		t.Errorf("budget end scored %v", v.MilestoneScore)
	}
}

func TestCompileJudge(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Expectation: "x"}, "evidence: a judge check needs evidence"},
		{Spec{Evidence: "video", Expectation: "x"}, `evidence: unknown evidence "video"`},
		{Spec{Evidence: FinalScreenshot}, "expectation: a judge check needs an expectation"},
		{Spec{Evidence: CommandOutput, Expectation: "x"}, "command: command_output evidence needs the command"},
		{Spec{Evidence: FinalScreenshot, Expectation: "x", Command: "ls"}, "command: applies to command_output evidence only"},
		{Spec{Evidence: FinalScreenshot, Expectation: "x", Timeout: duration.Duration(5)}, "timeout: applies to command_output"},
		{Spec{Evidence: FinalScreenshot, Expectation: "x", Images: 4}, "images: applies to expected_flow and process"},
		{Spec{Evidence: ExpectedFlow, Expectation: "x", Images: 1}, "images: must be at least 2"},
		{Spec{Evidence: ExpectedFlow, Expectation: "x", Criteria: []Criterion{{Text: "a"}}}, "criteria: criterion 1 has no id"},
		{Spec{Evidence: ExpectedFlow, Expectation: "x", Criteria: []Criterion{{ID: "a", Text: "a"}, {ID: "a", Text: "b"}}}, `criterion id "a" is used twice`},
		{Spec{Evidence: ExpectedFlow, Expectation: "x", Criteria: []Criterion{{ID: "a"}}}, `criterion "a" has no text`},
		{Spec{Evidence: ExpectedFlow, Expectation: "x", Criteria: []Criterion{{ID: "a", Text: "a", Weight: -1}}}, "negative weight"},
		{Spec{Evidence: ExpectedFlow, Expectation: "x", Value: "y"}, "value: does not apply to a judge check"},
		{Spec{Evidence: ProcessInfo, Expectation: "x", Images: 2, Criteria: []Criterion{{ID: "a", Text: "a"}}}, ""},
	} {
		tc.spec.Kind = JudgeKind
		_, err := Compile(tc.spec)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.spec, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestSample(t *testing.T) {
	for _, tc := range []struct {
		xs   []int
		n    int
		want []int
	}{
		{[]int{1, 2, 3}, 5, []int{1, 2, 3}},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5, []int{1, 3, 5, 7, 10}},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2, []int{1, 10}},
		{[]int{1, 2, 3}, 1, []int{3}},
		{[]int{1, 2, 3}, 0, nil},
		{nil, 4, nil},
	} {
		if got := sample(tc.xs, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("sample(%v, %d) = %v, want %v", tc.xs, tc.n, got, tc.want)
		}
	}
}

// A judge without a verdict marks its check undecided (ErrUndecided);
// UndecidedJudge tells an episode that failed for that alone, whose
// evidence was read, from one whose evidence could not be read.
func TestUndecidedJudge(t *testing.T) {
	ev := screened{Recorded: &Recorded{Steps: episode(), Files: map[string][]byte{"/root/out.txt": []byte("hello")}}}
	down := &fakeJudge{name: "openai:down", decide: func(judgment.Request) (judgment.Verdict, error) {
		return judgment.Verdict{}, fmt.Errorf("%w (openai): 503 Service Unavailable", judge.ErrUnavailable)
	}}
	up := &fakeJudge{name: "openai:up", decide: passAll}
	judgeSpec := Spec{Kind: JudgeKind, Evidence: FinalScreenshot, Expectation: "saved"}
	fileSpec := Spec{Kind: Contains, Probe: &Probe{File: "/root/out.txt"}, Value: "hello"}
	unread := Spec{Kind: Contains, Probe: &Probe{File: "/root/other.txt"}, Value: "x"}
	for _, tc := range []struct {
		name  string
		specs []Spec
		j     judgment.Model
		ev    Evidence
		want  bool
		first string // in the error returned
	}{
		{"the judge is down", []Spec{fileSpec, judgeSpec}, down, ev, true, "judge undecided: judge openai:down: judge unavailable (openai): 503"},
		{"the judge decided", []Spec{fileSpec, judgeSpec}, up, ev, false, ""},
		{"no judge check", []Spec{fileSpec}, down, ev, false, ""},
		{"another check's evidence could not be read too", []Spec{unread, judgeSpec}, down, screened{Recorded: &Recorded{Steps: episode(), Complete: true}}, false, ""},
		{"the screens could not be read", []Spec{judgeSpec}, up, ev.Recorded, false, ""},
		{"no judge configured", []Spec{judgeSpec}, nil, ev, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := CompileAll(tc.specs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.j != nil {
				s.Judge = tc.j
			}
			v := s.Evaluate(context.Background(), tc.ev, EndAgent)
			first, ok := UndecidedJudge(v)
			if ok != tc.want || !strings.HasPrefix(first, tc.first) {
				t.Fatalf("UndecidedJudge = %q, %v; want %v (%q); verdict %s: %s", first, ok, tc.want, tc.first, v.Outcome, v.Reason)
			}
			if ok && v.Outcome != Error {
				t.Fatalf("outcome %s", v.Outcome)
			}
		})
	}
}
