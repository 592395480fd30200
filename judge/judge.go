// Package judge asks a model to judge an episode: given evidence from the
// episode (text such as the agent's answer, a command's output or the
// steps taken, and screenshots) and an expectation in natural language,
// optionally split into weighted criteria for partial credit, the model
// decides whether the expectation holds. It is the client under the
// "judge" check kind; it asks the model through an API registered by
// provider (RegisterAPI): package judge/judgeapi registers OpenAI-compatible
// chat completions and Anthropic messages, through the official SDKs.
//
// A verdict (judgment.Verdict) only ever comes from a model's well-formed
// answer. Everything else - an unreachable or overloaded API, a reply that
// stays malformed, a refusal, a rejected request - is an error (see ErrUnavailable,
// ErrMalformed, ErrRefused, ErrRejected, ErrInvalid), never a failing or a
// passing verdict: a caller must report it as an infrastructure failure.
package judge

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/usage"
)

// Providers.
const (
	OpenAI    = "openai"    // OpenAI-compatible chat completions
	Anthropic = "anthropic" // Anthropic messages
)

// Reasks is how many more times a malformed reply is asked again, telling
// the model what was wrong, before Judge gives up with ErrMalformed.
const Reasks = 2

// DefaultTimeout bounds one request to the judge's API when
// Config.Timeout is 0.
const DefaultTimeout = 2 * time.Minute

// DefaultMaxTokens bounds a reply when Config.MaxTokens is 0.
const DefaultMaxTokens = 2000

// Config configures a Client.
type Config struct {
	Provider   string        // OpenAI ("openai", the default) or Anthropic ("anthropic")
	BaseURL    string        // the API's base URL; empty: the provider's own
	Model      string        // the model's name; required
	APIKeyEnv  string        // the environment variable holding the key; default OPENAI_API_KEY or ANTHROPIC_API_KEY; may be empty or unset where BaseURL is a loopback address
	Timeout    time.Duration // per request (one attempt); default DefaultTimeout
	MaxRetries int           // retries of 429, 408 and 5xx inside one ask (the SDK honours Retry-After); 0: 2, negative: none
	MaxTokens  int           // bound on a reply; default DefaultMaxTokens
	Prices     usage.Prices  // to price the usage; nil: usage.DefaultPrices
	Cache      Cache         // verdicts kept by request; nil: none
	// Offline answers from Cache only and never asks the model (no key is
	// needed): a request with no verdict there is ErrNotRecorded. It
	// replays the verdicts a judge gave before, where no model can be
	// reached (CI, a rescore).
	Offline bool
}

// Client judges requests with one model. It is safe for concurrent use.
// The temperature is always 0.
type Client struct {
	cfg Config
	api API
}

// New makes a client; the key is read from cfg.APIKeyEnv now. An empty
// or unset key is an error, but where cfg.BaseURL is a loopback address
// (a judge served on this machine), which needs none.
func New(cfg Config) (*Client, error) {
	if cfg.Provider == "" {
		cfg.Provider = OpenAI
	}
	if cfg.Provider != OpenAI && cfg.Provider != Anthropic {
		return nil, fmt.Errorf("judge: unknown provider %q (want %q or %q)", cfg.Provider, OpenAI, Anthropic)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("judge: no model given (provider %s)", cfg.Provider)
	}
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = "OPENAI_API_KEY"
		if cfg.Provider == Anthropic {
			cfg.APIKeyEnv = "ANTHROPIC_API_KEY"
		}
	}
	if cfg.Offline {
		if cfg.Cache == nil {
			return nil, fmt.Errorf("judge: an offline judge (%s %s) needs a cache of recorded verdicts", cfg.Provider, cfg.Model)
		}
		return &Client{cfg: cfg, api: offline{}}, nil
	}
	newAPI, ok := apiOf(cfg.Provider)
	if !ok {
		return nil, fmt.Errorf("judge: no API is registered for provider %s (package judge/judgeapi registers %s and %s)", cfg.Provider, OpenAI, Anthropic)
	}
	key := os.Getenv(cfg.APIKeyEnv)
	if key == "" && !Loopback(cfg.BaseURL) {
		return nil, fmt.Errorf("judge: $%s is empty: set it to the %s API key", cfg.APIKeyEnv, cfg.Provider)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = 2
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.Prices == nil {
		cfg.Prices = usage.DefaultPrices
	}
	return &Client{cfg: cfg, api: newAPI(cfg, key)}, nil
}

// Provider returns the client's provider.
func (c *Client) Provider() string { return c.cfg.Provider }

// Model returns the client's model.
func (c *Client) Model() string { return c.cfg.Model }

// Name is "provider:model".
func (c *Client) Name() string { return c.cfg.Provider + ":" + c.cfg.Model }

var (
	_ judgment.Model = (*Client)(nil)
	_ judgment.Model = Panel{}
)

// Judge asks the model whether req's expectation holds. A malformed
// reply is asked again up to Reasks times, the model told what was wrong.
// A verdict in the cache is returned without asking (Cached set); a new
// one is stored, and a failure to store it is an error too (a cache that
// cannot be written is broken infrastructure). Any error comes with a zero
// Verdict and means there is no verdict: see the package documentation.
func (c *Client) Judge(ctx context.Context, req judgment.Request) (judgment.Verdict, error) {
	req, err := normalize(req)
	if err != nil {
		return judgment.Verdict{}, err
	}
	sys := systemPrompt(len(req.Criteria) > 0)
	var key string
	if c.cfg.Cache != nil {
		key = Key(c.cfg.Provider, c.cfg.Model, req)
		if v, ok := c.cfg.Cache.Get(key); ok {
			v.Cached, v.Usage = true, usage.Usage{}
			return v, nil
		}
	}
	v, err := c.judge(ctx, sys, req)
	if err != nil {
		return judgment.Verdict{}, err
	}
	if c.cfg.Cache != nil {
		if err := c.cfg.Cache.Put(key, v); err != nil {
			return judgment.Verdict{}, fmt.Errorf("judge: storing the verdict in the cache: %w", err)
		}
	}
	return v, nil
}

