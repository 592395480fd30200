// The tests are outside package judge so that they ask through the APIs
// that package judge/judgeapi (which imports judge) registers.
package judge_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/proctor-eval/proctor/judge"
	_ "github.com/proctor-eval/proctor/judge/judgeapi"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/usage"
)

var providers = []string{OpenAI, Anthropic}

// step answers one request of a fake API, in the provider's dialect.
type step func(provider string, w http.ResponseWriter, r *http.Request)

// fake is a local server speaking chat completions (OpenAI) or messages
// (Anthropic), answering with a script (its last step repeats); it keeps
// the requests' bodies.
type fake struct {
	provider string
	srv      *httptest.Server
	mu       sync.Mutex
	bodies   []map[string]any
	calls    atomic.Int32
}

func newFake(t *testing.T, provider string, script ...step) *fake {
	t.Helper()
	f := &fake{provider: provider}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, authOK := "/v1/chat/completions", r.Header.Get("Authorization") == "Bearer test-key"
		if provider == Anthropic {
			path, authOK = "/v1/messages", r.Header.Get("X-Api-Key") == "test-key"
		}
		if r.URL.Path != path || !authOK {
			http.Error(w, `{"error":{"message":"not found"}}`, 404)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, 400)
			return
		}
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		n := int(f.calls.Add(1))
		script[min(n, len(script))-1](provider, w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// client makes a client of the fake; the model is "judge-model" unless
// cfg names one.
func (f *fake) client(t *testing.T, cfg Config) *Client {
	t.Helper()
	t.Setenv("JUDGE_TEST_KEY", "test-key")
	cfg.Provider, cfg.APIKeyEnv, cfg.BaseURL = f.provider, "JUDGE_TEST_KEY", f.srv.URL
	if f.provider == OpenAI {
		cfg.BaseURL += "/v1"
	}
	if cfg.Model == "" {
		cfg.Model = "judge-model"
	}
	if cfg.Prices == nil {
		cfg.Prices = usage.Prices{"judge-model": {Input: 2, Output: 10}}
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fake) body(t *testing.T, i int) map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.bodies) {
		t.Fatalf("request %d not made (%d made)", i+1, len(f.bodies))
	}
	return f.bodies[i]
}

func write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// says answers with text, 1000 tokens in and 50 out.
func says(text string) step {
	return func(p string, w http.ResponseWriter, _ *http.Request) {
		if p == OpenAI {
			write(w, 200, map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "judge-model-2026",
				"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
					"message": map[string]any{"role": "assistant", "content": text}}},
				"usage": map[string]any{"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}})
			return
		}
		write(w, 200, map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "judge-model-2026",
			"content": []any{map[string]any{"type": "text", "text": text}}, "stop_reason": "end_turn",
			"usage": map[string]any{"input_tokens": 1000, "output_tokens": 50}})
	}
}

// refuses declines through the API: OpenAI's message.refusal, Anthropic's
// stop_reason "refusal".
func refuses(p string, w http.ResponseWriter, _ *http.Request) {
	if p == OpenAI {
		write(w, 200, map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "judge-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": nil, "refusal": "I can't help with that."}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
		return
	}
	write(w, 200, map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "judge-model",
		"content": []any{}, "stop_reason": "refusal", "usage": map[string]any{"input_tokens": 10, "output_tokens": 0}})
}

// status answers with an API error; Retry-After-Ms 1 keeps the SDK's
// retries fast unless hdr sets its own.
func status(code int, hdr ...string) step {
	return func(p string, w http.ResponseWriter, _ *http.Request) {
		if len(hdr) == 0 {
			hdr = []string{"Retry-After-Ms", "1"}
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		if p == OpenAI {
			write(w, code, map[string]any{"error": map[string]any{"message": "busy", "type": "server_error"}})
			return
		}
		write(w, code, map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "busy"}})
	}
}

