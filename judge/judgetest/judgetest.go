// Package judgetest is a local stand-in for the model APIs a judge
// calls: one HTTP server speaking OpenAI-compatible chat completions
// (/v1/chat/completions) and Anthropic messages (/v1/messages), whose
// verdicts a Go function decides. Tests of judge checks run against it
// with the real client code; nothing here is used outside tests.
package judgetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Asked is one request the server received, as the judge sees it.
type Asked struct {
	Provider string // "openai" or "anthropic"
	Model    string
	Texts    []string // the text parts of the first user message
	Images   int      // the images of the first user message
	Criteria []string // the criteria ids the request names
	Reask    bool     // a re-ask after a malformed reply
}

// Text is the texts joined by newlines.
func (a Asked) Text() string { return strings.Join(a.Texts, "\n") }

// Reply is what the server answers: Status (0: 200) with Text as the
// model's reply.
type Reply struct {
	Status int
	Text   string
}

// Server is the stand-in. Its last request's verdict repeats nothing: the
// decide function answers every request.
type Server struct {
	srv    *httptest.Server
	decide func(Asked) Reply
	mu     sync.Mutex
	asked  []Asked
}

// New starts a stand-in that answers with decide; it stops when the test
// ends. Requests must carry the key "test-key".
func New(t testing.TB, decide func(Asked) Reply) *Server {
	s := &Server{decide: decide}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// Key is the API key the server accepts.
const Key = "test-key"

// OpenAIURL is the base URL for an OpenAI-compatible client.
func (s *Server) OpenAIURL() string { return s.srv.URL + "/v1" }

// AnthropicURL is the base URL for an Anthropic client.
func (s *Server) AnthropicURL() string { return s.srv.URL }

// Calls counts the requests answered.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.asked)
}

// Asked returns the requests received, in order.
func (s *Server) Asked() []Asked {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Asked(nil), s.asked...)
}

type content struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

var criterionID = regexp.MustCompile(`(?m)^- id "([^"]+)":`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var provider string
	switch {
	case r.URL.Path == "/v1/chat/completions" && r.Header.Get("Authorization") == "Bearer "+Key:
		provider = "openai"
	case r.URL.Path == "/v1/messages" && r.Header.Get("X-Api-Key") == Key:
		provider = "anthropic"
	default:
		write(w, 404, map[string]any{"error": map[string]any{"message": "not found", "type": "not_found_error"}})
		return
	}
	b, _ := io.ReadAll(r.Body)
	var body struct {
		Model    string    `json:"model"`
		Messages []message `json:"messages"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		write(w, 400, map[string]any{"error": map[string]any{"message": "bad json: " + err.Error()}})
		return
	}
	a := Asked{Provider: provider, Model: body.Model}
	users := 0
	for _, m := range body.Messages {
		if m.Role != "user" {
			continue
		}
		users++
		if users > 1 {
			a.Reask = true
			continue
		}
		var parts []content
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			var text string
			if json.Unmarshal(m.Content, &text) == nil {
				parts = []content{{Type: "text", Text: text}}
			}
		}
		for _, p := range parts {
			switch p.Type {
			case "text":
				a.Texts = append(a.Texts, p.Text)
			case "image", "image_url":
				a.Images++
			}
		}
	}
	for _, m := range criterionID.FindAllStringSubmatch(a.Text(), -1) {
		a.Criteria = append(a.Criteria, m[1])
	}
	s.mu.Lock()
	s.asked = append(s.asked, a)
	s.mu.Unlock()
	rep := s.decide(a)
	if rep.Status != 0 && rep.Status != 200 {
		w.Header().Set("Retry-After-Ms", "1")
		write(w, rep.Status, map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": rep.Text}})
		return
	}
	if provider == "openai" {
		write(w, 200, map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": rep.Text}}},
			"usage": map[string]any{"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}})
		return
	}
	write(w, 200, map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": body.Model,
		"content": []any{map[string]any{"type": "text", "text": rep.Text}}, "stop_reason": "end_turn",
		"usage": map[string]any{"input_tokens": 1000, "output_tokens": 50}})
}

func write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

var quoted = regexp.MustCompile(`"([^"]+)"`)

// Quoted is a judge that reads only text: a statement holds when every
// phrase it quotes ("...") appears, case aside, in the evidence's text
// (the parts after the expectation and criteria); one quoting nothing
// holds when the request shows at least one image. The expectation is
// decided so, and each criterion when there are criteria (the verdict
// then passes when all do). Its reply is the verdict as JSON.
func Quoted(a Asked) Reply {
	if len(a.Texts) == 0 {
		return Reply{Text: `{"verdict": "fail", "reason": "no text at all"}`}
	}
	head, evidence := a.Texts[0], strings.ToLower(pieces(a.Texts[1:]))
	holds := func(statement string) (bool, string) {
		qs := quoted.FindAllStringSubmatch(statement, -1)
		if len(qs) == 0 {
			return a.Images > 0, fmt.Sprintf("%d images shown", a.Images)
		}
		for _, q := range qs {
			if !strings.Contains(evidence, strings.ToLower(q[1])) {
				return false, fmt.Sprintf("%q is not in the evidence", q[1])
			}
		}
		return true, "every quoted phrase is in the evidence"
	}
	expectation, criteria, _ := strings.Cut(strings.TrimPrefix(head, "Expectation:\n"), "\nCriteria:\n")
	expectation, _, _ = strings.Cut(expectation, "\nEvidence follows.")
	if len(a.Criteria) == 0 {
		ok, why := holds(expectation)
		return Reply{Text: verdict(ok, why, nil)}
	}
	var cs []map[string]any
	all := true
	for _, line := range strings.Split(criteria, "\n") {
		m := criterionID.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ok, why := holds(line[len(m[0]):])
		all = all && ok
		cs = append(cs, map[string]any{"id": m[1], "pass": ok, "reason": why})
	}
	why := "every criterion holds"
	if !all {
		why = "a criterion does not hold"
	}
	return Reply{Text: verdict(all, why, cs)}
}

func verdict(pass bool, reason string, criteria []map[string]any) string {
	v := map[string]any{"verdict": "fail", "reason": reason}
	if pass {
		v["verdict"] = "pass"
	}
	if criteria != nil {
		v["criteria"] = criteria
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// pieces joins the evidence's texts without the lines that mark where
// each piece begins and ends (their code is no evidence).
func pieces(texts []string) string {
	var keep []string
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			if !strings.HasPrefix(l, "BEGIN EVIDENCE ") && !strings.HasPrefix(l, "END EVIDENCE ") {
				keep = append(keep, l)
			}
		}
	}
	return strings.Join(keep, "\n")
}
