package openai

import (
	"context"
	"encoding/json"
	"image"
	"net/http"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/agent/agenttest"
	"github.com/proctor-eval/proctor/usage"
)

// routed answers by the role named in the system prompt.
func routed(t *testing.T, answers map[string][]string) (*standIn, map[string]int) {
	count := map[string]int{}
	s := newStandIn(t, func(_ int, req map[string]any, w http.ResponseWriter) {
		msgs := req["messages"].([]any)
		system := msgs[0].(map[string]any)["content"].(string)
		for role, list := range answers {
			if strings.Contains(system, role) {
				i := min(count[role], len(list)-1)
				count[role]++
				reply(200, completion(list[i], 100, 10))(w)
				return
			}
		}
		t.Errorf("no answer for system prompt %q", system)
		reply(500, `{}`)(w)
	})
	return s, count
}

func actionsOf(turn agent.Turn) string {
	var out []string
	for _, a := range turn.Actions {
		out = append(out, a.String())
	}
	return strings.Join(out, " | ")
}

func TestPlannerGrounder(t *testing.T) {
	s, count := routed(t, map[string][]string{
		"You plan the work": {"Click the Save button in the toolbar.", "DONE"},
		"You locate":        {"CLICK <point>[[500, 250]]</point>"},
	})
	t.Setenv("TEST_KEY", "test-key")
	base := agent.ModelConfig{BaseURL: s.srv.URL + "/v1", APIKeyEnv: "TEST_KEY", Prices: usage.DefaultPrices}
	planner, grounder := base, base
	planner.Model, grounder.Model = "gpt-5", "os-atlas"
	grounder.Prompt = agent.PromptConfig{Format: action.FormatOSAtlas, Unit: action.Thousand}
	p := &PlannerGrounder{Planner: planner, Grounder: grounder}
	ctx := context.Background()
	if err := p.Start(ctx, agent.Task{Instruction: "Save the document."}); err != nil {
		t.Fatal(err)
	}
	obs := agent.Observation{Step: 1, Screenshot: []byte("img"), Screen: action.Size{W: 1920, H: 1080}}
	turn, err := p.Next(ctx, obs, nil)
	// The grounder's thousandths land on the screen's pixels.
	if err != nil || actionsOf(turn) != `plan "Click the Save button in the toolbar." | click (960,270)` {
		t.Fatalf("turn 1: %s %v %s", actionsOf(turn), err, turn.ParseError)
	}
	if turn.Usage.InputTokens != 200 {
		t.Fatalf("usage of both models: %+v", turn.Usage)
	}
	if m := turn.Models; len(m) != 2 || m[0].Role != "planner" || m[1].Role != "grounder" || m[0].InputTokens+m[1].InputTokens != 200 {
		t.Fatalf("usage by model: %+v", turn.Models)
	}
	turn, err = p.Next(ctx, obs, nil)
	if err != nil || actionsOf(turn) != "done" || count["You locate"] != 1 {
		t.Fatalf("turn 2: %s %v (grounder asked %d times)", actionsOf(turn), err, count["You locate"])
	}
	// The grounder saw the planner's sentence and the screenshot.
	b, _ := json.Marshal(s.requests[1])
	if !strings.Contains(string(b), "Instruction: Click the Save button") || !strings.Contains(string(b), "data:image/png;base64,aW1n") {
		t.Fatalf("grounding request %s", b)
	}
}

