// Package agent defines what the runner asks of an agent — start a task,
// propose the next actions from an observation and the history, stop — and
// the built-in agents that need no model: replay, noop and random, plus
// the HTTP protocol that lets an agent in any language take part and the
// human one. Every agent is registered by name (Register, New, Names) so
// that commands keep no list of their own. The agents that call a model
// API live in agent/openai and agent/anthropic, which register them when
// imported (cmd/proctor imports both); what they share is here
// (ModelConfig, ModelConfigOf, Space, the prompt).
package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/usage"
)

// Task is what an agent learns about a task when it starts.
type Task struct {
	ID             string          `json:"id"`
	Instruction    string          `json:"instruction"`
	Apps           []string        `json:"apps,omitempty"`
	Screen         action.Size     `json:"screen"`
	MaxSteps       int             `json:"max_steps"`
	Demonstrations []string        `json:"demonstrations,omitempty"`
	Gold           []action.Action `json:"-"` // for the replay agent only
	// Repeat is which run of the task this is, from 0 (for the random
	// agent's seed).
	Repeat int `json:"-"`
}

// Observation is what the agent sees at one step.
type Observation struct {
	Step int `json:"step"` // from 1
	// Screenshot is a PNG (or JPEG) of the screen, with set-of-mark boxes
	// when the observation mode asks for them.
	Screenshot []byte         `json:"screenshot,omitempty"`
	Format     string         `json:"format,omitempty"` // png or jpeg
	Tree       string         `json:"tree,omitempty"`   // the linearised accessibility tree
	Marks      []observe.Mark `json:"marks,omitempty"`  // the set-of-mark elements
	Screen     action.Size    `json:"screen"`
	// Tabs are a browser's open tabs with their addresses, the active one
	// marked; none in other environments.
	Tabs []observe.Tab `json:"tabs,omitempty"`
	// Feedback reports what happened to the last turn's actions (an error
	// the environment gave, or a reply that did not parse).
	Feedback string `json:"feedback,omitempty"`
}

// Turn is an agent's answer to one observation.
type Turn struct {
	Actions []action.Action `json:"actions"`
	// Raw is the model's reply as it came, kept for the record.
	Raw string `json:"raw,omitempty"`
	// Thought is the reasoning the model wrote besides its actions.
	Thought string `json:"thought,omitempty"`
	// ParseError is set when the reply could not be turned into actions;
	// the step still counts, and the agent hears about it next turn.
	ParseError string        `json:"parse_error,omitempty"`
	Usage      usage.Usage   `json:"usage"`
	Latency    time.Duration `json:"latency"`
	// Space is the coordinate space of the turn's points: the size of the
	// screenshot the model was shown (and so its scale to the screen) and
	// the unit it wrote; nil for agents that answer in screen pixels.
	Space *Space `json:"space,omitempty"`
	// Prompt is what the model was sent for this turn, for the record;
	// nil where the agent does not say.
	Prompt []PromptMessage `json:"prompt,omitempty"`
	// Models splits Usage by model, for agents that ask several (a
	// planner and a grounder); nil for one model.
	Models []ModelUsage `json:"models,omitempty"`
}

// ModelUsage is what one model of a turn spent.
type ModelUsage struct {
	Role  string `json:"role"` // "planner", "grounder"
	Model string `json:"model"`
	usage.Usage
}

// PromptMessage is one message of a model request as a step's record
// keeps it: its text whole, its images by format, size and bytes (the
// step's screenshot is kept beside it).
type PromptMessage struct {
	Role   string   `json:"role"`
	Text   string   `json:"text,omitempty"`
	Images []string `json:"images,omitempty"`
}

// ImageNote describes an image of a request: "png 1280x720, 412 KB".
func ImageNote(obs Observation) string {
	format := obs.Format
	if format == "" {
		format = "png"
	}
	size := ""
	if obs.Screen.W > 0 {
		size = fmt.Sprintf(" %dx%d", obs.Screen.W, obs.Screen.H)
	}
	return fmt.Sprintf("%s%s, %d KB", format, size, (len(obs.Screenshot)+1023)/1024)
}

// Agent proposes actions. Next is called once a step; the runner performs
// the actions and observes again until the agent says DONE, FAIL or ANS,
// or a budget runs out.
type Agent interface {
	Start(ctx context.Context, t Task) error
	Next(ctx context.Context, obs Observation, history []Turn) (Turn, error)
	Stop(ctx context.Context) error
}

// Prober is an agent that calls model endpoints: Probe asks each of them
// one small question. A run's pre-flight asks it once, before any
// episode, so that an endpoint that cannot be reached (a wrong URL, key
// or model) refuses the run instead of making every episode an error.
type Prober interface {
	Probe(ctx context.Context) error
}

// ProbeQuestion is what a Prober asks its models: one word back.
const ProbeQuestion = "This is a test of the connection. Answer with the single word: ready."

// DefaultTimeout bounds one request to an agent or a model API.
const DefaultTimeout = 2 * time.Minute

// ErrTransient marks a failure of the infrastructure (a 5xx, a timeout, a
// refused connection): the runner retries it and never scores it as the
// agent's failure.
var ErrTransient = errors.New("transient failure")

// Transient wraps err as a transient failure.
func Transient(err error) error { return fmt.Errorf("%w: %w", ErrTransient, err) }

// Factory makes a fresh agent for each episode.
type Factory func() (Agent, error)
