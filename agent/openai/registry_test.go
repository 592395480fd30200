package openai

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	_ "github.com/proctor-eval/proctor/agent/anthropic"
)

// modelAgents are the agents that call a model API, registered by this
// package and by agent/anthropic.
var modelAgents = []string{"openai", "openai-computer", "anthropic", "planner-grounder", "reflect"}

func TestModelAgentsAreRegistered(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "set")
	for _, n := range modelAgents {
		d, ok := agent.Get(n)
		if !ok {
			t.Errorf("agent %q is not registered (Names: %v)", n, agent.Names())
			continue
		}
		if !d.Model || d.Interactive {
			t.Errorf("Get(%q): Model %v, Interactive %v", n, d.Model, d.Interactive)
		}
		if d.Summary == "" || strings.Contains(d.Summary, "\n") || !strings.Contains(agent.Describe(), d.Summary) {
			t.Errorf("agent %q: summary %q should be one non-empty line, described", n, d.Summary)
		}
		if _, ok := agent.Lookup(n); ok {
			t.Errorf("Lookup(%q) of an agent that needs options", n)
		}
	}
}

// fullOptions are options every agent accepts, against a local stand-in.
func fullOptions(t *testing.T, url string) agent.Options {
	t.Setenv("TEST_KEY", "test-key")
	return agent.Options{URL: url,
		Model: agent.ModelOptions{Model: "gpt-5-mini", BaseURL: url + "/v1", APIKeyEnv: "TEST_KEY", Format: "pyautogui",
			GrounderModel: "os-atlas", GrounderFormat: "osatlas", GrounderUnit: "k", MaxRetries: 2},
		Prompt: agent.PromptConfig{Screenshot: true},
		In:     strings.NewReader("DONE\n"), Out: io.Discard}
}

func TestEveryModelAgentBuilds(t *testing.T) {
	s := newStandIn(t, func(int, map[string]any, http.ResponseWriter) {})
	o := fullOptions(t, s.srv.URL)
	wantType := map[string]string{"openai": "*openai.OpenAI", "openai-computer": "*openai.OpenAIComputer", "anthropic": "*anthropic.Anthropic",
		"planner-grounder": "*openai.PlannerGrounder", "reflect": "*openai.Reflect"}
	for _, n := range modelAgents {
		f, err := agent.New(n, o)
		if err != nil {
			t.Errorf("New(%q): %v", n, err)
			continue
		}
		a, err := f()
		if err != nil {
			t.Errorf("%s factory: %v", n, err)
			continue
		}
		if got := fmt.Sprintf("%T", a); got != wantType[n] {
			t.Errorf("New(%q) made a %s, want %s", n, got, wantType[n])
		}
	}
	// The options reach the agents.
	var f agent.Factory
	o.Model.MaxRetries = 5
	f, _ = agent.New("reflect", o)
	if a, _ := f(); a.(*Reflect).MaxRetries != 5 {
		t.Errorf("reflect MaxRetries %d", a.(*Reflect).MaxRetries)
	}
	o.Model.GrounderBaseURL = "http://127.0.0.1:1/v1"
	f, _ = agent.New("planner-grounder", o)
	a, _ := f()
	pg := a.(*PlannerGrounder)
	if pg.Grounder.Model != "os-atlas" || pg.Grounder.BaseURL != "http://127.0.0.1:1/v1" || pg.Planner.BaseURL != o.Model.BaseURL ||
		pg.Grounder.Prompt.Format != action.FormatOSAtlas || pg.Grounder.Prompt.Unit != action.Thousand {
		t.Errorf("planner-grounder configured as %+v / %+v", pg.Planner, pg.Grounder)
	}
}