// offline is the API of an offline client: it has nothing to ask.
type offline struct{}

func (offline) Ask(context.Context, string, []Piece, []Reask) (Answer, error) {
	return Answer{}, fmt.Errorf("%w for this request in the cache, and an offline judge asks no model", ErrNotRecorded)
}

func (c *Client) judge(ctx context.Context, sys string, req judgment.Request) (judgment.Verdict, error) {
	first := userParts(req)
	var convo []Reask
	var spent usage.Usage
	for ask := 0; ; ask++ {
		r, err := c.api.Ask(ctx, sys, first, convo)
		if err != nil {
			return judgment.Verdict{}, err
		}
		spent = spent.Add(c.cfg.Prices.Usage(c.cfg.Model, r.In, r.Out))
		if r.Refusal != "" {
			return judgment.Verdict{}, fmt.Errorf("%w (%s %s): %s", ErrRefused, c.cfg.Provider, c.cfg.Model, clip(r.Refusal))
		}
		v, problem := parseReply(r.Text, req.Criteria, evidenceTexts(req)...)
		if problem == nil {
			v.Model, v.Usage = c.cfg.Model, spent
			if r.Model != "" {
				v.Model = r.Model
			}
			return v, nil
		}
		if declines(r.Text) {
			return judgment.Verdict{}, fmt.Errorf("%w (%s %s): %s", ErrRefused, c.cfg.Provider, c.cfg.Model, clip(r.Text))
		}
		if r.Truncated {
			problem = fmt.Errorf("the reply was cut off at %d tokens (%v); keep the reasons short", c.cfg.MaxTokens, problem)
		}
		if ask == Reasks {
			return judgment.Verdict{}, fmt.Errorf("%w (%s %s, %d asks): %v; last reply %q", ErrMalformed, c.cfg.Provider, c.cfg.Model, ask+1, problem, clip(r.Text))
		}
		said := r.Text
		if strings.TrimSpace(said) == "" {
			said = "(no reply)" // the Messages API refuses an empty text block
		}
		convo = append(convo, Reask{Assistant: said, User: reaskText(problem)})
	}
}

// clip shortens a reply for an error message.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 300 {
		return string(r[:300]) + "..."
	}
	return s
}

// normalize checks a request and fills in the defaults: weights of 0
// become 1, image formats are "png" or "jpeg".
func normalize(req judgment.Request) (judgment.Request, error) {
	bad := func(format string, a ...any) (judgment.Request, error) {
		return judgment.Request{}, fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
	}
	if strings.TrimSpace(req.Expectation) == "" {
		return bad("no expectation")
	}
	if len(req.Evidence) == 0 {
		return bad("no evidence")
	}
	out := judgment.Request{Expectation: req.Expectation}
	seen := map[string]bool{}
	for i, cr := range req.Criteria {
		switch {
		case strings.TrimSpace(cr.ID) == "":
			return bad("criterion %d has no id", i+1)
		case seen[cr.ID]:
			return bad("criterion id %q given twice", cr.ID)
		case strings.TrimSpace(cr.Text) == "":
			return bad("criterion %q has no text", cr.ID)
		case cr.Weight < 0 || cr.Weight != cr.Weight || cr.Weight > 1e300:
			return bad("criterion %q has the weight %v", cr.ID, cr.Weight)
		}
		seen[cr.ID] = true
		if cr.Weight == 0 {
			cr.Weight = 1
		}
		out.Criteria = append(out.Criteria, cr)
	}
	for i, p := range req.Evidence {
		name := fmt.Sprintf("evidence %d (%q)", i+1, p.Label)
		if !p.IsImage() {
			if p.Format != "" {
				return bad("%s: a text part with an image format", name)
			}
			out.Evidence = append(out.Evidence, p)
			continue
		}
		if p.Text != "" {
			return bad("%s: both text and an image", name)
		}
		if len(p.Image) == 0 {
			return bad("%s: an empty image", name)
		}
		switch strings.ToLower(p.Format) {
		case "png":
			p.Format = "png"
		case "jpeg", "jpg":
			p.Format = "jpeg"
		case "":
			switch http.DetectContentType(p.Image) {
			case "image/png":
				p.Format = "png"
			case "image/jpeg":
				p.Format = "jpeg"
			default:
				return bad("%s: an image neither PNG nor JPEG", name)
			}
		default:
			return bad("%s: image format %q (want png or jpeg)", name, p.Format)
		}
		out.Evidence = append(out.Evidence, p)
	}
	return out, nil
}

// evidenceTexts are the texts of req's evidence: an object quoted from
// them in a reply is not the judge's verdict.
func evidenceTexts(req judgment.Request) []string {
	var out []string
	for _, p := range req.Evidence {
		if !p.IsImage() {
			out = append(out, p.Text)
		}
	}
	return out
}

// Loopback reports whether baseURL names this machine: localhost or a
// loopback IP address (127.0.0.0/8, ::1).
func Loopback(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
