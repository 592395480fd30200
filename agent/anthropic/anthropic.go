// Package anthropic holds the agent that runs the computer-use tool loop
// of Anthropic's Messages API through the official SDK. It registers it
// with package agent (as "anthropic") when imported.
package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
)

// Anthropic runs the native computer-use tool loop of the Messages API:
// the model calls the computer tool, Proctor performs the call's actions,
// and the next screenshot goes back as the tool's result. The
// conversation is kept by the agent; a reply without a tool call ends the
// task (its text is the answer when there is one).
type Anthropic struct {
	cfg      agent.ModelConfig
	client   anthropic.Client
	task     agent.Task
	messages []anthropic.BetaMessageParam
	pending  []string    // tool_use ids awaiting a result
	space    agent.Space // the declared display on the last screen seen
}

// NewAnthropic makes the agent; the key is read from cfg.APIKeyEnv
// (ANTHROPIC_API_KEY by default).
func NewAnthropic(cfg agent.ModelConfig) (*Anthropic, error) {
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = "ANTHROPIC_API_KEY"
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = 1500
	}
	cfg.Defaults()
	if cfg.Model == "" {
		return nil, errors.New("anthropic agent: no model given")
	}
	key := os.Getenv(cfg.APIKeyEnv)
	if key == "" {
		return nil, fmt.Errorf("anthropic agent: $%s is empty", cfg.APIKeyEnv)
	}
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(max(cfg.MaxRetries, 0)),
		option.WithRequestTimeout(cfg.Timeout)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return &Anthropic{cfg: cfg, client: anthropic.NewClient(opts...)}, nil
}

// Start begins a new conversation.
func (a *Anthropic) Start(_ context.Context, t agent.Task) error {
	a.task, a.messages, a.pending = t, nil, nil
	return nil
}

func imageBlock(obs agent.Observation) (anthropic.BetaImageBlockParam, bool) {
	if len(obs.Screenshot) == 0 {
		return anthropic.BetaImageBlockParam{}, false
	}
	mt := anthropic.BetaBase64ImageSourceMediaType("image/png")
	if obs.Format == "jpeg" {
		mt = "image/jpeg"
	}
	var img anthropic.BetaImageBlockParam
	img.Source.OfBase64 = &anthropic.BetaBase64ImageSourceParam{Data: base64.StdEncoding.EncodeToString(obs.Screenshot), MediaType: mt}
	return img, true
}

// spaceOn returns the display declared to the model on the observation's
// screen (AnthropicSpace), made once per screen size.
func (a *Anthropic) spaceOn(obs agent.Observation) (agent.Space, error) {
	screen, err := agent.ScreenOf(obs, a.task)
	if err != nil {
		return agent.Space{}, err
	}
	if a.space.Screen != screen {
		if a.space, err = agent.AnthropicSpace(screen); err != nil {
			return agent.Space{}, err
		}
	}
	return a.space, nil
}

