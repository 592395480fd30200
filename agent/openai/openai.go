// Package openai holds the agents that call OpenAI's APIs through the
// official SDK: openai (any chat-completions endpoint), openai-computer
// (the Responses API's computer-use tool) and the pipelines over chat
// completions, planner-grounder and reflect. It registers them with
// package agent when imported.
package openai

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/usage"
)

// OpenAI is an agent on any OpenAI-compatible chat-completions endpoint:
// a system prompt for the observation mode and output format, the
// screenshot as an image, the tree as text, and the last replies (with
// their thoughts) as history.
type OpenAI struct {
	cfg    agent.ModelConfig
	client openai.Client
	task   agent.Task
	system string
	space  agent.Space // the model's coordinate space on the last screen seen
}

// NewOpenAI makes the agent; the key is read from cfg.APIKeyEnv.
func NewOpenAI(cfg agent.ModelConfig) (*OpenAI, error) {
	cfg.Defaults()
	if cfg.Model == "" {
		return nil, errors.New("openai agent: no model given")
	}
	key := os.Getenv(cfg.APIKeyEnv)
	if key == "" {
		return nil, fmt.Errorf("openai agent: $%s is empty", cfg.APIKeyEnv)
	}
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(max(cfg.MaxRetries, 0)),
		option.WithRequestTimeout(cfg.Timeout)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return &OpenAI{cfg: cfg, client: openai.NewClient(opts...)}, nil
}

// Start prepares the system prompt.
func (a *OpenAI) Start(_ context.Context, t agent.Task) error {
	a.task = t
	a.system = agent.SystemPrompt(a.cfg.Prompt, t)
	return nil
}

// Next asks the model for the next actions.
func (a *OpenAI) Next(ctx context.Context, obs agent.Observation, history []agent.Turn) (agent.Turn, error) {
	var past []string
	for i := max(0, len(history)-a.cfg.History); i < len(history); i++ {
		past = append(past, history[i].Raw)
	}
	v, sp, err := a.view(obs)
	if err != nil {
		return agent.Turn{}, err
	}
	text, usage, latency, sent, err := a.ask(ctx, a.system, past, agent.ObservationText(v), v)
	if err != nil {
		return agent.Turn{}, err
	}
	turn := agent.Turn{Raw: text, Thought: action.Thought(text), Usage: usage, Latency: latency, Space: &sp, Prompt: sent}
	turn.Actions, turn.ParseError = parseIn(sp, a.cfg.Prompt.Format, text)
	return turn, nil
}

// parseIn parses a reply of format f written in space sp and maps its
// points to the screen. The error (a reply that does not parse, or a
// point outside the model's image) is returned as text for the turn; the
// actions before the faulty one are kept.
func parseIn(sp agent.Space, f action.Format, text string) ([]action.Action, string) {
	acts, perr := action.Parse(f, text, action.Options{Unit: sp.Unit})
	acts, merr := sp.Actions(acts)
	switch {
	case merr != nil:
		return acts, merr.Error()
	case perr != nil:
		return acts, perr.Error()
	}
	return acts, ""
}

// spaceOn returns the model's coordinate space on the observation's
// screen, made once per screen size.
func (a *OpenAI) spaceOn(obs agent.Observation) (agent.Space, error) {
	screen, err := agent.ScreenOf(obs, a.task)
	if err != nil {
		return agent.Space{}, err
	}
	if a.space.Screen == screen {
		return a.space, nil
	}
	sp, err := agent.SpaceFor(screen, a.cfg.Prompt)
	if err != nil {
		return agent.Space{}, fmt.Errorf("coordinate space of the model: %w", err)
	}
	a.space = sp
	return sp, nil
}

// view is obs as the model is shown it: the screenshot resized to the
// model's image and the tree's positions in that image's pixels.
func (a *OpenAI) view(obs agent.Observation) (agent.Observation, agent.Space, error) {
	sp, err := a.spaceOn(obs)
	if err != nil {
		return obs, sp, err
	}
	obs, err = sp.View(obs)
	return obs, sp, err
}

// ask sends one chat request: the system prompt, the earlier replies (each
// after a short user line), then the text and the screenshot of obs.
// It returns the reply and, for the step's record, the messages sent.
func (a *OpenAI) ask(ctx context.Context, system string, past []string, text string, obs agent.Observation) (string, usage.Usage, time.Duration, []agent.PromptMessage, error) {
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system)}
	sent := []agent.PromptMessage{{Role: "system", Text: system}}
	for i, p := range past {
		msgs = append(msgs, openai.UserMessage(fmt.Sprintf("Step %d.", i+1)), openai.AssistantMessage(p))
		sent = append(sent, agent.PromptMessage{Role: "user", Text: fmt.Sprintf("Step %d.", i+1)}, agent.PromptMessage{Role: "assistant", Text: p})
	}
	parts := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(text)}
	last := agent.PromptMessage{Role: "user", Text: text}
	if len(obs.Screenshot) > 0 {
		last.Images = []string{agent.ImageNote(obs)}
		format := obs.Format
		if format == "" {
			format = "png"
		}
		url := "data:image/" + format + ";base64," + base64.StdEncoding.EncodeToString(obs.Screenshot)
		parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}))
	}
	msgs = append(msgs, openai.UserMessage(parts))
	sent = append(sent, last)
	start := time.Now()
	resp, err := a.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:       a.cfg.Model,
		Messages:    msgs,
		Temperature: openai.Float(a.cfg.Temperature),
		TopP:        openai.Float(a.cfg.TopP),
		MaxTokens:   openai.Int(int64(a.cfg.MaxTokens)),
	})
	if err != nil {
		return "", usage.Usage{}, 0, sent, classify(err)
	}
	usage := a.cfg.Prices.Usage(a.cfg.Model, int(resp.Usage.PromptTokens), int(resp.Usage.CompletionTokens))
	if len(resp.Choices) == 0 {
		return "", usage, time.Since(start), sent, nil
	}
	return resp.Choices[0].Message.Content, usage, time.Since(start), sent, nil
}

// Stop does nothing.
func (a *OpenAI) Stop(context.Context) error { return nil }

// Probe asks the model one small question (agent.Prober).
func (a *OpenAI) Probe(ctx context.Context) error {
	_, err := a.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: a.cfg.Model,
		// A system message and a user message, as every step sends.
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You answer briefly."), openai.UserMessage(agent.ProbeQuestion)},
		MaxTokens: openai.Int(16),
	})
	if err != nil {
		return fmt.Errorf("model %s: %w", a.cfg.Model, err)
	}
	return nil
}

// classify marks what the harness should retry: rate limits, server
// errors, timeouts and network failures.
func classify(err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return agent.ClassifyStatus(err, apiErr.StatusCode)
	}
	return agent.Transient(err) // no answer at all: a network fault or a timeout
}

func init() {
	agent.Register("openai", agent.Def{Summary: "any OpenAI-compatible chat-completions endpoint (--model, --base-url; key in $OPENAI_API_KEY or --api-key-env; --format pyautogui or json)",
		Model: true,
		New: func(o agent.Options) (agent.Factory, error) {
			cfg, err := agent.ModelConfigOf("openai", o)
			if err != nil {
				return nil, err
			}
			return agent.Checked(func() (agent.Agent, error) { return NewOpenAI(cfg) })
		}})
}