func TestReflectPipeline(t *testing.T) {
	s, count := routed(t, map[string][]string{
		"You plan the work for": {"1. Open the File menu\n2. Click Save", "1. Press Ctrl+S"},
		"You act for":           {"```python\npyautogui.click(10, 10)\n```"},
		"You judge":             {"sub_task_success", "need_retry\nclick lower", "need_retry\nstill wrong", "need_reformulate\nuse the keyboard", "sub_task_success"},
	})
	t.Setenv("TEST_KEY", "test-key")
	r := &Reflect{Model: agent.ModelConfig{BaseURL: s.srv.URL + "/v1", APIKeyEnv: "TEST_KEY", Model: "gpt-5"}, MaxRetries: 5}
	ctx := context.Background()
	if err := r.Start(ctx, agent.Task{Instruction: "Save.", Screen: action.Size{W: 100, H: 100}}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"plan \"Open the File menu\\nClick Save\" | click (10,10)", // plan, act on sub-task 1
		`reflect "sub_task_success" | click (10,10)`,               // sub-task 1 done, act on 2
		`reflect advice="click lower" "need_retry" | click (10,10)`,
		`reflect advice="still wrong" "need_retry" | click (10,10)`,
		`reflect advice="use the keyboard" "need_reformulate" | plan "Press Ctrl+S" | click (10,10)`,
		`reflect "sub_task_success" | done`,
	}
	for i, w := range want {
		turn, err := r.Next(ctx, agent.Observation{Step: i + 1}, nil)
		if err != nil || actionsOf(turn) != w {
			t.Fatalf("turn %d: %s (%v %s), want %s", i+1, actionsOf(turn), err, turn.ParseError, w)
		}
	}
	if count["You plan the work for"] != 2 {
		t.Fatalf("planned %d times", count["You plan the work for"])
	}
	// The retry cap: a sub-task retried more than MaxRetries times is planned again.
	r2 := &Reflect{Model: r.Model, MaxRetries: 1}
	s2, count2 := routed(t, map[string][]string{
		"You plan the work for": {"1. Click OK"},
		"You act for":           {"```python\npyautogui.click(1, 1)\n```"},
		"You judge":             {"need_retry\nagain"},
	})
	r2.Model.BaseURL = s2.srv.URL + "/v1"
	r2.Start(ctx, agent.Task{Instruction: "OK.", Screen: action.Size{W: 100, H: 100}})
	for i := 0; i < 4; i++ {
		r2.Next(ctx, agent.Observation{Step: i + 1}, nil)
	}
	if count2["You plan the work for"] < 2 {
		t.Fatalf("after the retry cap the sub-task was not planned again (%d plans)", count2["You plan the work for"])
	}
}

// TestReflectScreenAgentFormat: with --format screenagent every phase
// speaks ScreenAgent's JSON function calls: PlanAction to plan,
// MouseAction and KeyboardAction to act, EvaluateSubTaskAction to reflect;
// a reply in another shape is a parse error, never an action.
func TestReflectScreenAgentFormat(t *testing.T) {
	s, _ := routed(t, map[string][]string{
		"You plan the work for": {"```json\n[{\"action_type\": \"PlanAction\", \"element\": \"Open the File menu\"}, {\"action_type\": \"PlanAction\", \"element\": \"Click Save\"}]\n```"},
		"You act for": {
			"```json\n[{\"action_type\": \"MouseAction\", \"mouse_action_type\": \"click\", \"mouse_button\": \"left\", \"mouse_position\": {\"width\": 12, \"height\": 34}}]\n```",
			"```json\n[{\"action_type\": \"KeyboardAction\", \"keyboard_action_type\": \"press\", \"keyboard_key\": \"Control_L+s\"}]\n```",
		},
		"You judge": {
			"```json\n{\"action_type\": \"EvaluateSubTaskAction\", \"situation\": \"sub_task_success\"}\n```",
			"need_retry\nplain words are not ScreenAgent's format",
			"{\"action_type\": \"EvaluateSubTaskAction\", \"situation\": \"sub_task_success\", \"advice\": \"saved\"}",
		},
	})
	t.Setenv("TEST_KEY", "test-key")
	r := &Reflect{Model: agent.ModelConfig{BaseURL: s.srv.URL + "/v1", APIKeyEnv: "TEST_KEY", Model: "screenagent",
		Prompt: agent.PromptConfig{Format: action.FormatScreenAgent}}}
	ctx := context.Background()
	if err := r.Start(ctx, agent.Task{Instruction: "Save.", Screen: action.Size{W: 100, H: 100}}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`plan "Open the File menu\nClick Save" | click (12,34)`,
		`reflect "sub_task_success" | hotkey ctrl+s`,
		"", // a parse error
		`reflect advice="saved" "sub_task_success" | done`,
	}
	for i, w := range want {
		turn, err := r.Next(ctx, agent.Observation{Step: i + 1}, nil)
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		if w == "" {
			if turn.ParseError == "" || len(turn.Actions) > 0 {
				t.Fatalf("turn %d: a reflection outside the format gave %s (parse error %q)", i+1, actionsOf(turn), turn.ParseError)
			}
			r.acted = true // the judgement is asked for again
			continue
		}
		if got := actionsOf(turn); got != w {
			t.Fatalf("turn %d: %s (%s), want %s", i+1, got, turn.ParseError, w)
		}
	}
	// The act phase was told ScreenAgent's format.
	b, _ := json.Marshal(s.requests[1])
	if !strings.Contains(string(b), "MouseAction") || strings.Contains(string(b), "pyautogui.click") {
		t.Fatalf("the act request does not ask for ScreenAgent's format: %s", b)
	}
}

