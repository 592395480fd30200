package agent

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// everyAgent is what a command offers under --agent without a model
// API (the model agents register from agent/openai and agent/anthropic,
// whose tests check them): if one of these is not registered, the command
// would need a list of its own again.
var everyAgent = []string{"replay", "noop", "random", "http", "human"}

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
	for n, want := range map[string]bool{"http": false, "replay": false, "human": false} {
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
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	o := fullOptions(t, srv.URL)
	wantType := map[string]string{"replay": "*agent.Replay", "noop": "agent.Noop", "random": "*agent.Random",
		"http": "*agent.HTTP", "human": "*agent.Human"}
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
	if a, _ := f(); a.(*HTTP).URL != srv.URL {
		t.Errorf("http agent URL %q", a.(*HTTP).URL)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
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
		{"human without terminal", "human", func(o *Options) { o.In = nil }, "--agent human needs a terminal"},
	} {
		o := fullOptions(t, srv.URL)
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

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering noop twice did not panic")
		}
	}()
	Register("noop", Def{New: func(Options) (Factory, error) { return nil, nil }})
}
