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
	"sync/atomic"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/agent/agenttest"
	"github.com/proctor-eval/proctor/usage"
)

// standIn is a local server speaking the chat-completions API with
// scripted answers; it records the requests it gets.
type standIn struct {
	srv      *httptest.Server
	requests []map[string]any
	answer   func(n int, req map[string]any, w http.ResponseWriter)
	calls    atomic.Int32
}

func newStandIn(t *testing.T, answer func(n int, req map[string]any, w http.ResponseWriter)) *standIn {
	s := &standIn{answer: answer}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
			http.Error(w, `{"error":{"message":"not found"}}`, 404)
			return
		}
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		s.requests = append(s.requests, req)
		s.answer(int(s.calls.Add(1)), req, w)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func completion(content string, in, out int) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-5",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out},
	})
	return string(b)
}

func reply(status int, body string, hdr ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

func newAgent(t *testing.T, url string, cfg agent.ModelConfig) *OpenAI {
	t.Setenv("TEST_KEY", "test-key")
	cfg.BaseURL, cfg.APIKeyEnv, cfg.Model = url+"/v1", "TEST_KEY", "gpt-5-mini"
	if cfg.Prices == nil {
		cfg.Prices = usage.DefaultPrices
	}
	a, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background(), agent.Task{Instruction: "Save the file.", Screen: action.Size{W: 1920, H: 1080},
		Demonstrations: []string{"Press Ctrl+S."}}); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestOpenAIAgent(t *testing.T) {
	tests := []struct {
		name      string
		script    []func(http.ResponseWriter)
		want      []string
		parseErr  string
		thought   string
		err       string
		transient bool
		calls     int
	}{
		{name: "reply parsed", script: []func(http.ResponseWriter){reply(200, completion("I will save.\n```python\npyautogui.hotkey('ctrl', 's')\n```", 1000, 20))},
			want: []string{"hotkey ctrl+s"}, thought: "I will save.", calls: 1},
		{name: "malformed reply", script: []func(http.ResponseWriter){reply(200, completion("Let me think about it.", 900, 5))},
			parseErr: "no code block", thought: "Let me think about it.", calls: 1},
		{name: "429 with retry-after, then an answer", script: []func(http.ResponseWriter){
			reply(429, `{"error":{"message":"rate limited","type":"rate_limit"}}`, "Retry-After", "0"),
			reply(200, completion("DONE", 10, 1))}, want: []string{"done"}, calls: 2},
		{name: "500s past the retries", script: []func(http.ResponseWriter){
			reply(500, `{"error":{"message":"boom"}}`), reply(502, `{"error":{"message":"boom"}}`), reply(503, `{"error":{"message":"boom"}}`)},
			err: "503 Service Unavailable", transient: true, calls: 3},
		{name: "400 is not retried", script: []func(http.ResponseWriter){reply(400, `{"error":{"message":"bad image"}}`)},
			err: "refused the request", calls: 1},
		{name: "slow reply times out", script: []func(http.ResponseWriter){func(w http.ResponseWriter) {
			time.Sleep(400 * time.Millisecond)
			reply(200, completion("DONE", 1, 1))(w)
		}}, err: "deadline", transient: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStandIn(t, func(n int, _ map[string]any, w http.ResponseWriter) {
				tc.script[min(n, len(tc.script))-1](w)
			})
			cfg := agent.ModelConfig{MaxRetries: 2}
			if tc.name == "slow reply times out" {
				cfg.Timeout, cfg.MaxRetries = 150*time.Millisecond, -1
			}
			a := newAgent(t, s.srv.URL, cfg)
			turn, err := a.Next(context.Background(), agent.Observation{Step: 1, Screenshot: []byte("\x89PNG fake"), Format: "png", Tree: "tag\tname\n"}, nil)
			if tc.calls > 0 && int(s.calls.Load()) != tc.calls {
				t.Errorf("%d requests, want %d", s.calls.Load(), tc.calls)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || errors.Is(err, agent.ErrTransient) != tc.transient {
					t.Fatalf("err = %v, want %q (transient %v)", err, tc.err, tc.transient)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if turn.Thought != tc.thought {
				t.Errorf("thought %q, want %q", turn.Thought, tc.thought)
			}
			if tc.parseErr != "" {
				if !strings.Contains(turn.ParseError, tc.parseErr) {
					t.Fatalf("parse error %q", turn.ParseError)
				}
			} else {
				var got []string
				for _, a := range turn.Actions {
					got = append(got, a.String())
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("actions %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestOpenAIRequest(t *testing.T) {
	s := newStandIn(t, func(int, map[string]any, http.ResponseWriter) {})
	s.answer = func(_ int, _ map[string]any, w http.ResponseWriter) { reply(200, completion("WAIT 2", 1200, 30))(w) }
	a := newAgent(t, s.srv.URL, agent.ModelConfig{History: 1, Prompt: agent.PromptConfig{Screenshot: true, Tree: true, Demonstrations: true}})
	history := []agent.Turn{{Raw: "first thought\n```python\npyautogui.click(1, 1)\n```"}, {Raw: "second thought\nWAIT"}}
	turn, err := a.Next(context.Background(), agent.Observation{Step: 3, Screenshot: []byte("img"), Format: "png", Tree: "tag\tname\ttext\nbutton\tSave\t\n", Feedback: "no element"}, history)
	if err != nil {
		t.Fatal(err)
	}
	// gpt-5* costs $1.25 and $10 per million tokens.
	if turn.Usage.InputTokens != 1200 || turn.Usage.OutputTokens != 30 || fmt.Sprintf("%.6f", turn.Usage.Cost) != "0.001800" {
		t.Fatalf("usage %+v", turn.Usage)
	}
	req := s.requests[0]
	if req["model"] != "gpt-5-mini" || req["temperature"] != 0.5 || req["top_p"] != 0.9 || req["max_tokens"] != 1500.0 {
		t.Fatalf("sampling parameters: %v %v %v %v", req["model"], req["temperature"], req["top_p"], req["max_tokens"])
	}
	msgs := req["messages"].([]any)
	// system, one earlier turn (history window 1: user + assistant), the observation
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want 4", len(msgs))
	}
	system := msgs[0].(map[string]any)["content"].(string)
	for _, w := range []string{"DONE", "FAIL", "ANS", "Save the file.", "Press Ctrl+S.", "1920x1080"} {
		if !strings.Contains(system, w) {
			t.Errorf("system prompt lacks %q", w)
		}
	}
	if msgs[2].(map[string]any)["content"] != history[1].Raw {
		t.Errorf("history: %v", msgs[2])
	}
	// The turn keeps what was sent, the screenshot as a note.
	if p := turn.Prompt; len(p) != 4 || p[0].Role != "system" || p[0].Text != system || p[2].Role != "assistant" || p[2].Text != history[1].Raw ||
		p[3].Role != "user" || !strings.Contains(p[3].Text, "button\tSave") || len(p[3].Images) != 1 || !strings.HasPrefix(p[3].Images[0], "png") {
		t.Errorf("the turn's prompt record: %+v", turn.Prompt)
	}
	b, _ := json.Marshal(msgs[3])
	for _, w := range []string{"data:image/png;base64,aW1n", "button\\tSave", "no element"} {
		if !strings.Contains(string(b), w) {
			t.Errorf("observation message lacks %q: %s", w, b)
		}
	}
}

// TestOpenAICoordinateSpaces drives the openai agent, built by name with
// each --unit, against a local stand-in: the screenshot in the request
// has the size of the model's image, the system prompt names it, and the
// model's point lands on the intended pixel of the screen.
func TestOpenAICoordinateSpaces(t *testing.T) {
	for _, tc := range []struct {
		name      string
		unit      string
		maxPixels int
		screen    action.Size
		reply     string
		image     action.Size
		prompt    string
		want      string
		parseErr  string
	}{
		{name: "px", unit: "px", screen: fullHD, reply: "pyautogui.click(960, 540)", image: fullHD,
			prompt: "The screen is 1920x1080 pixels; write coordinates in pixels", want: "click (960,540)"},
		// 0.5 * 1920 = 960, 0.25 * 1080 = 270
		{name: "ratio", unit: "ratio", screen: fullHD, reply: "pyautogui.click(0.5, 0.25)", image: fullHD,
			prompt: "fractions of the screen", want: "click (960,270)"},
		// 500/1000 * 1920 = 960, 250/1000 * 1080 = 270
		{name: "k", unit: "k", screen: fullHD, reply: "pyautogui.click(500, 250)", image: fullHD,
			prompt: "thousandths", want: "click (960,270)"},
		// 1932x1092: floor(966.5*1920/1932) = 960, floor(546.5*1080/1092) = 540
		{name: "smart-resize", unit: "smart-resize", screen: fullHD, reply: "pyautogui.click(966, 546)", image: action.Size{W: 1932, H: 1092},
			prompt: "shown to you as a 1932x1092 screenshot; write coordinates in pixels of that screenshot", want: "click (960,540)"},
		// 1316x728: floor(658.5*1920/1316) = 960, floor(364.5*1080/728) = 540
		{name: "smart-resize with a budget", unit: "smart-resize", maxPixels: 1280 * 28 * 28, screen: fullHD, reply: "pyautogui.click(658, 364)",
			image: action.Size{W: 1316, H: 728}, prompt: "1316x728 screenshot", want: "click (960,540)"},
		// 1372x756: floor(686.5*1366/1372) = 683, floor(378.5*768/756) = 384
		{name: "smart-resize on an odd screen", unit: "smart-resize", screen: wxga, reply: "pyautogui.click(686, 378)",
			image: action.Size{W: 1372, H: 756}, prompt: "1372x756 screenshot", want: "click (683,384)"},
		// on the screen, not in the model's image: refused, naming both
		{name: "smart-resize point outside the image", unit: "smart-resize", maxPixels: 1280 * 28 * 28, screen: fullHD,
			// floor(10.5*1920/1316) = floor(15.32) = 15, floor(10.5*1080/728) = floor(15.58) = 15
			reply: "pyautogui.click(10, 10)\npyautogui.click(1400, 20)", image: action.Size{W: 1316, H: 728}, prompt: "1316x728",
			want: "click (15,15)", parseErr: "action 2 (click): point (1400, 20) is outside the model's 1316x728 image (screen 1920x1080)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStandIn(t, func(_ int, _ map[string]any, w http.ResponseWriter) {
				reply(200, completion("```python\n"+tc.reply+"\n```", 10, 5))(w)
			})
			o := fullOptions(t, s.srv.URL)
			o.Model.Unit, o.Model.MaxPixels = tc.unit, tc.maxPixels
			o.Prompt = agent.PromptConfig{Screenshot: true, Tree: true}
			f, err := agent.New("openai", o)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := f()
			ctx := context.Background()
			if err := a.Start(ctx, agent.Task{Instruction: "Click.", Screen: tc.screen}); err != nil {
				t.Fatal(err)
			}
			tree := "tag\tname\ttext\tx\ty\tw\th\npush-button\tOK\t\t960\t540\t90\t30\n"
			obs := agent.Observation{Step: 1, Screenshot: agenttest.Screenshot(t, tc.screen, image.Rect(0, 0, 4, 4), "png"), Format: "png", Screen: tc.screen, Tree: tree}
			turn, err := a.Next(ctx, obs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := actionsOf(turn); got != tc.want || turn.ParseError != tc.parseErr {
				t.Fatalf("actions %s (%q), want %s (%q)", got, turn.ParseError, tc.want, tc.parseErr)
			}
			if turn.Space == nil || turn.Space.Image != tc.image {
				t.Fatalf("recorded space %v, want image %v", turn.Space, tc.image)
			}
			msgs := s.requests[0]["messages"].([]any)
			if got := agenttest.ImageSizeIn(t, msgs[len(msgs)-1]); got != tc.image {
				t.Fatalf("screenshot sent at %v, want %v", got, tc.image)
			}
			if system := msgs[0].(map[string]any)["content"].(string); !strings.Contains(system, tc.prompt) {
				t.Errorf("system prompt lacks %q: %s", tc.prompt, system)
			}
			// The tree's positions are in the image's pixels too (and stay
			// in pixels for ratio and k, as the prompt says).
			obsText, _ := json.Marshal(msgs[len(msgs)-1])
			row := `OK\t\t960\t540`
			if tc.image != tc.screen {
				c := turn.Space.FromScreen(960, 540)
				row = fmt.Sprintf(`OK\t\t%d\t%d`, int(c.X), int(c.Y))
			}
			if !strings.Contains(string(obsText), row) {
				t.Errorf("tree row %s missing: %.200s", row, obsText)
			}
		})
	}
}
