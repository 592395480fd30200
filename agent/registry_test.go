package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
)

// everyAgent is what a command offers under --agent: if one of these is
// not registered, the command would need a list of its own again.
var everyAgent = []string{"replay", "noop", "random", "http", "openai", "openai-computer", "anthropic", "planner-grounder", "reflect", "human"}

func TestNamesHoldsEveryAgent(t *testing.T) {
	names := Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names() not sorted: %v", names)
	}
	for _, n := range everyAgent {
		if !slices.Contains(names, n) {
			t.Errorf("agent %q is not registered (Names: %v)", n, names)
		}
	}
	desc := Describe()
	for _, n := range names {
		d, _ := Get(n)
		if d.Summary == "" || strings.Contains(d.Summary, "\n") {
			t.Errorf("agent %q: summary %q should be one non-empty line", n, d.Summary)
		}
		if !strings.Contains(desc, "  "+n+" ") || !strings.Contains(desc, d.Summary) {
			t.Errorf("Describe() lacks %q: %s", n, desc)
		}
	}
	if got := strings.Count(desc, "\n"); got != len(names) {
		t.Errorf("Describe() has %d lines, want %d:\n%s", got, len(names), desc)
	}
	for n, want := range map[string]bool{"openai": true, "openai-computer": true, "anthropic": true, "planner-grounder": true, "reflect": true, "http": false, "replay": false, "human": false} {
		if d, _ := Get(n); d.Model != want {
			t.Errorf("Get(%q).Model = %v, want %v", n, d.Model, want)
		}
	}
	if d, _ := Get("human"); !d.Interactive {
		t.Error("human is not marked interactive")
	}
}

// fullOptions are options every agent accepts, against a local stand-in.
func fullOptions(t *testing.T, url string) Options {
	t.Setenv("TEST_KEY", "test-key")
	return Options{URL: url,
		Model: ModelOptions{Model: "gpt-5-mini", BaseURL: url + "/v1", APIKeyEnv: "TEST_KEY", Format: "pyautogui",
			GrounderModel: "os-atlas", GrounderFormat: "osatlas", GrounderUnit: "k", MaxRetries: 2},
		Prompt: PromptConfig{Screenshot: true},
		In:     strings.NewReader("DONE\n"), Out: io.Discard}
}