// hangs never answers (until the client gives up).
func hangs(_ string, _ http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

func request() judgment.Request {
	return judgment.Request{
		Expectation: "The report was saved as report.pdf in the home folder.",
		Evidence: []judgment.Part{
			judgment.Text("the agent's answer", "I saved it."),
			judgment.Text("ls ~", "report.pdf\nnotes.txt"),
			judgment.Image("final screen", "png", []byte("\x89PNG\r\n\x1a\nfake png")),
		},
	}
}

var threeCriteria = []judgment.Criterion{
	{ID: "saved", Weight: 2, Text: "report.pdf exists"},
	{ID: "named", Weight: 1, Text: "it is named report.pdf"},
	{ID: "home", Text: "it is in the home folder"}, // weight 0: 1
}

func TestJudge(t *testing.T) {
	const (
		pass  = `{"verdict": "pass", "reason": "ls shows report.pdf."}`
		fail  = `{"verdict": "fail", "reason": "No report.pdf in the listing."}`
		parts = `{"verdict": "fail", "reason": "Saved elsewhere.", "criteria": [
			{"id": "home", "pass": false, "reason": "It is in /tmp."},
			{"id": "saved", "pass": true, "reason": "The file exists."},
			{"id": "named", "pass": true, "reason": "The name is right."}]}`
		allPass = `{"verdict": "pass", "reason": "All hold.", "criteria": [
			{"id": "saved", "pass": true, "reason": "a"}, {"id": "named", "pass": true, "reason": "b"},
			{"id": "home", "pass": true, "reason": "c"}]}`
	)
	spent := func(asks int) usage.Usage {
		return usage.Usage{InputTokens: 1000 * asks, OutputTokens: 50 * asks, Cost: float64(asks) * (1000*2 + 50*10) / 1e6}
	}
	tests := []struct {
		name         string
		script       []step
		criteria     []judgment.Criterion
		cfg          Config
		pass         bool
		score        float64
		criteriaWant []judgment.CriterionVerdict
		err          error
		calls        int
		check        func(t *testing.T, f *fake, v judgment.Verdict, err error)
	}{
		{name: "pass", script: []step{says(pass)}, pass: true, score: 1, calls: 1,
			check: func(t *testing.T, f *fake, v judgment.Verdict, _ error) {
				if v.Reason != "ls shows report.pdf." || v.Model != "judge-model-2026" || v.Usage != spent(1) || v.Cached {
					t.Errorf("verdict %+v", v)
				}
			}},
		{name: "fail", script: []step{says(fail)}, pass: false, score: 0, calls: 1},
		{name: "fenced with prose", script: []step{says("Here is my verdict:\n```json\n" + pass + "\n```\n")}, pass: true, score: 1, calls: 1},
		{name: "criteria partial score", script: []step{says(parts)}, criteria: threeCriteria, pass: false, score: 0.75, calls: 1,
			criteriaWant: []judgment.CriterionVerdict{{ID: "saved", Pass: true, Reason: "The file exists."}, {ID: "named", Pass: true, Reason: "The name is right."}, {ID: "home", Pass: false, Reason: "It is in /tmp."}}},
		{name: "criteria all pass", script: []step{says(allPass)}, criteria: threeCriteria, pass: true, score: 1, calls: 1},
		{name: "malformed then fixed on the retry", script: []step{says("It looks saved to me, so pass."), says(pass)}, pass: true, score: 1, calls: 2,
			check: func(t *testing.T, f *fake, v judgment.Verdict, _ error) {
				if v.Usage != spent(2) {
					t.Errorf("usage %+v, want both asks", v.Usage)
				}
				second, _ := json.Marshal(f.body(t, 1)["messages"])
				if !strings.Contains(string(second), "It looks saved to me, so pass.") ||
					!strings.Contains(string(second), "could not be used: the reply holds no JSON object") {
					t.Errorf("the re-ask does not carry the reply and the problem: %s", second)
				}
			}},
		{name: "empty reply, then an answer", script: []step{says(""), says(fail)}, pass: false, score: 0, calls: 2},
		{name: "criteria disagreeing with the verdict, then fixed", criteria: threeCriteria, calls: 2, pass: true, score: 1,
			script: []step{says(strings.Replace(parts, `"fail"`, `"pass"`, 1)), says(allPass)}},
		{name: "malformed until the end", script: []step{says(`{"verdict": "probably", "reason": "?"}`)}, err: ErrMalformed, calls: 1 + Reasks,
			check: func(t *testing.T, _ *fake, _ judgment.Verdict, err error) {
				if !strings.Contains(err.Error(), `"verdict" is "probably"`) {
					t.Errorf("error %v does not say what was wrong", err)
				}
			}},
		{name: "refusal", script: []step{refuses}, err: ErrRefused, calls: 1},
		{name: "refusal in words", script: []step{says("I'm sorry, but I can't help with evaluating this.")}, err: ErrRefused, calls: 1},
		{name: "429 then 200", script: []step{status(429, "Retry-After", "0"), says(pass)}, pass: true, score: 1, calls: 2},
		{name: "5xx always", script: []step{status(500), status(502), status(503)}, err: ErrUnavailable, calls: 3},
		{name: "5xx without retries", script: []step{status(529)}, cfg: Config{MaxRetries: -1}, err: ErrUnavailable, calls: 1},
		{name: "400 is rejected, not retried", script: []step{status(400)}, err: ErrRejected, calls: 1},
		{name: "timeout", script: []step{hangs}, cfg: Config{Timeout: 200 * time.Millisecond, MaxRetries: -1}, err: ErrUnavailable, calls: 1},
	}
	for _, p := range providers {
		for _, tc := range tests {
			t.Run(p+"/"+tc.name, func(t *testing.T) {
				f := newFake(t, p, tc.script...)
				c := f.client(t, tc.cfg)
				req := request()
				req.Criteria = tc.criteria
				start := time.Now()
				v, err := c.Judge(context.Background(), req)
				if tc.err != nil {
					if !errors.Is(err, tc.err) {
						t.Fatalf("error %v, want %v", err, tc.err)
					}
					if !reflectZero(v) {
						t.Fatalf("an error came with a verdict: %+v", v)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				if got := int(f.calls.Load()); got != tc.calls {
					t.Errorf("%d requests, want %d", got, tc.calls)
				}
				if time.Since(start) > 5*time.Second {
					t.Errorf("took %v", time.Since(start))
				}
				if tc.err == nil {
					if v.Pass != tc.pass || math.Abs(v.Score-tc.score) > 1e-9 {
						t.Errorf("pass %v score %v, want %v %v (%+v)", v.Pass, v.Score, tc.pass, tc.score, v)
					}
					if tc.criteriaWant != nil && !slices.Equal(v.Criteria, tc.criteriaWant) {
						t.Errorf("criteria %+v, want %+v", v.Criteria, tc.criteriaWant)
					}
				}
				if tc.check != nil {
					tc.check(t, f, v, err)
				}
			})
		}
	}
}

func reflectZero(v judgment.Verdict) bool {
	return !v.Pass && v.Score == 0 && v.Reason == "" && v.Criteria == nil && v.Model == "" && v.Usage == (usage.Usage{}) && !v.Cached
}

// TestRequestBody inspects what is sent: temperature 0, the model, the
// token bound, the system prompt, the evidence with its labels and both
// images, base64 with their media types.
func TestRequestBody(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\npixels")
	jpeg := []byte("\xff\xd8\xff\xe0jpeg pixels")
	req := judgment.Request{Expectation: "The dialog is closed.", Criteria: threeCriteria[:1], Evidence: []judgment.Part{
		judgment.Text("steps", "1. click Close"), judgment.Image("before", "png", png), judgment.Image("after", "jpg", jpeg)}}
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			f := newFake(t, p, says(`{"verdict":"pass","reason":"closed","criteria":[{"id":"saved","pass":true,"reason":"yes"}]}`))
			c := f.client(t, Config{MaxTokens: 777})
			if _, err := c.Judge(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			body := f.body(t, 0)
			if temp, ok := body["temperature"]; !ok || temp != 0.0 {
				t.Errorf("temperature %v (sent %v), want 0", temp, ok)
			}
			if body["model"] != "judge-model" || body["max_tokens"] != 777.0 {
				t.Errorf("model %v max_tokens %v", body["model"], body["max_tokens"])
			}
			all, _ := json.Marshal(body)
			s := string(all)
			for _, want := range []string{"The dialog is closed.", `id \"saved\": report.pdf exists`, "1. click Close",
				"Evidence 1: steps", "Evidence 2: before (image below)", "Evidence 3: after (image below)",
				"strict, impartial judge", "every criterion id exactly once"} {
				if !strings.Contains(s, want) {
					t.Errorf("the request lacks %q: %.2000s", want, s)
				}
			}
			b64png, b64jpeg := base64.StdEncoding.EncodeToString(png), base64.StdEncoding.EncodeToString(jpeg)
			var wants []string
			if p == OpenAI {
				wants = []string{`"url":"data:image/png;base64,` + b64png + `"`, `"url":"data:image/jpeg;base64,` + b64jpeg + `"`, `"role":"system"`}
			} else {
				wants = []string{`"data":"` + b64png + `","media_type":"image/png"`, `"data":"` + b64jpeg + `","media_type":"image/jpeg"`}
				if sys, _ := json.Marshal(body["system"]); !strings.Contains(string(sys), "strict, impartial judge") {
					t.Errorf("system %s", sys)
				}
			}
			for _, want := range wants {
				if !strings.Contains(s, want) {
					t.Errorf("the request lacks %s", want)
				}
			}
			if n := strings.Count(s, ";base64,") + strings.Count(s, `"type":"base64"`); n != 2 {
				t.Errorf("%d images sent, want 2", n)
			}
		})
	}
}

func TestCacheHitMakesNoCall(t *testing.T) {
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			f := newFake(t, p, says(`{"verdict":"pass","reason":"ok"}`))
			c := f.client(t, Config{Cache: DirCache(dir)})
			ctx := context.Background()
			first, err := c.Judge(ctx, request())
			if err != nil || first.Cached || f.calls.Load() != 1 {
				t.Fatalf("first: %+v %v after %d calls", first, err, f.calls.Load())
			}
			// The same client, and a new one on the same directory.
			for _, c := range []*Client{c, f.client(t, Config{Cache: DirCache(dir)})} {
				v, err := c.Judge(ctx, request())
				if err != nil {
					t.Fatal(err)
				}
				if !v.Cached || v.Pass != first.Pass || v.Reason != first.Reason || v.Model != first.Model || v.Usage != (usage.Usage{}) {
					t.Errorf("hit %+v, first %+v", v, first)
				}
			}
			if n := f.calls.Load(); n != 1 {
				t.Errorf("%d calls, want 1: the hits asked the model", n)
			}
			// Another model misses.
			other := f.client(t, Config{Model: "other-model", Cache: DirCache(dir)})
			if v, err := other.Judge(ctx, request()); err != nil || v.Cached || f.calls.Load() != 2 {
				t.Errorf("another model: %+v %v, %d calls", v, err, f.calls.Load())
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
					t.Errorf("left in the cache: %s", e.Name())
				}
			}
			if len(entries) != 2 {
				t.Errorf("%d cache files, want 2", len(entries))
			}
		})
	}
}