// TestPlannerGrounderSmartResize: a UI-TARS grounder answering in pixels
// of its smart-resized screenshot, as ScienceBoard's grounders do, while
// the planner sees the screen as it is.
func TestPlannerGrounderSmartResize(t *testing.T) {
	s, _ := routed(t, map[string][]string{
		"You plan the work": {"Click the OK button."},
		// 1932x1092: floor(966.5*1920/1932) = 960, floor(546.5*1080/1092) = 540
		"You locate": {"Thought: the button is in the middle.\nAction: click(start_box='(966,546)')"},
	})
	t.Setenv("TEST_KEY", "test-key")
	base := agent.ModelConfig{BaseURL: s.srv.URL + "/v1", APIKeyEnv: "TEST_KEY", Prices: usage.DefaultPrices}
	planner, grounder := base, base
	planner.Model, grounder.Model = "gpt-5", "ui-tars-1.5-7b"
	grounder.Prompt = agent.PromptConfig{Format: action.FormatUITARS, Unit: agent.SmartResize}
	p := &PlannerGrounder{Planner: planner, Grounder: grounder}
	ctx := context.Background()
	if err := p.Start(ctx, agent.Task{Instruction: "Press OK.", Screen: fullHD}); err != nil {
		t.Fatal(err)
	}
	obs := agent.Observation{Step: 1, Screenshot: agenttest.Screenshot(t, fullHD, image.Rect(0, 0, 4, 4), "png"), Format: "png", Screen: fullHD}
	turn, err := p.Next(ctx, obs, nil)
	if err != nil || actionsOf(turn) != `plan "Click the OK button." | click (960,540)` || turn.ParseError != "" {
		t.Fatalf("turn: %s %v %s", actionsOf(turn), err, turn.ParseError)
	}
	if turn.Space == nil || turn.Space.Image != (action.Size{W: 1932, H: 1092}) {
		t.Fatalf("recorded space %v", turn.Space)
	}
	plannerMsgs := s.requests[0]["messages"].([]any)
	grounderMsgs := s.requests[1]["messages"].([]any)
	if got := agenttest.ImageSizeIn(t, plannerMsgs[len(plannerMsgs)-1]); got != fullHD {
		t.Errorf("the planner was shown %v", got)
	}
	if got := agenttest.ImageSizeIn(t, grounderMsgs[len(grounderMsgs)-1]); got != (action.Size{W: 1932, H: 1092}) {
		t.Errorf("the grounder was shown %v", got)
	}
	if sys := grounderMsgs[0].(map[string]any)["content"].(string); !strings.Contains(sys, "1932x1092") || !strings.Contains(sys, "in pixels of the screenshot") {
		t.Errorf("grounder prompt %s", sys)
	}
}
