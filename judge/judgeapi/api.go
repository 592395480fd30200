// Package judgeapi asks the judges' models through the official SDKs:
// OpenAI-compatible chat completions and Anthropic messages. It registers
// both providers with package judge when imported, so that judge.New can
// make their clients; a program that judges with a model imports it (the
// proctor command does), and one that only replays recorded verdicts
// need not.
package judgeapi

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/proctor-eval/proctor/judge"
)

func init() {
	judge.RegisterAPI(judge.OpenAI, func(cfg judge.Config, key string) judge.API { return newOpenAI(cfg, key) })
	judge.RegisterAPI(judge.Anthropic, func(cfg judge.Config, key string) judge.API { return newAnthropic(cfg, key) })
}

// openAIAsker asks an OpenAI-compatible chat-completions endpoint.
type openAIAsker struct {
	cfg    judge.Config
	client openai.Client
}

func newOpenAI(cfg judge.Config, key string) *openAIAsker {
	opts := []ooption.RequestOption{ooption.WithAPIKey(key), ooption.WithMaxRetries(cfg.MaxRetries),
		ooption.WithRequestTimeout(cfg.Timeout)}
	if cfg.BaseURL != "" {
		opts = append(opts, ooption.WithBaseURL(cfg.BaseURL))
	}
	return &openAIAsker{cfg: cfg, client: openai.NewClient(opts...)}
}

func (a *openAIAsker) Ask(ctx context.Context, system string, first []judge.Piece, convo []judge.Reask) (judge.Answer, error) {
	var content []openai.ChatCompletionContentPartUnionParam
	for _, p := range first {
		if p.Image != nil {
			url := "data:image/" + p.Format + ";base64," + base64.StdEncoding.EncodeToString(p.Image)
			content = append(content, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}))
		} else {
			content = append(content, openai.TextContentPart(p.Text))
		}
	}
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(content)}
	for _, t := range convo {
		msgs = append(msgs, openai.AssistantMessage(t.Assistant), openai.UserMessage(t.User))
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
		return judge.Answer{}, judge.Unavailable(judge.OpenAI, status, err)
	}
	ans := judge.Answer{Model: resp.Model, In: int(resp.Usage.PromptTokens), Out: int(resp.Usage.CompletionTokens)}
	if len(resp.Choices) == 0 {
		return ans, nil // empty: malformed
	}
	ch := resp.Choices[0]
	ans.Text = ch.Message.Content
	switch {
	case strings.TrimSpace(ch.Message.Refusal) != "":
		ans.Refusal = ch.Message.Refusal
	case ch.FinishReason == "content_filter":
		ans.Refusal = "the reply was withheld by the content filter"
	case ch.FinishReason == "length":
		ans.Truncated = true
	}
	return ans, nil
}

// anthropicAsker asks Anthropic messages.
type anthropicAsker struct {
	cfg    judge.Config
	client anthropic.Client
}

func newAnthropic(cfg judge.Config, key string) *anthropicAsker {
	opts := []aoption.RequestOption{aoption.WithAPIKey(key), aoption.WithMaxRetries(cfg.MaxRetries),
		aoption.WithRequestTimeout(cfg.Timeout)}
	if cfg.BaseURL != "" {
		opts = append(opts, aoption.WithBaseURL(cfg.BaseURL))
	}
	return &anthropicAsker{cfg: cfg, client: anthropic.NewClient(opts...)}
}

func (a *anthropicAsker) Ask(ctx context.Context, system string, first []judge.Piece, convo []judge.Reask) (judge.Answer, error) {
	var blocks []anthropic.ContentBlockParamUnion
	for _, p := range first {
		if p.Image != nil {
			blocks = append(blocks, anthropic.NewImageBlockBase64("image/"+p.Format, base64.StdEncoding.EncodeToString(p.Image)))
		} else {
			blocks = append(blocks, anthropic.NewTextBlock(p.Text))
		}
	}
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(blocks...)}
	for _, t := range convo {
		msgs = append(msgs, anthropic.NewAssistantMessage(anthropic.NewTextBlock(t.Assistant)),
			anthropic.NewUserMessage(anthropic.NewTextBlock(t.User)))
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
		return judge.Answer{}, judge.Unavailable(judge.Anthropic, status, err)
	}
	ans := judge.Answer{Model: string(resp.Model), In: int(resp.Usage.InputTokens), Out: int(resp.Usage.OutputTokens)}
	var text []string
	for _, b := range resp.Content {
		if b.Type == "text" {
			text = append(text, b.Text)
		}
	}
	ans.Text = strings.Join(text, "\n")
	switch resp.StopReason {
	case anthropic.StopReasonRefusal:
		ans.Refusal = ans.Text
		if strings.TrimSpace(ans.Refusal) == "" {
			ans.Refusal = `stop_reason "refusal"`
		}
	case anthropic.StopReasonMaxTokens:
		ans.Truncated = true
	}
	return ans, nil
}
