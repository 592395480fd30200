package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/usage"
)

// HTTP is an agent behind the HTTP protocol, written in any language:
//
//	POST {URL}/start  {"task": Task}
//	POST {URL}/step   {"observation": Observation, "history": [Turn...]}
//	   -> {"actions": [Proctor actions]}            or
//	   -> {"reply": "model text", "format": "pyautogui"}  (parsed by Proctor)
//	   with an optional "usage": {"input_tokens", "output_tokens", "cost"}
//	   and an optional "thought" (for a "reply", its prose is taken)
//	POST {URL}/stop   {}
//
// Screenshots travel as base64 in the observation's "screenshot" field. A
// 5xx answer, a timeout or a refused connection is a transient failure
// (retried); a 4xx answer is the agent's own error.
type HTTP struct {
	URL     string
	Timeout time.Duration // per request; default DefaultTimeout
	Client  *http.Client
}

// MaxReply bounds an answer of the agent; a larger one is the agent's
// error, not a transient fault.
const MaxReply = 64 << 20

// StepRequest is the body of POST /step.
type StepRequest struct {
	Observation Observation `json:"observation"`
	History     []Turn      `json:"history"`
}

// StepResponse is the answer to POST /step.
type StepResponse struct {
	Actions []action.Action `json:"actions,omitempty"`
	Reply   string          `json:"reply,omitempty"`
	Format  action.Format   `json:"format,omitempty"`
	Usage   usage.Usage     `json:"usage,omitempty"`
	Thought string          `json:"thought,omitempty"`
}

func (h *HTTP) post(ctx context.Context, path string, in, out any) error {
	timeout := h.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimRight(h.URL, "/")+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	c := h.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		if parent.Err() != nil {
			// The caller's deadline (an episode's wall time) or an
			// interrupt: not the service's fault, not to be retried.
			return fmt.Errorf("agent at %s%s: %w", h.URL, path, err)
		}
		var ne net.Error
		if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "connection refused") {
			return Transient(fmt.Errorf("agent at %s%s: %w", h.URL, path, err))
		}
		return fmt.Errorf("agent at %s%s: %w", h.URL, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxReply+1))
	if err != nil && parent.Err() != nil {
		return fmt.Errorf("agent at %s%s: %w", h.URL, path, err)
	}
	if err != nil {
		return Transient(err)
	}
	if len(body) > MaxReply {
		return fmt.Errorf("agent at %s%s: the answer is larger than %d MiB", h.URL, path, MaxReply>>20)
	}
	if resp.StatusCode >= 500 {
		return Transient(fmt.Errorf("agent at %s%s: %s: %s", h.URL, path, resp.Status, bytes.TrimSpace(body)))
	}
	if resp.StatusCode >= 400 {
		return fmt.Errorf("agent at %s%s refused: %s: %s", h.URL, path, resp.Status, bytes.TrimSpace(body))
	}
	if out != nil && len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("agent at %s%s: bad JSON answer: %v", h.URL, path, err)
		}
	}
	return nil
}

// Start sends the task.
func (h *HTTP) Start(ctx context.Context, t Task) error {
	// Every field the protocol names is sent, lists empty rather than left
	// out, so that an agent can read them without checking.
	type task struct {
		Task
		Apps           []string `json:"apps"`
		Demonstrations []string `json:"demonstrations"`
	}
	body := task{Task: t, Apps: append([]string{}, t.Apps...), Demonstrations: append([]string{}, t.Demonstrations...)}
	return h.post(ctx, "/start", map[string]task{"task": body}, nil)
}

// Next sends the observation and history and reads the actions.
func (h *HTTP) Next(ctx context.Context, obs Observation, history []Turn) (Turn, error) {
	start := time.Now()
	var resp stepAnswer
	if err := h.post(ctx, "/step", StepRequest{Observation: obs, History: history}, &resp); err != nil {
		return Turn{}, err
	}
	turn := Turn{Usage: resp.Usage, Thought: resp.Thought, Latency: time.Since(start)}
	switch {
	case len(resp.Actions) > 0:
		turn.Actions = resp.Actions
		b, _ := json.Marshal(resp.Actions)
		turn.Raw = string(b)
		for i, a := range resp.Actions {
			if err := a.Validate(); err != nil {
				turn.Actions, turn.ParseError = nil, fmt.Sprintf("action %d: %v", i+1, err)
				break
			}
		}
	case resp.Reply != "":
		turn.Raw = resp.Reply
		if turn.Thought == "" {
			turn.Thought = action.Thought(resp.Reply)
		}
		f := resp.Format
		if f == "" {
			f = action.FormatPyAutoGUI
		}
		acts, err := action.Parse(f, resp.Reply, action.Options{})
		if err != nil {
			turn.ParseError = err.Error()
		}
		turn.Actions = acts
	case len(resp.keys) > 0:
		turn.ParseError = fmt.Sprintf("the agent answered neither actions nor a reply: its answer has %s; a step's answer holds \"actions\" (a list) or \"reply\" (text)",
			keyList(resp.keys))
	default:
		turn.ParseError = "the agent answered neither actions nor a reply: its answer is empty; a step's answer holds \"actions\" (a list) or \"reply\" (text)"
	}
	return turn, nil
}

// stepAnswer is a StepResponse that also keeps the answer's keys, for the
// error of an answer that has neither actions nor a reply.
type stepAnswer struct {
	StepResponse
	keys []string
}

func (a *stepAnswer) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &a.StepResponse); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) == nil {
		for k, v := range m {
			if string(v) != "null" {
				a.keys = append(a.keys, k)
			}
		}
		slices.Sort(a.keys)
	}
	return nil
}

// keyList names an answer's keys, the first few, quoted.
func keyList(keys []string) string {
	const most = 8
	q := make([]string, 0, most)
	for _, k := range keys[:min(len(keys), most)] {
		if len(k) > 40 {
			k = k[:40] + "…"
		}
		q = append(q, strconv.Quote(k))
	}
	s := "the key"
	if len(keys) > 1 {
		s += "s"
	}
	s += " " + strings.Join(q, ", ")
	if len(keys) > most {
		s += fmt.Sprintf(" and %d more", len(keys)-most)
	}
	return s
}

// Stop tells the agent the task is over.
func (h *HTTP) Stop(ctx context.Context) error { return h.post(ctx, "/stop", struct{}{}, nil) }

func init() {
	Register("http", Def{Summary: "an agent in any language behind the HTTP protocol at --agent-url",
		New: func(o Options) (Factory, error) {
			if err := httpURL(o.URL); err != nil {
				return nil, err
			}
			return func() (Agent, error) { return &HTTP{URL: o.URL, Timeout: o.Timeout}, nil }, nil
		}})
}
