package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
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

func actionsOf(turn Turn) string {
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
	base := ModelConfig{BaseURL: s.srv.URL + "/v1", APIKeyEnv: "TEST_KEY", Prices: DefaultPrices}
	planner, grounder := base, base
	planner.Model, grounder.Model = "gpt-5", "os-atlas"
	grounder.Prompt = PromptConfig{Format: action.FormatOSAtlas, Unit: action.Thousand}
	p := &PlannerGrounder{Planner: planner, Grounder: grounder}
	ctx := context.Background()
	if err := p.Start(ctx, Task{Instruction: "Save the document."}); err != nil {
		t.Fatal(err)
	}
	obs := Observation{Step: 1, Screenshot: []byte("img"), Screen: action.Size{W: 1920, H: 1080}}
	turn, err := p.Next(ctx, obs, nil)
	if err != nil || actionsOf(turn) != `plan "Click the Save button in the toolbar." | click (500,250)k` {
		t.Fatalf("turn 1: %s %v %s", actionsOf(turn), err, turn.ParseError)
	}
	if turn.Usage.InputTokens != 200 {
		t.Fatalf("usage of both models: %+v", turn.Usage)
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
	r := &Reflect{Model: ModelConfig{BaseURL: s.srv.URL + "/v1", APIKeyEnv: "TEST_KEY", Model: "gpt-5"}, MaxRetries: 5}
	ctx := context.Background()
	if err := r.Start(ctx, Task{Instruction: "Save.", Screen: action.Size{W: 100, H: 100}}); err != nil {
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
		turn, err := r.Next(ctx, Observation{Step: i + 1}, nil)
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
	r2.Start(ctx, Task{Instruction: "OK."})
	for i := 0; i < 4; i++ {
		r2.Next(ctx, Observation{Step: i + 1}, nil)
	}
	if count2["You plan the work for"] < 2 {
		t.Fatalf("after the retry cap the sub-task was not planned again (%d plans)", count2["You plan the work for"])
	}
}