func TestEveryAgentBuilds(t *testing.T) {
	s := newStandIn(t, func(int, map[string]any, http.ResponseWriter) {})
	o := fullOptions(t, s.srv.URL)
	wantType := map[string]string{"replay": "*agent.Replay", "noop": "agent.Noop", "random": "*agent.Random",
		"http": "*agent.HTTP", "openai": "*agent.OpenAI", "openai-computer": "*agent.OpenAIComputer", "anthropic": "*agent.Anthropic",
		"planner-grounder": "*agent.PlannerGrounder", "reflect": "*agent.Reflect", "human": "*agent.Human"}
	for _, n := range Names() {
		f, err := New(n, o)
		if err != nil {
			t.Errorf("New(%q): %v", n, err)
			continue
		}
		a, err := f()
		if err != nil {
			t.Errorf("%s factory: %v", n, err)
			continue
		}
		if got := fmt.Sprintf("%T", a); wantType[n] != "" && got != wantType[n] {
			t.Errorf("New(%q) made a %s, want %s", n, got, wantType[n])
		}
	}
	// Episodes get fresh agents, except the person, who reads one terminal.
	f, _ := New("replay", o)
	a1, _ := f()
	a2, _ := f()
	if a1 == a2 {
		t.Error("replay factory gave the same agent twice")
	}
	f, _ = New("human", o)
	h1, _ := f()
	h2, _ := f()
	if h1 != h2 {
		t.Error("human factory made a second reader of the terminal")
	}
	// The options reach the agents.
	f, _ = New("http", o)
	if a, _ := f(); a.(*HTTP).URL != s.srv.URL {
		t.Errorf("http agent URL %q", a.(*HTTP).URL)
	}
	o.Model.MaxRetries = 5
	f, _ = New("reflect", o)
	if a, _ := f(); a.(*Reflect).MaxRetries != 5 {
		t.Errorf("reflect MaxRetries %d", a.(*Reflect).MaxRetries)
	}
	o.Model.GrounderBaseURL = "http://127.0.0.1:1/v1"
	f, _ = New("planner-grounder", o)
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
	f, err := New("openai", o)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f()
	ctx := context.Background()
	if err := a.Start(ctx, Task{Instruction: "Say hi.", Screen: action.Size{W: 100, H: 100}}); err != nil {
		t.Fatal(err)
	}
	turn, err := a.Next(ctx, Observation{Step: 1, Screen: action.Size{W: 100, H: 100}}, nil)
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

func TestNewRefusesBadOptions(t *testing.T) {
	s := newStandIn(t, func(int, map[string]any, http.ResponseWriter) {})
	// TestNamesHoldsEveryAgent proves Names holds every agent, so the
	// errors list them all.
	all := strings.Join(Names(), ", ")
	badPrices := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(badPrices, []byte("{not json"), 0o644)
	for _, c := range []struct {
		name, agent string
		edit        func(*Options)
		want        string
	}{
		{"no agent", "", nil, "say which agent with --agent (" + all + ")"},
		{"unknown", "nobody", nil, `unknown agent "nobody" (known: ` + all + ")"},
		{"http without url", "http", func(o *Options) { o.URL = "" }, "--agent http needs --agent-url"},
		{"http bad url", "http", func(o *Options) { o.URL = "localhost:8750" }, `--agent-url "localhost:8750"`},
		{"no model", "openai", func(o *Options) { o.Model.Model = "" }, "--agent openai needs --model"},
		{"no model anthropic", "anthropic", func(o *Options) { o.Model.Model = "" }, "--agent anthropic needs --model"},
		{"bad format", "reflect", func(o *Options) { o.Model.Format = "xml" }, `--format "xml": the model agents ask for pyautogui or json`},
		{"bad unit", "openai", func(o *Options) { o.Model.Unit = "inch" }, `--unit "inch"`},
		{"no key", "openai", func(o *Options) { o.Model.APIKeyEnv = "PROCTOR_TEST_NO_SUCH_KEY" }, "$PROCTOR_TEST_NO_SUCH_KEY is empty"},
		{"no key anthropic", "anthropic", func(o *Options) { o.Model.APIKeyEnv = "PROCTOR_TEST_NO_SUCH_KEY" }, "$PROCTOR_TEST_NO_SUCH_KEY is empty"},
		{"bad prices", "openai", func(o *Options) { o.Model.Prices = badPrices }, "--prices: " + badPrices},
		{"no grounder", "planner-grounder", func(o *Options) { o.Model.GrounderModel = "" }, "--agent planner-grounder needs --grounder-model"},
		{"bad grounder format", "planner-grounder", func(o *Options) { o.Model.GrounderFormat = "json" }, `--grounder-format "json": osatlas, uitars or pyautogui`},
		{"bad grounder unit", "planner-grounder", func(o *Options) { o.Model.GrounderUnit = "mm" }, `--grounder-unit "mm": px, ratio, k or smart-resize`},
		{"bad unit names smart-resize", "openai", func(o *Options) { o.Model.Unit = "smart" }, `--unit "smart": px, ratio, k or smart-resize`},
		{"budget without smart-resize", "openai", func(o *Options) { o.Model.MaxPixels = 1003520 }, "--max-pixels is the budget of --unit smart-resize"},
		{"budget below a patch", "openai", func(o *Options) { o.Model.Unit, o.Model.MaxPixels = "smart-resize", 700 }, "--max-pixels 700: the pixel budget must be at least 784"},
		{"negative budget", "reflect", func(o *Options) { o.Model.Unit, o.Model.MaxPixels = "smart-resize", -1 }, "--max-pixels -1"},
		{"bad display", "openai-computer", func(o *Options) { o.Model.Display = "1280*800" }, `--display: display "1280*800" is not WIDTHxHEIGHT`},
		{"display of another agent", "openai", func(o *Options) { o.Model.Display = "1280x800" }, "--display is the display declared by --agent openai-computer, not by --agent openai"},
		{"no model openai-computer", "openai-computer", func(o *Options) { o.Model.Model = "" }, "--agent openai-computer needs --model"},
		{"human without terminal", "human", func(o *Options) { o.In = nil }, "--agent human needs a terminal"},
	} {
		o := fullOptions(t, s.srv.URL)
		if c.edit != nil {
			c.edit(&o)
		}
		f, err := New(c.agent, o)
		if err == nil || !strings.Contains(err.Error(), c.want) || f != nil {
			t.Errorf("%s: New(%q) = %v, want an error with %q", c.name, c.agent, err, c.want)
		}
	}
}

func TestLookupOnlyOptionFreeAgents(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "set")
	for _, n := range everyAgent {
		_, ok := Lookup(n)
		if want := n == "replay" || n == "noop" || n == "random"; ok != want {
			t.Errorf("Lookup(%q) ok=%v, want %v", n, ok, want)
		}
	}
	if _, ok := Lookup("nobody"); ok {
		t.Error("Lookup of an unknown agent")
	}
}