func TestErrorsAreNotCached(t *testing.T) {
	dir := t.TempDir()
	f := newFake(t, OpenAI, status(500), says(`{"verdict":"fail","reason":"no"}`))
	c := f.client(t, Config{Cache: DirCache(dir), MaxRetries: -1})
	if _, err := c.Judge(context.Background(), request()); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("first: %v", err)
	}
	v, err := c.Judge(context.Background(), request())
	if err != nil || v.Cached || v.Pass || f.calls.Load() != 2 {
		t.Fatalf("second: %+v %v, %d calls", v, err, f.calls.Load())
	}
}

func TestCacheWriteFailureIsAnError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	f := newFake(t, OpenAI, says(`{"verdict":"pass","reason":"ok"}`))
	c := f.client(t, Config{Cache: DirCache(filepath.Join(file, "cache"))})
	v, err := c.Judge(context.Background(), request())
	if err == nil || !reflectZero(v) {
		t.Fatalf("%+v %v, want an error and no verdict", v, err)
	}
}

func TestCacheKey(t *testing.T) {
	base := request()
	base.Criteria = threeCriteria
	key := func(mod func(r *judgment.Request)) string {
		r := request()
		r.Criteria = append([]judgment.Criterion(nil), threeCriteria...)
		r.Evidence = append([]judgment.Part(nil), r.Evidence...)
		img := append([]byte(nil), r.Evidence[2].Image...)
		r.Evidence[2].Image = img
		if mod != nil {
			mod(&r)
		}
		return Key(OpenAI, "m", r)
	}
	k := key(nil)
	if len(k) != 64 || k != key(nil) {
		t.Fatalf("key %q is not a stable SHA-256", k)
	}
	for name, mod := range map[string]func(r *judgment.Request){
		"an image byte":      func(r *judgment.Request) { r.Evidence[2].Image[9] ^= 1 },
		"an image's format":  func(r *judgment.Request) { r.Evidence[2].Format = "jpeg" },
		"a label":            func(r *judgment.Request) { r.Evidence[0].Label += "!" },
		"a text":             func(r *judgment.Request) { r.Evidence[1].Text += "\n" },
		"the expectation":    func(r *judgment.Request) { r.Expectation += "." },
		"a weight":           func(r *judgment.Request) { r.Criteria[0].Weight = 3 },
		"a criterion's text": func(r *judgment.Request) { r.Criteria[1].Text = "x" },
		"no criteria":        func(r *judgment.Request) { r.Criteria = nil },
		"the parts' order":   func(r *judgment.Request) { r.Evidence[0], r.Evidence[1] = r.Evidence[1], r.Evidence[0] },
		"a boundary": func(r *judgment.Request) {
			r.Evidence[0].Label, r.Evidence[0].Text = "the agent's answerI", " saved it."
		},
	} {
		if key(mod) == k {
			t.Errorf("changing %s keeps the key", name)
		}
	}
	r := request()
	jpg := request()
	jpg.Evidence[2].Format = ""
	if Key(OpenAI, "m", jpg) != Key(OpenAI, "m", r) {
		t.Error("a sniffed format keys differently from the same format given")
	}
	if Key(OpenAI, "m", r) == Key(Anthropic, "m", r) || Key(OpenAI, "m", r) == Key(OpenAI, "n", r) {
		t.Error("the provider or the model does not change the key")
	}
}

