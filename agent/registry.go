package agent

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/usage"
)

// The registry is the one list of agents. Each agent registers itself
// (in the init of the file that defines it) with a description and a
// constructor that checks its options, so that a command builds any agent
// by name and lists them for its help without keeping lists of its own.

// ModelOptions configure the agents that call a model API. They are the
// command's flags as a run records them (hence the JSON names), so that a
// resumed run builds the same agent.
type ModelOptions struct {
	Model     string `json:"model,omitempty"`
	BaseURL   string `json:"base_url,omitempty"`
	APIKeyEnv string `json:"api_key_env,omitempty"`
	Format    string `json:"format,omitempty"`
	Unit      string `json:"unit,omitempty"`
	// MaxPixels is the pixel budget of --unit smart-resize (and
	// --grounder-unit smart-resize); 0: DefaultMaxPixels.
	MaxPixels int `json:"max_pixels,omitempty"`
	// Display is the display declared to a computer-use tool
	// (openai-computer), WIDTHxHEIGHT; empty: the screen.
	Display     string  `json:"display,omitempty"`
	Temperature float64 `json:"temperature,omitempty"`
	TopP        float64 `json:"top_p,omitempty"`
	MaxTokens   int     `json:"max_tokens,omitempty"`
	History     int     `json:"history,omitempty"`
	Demos       bool    `json:"demonstrations,omitempty"`
	Prices      string  `json:"prices,omitempty"` // a price file; empty: DefaultPrices
	// planner-grounder: the grounding model
	GrounderModel   string `json:"grounder_model,omitempty"`
	GrounderBaseURL string `json:"grounder_base_url,omitempty"` // empty: BaseURL
	GrounderFormat  string `json:"grounder_format,omitempty"`
	GrounderUnit    string `json:"grounder_unit,omitempty"`
	// reflect: retries of one sub-task before planning again
	MaxRetries int `json:"max_retries,omitempty"`
}

// Options hold everything any agent may need; each agent reads the
// fields it uses and ignores the others.
type Options struct {
	// URL is the address of an agent behind the HTTP protocol (http).
	URL string
	// Model configures the agents that call a model API.
	Model ModelOptions
	// Prompt says what each observation holds (Screenshot, Tree, Marks);
	// its Format, Unit and Demonstrations come from Model, the flags that
	// set them (see PromptConfig).
	Prompt PromptConfig
	// Timeout bounds one request to the agent or to a model API; 0:
	// DefaultTimeout.
	Timeout time.Duration
	// In and Out are the terminal of a person acting as the agent (human).
	In  io.Reader
	Out io.Writer
	// Seed seeds the random agent's choices; 0: DefaultSeed.
	Seed int64
}

// PromptConfig is the prompt the model agents build from o: what the
// observation holds from o.Prompt, the output format, the coordinates'
// unit and the demonstrations from o.Model.
func (o Options) PromptConfig() PromptConfig {
	p := o.Prompt
	p.Format, p.Unit, p.Demonstrations = action.Format(o.Model.Format), action.Unit(o.Model.Unit), o.Model.Demos
	p.MaxPixels = o.Model.MaxPixels
	if p.Format == "" {
		p.Format = action.FormatPyAutoGUI
	}
	return p
}

// Def describes a registered agent.
type Def struct {
	// Summary is one line for a command's help, without the name.
	Summary string
	// Model says the agent calls a model API: a run records the model
	// options and a hash of the prompt so that runs with different
	// prompts are told apart.
	Model bool
	// Interactive says a person acts: one desktop at a time, whose
	// address the command shows.
	Interactive bool
	// New checks the options and returns the factory of the agent's
	// episodes. Errors name the command's flags (--agent-url, --model...)
	// since that is where a user fixes them.
	New func(Options) (Factory, error)
}

var (
	regMu    sync.RWMutex
	registry = map[string]Def{}
)

// Register adds an agent. It panics on an empty name, a name taken twice
// or a missing constructor: these are programming errors found at start.
func Register(name string, d Def) {
	if name == "" || d.New == nil {
		panic(fmt.Sprintf("agent.Register(%q): a name and a New function are required", name))
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("agent.Register(%q): registered twice", name))
	}
	registry[name] = d
}

// Names lists every registered agent, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Get returns an agent's description.
func Get(name string) (Def, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	d, ok := registry[name]
	return d, ok
}