func TestPromptHashOf(t *testing.T) {
	o := Options{Model: ModelOptions{Format: "pyautogui"}, Prompt: PromptConfig{Screenshot: true, Marks: true}}
	if h := PromptHashOf("replay", o); h != "" {
		t.Errorf("replay has a prompt hash %q", h)
	}
	h := PromptHashOf("openai", o)
	if h == "" || h != PromptHash(PromptConfig{Format: action.FormatPyAutoGUI, Screenshot: true, Marks: true}) {
		t.Errorf("openai prompt hash %q", h)
	}
	o.Model.Format = "json"
	if PromptHashOf("openai", o) == h {
		t.Error("the output format does not change the prompt hash")
	}
	o.Model.Format = ""
	if PromptHashOf("openai", o) != h {
		t.Error("an empty format is not the default pyautogui")
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering noop twice did not panic")
		}
	}()
	Register("noop", Def{New: func(Options) (Factory, error) { return nil, nil }})
}

// TestCoordinateOptionsReachTheAgents builds the agents by name with the
// coordinate options a command passes.
func TestCoordinateOptionsReachTheAgents(t *testing.T) {
	s := newStandIn(t, func(int, map[string]any, http.ResponseWriter) {})
	o := fullOptions(t, s.srv.URL)
	o.Model.Unit, o.Model.MaxPixels = "smart-resize", 1280*28*28
	f, err := New("openai", o)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f()
	if p := a.(*OpenAI).cfg.Prompt; p.Unit != SmartResize || p.MaxPixels != 1280*28*28 {
		t.Errorf("openai prompt %+v", p)
	}
	o.Model.Unit, o.Model.GrounderUnit, o.Model.GrounderFormat = "", "smart-resize", "uitars"
	f, err = New("planner-grounder", o)
	if err != nil {
		t.Fatal(err)
	}
	a, _ = f()
	if g := a.(*PlannerGrounder).Grounder.Prompt; g.Unit != SmartResize || g.MaxPixels != 1280*28*28 || g.Format != action.FormatUITARS {
		t.Errorf("grounder prompt %+v", g)
	}
	o.Model.GrounderUnit, o.Model.MaxPixels, o.Model.Display = "k", 0, "1280x720"
	f, err = New("openai-computer", o)
	if err != nil {
		t.Fatal(err)
	}
	a, _ = f()
	if d := a.(*OpenAIComputer).cfg.Display; d != (action.Size{W: 1280, H: 720}) {
		t.Errorf("declared display %v", d)
	}
	// The budget is part of the prompt: runs with different budgets are told apart.
	base := Options{Model: ModelOptions{Format: "uitars", Unit: "smart-resize"}}
	small := base
	small.Model.MaxPixels = 1280 * 28 * 28
	if PromptHashOf("openai", base) == PromptHashOf("openai", small) {
		t.Error("the pixel budget does not change the prompt hash")
	}
}
