package openai

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

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/agent/agenttest"
)

// response is a Responses API answer with the given output items.
func response(id string, output ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"id": id, "object": "response", "created_at": 1, "model": "computer-use-preview",
		"status": "completed", "output": output,
		"usage": map[string]any{"input_tokens": 1000, "output_tokens": 40, "total_tokens": 1040}})
	return string(b)
}

func computerCall(callID, act string, checks ...map[string]any) map[string]any {
	if checks == nil {
		checks = []map[string]any{}
	}
	return map[string]any{"type": "computer_call", "id": "cu_" + callID, "call_id": callID, "status": "completed",
		"action": json.RawMessage(act), "pending_safety_checks": checks}
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
}

// responsesStandIn is a local server speaking the Responses API with
// scripted answers; it records the requests.
func responsesStandIn(t *testing.T, answers []string) (*httptest.Server, *[]map[string]any) {
	var reqs []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer test-key" {
			http.Error(w, `{"error":{"message":"not found"}}`, 404)
			return
		}
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		reqs = append(reqs, req)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answers[min(len(reqs), len(answers))-1]))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("TEST_KEY", "test-key")
	return srv, &reqs
}

// TestOpenAIComputerDeclaredDisplay drives the agent against a local
// stand-in of the Responses API: the tool declares the display, the
// screenshots have its size, the model's points land on the intended
// screen pixels, a point outside the display is refused naming both
// sizes, and the calls are answered with the next screenshot.
func TestOpenAIComputerDeclaredDisplay(t *testing.T) {
	for _, tc := range []struct {
		name            string
		screen, display action.Size // display: declared (zero: the screen)
		image           action.Size // what the model is shown
		click           string
		want            string
	}{
		// 1280x720 on 1920x1080: floor(640.5*1.5) = 960, floor(360.5*1.5) = 540
		{"declared 1280x720", fullHD, action.Size{W: 1280, H: 720}, action.Size{W: 1280, H: 720}, `"x":640,"y":360`, "click (960,540)"},
		// the screen
		{"screen", fullHD, action.Size{}, fullHD, `"x":960,"y":540`, "click (960,540)"},
		// 1024x768 on an odd screen, each axis on its own: floor(512.5*1366/1024) = 683, floor(384.5*768/768) = 384
		{"declared 1024x768 on 1366x768", wxga, action.Size{W: 1024, H: 768}, action.Size{W: 1024, H: 768}, `"x":512,"y":384`, "click (683,384)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, reqs := responsesStandIn(t, []string{
				response("resp_1", map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{map[string]any{"type": "summary_text", "text": "The button is in the middle."}}},
					computerCall("call_1", `{"type":"click","button":"left",`+tc.click+`}`)),
				response("resp_2", computerCall("call_2", fmt.Sprintf(`{"type":"double_click","x":%d,"y":3}`, tc.image.W),
					map[string]any{"id": "sc_1", "code": "malicious_instructions", "message": "Check the page."})),
				response("resp_3", outputText("Clicked.")),
			})
			a, err := NewOpenAIComputer(agent.ModelConfig{BaseURL: srv.URL + "/v1", APIKeyEnv: "TEST_KEY", Model: "computer-use-preview",
				Display: tc.display, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			a.Start(ctx, agent.Task{Instruction: "Click the button.", Screen: tc.screen})
			obs := agent.Observation{Step: 1, Screenshot: agenttest.Screenshot(t, tc.screen, image.Rect(0, 0, 4, 4), "png"), Format: "png", Screen: tc.screen}
			turn, err := a.Next(ctx, obs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := actionsOf(turn); got != tc.want || turn.ParseError != "" || turn.Thought != "The button is in the middle." {
				t.Fatalf("turn 1: %s (%q, thought %q), want %s", got, turn.ParseError, turn.Thought, tc.want)
			}
			if turn.Space == nil || turn.Space.Image != tc.image || turn.Usage.InputTokens != 1000 {
				t.Fatalf("turn 1: space %v usage %+v", turn.Space, turn.Usage)
			}
			req := (*reqs)[0]
			tools, _ := json.Marshal(req["tools"])
			want := fmt.Sprintf(`[{"display_height":%d,"display_width":%d,"environment":"linux","type":"computer_use_preview"}]`, tc.image.H, tc.image.W)
			if string(tools) != want || req["truncation"] != "auto" || req["model"] != "computer-use-preview" {
				t.Fatalf("tools %s (want %s), truncation %v, model %v", tools, want, req["truncation"], req["model"])
			}
			if got := agenttest.ImageSizeIn(t, req["input"]); got != tc.image {
				t.Fatalf("first screenshot sent at %v, want %v", got, tc.image)
			}
			input, _ := json.Marshal(req["input"])
			if !strings.Contains(string(input), fmt.Sprintf("display %dx%d", tc.image.W, tc.image.H)) || !strings.Contains(string(input), "Click the button.") {
				t.Errorf("first message %.300s", input)
			}

			// The call is answered with the next screenshot; the next call
			// points outside the display.
			obs.Step = 2
			turn, err = a.Next(ctx, obs, nil)
			if err != nil {
				t.Fatal(err)
			}
			req = (*reqs)[1]
			input, _ = json.Marshal(req["input"])
			if req["previous_response_id"] != "resp_1" || !strings.Contains(string(input), `"call_id":"call_1"`) ||
				!strings.Contains(string(input), `"type":"computer_call_output"`) {
				t.Fatalf("second request: previous %v, input %.300s", req["previous_response_id"], input)
			}
			if p := turn.Prompt; len(p) != 2 || p[0].Text != "the earlier turns, by previous_response_id resp_1" ||
				!strings.Contains(p[1].Text, "the outputs of the 1 computer calls") || len(p[1].Images) != 1 {
				t.Errorf("turn 2's prompt record: %+v", p)
			}
			if got := agenttest.ImageSizeIn(t, req["input"]); got != tc.image {
				t.Fatalf("screenshot of the call's output at %v, want %v", got, tc.image)
			}
			wantErr := fmt.Sprintf("point (%d, 3) is outside the model's %dx%d image (screen %dx%d)", tc.image.W, tc.image.W, tc.image.H, tc.screen.W, tc.screen.H)
			if len(turn.Actions) != 0 || !strings.Contains(turn.ParseError, wantErr) {
				t.Fatalf("turn 2: %s (%q), want the error %q", actionsOf(turn), turn.ParseError, wantErr)
			}

			// The refusal reaches the model; the safety check is acknowledged.
			obs.Step, obs.Feedback = 3, "your last reply could not be used: "+turn.ParseError
			turn, err = a.Next(ctx, obs, nil)
			if err != nil {
				t.Fatal(err)
			}
			input, _ = json.Marshal((*reqs)[2]["input"])
			if !strings.Contains(string(input), `"acknowledged_safety_checks":[{"code":"malicious_instructions","id":"sc_1","message":"Check the page."}]`) ||
				!strings.Contains(string(input), wantErr) || (*reqs)[2]["previous_response_id"] != "resp_2" {
				t.Fatalf("third request %.600s", input)
			}
			if got := actionsOf(turn); got != `done "Clicked."` {
				t.Fatalf("turn 3: %s", got)
			}
		})
	}
}

