package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

func TestReplayNoopRandom(t *testing.T) {
	ctx := context.Background()
	gold := []action.Action{{Kind: action.Type, Text: "hi"}, {Kind: action.Done}}
	r := &Replay{}
	if err := r.Start(ctx, Task{Gold: gold}); err != nil {
		t.Fatal(err)
	}
	for i, want := range append(gold, action.Action{Kind: action.Done}) {
		turn, _ := r.Next(ctx, Observation{}, nil)
		if len(turn.Actions) != 1 || turn.Actions[0].String() != want.String() {
			t.Fatalf("replay step %d = %v, want %v", i, turn.Actions, want)
		}
	}
	turn, _ := Noop{}.Next(ctx, Observation{}, nil)
	if len(turn.Actions) != 1 || turn.Actions[0].Kind != action.Done {
		t.Fatalf("noop = %v", turn.Actions)
	}
	rnd := &Random{Seed: 3}
	rnd.Start(ctx, Task{Screen: action.Size{W: 100, H: 50}})
	for range 200 {
		turn, _ := rnd.Next(ctx, Observation{}, nil)
		a := turn.Actions[0]
		if err := a.Validate(); err != nil || a.Kind.Terminal() {
			t.Fatalf("random proposed %v (%v)", a, err)
		}
		if a.Point != nil {
			if _, _, err := a.Point.Pixels(action.Size{W: 100, H: 50}); err != nil {
				t.Fatalf("random point off screen: %v", a)
			}
		}
	}
	for _, n := range []string{"replay", "noop", "random"} {
		if _, ok := Lookup(n); !ok {
			t.Fatalf("Lookup(%s)", n)
		}
	}
}

// scripted serves /step answers in turn, with status codes and delays.
type scripted struct {
	status int
	body   string
	delay  time.Duration
}

func TestHTTPAgent(t *testing.T) {
	tests := []struct {
		name      string
		step      scripted
		want      []string // action strings
		parseErr  string
		transient bool
		err       string
	}{
		{name: "actions", step: scripted{200, `{"actions":[{"kind":"click","point":{"x":1,"y":2}},{"kind":"done"}],"usage":{"input_tokens":10,"output_tokens":3,"cost":0.01}}`, 0}, want: []string{"click (1,2)", "done"}},
		{name: "reply parsed", step: scripted{200, `{"reply":"pyautogui.hotkey('ctrl','s')\nDONE","format":"pyautogui"}`, 0}, want: []string{"hotkey ctrl+s", "done"}},
		{name: "reply in another format", step: scripted{200, `{"reply":"Action: click(start_box='(500,500)')","format":"uitars"}`, 0}, want: []string{"click (500,500)k"}},
		{name: "malformed reply", step: scripted{200, `{"reply":"I would click the button"}`, 0}, parseErr: "no code block"},
		{name: "invalid action", step: scripted{200, `{"actions":[{"kind":"type"}]}`, 0}, parseErr: "type needs text"},
		{name: "empty answer", step: scripted{200, `{}`, 0}, parseErr: "neither actions nor a reply: its answer is empty"},
		{name: "answer in other keys", step: scripted{200, `{"action":"click(1,2)","thoughts":"x","actions":null}`, 0}, parseErr: `its answer has the keys "action", "thoughts"; a step's answer holds "actions"`},
		{name: "empty actions, one other key", step: scripted{200, `{"actions":[],"response":"DONE"}`, 0}, parseErr: `the keys "actions", "response"`},
		{name: "server error", step: scripted{503, `overloaded`, 0}, transient: true, err: "503"},
		{name: "refused", step: scripted{400, `bad request`, 0}, err: "refused"},
		{name: "bad json", step: scripted{200, `{"actions":`, 0}, err: "bad JSON"},
		{name: "timeout", step: scripted{200, `{}`, 300 * time.Millisecond}, transient: true, err: "deadline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var started, stopped bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/start":
					// Every field is there, lists empty rather than left out.
					var body map[string]map[string]any
					json.NewDecoder(r.Body).Decode(&body)
					task := body["task"]
					apps, hasApps := task["apps"].([]any)
					demos, hasDemos := task["demonstrations"].([]any)
					started = task["instruction"] == "do it" && hasApps && len(apps) == 0 && hasDemos && len(demos) == 0 &&
						task["screen"] != nil && task["max_steps"] != nil
				case "/stop":
					stopped = true
				case "/step":
					var req StepRequest
					if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Observation.Step != 1 {
						http.Error(w, "bad step request", 400)
						return
					}
					time.Sleep(tc.step.delay)
					w.WriteHeader(tc.step.status)
					w.Write([]byte(tc.step.body))
				}
			}))
			defer srv.Close()
			a := &HTTP{URL: srv.URL, Timeout: 100 * time.Millisecond}
			ctx := context.Background()
			if err := a.Start(ctx, Task{Instruction: "do it"}); err != nil || !started {
				t.Fatalf("start: %v (started %v)", err, started)
			}
			turn, err := a.Next(ctx, Observation{Step: 1, Screenshot: []byte{0x89, 'P'}}, nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || errors.Is(err, ErrTransient) != tc.transient {
					t.Fatalf("Next error = %v, want %q (transient %v)", err, tc.err, tc.transient)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.parseErr != "" {
				if !strings.Contains(turn.ParseError, tc.parseErr) {
					t.Fatalf("parse error %q, want %q", turn.ParseError, tc.parseErr)
				}
				return
			}
			var got []string
			for _, a := range turn.Actions {
				got = append(got, a.String())
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("actions %v, want %v", got, tc.want)
			}
			if err := a.Stop(ctx); err != nil || !stopped {
				t.Fatalf("stop: %v", err)
			}
		})
	}
	// Nobody listening: transient.
	a := &HTTP{URL: "http://127.0.0.1:1", Timeout: time.Second}
	if err := a.Start(context.Background(), Task{}); !errors.Is(err, ErrTransient) {
		t.Fatalf("refused connection: %v, want transient", err)
	}
}