// TestModelOptionsReachTheRequest drives the openai agent built by name
// through one turn and reads the request the stand-in got.
func TestModelOptionsReachTheRequest(t *testing.T) {
	s := newStandIn(t, func(_ int, _ map[string]any, w http.ResponseWriter) {
		reply(200, completion("Typing.\n```json\n[{\"kind\": \"type\", \"text\": \"hi\"}]\n```", 10, 5))(w)
	})
	o := fullOptions(t, s.srv.URL)
	o.Model.Format, o.Model.Temperature, o.Model.Model = "json", 0.25, "m-under-test"
	f, err := agent.New("openai", o)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f()
	ctx := context.Background()
	if err := a.Start(ctx, agent.Task{Instruction: "Say hi.", Screen: action.Size{W: 100, H: 100}}); err != nil {
		t.Fatal(err)
	}
	turn, err := a.Next(ctx, agent.Observation{Step: 1, Screen: action.Size{W: 100, H: 100}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Actions) != 1 || turn.Actions[0].Kind != action.Type || turn.Actions[0].Text != "hi" {
		t.Fatalf("turn %+v (the json format should parse the reply)", turn)
	}
	req := s.requests[0]
	if req["model"] != "m-under-test" || req["temperature"] != 0.25 {
		t.Errorf("request model %v temperature %v", req["model"], req["temperature"])
	}
	system := fmt.Sprint(req["messages"].([]any)[0].(map[string]any)["content"])
	if !strings.Contains(system, "JSON array") {
		t.Errorf("system prompt does not ask for JSON: %s", system)
	}
}

func TestNewRefusesBadModelOptions(t *testing.T) {
	s := newStandIn(t, func(int, map[string]any, http.ResponseWriter) {})
	badPrices := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(badPrices, []byte("{not json"), 0o644)
	for _, c := range []struct {
		name, agent string
		edit        func(*agent.Options)
		want        string
	}{
		{"no model", "openai", func(o *agent.Options) { o.Model.Model = "" }, "--agent openai needs --model"},
		{"no model anthropic", "anthropic", func(o *agent.Options) { o.Model.Model = "" }, "--agent anthropic needs --model"},
		{"bad format", "reflect", func(o *agent.Options) { o.Model.Format = "xml" }, `--format "xml": the model agents ask for pyautogui or json`},
		{"bad unit", "openai", func(o *agent.Options) { o.Model.Unit = "inch" }, `--unit "inch"`},
		{"no key", "openai", func(o *agent.Options) { o.Model.APIKeyEnv = "PROCTOR_TEST_NO_SUCH_KEY" }, "$PROCTOR_TEST_NO_SUCH_KEY is empty"},
		{"no key anthropic", "anthropic", func(o *agent.Options) { o.Model.APIKeyEnv = "PROCTOR_TEST_NO_SUCH_KEY" }, "$PROCTOR_TEST_NO_SUCH_KEY is empty"},
		{"bad prices", "openai", func(o *agent.Options) { o.Model.Prices = badPrices }, "--prices: " + badPrices},
		{"no grounder", "planner-grounder", func(o *agent.Options) { o.Model.GrounderModel = "" }, "--agent planner-grounder needs --grounder-model"},
		{"bad grounder format", "planner-grounder", func(o *agent.Options) { o.Model.GrounderFormat = "json" }, `--grounder-format "json": osatlas, uitars or pyautogui`},
		{"bad grounder unit", "planner-grounder", func(o *agent.Options) { o.Model.GrounderUnit = "mm" }, `--grounder-unit "mm": px, ratio, k or smart-resize`},
		{"bad unit names smart-resize", "openai", func(o *agent.Options) { o.Model.Unit = "smart" }, `--unit "smart": px, ratio, k or smart-resize`},
		{"budget without smart-resize", "openai", func(o *agent.Options) { o.Model.MaxPixels = 1003520 }, "--max-pixels is the budget of --unit smart-resize"},
		{"budget below a patch", "openai", func(o *agent.Options) { o.Model.Unit, o.Model.MaxPixels = "smart-resize", 700 }, "--max-pixels 700: the pixel budget must be at least 784"},
		{"negative budget", "reflect", func(o *agent.Options) { o.Model.Unit, o.Model.MaxPixels = "smart-resize", -1 }, "--max-pixels -1"},
		{"bad display", "openai-computer", func(o *agent.Options) { o.Model.Display = "1280*800" }, `--display: display "1280*800" is not WIDTHxHEIGHT`},
		{"display of another agent", "openai", func(o *agent.Options) { o.Model.Display = "1280x800" }, "--display is the display declared by --agent openai-computer, not by --agent openai"},
		{"no model openai-computer", "openai-computer", func(o *agent.Options) { o.Model.Model = "" }, "--agent openai-computer needs --model"},
	} {
		o := fullOptions(t, s.srv.URL)
		if c.edit != nil {
			c.edit(&o)
		}
		f, err := agent.New(c.agent, o)
		if err == nil || !strings.Contains(err.Error(), c.want) || f != nil {
			t.Errorf("%s: New(%q) = %v, want an error with %q", c.name, c.agent, err, c.want)
		}
	}
}

func TestPromptHashOf(t *testing.T) {
	o := agent.Options{Model: agent.ModelOptions{Format: "pyautogui"}, Prompt: agent.PromptConfig{Screenshot: true, Marks: true}}
	if h := agent.PromptHashOf("replay", o); h != "" {
		t.Errorf("replay has a prompt hash %q", h)
	}
	h := agent.PromptHashOf("openai", o)
	if h == "" || h != agent.PromptHash(agent.PromptConfig{Format: action.FormatPyAutoGUI, Screenshot: true, Marks: true}) {
		t.Errorf("openai prompt hash %q", h)
	}
	o.Model.Format = "json"
	if agent.PromptHashOf("openai", o) == h {
		t.Error("the output format does not change the prompt hash")
	}
	o.Model.Format = ""
	if agent.PromptHashOf("openai", o) != h {
		t.Error("an empty format is not the default pyautogui")
	}
}

// TestCoordinateOptionsReachTheAgents builds the agents by name with the
// coordinate options a command passes.
func TestCoordinateOptionsReachTheAgents(t *testing.T) {
	s := newStandIn(t, func(int, map[string]any, http.ResponseWriter) {})
	o := fullOptions(t, s.srv.URL)
	o.Model.Unit, o.Model.MaxPixels = "smart-resize", 1280*28*28
	f, err := agent.New("openai", o)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f()
	if p := a.(*OpenAI).cfg.Prompt; p.Unit != agent.SmartResize || p.MaxPixels != 1280*28*28 {
		t.Errorf("openai prompt %+v", p)
	}
	o.Model.Unit, o.Model.GrounderUnit, o.Model.GrounderFormat = "", "smart-resize", "uitars"
	f, err = agent.New("planner-grounder", o)
	if err != nil {
		t.Fatal(err)
	}
	a, _ = f()
	if g := a.(*PlannerGrounder).Grounder.Prompt; g.Unit != agent.SmartResize || g.MaxPixels != 1280*28*28 || g.Format != action.FormatUITARS {
		t.Errorf("grounder prompt %+v", g)
	}
	o.Model.GrounderUnit, o.Model.MaxPixels, o.Model.Display = "k", 0, "1280x720"
	f, err = agent.New("openai-computer", o)
	if err != nil {
		t.Fatal(err)
	}
	a, _ = f()
	if d := a.(*OpenAIComputer).cfg.Display; d != (action.Size{W: 1280, H: 720}) {
		t.Errorf("declared display %v", d)
	}
	// The budget is part of the prompt: runs with different budgets are told apart.
	base := agent.Options{Model: agent.ModelOptions{Format: "uitars", Unit: "smart-resize"}}
	small := base
	small.Model.MaxPixels = 1280 * 28 * 28
	if agent.PromptHashOf("openai", base) == agent.PromptHashOf("openai", small) {
		t.Error("the pixel budget does not change the prompt hash")
	}
}