func TestOpenAIComputerErrors(t *testing.T) {
	for _, tc := range []struct {
		status    int
		transient bool
	}{{500, true}, {429, true}, {400, false}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			w.Write([]byte(`{"error":{"message":"no"}}`))
		}))
		t.Setenv("TEST_KEY", "test-key")
		a, _ := NewOpenAIComputer(agent.ModelConfig{BaseURL: srv.URL + "/v1", APIKeyEnv: "TEST_KEY", Model: "m", MaxRetries: -1})
		a.Start(context.Background(), agent.Task{Instruction: "x", Screen: action.Size{W: 100, H: 100}})
		_, err := a.Next(context.Background(), agent.Observation{Step: 1}, nil)
		if err == nil || errors.Is(err, agent.ErrTransient) != tc.transient {
			t.Errorf("status %d: %v, want transient %v", tc.status, err, tc.transient)
		}
		if a.prev != "" || a.pending != nil {
			t.Errorf("status %d: the conversation moved on after a failed call", tc.status)
		}
		srv.Close()
	}
	// No screen size anywhere: nothing to map the model's points to.
	a, _ := NewOpenAIComputer(agent.ModelConfig{APIKeyEnv: "TEST_KEY", Model: "m"})
	a.Start(context.Background(), agent.Task{Instruction: "x"})
	if _, err := a.Next(context.Background(), agent.Observation{Step: 1}, nil); err == nil || !strings.Contains(err.Error(), "names the screen size") {
		t.Errorf("no screen: %v", err)
	}
}

// The screen sizes of agent's space tests.
var (
	fullHD = action.Size{W: 1920, H: 1080}
	wxga   = action.Size{W: 1366, H: 768}
)
