package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
)

func message(content ...map[string]any) string {
	stop := "end_turn"
	for _, c := range content {
		if c["type"] == "tool_use" {
			stop = "tool_use"
		}
	}
	b, _ := json.Marshal(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": content, "stop_reason": stop, "usage": map[string]any{"input_tokens": 1000, "output_tokens": 50}})
	return string(b)
}

func toolUse(id string, input string) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": "computer", "input": json.RawMessage(input)}
}

func TestAnthropicAgentLoop(t *testing.T) {
	var bodies []map[string]any
	var betas []string
	answers := []string{
		message(map[string]any{"type": "text", "text": "I will click the field."}, toolUse("toolu_1", `{"action":"left_click","coordinate":[10,20]}`)),
		message(toolUse("toolu_2", `{"action":"screenshot"}`)),
		message(toolUse("toolu_3", `{"action":"type","text":"héllo"}`), toolUse("toolu_4", `{"action":"key","text":"Return"}`)),
		message(map[string]any{"type": "text", "text": "42"}),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		bodies = append(bodies, body)
		betas = append(betas, r.Header.Get("anthropic-beta"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answers[len(bodies)-1]))
	}))
	defer srv.Close()
	t.Setenv("TEST_ANTHROPIC_KEY", "k")
	a, err := NewAnthropic(ModelConfig{BaseURL: srv.URL, Model: "claude-sonnet-4-5", APIKeyEnv: "TEST_ANTHROPIC_KEY", Prices: DefaultPrices})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a.Start(ctx, Task{Instruction: "What is six times seven?"})
	obs := Observation{Screenshot: []byte("png bytes"), Format: "png", Screen: action.Size{W: 1280, H: 800}}
	want := [][]string{{"click (10,20)"}, nil, {`type "héllo"`, "key enter"}, {`done "42"`}}
	for i, w := range want {
		obs.Step = i + 1
		turn, err := a.Next(ctx, obs, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, act := range turn.Actions {
			got = append(got, act.String())
		}
		if strings.Join(got, "|") != strings.Join(w, "|") || turn.ParseError != "" {
			t.Fatalf("turn %d: %v (%s), want %v", i+1, got, turn.ParseError, w)
		}
		if i == 0 && turn.Thought != "I will click the field." {
			t.Fatalf("turn 1 thought %q", turn.Thought)
		}
	}
	if betas[0] != "computer-use-2025-01-24" {
		t.Fatalf("beta header %q", betas[0])
	}
	tools, _ := json.Marshal(bodies[0]["tools"])
	if !strings.Contains(string(tools), `"display_width_px":1280`) || !strings.Contains(string(tools), `"computer_20250124"`) {
		t.Fatalf("tools %s", tools)
	}
	// The third request answers both pending tool calls; the last carries the screenshot.
	msgs := bodies[3]["messages"].([]any)
	last, _ := json.Marshal(msgs[len(msgs)-1])
	if !strings.Contains(string(last), `"tool_use_id":"toolu_3"`) || !strings.Contains(string(last), `"tool_use_id":"toolu_4"`) ||
		strings.Count(string(last), `"type":"image"`) != 1 {
		t.Fatalf("tool results %s", last)
	}
	if len(msgs) != 7 { // user, then (assistant, user) x 3
		t.Fatalf("%d messages in the fourth request", len(msgs))
	}
}

func TestAnthropicErrors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		transient bool
	}{{529, true}, {500, true}, {429, true}, {400, false}, {401, false}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			w.Write([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`))
		}))
		t.Setenv("TEST_ANTHROPIC_KEY", "k")
		a, _ := NewAnthropic(ModelConfig{BaseURL: srv.URL, Model: "m", APIKeyEnv: "TEST_ANTHROPIC_KEY", MaxRetries: -1})
		a.Start(context.Background(), Task{Instruction: "x"})
		_, err := a.Next(context.Background(), Observation{Step: 1, Screen: action.Size{W: 10, H: 10}}, nil)
		if err == nil || errors.Is(err, ErrTransient) != tc.transient {
			t.Errorf("status %d: %v, want transient %v", tc.status, err, tc.transient)
		}
		// After a failed call the conversation is as before, ready for the retry.
		if len(a.messages) != 0 {
			t.Errorf("status %d: %d messages kept after a failed call", tc.status, len(a.messages))
		}
		srv.Close()
	}
}

func TestAnthropicSlowReplyTimesOut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(400 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(message(map[string]any{"type": "text", "text": "late"})))
	}))
	defer srv.Close()
	t.Setenv("TEST_ANTHROPIC_KEY", "k")
	a, _ := NewAnthropic(ModelConfig{BaseURL: srv.URL, Model: "m", APIKeyEnv: "TEST_ANTHROPIC_KEY", MaxRetries: -1, Timeout: 150 * time.Millisecond})
	a.Start(context.Background(), Task{Instruction: "x"})
	_, err := a.Next(context.Background(), Observation{Step: 1, Screen: action.Size{W: 10, H: 10}}, nil)
	if !errors.Is(err, ErrTransient) || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("slow reply: %v, want a transient timeout", err)
	}
}
