package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
)

// OpenAIComputer runs the computer-use tool loop of OpenAI's Responses
// API: the model answers with computer_call items, Proctor performs their
// actions, and the next screenshot goes back as each call's output. The
// API keeps the conversation (previous_response_id); a reply without a
// computer call ends the task, its text being the answer. The model is
// told of a display of cfg.Display (the screen when zero), sent
// screenshots of that size, and its coordinates are mapped back to the
// screen.
type OpenAIComputer struct {
	cfg     agent.ModelConfig
	client  openai.Client
	task    agent.Task
	space   agent.Space
	prev    string                               // the last response's id
	pending []responses.ResponseComputerToolCall // calls awaiting a screenshot
}

// NewOpenAIComputer makes the agent; the key is read from cfg.APIKeyEnv
// (OPENAI_API_KEY by default).
func NewOpenAIComputer(cfg agent.ModelConfig) (*OpenAIComputer, error) {
	cfg.Defaults()
	if cfg.Model == "" {
		return nil, errors.New("openai-computer agent: no model given")
	}
	key := os.Getenv(cfg.APIKeyEnv)
	if key == "" {
		return nil, fmt.Errorf("openai-computer agent: $%s is empty", cfg.APIKeyEnv)
	}
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(max(cfg.MaxRetries, 0)),
		option.WithRequestTimeout(cfg.Timeout)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return &OpenAIComputer{cfg: cfg, client: openai.NewClient(opts...)}, nil
}

// Start begins a new conversation.
func (a *OpenAIComputer) Start(_ context.Context, t agent.Task) error {
	a.task, a.prev, a.pending, a.space = t, "", nil, agent.Space{}
	return nil
}

// spaceOn returns the declared display's space on the observation's
// screen, made once per screen size.
func (a *OpenAIComputer) spaceOn(obs agent.Observation) (agent.Space, error) {
	screen, err := agent.ScreenOf(obs, a.task)
	if err != nil {
		return agent.Space{}, err
	}
	if a.space.Screen != screen {
		if a.space, err = agent.DisplaySpace(screen, a.cfg.Display); err != nil {
			return agent.Space{}, err
		}
	}
	return a.space, nil
}

