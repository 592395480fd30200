package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/agent/agenttest"
	"github.com/proctor-eval/proctor/usage"
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
	a, err := NewAnthropic(agent.ModelConfig{BaseURL: srv.URL, Model: "claude-sonnet-4-5", APIKeyEnv: "TEST_ANTHROPIC_KEY", Prices: usage.DefaultPrices})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a.Start(ctx, agent.Task{Instruction: "What is six times seven?"})
	obs := agent.Observation{Screenshot: []byte("png bytes"), Format: "png", Screen: action.Size{W: 1280, H: 800}}
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
		// The record of what was sent: the task's text first, then the
		// earlier conversation and this turn's tool results.
		switch p := turn.Prompt; {
		case i == 0 && (len(p) != 1 || !strings.Contains(p[0].Text, "What is six times seven?") || len(p[0].Images) != 1):
			t.Errorf("turn 1 prompt %+v", p)
		case i > 0 && (len(p) != 2 || p[0].Role != "conversation" || !strings.Contains(p[0].Text, fmt.Sprintf("the %d earlier messages", 2*i))):
			t.Errorf("turn %d prompt %+v", i+1, p)
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
		a, _ := NewAnthropic(agent.ModelConfig{BaseURL: srv.URL, Model: "m", APIKeyEnv: "TEST_ANTHROPIC_KEY", MaxRetries: -1})
		a.Start(context.Background(), agent.Task{Instruction: "x"})
		_, err := a.Next(context.Background(), agent.Observation{Step: 1, Screen: action.Size{W: 10, H: 10}}, nil)
		if err == nil || errors.Is(err, agent.ErrTransient) != tc.transient {
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
	a, _ := NewAnthropic(agent.ModelConfig{BaseURL: srv.URL, Model: "m", APIKeyEnv: "TEST_ANTHROPIC_KEY", MaxRetries: -1, Timeout: 150 * time.Millisecond})
	a.Start(context.Background(), agent.Task{Instruction: "x"})
	_, err := a.Next(context.Background(), agent.Observation{Step: 1, Screen: action.Size{W: 10, H: 10}}, nil)
	if !errors.Is(err, agent.ErrTransient) || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("slow reply: %v, want a transient timeout", err)
	}
}

// TestAnthropicDeclaresTheScaledDisplay drives the agent against a local
// stand-in of the Messages API: the tool declares the scaled display, the
// screenshots sent have its size, the model's points land on the intended
// screen pixels and a point outside the display is refused, naming both
// sizes.
func TestAnthropicDeclaresTheScaledDisplay(t *testing.T) {
	for _, tc := range []struct {
		screen, display action.Size
		click           string // the model's coordinate, in the display
		want            string // the action on the screen
	}{
		// FWXGA: floor(683.5*1920/1366) = 960, floor(384.5*1080/768) = 540
		{fullHD, wxga, "[683,384]", "click (960,540)"},
		// shown as it is
		{action.Size{W: 1280, H: 800}, action.Size{W: 1280, H: 800}, "[640,400]", "click (640,400)"},
		// an odd shape: 1568x661, floor(100.5*2560/1568) = 164, floor(100.5*1080/661) = 164
		{action.Size{W: 2560, H: 1080}, action.Size{W: 1568, H: 661}, "[100,100]", "click (164,164)"},
	} {
		t.Run(fmt.Sprintf("%dx%d", tc.screen.W, tc.screen.H), func(t *testing.T) {
			var bodies []map[string]any
			answers := []string{
				message(toolUse("toolu_1", `{"action":"left_click","coordinate":`+tc.click+`}`)),
				message(toolUse("toolu_2", fmt.Sprintf(`{"action":"left_click","coordinate":[%d,5]}`, tc.display.W))),
				message(map[string]any{"type": "text", "text": "done"}),
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body map[string]any
				json.NewDecoder(r.Body).Decode(&body)
				bodies = append(bodies, body)
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(answers[len(bodies)-1]))
			}))
			defer srv.Close()
			t.Setenv("TEST_ANTHROPIC_KEY", "k")
			a, err := NewAnthropic(agent.ModelConfig{BaseURL: srv.URL, Model: "claude-sonnet-4-5", APIKeyEnv: "TEST_ANTHROPIC_KEY"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			a.Start(ctx, agent.Task{Instruction: "Click the button.", Screen: tc.screen})
			shot := agenttest.Screenshot(t, tc.screen, image.Rect(0, 0, 10, 10), "png")
			obs := agent.Observation{Step: 1, Screenshot: shot, Format: "png", Screen: tc.screen}
			turn, err := a.Next(ctx, obs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := actionsOf(turn); got != tc.want || turn.ParseError != "" {
				t.Fatalf("turn 1: %s (%s), want %s", got, turn.ParseError, tc.want)
			}
			if turn.Space == nil || turn.Space.Image != tc.display || turn.Space.Screen != tc.screen {
				t.Fatalf("recorded space %v", turn.Space)
			}
			tools, _ := json.Marshal(bodies[0]["tools"])
			want := fmt.Sprintf(`"display_height_px":%d,"display_width_px":%d`, tc.display.H, tc.display.W)
			if !strings.Contains(string(tools), want) {
				t.Fatalf("tools %s, want %s", tools, want)
			}
			if got := agenttest.ImageSizeIn(t, bodies[0]["messages"]); got != tc.display {
				t.Fatalf("first screenshot sent at %v, want %v", got, tc.display)
			}
			first, _ := json.Marshal(bodies[0]["messages"])
			if !strings.Contains(string(first), fmt.Sprintf("screen %dx%d", tc.display.W, tc.display.H)) {
				t.Errorf("the first message does not name the display: %.300s", first)
			}
			// The next screenshot, sent as the tool's result, has the display's size too.
			obs.Step = 2
			turn, err = a.Next(ctx, obs, nil)
			if err != nil {
				t.Fatal(err)
			}
			msgs := bodies[1]["messages"].([]any)
			if got := agenttest.ImageSizeIn(t, msgs[len(msgs)-1]); got != tc.display {
				t.Fatalf("tool result screenshot at %v, want %v", got, tc.display)
			}
			wantErr := fmt.Sprintf("point (%d, 5) is outside the model's %dx%d image (screen %dx%d)", tc.display.W, tc.display.W, tc.display.H, tc.screen.W, tc.screen.H)
			if len(turn.Actions) != 0 || !strings.Contains(turn.ParseError, wantErr) {
				t.Fatalf("turn 2: %s (%q), want the error %q", actionsOf(turn), turn.ParseError, wantErr)
			}
			// The model hears about it in the tool's result.
			obs.Step, obs.Feedback = 3, "your last reply could not be used: "+turn.ParseError
			if _, err := a.Next(ctx, obs, nil); err != nil {
				t.Fatal(err)
			}
			last, _ := json.Marshal(bodies[2]["messages"].([]any)[4])
			if !strings.Contains(string(last), wantErr) || !strings.Contains(string(last), `"is_error":true`) {
				t.Fatalf("tool result %s", last)
			}
		})
	}
}

// The screen sizes of agent's space tests.
var (
	fullHD = action.Size{W: 1920, H: 1080}
	wxga   = action.Size{W: 1366, H: 768}
)

// actionsOf writes a turn's actions, one line.
func actionsOf(turn agent.Turn) string {
	var out []string
	for _, a := range turn.Actions {
		out = append(out, a.String())
	}
	return strings.Join(out, " | ")
}
