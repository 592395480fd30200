package judge

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
)

// asker sends one conversation to a model: the system prompt, the first
// user message, then the re-asks, and returns its reply.
type asker interface {
	ask(ctx context.Context, system string, first []part, convo []turn) (answer, error)
}

// answer is a model's reply.
type answer struct {
	text      string
	refusal   string // non-empty: the model declined
	truncated bool   // cut off at the token bound
	model     string
	in, out   int // tokens
}

type openAIAsker struct {
	cfg    Config
	client openai.Client
}

func newOpenAI(cfg Config, key string) *openAIAsker {
	opts := []ooption.RequestOption{ooption.WithAPIKey(key), ooption.WithMaxRetries(cfg.MaxRetries),
		ooption.WithRequestTimeout(cfg.Timeout)}
	if cfg.BaseURL != "" {
		opts = append(opts, ooption.WithBaseURL(cfg.BaseURL))
	}
	return &openAIAsker{cfg: cfg, client: openai.NewClient(opts...)}
}

func (a *openAIAsker) ask(ctx context.Context, system string, first []part, convo []turn) (answer, error) {
	var content []openai.ChatCompletionContentPartUnionParam
	for _, p := range first {
		if p.image != nil {
			url := "data:image/" + p.format + ";base64," + base64.StdEncoding.EncodeToString(p.image)
			content = append(content, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}))
		} else {
			content = append(content, openai.TextContentPart(p.text))
		}
	}
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(content)}
	for _, t := range convo {
		msgs = append(msgs, openai.AssistantMessage(t.assistant), openai.UserMessage(t.user))
	}
	resp, err := a.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:       a.cfg.Model,
		Messages:    msgs,
		Temperature: openai.Float(0),
		MaxTokens:   openai.Int(int64(a.cfg.MaxTokens)),
	})
	if err != nil {
		var apiErr *openai.Error
		status := 0
		if errors.As(err, &apiErr) {
			status = apiErr.StatusCode
		}
		return answer{}, unavailable(OpenAI, status, err)
	}
	ans := answer{model: resp.Model, in: int(resp.Usage.PromptTokens), out: int(resp.Usage.CompletionTokens)}
	if len(resp.Choices) == 0 {
		return ans, nil // empty: malformed
	}
	ch := resp.Choices[0]
	ans.text = ch.Message.Content
	switch {
	case strings.TrimSpace(ch.Message.Refusal) != "":
		ans.refusal = ch.Message.Refusal
	case ch.FinishReason == "content_filter":
		ans.refusal = "the reply was withheld by the content filter"
	case ch.FinishReason == "length":
		ans.truncated = true
	}
	return ans, nil
}

type anthropicAsker struct {
	cfg    Config
	client anthropic.Client
}

func newAnthropic(cfg Config, key string) *anthropicAsker {
	opts := []aoption.RequestOption{aoption.WithAPIKey(key), aoption.WithMaxRetries(cfg.MaxRetries),
		aoption.WithRequestTimeout(cfg.Timeout)}
	if cfg.BaseURL != "" {
		opts = append(opts, aoption.WithBaseURL(cfg.BaseURL))
	}
	return &anthropicAsker{cfg: cfg, client: anthropic.NewClient(opts...)}
}

func (a *anthropicAsker) ask(ctx context.Context, system string, first []part, convo []turn) (answer, error) {
	var blocks []anthropic.ContentBlockParamUnion
	for _, p := range first {
		if p.image != nil {
			blocks = append(blocks, anthropic.NewImageBlockBase64("image/"+p.format, base64.StdEncoding.EncodeToString(p.image)))
		} else {
			blocks = append(blocks, anthropic.NewTextBlock(p.text))
		}
	}
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(blocks...)}
	for _, t := range convo {
		msgs = append(msgs, anthropic.NewAssistantMessage(anthropic.NewTextBlock(t.assistant)),
			anthropic.NewUserMessage(anthropic.NewTextBlock(t.user)))
	}
	resp, err := a.client.Messages.New(ctx, anthropic.MessageNewParams{
		Model:       anthropic.Model(a.cfg.Model),
		MaxTokens:   int64(a.cfg.MaxTokens),
		System:      []anthropic.TextBlockParam{{Text: system}},
		Messages:    msgs,
		Temperature: anthropic.Float(0),
	})
	if err != nil {
		var apiErr *anthropic.Error
		status := 0
		if errors.As(err, &apiErr) {
			status = apiErr.StatusCode
		}
		return answer{}, unavailable(Anthropic, status, err)
	}
	ans := answer{model: string(resp.Model), in: int(resp.Usage.InputTokens), out: int(resp.Usage.OutputTokens)}
	var text []string
	for _, b := range resp.Content {
		if b.Type == "text" {
			text = append(text, b.Text)
		}
	}
	ans.text = strings.Join(text, "\n")
	switch resp.StopReason {
	case anthropic.StopReasonRefusal:
		ans.refusal = ans.text
		if strings.TrimSpace(ans.refusal) == "" {
			ans.refusal = `stop_reason "refusal"`
		}
	case anthropic.StopReasonMaxTokens:
		ans.truncated = true
	}
	return ans, nil
}