// Next sends the observation (the task and the screenshot first, then
// the screenshot as the output of each pending computer call) and reads
// the model's computer calls.
func (a *OpenAIComputer) Next(ctx context.Context, obs agent.Observation, _ []agent.Turn) (agent.Turn, error) {
	sp, err := a.spaceOn(obs)
	if err != nil {
		return agent.Turn{}, err
	}
	if obs, err = sp.View(obs); err != nil {
		return agent.Turn{}, err
	}
	url := ""
	if len(obs.Screenshot) > 0 {
		format := obs.Format
		if format == "" {
			format = "png"
		}
		url = "data:image/" + format + ";base64," + base64.StdEncoding.EncodeToString(obs.Screenshot)
	}
	var input responses.ResponseInputParam
	sent := agent.PromptMessage{Role: "user"}
	if url != "" {
		sent.Images = []string{agent.ImageNote(obs)}
	}
	if a.prev == "" {
		sent.Text = a.firstText(obs, sp)
		content := responses.ResponseInputMessageContentListParam{responses.ResponseInputContentParamOfInputText(sent.Text)}
		if url != "" {
			img := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
			img.OfInputImage.ImageURL = openai.String(url)
			content = append(content, img)
		}
		input = append(input, responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser))
	} else {
		for _, c := range a.pending {
			out := responses.ResponseInputItemComputerCallOutputParam{CallID: c.CallID}
			if url != "" {
				out.Output.ImageURL = openai.String(url)
			}
			// The harness runs unattended: the checks the API raises
			// (an unexpected site, a sensitive page) are acknowledged and
			// kept in the record.
			for _, sc := range c.PendingSafetyChecks {
				out.AcknowledgedSafetyChecks = append(out.AcknowledgedSafetyChecks,
					responses.ResponseInputItemComputerCallOutputAcknowledgedSafetyCheckParam{ID: sc.ID, Code: openai.String(sc.Code), Message: openai.String(sc.Message)})
			}
			input = append(input, responses.ResponseInputItemUnionParam{OfComputerCallOutput: &out})
		}
		sent.Text = fmt.Sprintf("the outputs of the %d computer calls (the screenshot)", len(a.pending))
		if obs.Feedback != "" {
			input = append(input, responses.ResponseInputItemParamOfMessage("Note: "+obs.Feedback, responses.EasyInputMessageRoleUser))
			sent.Text += "; Note: " + obs.Feedback
		}
	}
	params := responses.ResponseNewParams{
		Model: a.cfg.Model,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		Tools: []responses.ToolUnionParam{{OfComputerUsePreview: &responses.ComputerUsePreviewToolParam{
			DisplayWidth: int64(sp.Image.W), DisplayHeight: int64(sp.Image.H), Environment: responses.ComputerUsePreviewToolEnvironmentLinux}}},
		Truncation: responses.ResponseNewParamsTruncationAuto,
	}
	if a.prev != "" {
		params.PreviousResponseID = openai.String(a.prev)
	}
	start := time.Now()
	resp, err := a.client.Responses.New(ctx, params)
	if err != nil {
		return agent.Turn{}, classify(err) // nothing changed: a retry sends the same
	}
	a.prev, a.pending = resp.ID, nil
	turn := agent.Turn{Latency: time.Since(start), Space: &sp,
		Usage:  a.cfg.Prices.Usage(a.cfg.Model, int(resp.Usage.InputTokens), int(resp.Usage.OutputTokens)),
		Prompt: []agent.PromptMessage{sent}}
	if prev := params.PreviousResponseID; prev.Valid() {
		// The Responses API keeps the conversation: the request names it.
		turn.Prompt = append([]agent.PromptMessage{{Role: "conversation", Text: "the earlier turns, by previous_response_id " + prev.Value}}, turn.Prompt...)
	}
	var text, thought, calls []string
	for _, item := range resp.Output {
		switch item.Type {
		case "message":
			for _, c := range item.AsMessage().Content {
				text = append(text, c.Text+c.Refusal)
			}
		case "reasoning":
			for _, s := range item.AsReasoning().Summary {
				thought = append(thought, s.Text)
			}
		case "computer_call":
			call := item.AsComputerCall()
			a.pending = append(a.pending, call)
			calls = append(calls, item.RawJSON())
			acts, err := action.Parse(action.FormatOpenAI, item.RawJSON(), action.Options{})
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
	raw, _ := json.Marshal(map[string]any{"text": strings.Join(text, "\n"), "reasoning": thought, "computer_calls": rawList(calls)})
	turn.Raw = string(raw)
	turn.Thought = strings.TrimSpace(strings.Join(append(thought, text...), "\n"))
	if len(a.pending) == 0 { // no computer call: the model has finished
		answer := strings.TrimSpace(strings.Join(text, "\n"))
		if answer == "FAIL" {
			turn.Actions = []action.Action{{Kind: action.Fail}}
		} else {
			turn.Actions = []action.Action{{Kind: action.Done, Text: answer}}
		}
	}
	return turn, nil
}

// rawList keeps JSON items as they came.
func rawList(items []string) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, s := range items {
		out[i] = json.RawMessage(s)
	}
	return out
}

// firstText opens the conversation.
func (a *OpenAIComputer) firstText(obs agent.Observation, sp agent.Space) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Complete this task on the Linux desktop (display %dx%d): %s\n", sp.Image.W, sp.Image.H, a.task.Instruction)
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
func (a *OpenAIComputer) Stop(context.Context) error { return nil }

// Probe asks the model one small question (agent.Prober), with no tool:
// a model made for the computer tool answers text too.
func (a *OpenAIComputer) Probe(ctx context.Context) error {
	_, err := a.client.Responses.New(ctx, responses.ResponseNewParams{
		Model:      a.cfg.Model,
		Input:      responses.ResponseNewParamsInputUnion{OfString: openai.String(agent.ProbeQuestion)},
		Truncation: responses.ResponseNewParamsTruncationAuto,
	})
	if err != nil {
		return fmt.Errorf("model %s: %w", a.cfg.Model, err)
	}
	return nil
}

func init() {
	agent.Register("openai-computer", agent.Def{Summary: "the Responses API's computer-use tool loop (--model computer-use-preview; --display WxH declared to the model, default the screen)",
		Model: true,
		New: func(o agent.Options) (agent.Factory, error) {
			cfg, err := agent.ModelConfigOf("openai-computer", o)
			if err != nil {
				return nil, err
			}
			return agent.Checked(func() (agent.Agent, error) { return NewOpenAIComputer(cfg) })
		}})
}