func TestDirCache(t *testing.T) {
	d := DirCache(filepath.Join(t.TempDir(), "a", "b"))
	if _, ok := d.Get("k"); ok {
		t.Fatal("hit in an empty cache")
	}
	want := judgment.Verdict{Pass: true, Score: 1, Reason: "r", Model: "m", Cached: true}
	if err := d.Put("k", want); err != nil {
		t.Fatal(err)
	}
	got, ok := d.Get("k")
	want.Cached = false
	if !ok || got.Pass != want.Pass || got.Reason != want.Reason || got.Cached {
		t.Fatalf("got %+v %v", got, ok)
	}
	for _, bad := range []string{"", "../k", "a/b", ".hidden"} {
		if err := d.Put(bad, want); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
	os.WriteFile(filepath.Join(string(d), "broken.json"), []byte("{"), 0o644)
	if _, ok := d.Get("broken"); ok {
		t.Error("a broken file is a hit")
	}
}

func TestPanel(t *testing.T) {
	judges := func(t *testing.T, replies ...step) []*Client {
		var cs []*Client
		for _, r := range replies {
			cs = append(cs, newFake(t, OpenAI, r).client(t, Config{MaxRetries: -1}))
		}
		return cs
	}
	yes, no := says(`{"verdict":"pass","reason":"yes"}`), says(`{"verdict":"fail","reason":"no"}`)
	for _, tc := range []struct {
		name   string
		steps  []step
		pass   bool
		reason string
		err    error
	}{
		{name: "majority passes", steps: []step{yes, no, yes}, pass: true, reason: "pass by majority: 2 of 3"},
		{name: "majority fails", steps: []step{no, yes, no}, pass: false, reason: "fail by majority: 1 of 3"},
		{name: "tie fails", steps: []step{yes, no}, pass: false, reason: "tie: 1 of 2 judges passed, and a tie fails"},
		{name: "one judge alone", steps: []step{yes}, pass: true, reason: "1 of 1"},
		{name: "an error is the panel's", steps: []step{yes, status(503), yes}, err: ErrUnavailable},
		{name: "a refusal is the panel's", steps: []step{yes, refuses, no}, err: ErrRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Panel{Judges: judges(t, tc.steps...)}.Judge(context.Background(), request())
			each := v.Votes
			if tc.err != nil {
				if !errors.Is(err, tc.err) || each != nil || !reflectZero(v) {
					t.Fatalf("%+v %v %v, want the error %v alone", v, each, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass != tc.pass || !strings.Contains(v.Reason, tc.reason) || len(each) != len(tc.steps) {
				t.Fatalf("%+v (%d verdicts), want pass %v, reason %q", v, len(each), tc.pass, tc.reason)
			}
			passes := 0
			for _, e := range each {
				if e.Pass {
					passes++
				}
			}
			if math.Abs(v.Score-float64(passes)/float64(len(each))) > 1e-9 || v.Usage.InputTokens != 1000*len(each) {
				t.Errorf("score %v usage %+v", v.Score, v.Usage)
			}
		})
	}
	if _, err := (Panel{}).Judge(context.Background(), request()); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty panel: %v", err)
	}
}

func TestNew(t *testing.T) {
	t.Setenv("JUDGE_TEST_KEY", "k")
	t.Setenv("JUDGE_EMPTY_KEY", "")
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{APIKeyEnv: "JUDGE_TEST_KEY"}, "no model given"},
		{Config{Model: "m", APIKeyEnv: "JUDGE_EMPTY_KEY"}, "$JUDGE_EMPTY_KEY is empty"},
		{Config{Provider: Anthropic, Model: "m", APIKeyEnv: "JUDGE_EMPTY_KEY"}, "$JUDGE_EMPTY_KEY is empty: set it to the anthropic API key"},
		{Config{Provider: "gemini", Model: "m", APIKeyEnv: "JUDGE_TEST_KEY"}, `unknown provider "gemini"`},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	c, err := New(Config{Model: "m", APIKeyEnv: "JUDGE_TEST_KEY"})
	if err != nil || c.Provider() != OpenAI || c.Model() != "m" {
		t.Fatalf("%v %v", c, err)
	}
}

func TestInvalidRequests(t *testing.T) {
	f := newFake(t, OpenAI, says(`{"verdict":"pass","reason":"ok"}`))
	c := f.client(t, Config{})
	for name, mod := range map[string]func(r *judgment.Request){
		"no expectation":       func(r *judgment.Request) { r.Expectation = " " },
		"no evidence":          func(r *judgment.Request) { r.Evidence = nil },
		"criterion without id": func(r *judgment.Request) { r.Criteria = []judgment.Criterion{{Text: "x"}} },
		"duplicate criterion": func(r *judgment.Request) {
			r.Criteria = []judgment.Criterion{{ID: "a", Text: "x"}, {ID: "a", Text: "y"}}
		},
		"negative weight":     func(r *judgment.Request) { r.Criteria = []judgment.Criterion{{ID: "a", Text: "x", Weight: -1}} },
		"gif":                 func(r *judgment.Request) { r.Evidence[2].Format = "gif" },
		"unknown image bytes": func(r *judgment.Request) { r.Evidence[2].Format, r.Evidence[2].Image = "", []byte("GIF89a...") },
		"empty image":         func(r *judgment.Request) { r.Evidence[2].Image = []byte{} },
		"text and image":      func(r *judgment.Request) { r.Evidence[2].Text = "x" },
	} {
		r := request()
		mod(&r)
		if _, err := c.Judge(context.Background(), r); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if n := f.calls.Load(); n != 0 {
		t.Errorf("%d calls for invalid requests", n)
	}
	// A PNG without a format is recognized.
	r := request()
	r.Evidence[2].Format = ""
	if _, err := c.Judge(context.Background(), r); err != nil {
		t.Errorf("sniffed png: %v", err)
	}
}