// Describe lists the agents with their summaries, one a line, for help
// text.
func Describe() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, n := range Names() {
		d, _ := Get(n)
		fmt.Fprintf(w, "  %s\t%s\n", n, d.Summary)
	}
	w.Flush()
	return b.String()
}

// New builds the factory of agent name from o, checking o first so that a
// run fails before it starts rather than at its first episode.
func New(name string, o Options) (Factory, error) {
	if name == "" {
		return nil, fmt.Errorf("say which agent with --agent (%s)", strings.Join(Names(), ", "))
	}
	d, ok := Get(name)
	if !ok {
		return nil, fmt.Errorf("unknown agent %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return d.New(o)
}

// Lookup returns the factory of an agent that needs no options (replay,
// noop, random).
func Lookup(name string) (Factory, bool) {
	d, ok := Get(name)
	if !ok {
		return nil, false
	}
	f, err := d.New(Options{})
	return f, err == nil
}

// PromptHashOf fingerprints the prompt of agent name with o, or returns ""
// when the agent calls no model (its prompt is not Proctor's).
func PromptHashOf(name string, o Options) string {
	if d, ok := Get(name); !ok || !d.Model {
		return ""
	}
	return PromptHash(o.PromptConfig())
}

// ModelConfigOf checks the model options shared by the model agents (name
// is the agent, for the messages) and turns them into a ModelConfig.
func ModelConfigOf(name string, o Options) (ModelConfig, error) {
	m := o.Model
	switch action.Format(m.Format) {
	case "", action.FormatPyAutoGUI, action.FormatJSON:
	case action.FormatScreenAgent:
		if name != "reflect" {
			return ModelConfig{}, fmt.Errorf("--format screenagent is the format of --agent reflect (ScreenAgent's pipeline); --agent %s asks for pyautogui or json", name)
		}
	default:
		return ModelConfig{}, fmt.Errorf("--format %q: the model agents ask for pyautogui or json (--agent reflect also for screenagent)", m.Format)
	}
	switch action.Unit(m.Unit) {
	case "", action.Pixels, action.Ratio, action.Thousand, SmartResize:
	default:
		return ModelConfig{}, fmt.Errorf("--unit %q: px, ratio, k or smart-resize", m.Unit)
	}
	switch {
	case m.MaxPixels < 0 || (m.MaxPixels > 0 && m.MaxPixels < minBudget):
		return ModelConfig{}, fmt.Errorf("--max-pixels %d: the pixel budget must be at least %d (one %dx%d patch)", m.MaxPixels, minBudget, SmartResizeFactor, SmartResizeFactor)
	case m.MaxPixels > 0 && action.Unit(m.Unit) != SmartResize && action.Unit(m.GrounderUnit) != SmartResize:
		return ModelConfig{}, errors.New("--max-pixels is the budget of --unit smart-resize (or --grounder-unit smart-resize), which is not asked for")
	}
	display, err := ParseDisplay(m.Display)
	if err != nil {
		return ModelConfig{}, fmt.Errorf("--display: %w", err)
	}
	if m.Display != "" && name != "openai-computer" {
		return ModelConfig{}, fmt.Errorf("--display is the display declared by --agent openai-computer, not by --agent %s", name)
	}
	if m.Model == "" {
		return ModelConfig{}, fmt.Errorf("--agent %s needs --model", name)
	}
	prices := usage.DefaultPrices
	if m.Prices != "" {
		p, err := usage.LoadPrices(m.Prices)
		if err != nil {
			return ModelConfig{}, fmt.Errorf("--prices: %w", err)
		}
		prices = p
	}
	return ModelConfig{BaseURL: m.BaseURL, Model: m.Model, APIKeyEnv: m.APIKeyEnv, Temperature: m.Temperature,
		TopP: m.TopP, MaxTokens: m.MaxTokens, History: m.History, Prompt: o.PromptConfig(), Prices: prices,
		Timeout: o.Timeout, Display: display}, nil
}

// Checked returns a factory after building one agent with it, so that a
// missing key or a bad option shows before the run.
func Checked(f Factory) (Factory, error) {
	if _, err := f(); err != nil {
		return nil, err
	}
	return f, nil
}

// httpURL checks the address of an HTTP agent.
func httpURL(s string) error {
	if s == "" {
		return fmt.Errorf("--agent http needs --agent-url")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--agent-url %q: want an http:// or https:// URL", s)
	}
	return nil
}