// Next sends the observation (as the first message, or as the results of
// the pending tool calls) and reads the model's tool calls. The model is
// told of a display of the space's image size and sent the screenshot at
// that size; its coordinates are mapped back to the screen.
func (a *Anthropic) Next(ctx context.Context, obs agent.Observation, _ []agent.Turn) (agent.Turn, error) {
	sp, err := a.spaceOn(obs)
	if err != nil {
		return agent.Turn{}, err
	}
	if obs, err = sp.View(obs); err != nil {
		return agent.Turn{}, err
	}
	img, hasImg := imageBlock(obs)
	sent := agent.PromptMessage{Role: "user"}
	if hasImg {
		sent.Images = []string{agent.ImageNote(obs)}
	}
	if len(a.pending) == 0 {
		sent.Text = a.firstText(obs)
		blocks := []anthropic.BetaContentBlockParamUnion{anthropic.NewBetaTextBlock(sent.Text)}
		if hasImg {
			blocks = append(blocks, anthropic.BetaContentBlockParamUnion{OfImage: &img})
		}
		a.messages = append(a.messages, anthropic.NewBetaUserMessage(blocks...))
	} else {
		sent.Text = fmt.Sprintf("the results of the %d tool calls (the screenshot with the last)", len(a.pending))
		var blocks []anthropic.BetaContentBlockParamUnion
		for i, id := range a.pending {
			res := anthropic.BetaToolResultBlockParam{ToolUseID: id}
			if i == len(a.pending)-1 {
				if obs.Feedback != "" {
					sent.Text += "; the last is an error: " + obs.Feedback
					res.IsError = anthropic.Bool(true)
					res.Content = append(res.Content, anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: obs.Feedback}})
				}
				if hasImg {
					res.Content = append(res.Content, anthropic.BetaToolResultBlockParamContentUnion{OfImage: &img})
				}
			}
			blocks = append(blocks, anthropic.BetaContentBlockParamUnion{OfToolResult: &res})
		}
		a.messages = append(a.messages, anthropic.NewBetaUserMessage(blocks...))
		a.pending = nil
	}
	start := time.Now()
	resp, err := a.client.Beta.Messages.New(ctx, anthropic.BetaMessageNewParams{
		Model:       anthropic.Model(a.cfg.Model),
		MaxTokens:   int64(a.cfg.MaxTokens),
		Messages:    a.messages,
		Temperature: anthropic.Float(a.cfg.Temperature),
		Tools:       []anthropic.BetaToolUnionParam{anthropic.BetaToolUnionParamOfComputerUseTool20250124(int64(sp.Image.H), int64(sp.Image.W))},
		Betas:       []anthropic.AnthropicBeta{anthropic.AnthropicBetaComputerUse2025_01_24},
	})
	if err != nil {
		a.messages = a.messages[:len(a.messages)-1] // the retried call sends it again
		return agent.Turn{}, classifyAnthropic(err)
	}
	a.messages = append(a.messages, resp.ToParam())
	turn := agent.Turn{Latency: time.Since(start), Space: &sp, Prompt: []agent.PromptMessage{sent}}
	if n := len(a.messages) - 2; n > 0 {
		// The Messages API is sent the whole conversation each turn: the
		// earlier messages are the earlier steps' records.
		turn.Prompt = append([]agent.PromptMessage{{Role: "conversation", Text: fmt.Sprintf("the %d earlier messages of the conversation (the earlier steps)", n)}}, turn.Prompt...)
	}
	turn.Usage = a.cfg.Prices.Usage(a.cfg.Model, int(resp.Usage.InputTokens), int(resp.Usage.OutputTokens))
	var text []string
	var raws []string
	for _, b := range resp.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			a.pending = append(a.pending, b.ID)
			raws = append(raws, string(b.Input))
			if b.Name != "computer" {
				turn.ParseError = fmt.Sprintf("the model called an unknown tool %q", b.Name)
				continue
			}
			acts, err := action.Parse(action.FormatAnthropic, string(b.Input), action.Options{})
			if err != nil {
				if strings.Contains(err.Error(), "holds no action") {
					continue // a screenshot request: the next observation answers it
				}
				turn.ParseError = err.Error()
				continue
			}
			acts, err = sp.Actions(acts)
			turn.Actions = append(turn.Actions, acts...)
			if err != nil {
				turn.ParseError = err.Error()
			}
		}
	}
	raw, _ := json.Marshal(map[string]any{"text": strings.Join(text, "\n"), "tool_calls": raws})
	turn.Raw, turn.Thought = string(raw), strings.TrimSpace(strings.Join(text, "\n"))
	if len(a.pending) == 0 { // no tool call: the model has finished
		// DONE carries the reply's text, which answer checks read.
		answer := strings.TrimSpace(strings.Join(text, "\n"))
		if answer == "FAIL" {
			turn.Actions = []action.Action{{Kind: action.Fail}}
		} else {
			turn.Actions = []action.Action{{Kind: action.Done, Text: answer}}
		}
	}
	return turn, nil
}

// firstText opens the conversation.
func (a *Anthropic) firstText(obs agent.Observation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Complete this task on the Linux desktop (screen %dx%d): %s\n", a.space.Image.W, a.space.Image.H, a.task.Instruction)
	b.WriteString("Use the computer tool. When the task is finished, reply without calling the tool; when it asks a question, reply with the answer only; when it cannot be done, reply FAIL.")
	if a.cfg.Prompt.Demonstrations && len(a.task.Demonstrations) > 0 {
		b.WriteString("\n\nHow similar tasks were done before:\n")
		for _, d := range a.task.Demonstrations {
			b.WriteString(strings.TrimSpace(d) + "\n")
		}
	}
	if obs.Tree != "" {
		b.WriteString("\n" + agent.ObservationText(obs))
	}
	return b.String()
}

// Stop does nothing.
func (a *Anthropic) Stop(context.Context) error { return nil }

// Probe asks the model one small question (agent.Prober).
func (a *Anthropic) Probe(ctx context.Context) error {
	_, err := a.client.Beta.Messages.New(ctx, anthropic.BetaMessageNewParams{
		Model:     anthropic.Model(a.cfg.Model),
		MaxTokens: 16,
		Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(agent.ProbeQuestion))},
	})
	if err != nil {
		return fmt.Errorf("model %s: %w", a.cfg.Model, err)
	}
	return nil
}

func classifyAnthropic(err error) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		return agent.ClassifyStatus(err, apiErr.StatusCode)
	}
	return agent.Transient(err) // no answer at all: a network fault or a timeout
}

func init() {
	agent.Register("anthropic", agent.Def{Summary: "the Messages API's computer-use tool loop (--model; key in $ANTHROPIC_API_KEY or --api-key-env)",
		Model: true,
		New: func(o agent.Options) (agent.Factory, error) {
			cfg, err := agent.ModelConfigOf("anthropic", o)
			if err != nil {
				return nil, err
			}
			return agent.Checked(func() (agent.Agent, error) { return NewAnthropic(cfg) })
		}})
}