// TestExamplePythonAgent runs the documented example client and plays one
// step with it.
func TestExamplePythonAgent(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	cmd := exec.Command(py, "../examples/http-agent/agent.py", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	port := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	a := &HTTP{URL: "http://127.0.0.1:" + port, Timeout: 10 * time.Second}
	ctx := context.Background()
	if err := a.Start(ctx, Task{Instruction: "Please click Later in the dialog."}); err != nil {
		t.Fatal(err)
	}
	tree := "tag\tname\ttext\tx\ty\tw\th\npush-button\tYes\t\t10\t10\t40\t20\npush-button\tLater\t\t60\t10\t40\t20\n"
	turn, err := a.Next(ctx, Observation{Step: 1, Tree: tree}, nil)
	if err != nil || turn.ParseError != "" || len(turn.Actions) != 1 || turn.Actions[0].String() != "click (80,20)" {
		t.Fatalf("first step: %+v %v", turn, err)
	}
	turn, err = a.Next(ctx, Observation{Step: 2, Tree: tree}, []Turn{turn})
	if err != nil || len(turn.Actions) != 1 || turn.Actions[0].Kind != action.Done {
		t.Fatalf("second step: %+v %v", turn, err)
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestHuman(t *testing.T) {
	var out strings.Builder
	h := &Human{In: strings.NewReader("finished\nANS 42 km\nDONE\n"), Out: &out}
	ctx := context.Background()
	h.Start(ctx, Task{ID: "t1", Instruction: "Measure it."})
	turn, err := h.Next(ctx, Observation{Step: 1}, nil)
	if err != nil || len(turn.Actions) != 1 || turn.Actions[0].String() != `answer "42 km"` {
		t.Fatalf("first verdict: %+v %v", turn, err)
	}
	if !strings.Contains(out.String(), `"finished" is not DONE`) || !strings.Contains(out.String(), "Measure it.") {
		t.Fatalf("prompts: %s", out.String())
	}
	turn, _ = h.Next(ctx, Observation{Step: 2}, nil)
	if turn.Actions[0].Kind != action.Done {
		t.Fatalf("second verdict: %+v", turn)
	}
	if _, err := h.Next(ctx, Observation{Step: 3}, nil); err == nil {
		t.Fatal("the end of input was not an error")
	}
}

// TestHTTPAgentReplyTooLarge: an answer over MaxReply is the agent's
// error, named as too large, not a transient fault nor broken JSON.
func TestHTTPAgentReplyTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"reply": "`))
		chunk := []byte(strings.Repeat("x", 1<<20))
		for i := 0; i < MaxReply>>20+6; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Write([]byte(`"}`))
	}))
	defer srv.Close()
	h := &HTTP{URL: srv.URL}
	_, err := h.Next(context.Background(), Observation{Step: 1}, nil)
	if err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") || errors.Is(err, ErrTransient) {
		t.Fatalf("Next = %v, want a non-transient error saying the answer is larger than 64 MiB", err)
	}
}

func TestObservationText(t *testing.T) {
	tests := []struct {
		name string
		obs  Observation
		want string
	}{
		{"step only", Observation{Step: 2}, "Step 2."},
		{"feedback", Observation{Step: 3, Feedback: "no mark #9"}, "Step 3. Note: no mark #9."},
		{"tabs", Observation{Step: 1, Tabs: []observe.Tab{{Title: "Orders", URL: "http://127.0.0.1:8080/orders"}, {URL: "about:blank", Active: true}}},
			"Step 1.\nTabs:\n1: Orders - http://127.0.0.1:8080/orders\n2: (no title) - about:blank (active)\n"},
		{"marks and tree", Observation{Step: 1, Marks: []observe.Mark{{Tag: 1, Role: "push button", Name: "OK"}}, Tree: "push button OK\n"},
			"Step 1.\nMarked elements (number: role name):\n1: push button OK\n\nAccessibility tree:\npush button OK\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ObservationText(tt.obs); got != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// randomActions are the first n actions of the random agent of the
// registry, made with seed, in the episode repeat of task.
func randomActions(t *testing.T, seed int64, task string, repeat, n int) string {
	t.Helper()
	f, err := New("random", Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	a, err := f()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.Start(ctx, Task{ID: task, Repeat: repeat, Screen: action.Size{W: 1280, H: 800}}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for range n {
		turn, err := a.Next(ctx, Observation{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, turn.Raw)
	}
	return strings.Join(out, "; ")
}

// TestRandomSeeds checks that the random agent's episodes draw from
// their own seeds: repeats of a task, and other tasks, act differently,
// and the same run seed, task and repeat give the same actions.
func TestRandomSeeds(t *testing.T) {
	base := randomActions(t, 7, "count-lines", 0, 20)
	tests := []struct {
		name     string
		seed     int64
		task     string
		repeat   int
		wantSame bool
	}{
		{"same seed, task and repeat", 7, "count-lines", 0, true},
		{"another repeat", 7, "count-lines", 1, false},
		{"another task", 7, "copy-notes", 0, false},
		{"another seed", 8, "count-lines", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := randomActions(t, tc.seed, tc.task, tc.repeat, 20)
			if same := got == base; same != tc.wantSame {
				t.Errorf("same actions = %v, want %v:\n%s\n%s", same, tc.wantSame, base, got)
			}
		})
	}
	// No seed is the default seed.
	if randomActions(t, 0, "count-lines", 1, 20) != randomActions(t, DefaultSeed, "count-lines", 1, 20) {
		t.Error("seed 0 does not act as the default seed")
	}
}
