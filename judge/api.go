package judge

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// API sends one conversation to a model: the system prompt, the first
// user message, then the re-asks, and returns its reply. The APIs of the
// providers (OpenAI, Anthropic) live in package judge/judgeapi, which
// registers them (RegisterAPI) when imported.
type API interface {
	Ask(ctx context.Context, system string, first []Piece, reasks []Reask) (Answer, error)
}

// Piece is one piece of a user message: text, or an image.
type Piece struct {
	Text   string
	Image  []byte
	Format string // of the image: png or jpeg
}

// Reask is a re-ask: the model's malformed reply and what it was told.
type Reask struct{ Assistant, User string }

// Answer is a model's reply.
type Answer struct {
	Text      string
	Refusal   string // non-empty: the model declined
	Truncated bool   // cut off at the token bound
	Model     string // as the API named it
	In, Out   int    // tokens
}

// NewAPI makes a provider's API for a client: cfg has its defaults
// filled in (Timeout, MaxRetries, MaxTokens) and key is the API key.
type NewAPI func(cfg Config, key string) API

var (
	apiMu sync.RWMutex
	apis  = map[string]NewAPI{}
)

// RegisterAPI makes provider's API known to New. It panics on an empty
// name, a nil constructor or a provider registered twice: these are
// programming errors found at start.
func RegisterAPI(provider string, f NewAPI) {
	if provider == "" || f == nil {
		panic(fmt.Sprintf("judge.RegisterAPI(%q): a provider and a constructor are required", provider))
	}
	apiMu.Lock()
	defer apiMu.Unlock()
	if _, dup := apis[provider]; dup {
		panic(fmt.Sprintf("judge.RegisterAPI(%q): registered twice", provider))
	}
	apis[provider] = f
}

// APIs lists the providers whose API is registered, sorted.
func APIs() []string {
	apiMu.RLock()
	defer apiMu.RUnlock()
	out := make([]string, 0, len(apis))
	for p := range apis {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func apiOf(provider string) (NewAPI, bool) {
	apiMu.RLock()
	defer apiMu.RUnlock()
	f, ok := apis[provider]
	return f, ok
}
