package agent

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/usage"
)

// What the agents that call a model API share; the agents themselves live
// in subpackages (agent/openai, agent/anthropic) that register them.

// ModelConfig configures an agent that calls a model API.
type ModelConfig struct {
	BaseURL     string  // e.g. https://api.openai.com/v1 or a compatible server
	Model       string  // model name
	APIKeyEnv   string  // environment variable holding the key; default OPENAI_API_KEY
	Temperature float64 // default 0.5
	TopP        float64 // default 0.9
	MaxTokens   int     // default 1500
	History     int     // earlier turns kept in the prompt; default 3
	Prompt      PromptConfig
	Prices      usage.Prices
	Timeout     time.Duration // per request; default DefaultTimeout
	MaxRetries  int           // retries of 429 and 5xx inside one call (the SDK honours Retry-After); 0: 2, negative: none
	Display     action.Size   // the display declared to a computer-use tool (openai-computer); zero: the screen
}

// Defaults fills in the defaults of the fields left zero.
func (c *ModelConfig) Defaults() {
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = "OPENAI_API_KEY"
	}
	if c.Temperature == 0 {
		c.Temperature = 0.5
	}
	if c.TopP == 0 {
		c.TopP = 0.9
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = 1500
	}
	if c.History == 0 {
		c.History = 3
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 2
	}
	if c.Prompt.Format == "" {
		c.Prompt.Format = action.FormatPyAutoGUI
	}
}

// ClassifyStatus classifies a model API's error by its HTTP status: rate
// limits, request timeouts and server errors are transient (retried);
// other statuses are the request's fault.
func ClassifyStatus(err error, status int) error {
	if status == 429 || status == 408 || status >= 500 {
		return Transient(err)
	}
	return fmt.Errorf("model API refused the request: %w", err)
}

// ParseDisplay reads a display size written WIDTHxHEIGHT (e.g. 1280x800);
// the empty string is the zero size (the screen's).
func ParseDisplay(s string) (action.Size, error) {
	if s == "" {
		return action.Size{}, nil
	}
	w, h, ok := strings.Cut(s, "x")
	wi, err1 := strconv.Atoi(w)
	hi, err2 := strconv.Atoi(h)
	if !ok || err1 != nil || err2 != nil || wi < 16 || hi < 16 || wi > 16384 || hi > 16384 {
		return action.Size{}, fmt.Errorf("display %q is not WIDTHxHEIGHT (16 to 16384 pixels a side)", s)
	}
	return action.Size{W: wi, H: hi}, nil
}
