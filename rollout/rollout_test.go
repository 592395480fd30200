package rollout

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/mem"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/rollout/api"
	"github.com/proctor-eval/proctor/run"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

const token = "test-token"

// fixture is a service on in-memory desktops behind its HTTP handler.
type fixture struct {
	t   testing.TB
	s   *Service
	srv *httptest.Server
	st  *store.Store
}

type options struct {
	places    int
	faults    []mem.Fault
	perClient int
	queue     int
	suite     string         // "": testdata/suite
	judge     judgment.Model // of the judge checks
	wrap      func(env.Env) env.Env
}

func loadSuite(t testing.TB) *task.Suite {
	t.Helper()
	return loadSuiteAt(t, "testdata/suite")
}

func loadSuiteAt(t testing.TB, dir string) *task.Suite {
	t.Helper()
	s, ps := task.Load(dir)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	return s
}

func newFixture(t testing.TB, o options) *fixture {
	t.Helper()
	suite := loadSuiteAt(t, cmpOr(o.suite, "testdata/suite"))
	var opts []mem.Option
	if len(o.faults) > 0 {
		opts = append(opts, mem.WithFault(o.faults...))
	}
	srcs, err := mem.Sources("", max(o.places, 1), opts...)
	if err != nil {
		t.Fatal(err)
	}
	for i := range srcs {
		srcs[i].Also = append(srcs[i].Also, "x11")
		if o.wrap != nil {
			start := srcs[i].Start
			srcs[i].Start = func(ctx context.Context, size action.Size) (env.Env, error) {
				e, err := start(ctx, size)
				if err != nil {
					return nil, err
				}
				return o.wrap(e), nil
			}
		}
	}
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := New(context.Background(), Config{Suite: suite, Sources: srcs, Store: st, RunID: "test", Settle: -1,
		PerClient: o.perClient, Queue: o.queue, QueueWait: time.Hour, Judge: o.judge})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(Handler(s, token, nil))
	t.Cleanup(srv.Close)
	return &fixture{t: t, s: s, srv: srv, st: st}
}

// schemas compiles the OpenAPI document's schemas.
var schemas = sync.OnceValues(func() (*jsonschema.Compiler, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(OpenAPI))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	return c, c.AddResource("https://proctor.dev/rollout/openapi.json", doc)
})

// pointer escapes a JSON pointer's token.
func pointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// conform checks an answer against the OpenAPI document: its status is
// documented for the route, and a JSON body matches the schema given.
func conform(t testing.TB, method, route string, status int, ctype string, body []byte) {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	m := strings.ToLower(method)
	resp, ok := doc.Paths[route][m].Responses[fmt.Sprint(status)]
	if !ok {
		t.Fatalf("%s %s answered %d, which the OpenAPI document does not list", method, route, status)
	}
	if len(resp.Content) == 0 {
		if len(body) > 0 {
			t.Fatalf("%s %s %d: a body where the document gives none", method, route, status)
		}
		return
	}
	mt, _, _ := strings.Cut(ctype, ";")
	if _, ok := resp.Content[mt]; !ok {
		t.Fatalf("%s %s %d: content type %q is not documented", method, route, status, ctype)
	}
	if mt != "application/json" {
		return
	}
	c, err := schemas()
	if err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprintf("https://proctor.dev/rollout/openapi.json#/paths/%s/%s/responses/%d/content/%s/schema", pointer(route), m, status, pointer(mt))
	sch, err := c.Compile(ref)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s %s %d: %v: %s", method, route, status, err, body)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("%s %s %d: the answer does not match the document: %v\n%s", method, route, status, err, body)
	}
}

// call makes a request with the token, checks the answer against the
// OpenAPI document and decodes a JSON answer into out.
func (f *fixture) call(method, path string, body any, out any) (int, http.Header) {
	f.t.Helper()
	return f.callAs("", method, path, body, out)
}

func (f *fixture) callAs(client, method, path string, body any, out any) (int, http.Header) {
	f.t.Helper()
	var rd io.Reader
	if b, ok := body.(string); ok {
		rd = strings.NewReader(b)
	} else if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if client != "" {
		req.Header.Set(api.ClientHeader, client)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	u, _ := url.Parse(path)
	route := ""
	for _, rt := range routes {
		if rt.method == method && matches(rt.path, u.Path) {
			route = rt.path
		}
	}
	if route != "" {
		conform(f.t, method, route, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			f.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return resp.StatusCode, resp.Header
}

func (f *fixture) create(req api.CreateRequest) api.Rollout {
	f.t.Helper()
	var ro api.Rollout
	if code, _ := f.call("POST", api.PathRollouts, req, &ro); code != 201 {
		f.t.Fatalf("create %s: %d", req.Task, code)
	}
	return ro
}

func (f *fixture) step(id string, req api.StepRequest) api.StepResponse {
	f.t.Helper()
	var sr api.StepResponse
	if code, _ := f.call("POST", "/v1/rollouts/"+id+"/step", req, &sr); code != 200 {
		f.t.Fatalf("step: %d", code)
	}
	return sr
}

// errorOf makes a request that must fail with status and kind.
func (f *fixture) errorOf(method, path string, body any, status int, kind string) api.Error {
	f.t.Helper()
	var e api.Error
	code, _ := f.call(method, path, body, &e)
	if code != status || e.Kind != kind {
		f.t.Fatalf("%s %s: %d %s (%s), want %d %s", method, path, code, e.Kind, e.Error, status, kind)
	}
	return e
}

// gold plays a task's gold solution, one action a step, and returns the
// step answers.
func (f *fixture) gold(ro api.Rollout, t *task.Task) []api.StepResponse {
	f.t.Helper()
	var out []api.StepResponse
	for _, a := range t.Gold {
		sr := f.step(ro.ID, api.StepRequest{Actions: []action.Action{a}})
		out = append(out, sr)
		if sr.Done {
			return out
		}
	}
	return append(out, f.step(ro.ID, api.StepRequest{Actions: []action.Action{{Kind: action.Done}}}))
}

// TestGoldRewardsMatchReplay runs every task's gold solution through the
// API and through proctor run's replay agent: the rollouts' final rewards
// are the runs' outcomes.
func TestGoldRewardsMatchReplay(t *testing.T) {
	f := newFixture(t, options{places: 2})
	suite := loadSuite(t)
	srcs, _ := mem.Sources("", 2)
	for i := range srcs {
		srcs[i].Also = append(srcs[i].Also, "x11")
	}
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	results, err := run.Run(context.Background(), run.Config{Suite: suite, Tasks: suite.Tasks, Sources: srcs, Store: st, Settle: -1,
		Agent: func() (agent.Agent, error) { return &agent.Replay{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, r := range results {
		want[r.Task] = r.Outcome
	}
	for _, tk := range suite.Tasks {
		t.Run(tk.ID, func(t *testing.T) {
			ro := f.create(api.CreateRequest{Task: tk.ID, Observation: api.ObsMarks})
			if ro.Status != api.StatusRunning || ro.Observation == nil || ro.Observation.Step != 1 || ro.Instruction == "" {
				t.Fatalf("created: %+v", ro)
			}
			steps := f.gold(ro, tk)
			last := steps[len(steps)-1]
			if !last.Done || last.Final == nil || last.Final.Status != api.StatusFinished || last.Final.Reward == nil {
				t.Fatalf("last step: %+v", last)
			}
			got := *last.Final.Reward
			if w := want[tk.ID]; (w == string(check.Success)) != (got == 1) {
				t.Errorf("reward %v (%s), replay %s", got, last.Final.Outcome, w)
			}
			if last.Final.Outcome != want[tk.ID] {
				t.Errorf("outcome %s, replay %s", last.Final.Outcome, want[tk.ID])
			}
		})
	}
	// The episodes are in the run folder, with their steps.
	rs, err := f.st.Results()
	if err != nil || len(rs) != len(suite.Tasks) {
		t.Fatalf("%d results stored (%v), want %d", len(rs), err, len(suite.Tasks))
	}
	turns, err := f.st.Turns("editor-save", 0)
	if err != nil || len(turns) != 4 {
		t.Fatalf("editor-save: %d turns stored (%v), want 4", len(turns), err)
	}
}

// TestStepRewardsFollowMilestones checks that step rewards are the rises
// of the milestone score and add up, with the final delta, to it.
func TestStepRewardsFollowMilestones(t *testing.T) {
	f := newFixture(t, options{})
	tk, _ := loadSuite(t).Task("editor-milestones")
	ro := f.create(api.CreateRequest{Task: tk.ID, Observation: api.ObsTree})
	if !ro.Info.Milestones || ro.Info.StepsLeft != tk.MaxSteps()-1 {
		t.Fatalf("info: %+v", ro.Info)
	}
	var rewards []float64
	sum := 0.0
	steps := f.gold(ro, tk)
	for _, sr := range steps {
		rewards = append(rewards, sr.Reward)
		sum += sr.Reward
	}
	// click, type (typed), click Save (saved), done.
	if want := []float64{0, 0.5, 0.5, 0}; !slices.Equal(rewards, want) {
		t.Fatalf("step rewards %v, want %v", rewards, want)
	}
	fin := steps[len(steps)-1].Final
	if fin.Milestone != 1 || sum+fin.MilestoneDelta != fin.Milestone || *fin.Reward != 1 {
		t.Fatalf("final %+v after rewards summing to %v", fin, sum)
	}
	if got := steps[2].Info.Performed; len(got) != 1 || got[0].Kind != action.Click {
		t.Fatalf("performed: %+v", got)
	}
}

func TestRepliesAreParsed(t *testing.T) {
	f := newFixture(t, options{})
	ro := f.create(api.CreateRequest{Task: "count-lines", Observation: api.ObsTree, Format: "pyautogui"})
	sr := f.step(ro.ID, api.StepRequest{Reply: new("pyautogui.clik(1, 2)")})
	if sr.Done || len(sr.Info.Errors) == 0 || !strings.Contains(sr.Info.Errors[0], "could not be used") || sr.Observation == nil ||
		!strings.Contains(sr.Observation.Feedback, "unknown function") {
		t.Fatalf("a reply that does not parse: %+v", sr)
	}
	// Actions that are not valid are the policy's mistake too.
	sr = f.step(ro.ID, api.StepRequest{Actions: []action.Action{{Kind: "fly"}}})
	if sr.Done || len(sr.Info.Errors) == 0 {
		t.Fatalf("an invalid action: %+v", sr)
	}
	sr = f.step(ro.ID, api.StepRequest{Reply: new(`{"kind":"answer","text":"3"}`), Format: "json"})
	if !sr.Done || sr.Final == nil || *sr.Final.Reward != 1 || sr.Final.Steps != 3 {
		t.Fatalf("the answer: %+v", sr)
	}
	st, _ := f.st.Results()
	if len(st) != 1 || st[0].Unparsed != 2 {
		t.Fatalf("stored: %+v", st)
	}
}

func TestTemplateSeed(t *testing.T) {
	f := newFixture(t, options{})
	var ts api.Tasks
	f.call("GET", api.PathTasks+"?gold=true", nil, &ts)
	i := slices.IndexFunc(ts.Tasks, func(t api.Task) bool { return t.ID == "answer-2" })
	if i < 0 || ts.Tasks[i].Template == "" || len(ts.Tasks[i].Gold) != 1 || ts.Tasks[i].Environment != "x11" {
		t.Fatalf("tasks: %+v", ts.Tasks)
	}
	var plain api.Tasks
	f.call("GET", api.PathTasks, nil, &plain)
	if len(plain.Tasks[i].Gold) != 0 {
		t.Fatal("gold without ?gold=true")
	}
	seed := int64(4) // 4 mod 3 instances: the second
	ro := f.create(api.CreateRequest{Task: ts.Tasks[i].Template, Seed: &seed, Observation: api.ObsTree})
	if ro.Task != "answer-2" {
		t.Fatalf("seed 4 picked %s", ro.Task)
	}
}

func TestImages(t *testing.T) {
	f := newFixture(t, options{})
	ro := f.create(api.CreateRequest{Task: "editor-save", Image: api.ImageJPEG})
	o := ro.Observation
	if o.Image != "" || o.ImageURL == "" || o.ImageFormat != "jpeg" || o.Tree != "" {
		t.Fatalf("observation: %+v", o)
	}
	req, _ := http.NewRequest("GET", f.srv.URL+o.ImageURL, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	conform(t, "GET", api.PathImage, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	if _, format, err := image.Decode(bytes.NewReader(b)); err != nil || format != "jpeg" {
		t.Fatalf("image: %v %s", err, format)
	}
	f.errorOf("GET", strings.Replace(api.PathImage, "{id}", ro.ID, 1)+"?step=7", nil, 404, api.KindNotFound)
	f.errorOf("GET", strings.Replace(api.PathImage, "{id}", ro.ID, 1)+"?step=x", nil, 400, api.KindBadRequest)
	f.call("DELETE", "/v1/rollouts/"+ro.ID, nil, nil)
	ro = f.create(api.CreateRequest{Task: "count-lines", Inline: true, Observation: api.ObsBoth})
	b, err = base64.StdEncoding.DecodeString(ro.Observation.Image)
	if _, format, derr := image.Decode(bytes.NewReader(b)); err != nil || derr != nil || format != "png" || ro.Observation.Tree == "" {
		t.Fatalf("inline: %v %v %s", err, derr, format)
	}
}

// TestErrors covers every route's errors.
func TestErrors(t *testing.T) {
	f := newFixture(t, options{places: 2})
	f.errorOf("POST", api.PathRollouts, api.CreateRequest{Task: "nope"}, 404, api.KindNotFound)
	f.errorOf("POST", api.PathRollouts, api.CreateRequest{}, 400, api.KindBadRequest)
	f.errorOf("POST", api.PathRollouts, `{"task":"count-lines","colour":1}`, 400, api.KindBadRequest)
	f.errorOf("POST", api.PathRollouts, api.CreateRequest{Task: "count-lines", Observation: "smell"}, 400, api.KindBadRequest)
	f.errorOf("POST", api.PathRollouts, api.CreateRequest{Task: "count-lines", Image: "gif"}, 400, api.KindBadRequest)
	f.errorOf("POST", api.PathRollouts, api.CreateRequest{Task: "count-lines", Format: "morse"}, 400, api.KindBadRequest)
	f.errorOf("GET", api.PathTasks+"?gold=maybe", nil, 400, api.KindBadRequest)

	ro := f.create(api.CreateRequest{Task: "count-lines"})
	step := "/v1/rollouts/" + ro.ID + "/step"
	f.errorOf("POST", step, `{"actions":[{"kind":5}]}`, 400, api.KindBadRequest)
	f.errorOf("POST", step, `{}`, 400, api.KindBadRequest)
	f.errorOf("POST", step, `{"actions":[],"reply":"DONE"}`, 400, api.KindBadRequest)
	f.errorOf("POST", step, `{"reply":"DONE","format":"morse"}`, 400, api.KindBadRequest)
	f.errorOf("POST", "/v1/rollouts/nope/step", `{"reply":"DONE"}`, 404, api.KindNotFound)
	sr := f.step(ro.ID, api.StepRequest{Reply: new("ANS 4")})
	if !sr.Done || *sr.Final.Reward != 0 || sr.Final.Outcome != string(check.Failure) {
		t.Fatalf("a wrong answer: %+v", sr.Final)
	}
	f.errorOf("POST", step, `{"reply":"DONE"}`, 409, api.KindDone)
	// Finish after the end gives the same result.
	var fin api.Rollout
	if code, _ := f.call("POST", "/v1/rollouts/"+ro.ID+"/finish", nil, &fin); code != 200 || fin.Final.Outcome != sr.Final.Outcome {
		t.Fatalf("finish: %d %+v", code, fin.Final)
	}
	f.errorOf("POST", "/v1/rollouts/"+ro.ID+"/finish", `{"x":1}`, 400, api.KindBadRequest)
	f.errorOf("GET", strings.Replace(api.PathImage, "{id}", ro.ID, 1), nil, 404, api.KindNotFound)

	// A rollout finished early is uncompleted: reward 0.
	ro = f.create(api.CreateRequest{Task: "count-lines"})
	f.call("POST", "/v1/rollouts/"+ro.ID+"/finish", "", &fin)
	if fin.Status != api.StatusFinished || *fin.Final.Reward != 0 || fin.Final.Outcome != string(check.Uncompleted) {
		t.Fatalf("finished early: %+v", fin.Final)
	}

	// Deleted: gone.
	ro = f.create(api.CreateRequest{Task: "count-lines"})
	if code, _ := f.call("DELETE", "/v1/rollouts/"+ro.ID, nil, nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	f.errorOf("POST", "/v1/rollouts/"+ro.ID+"/step", `{"reply":"DONE"}`, 410, api.KindGone)
	f.errorOf("DELETE", "/v1/rollouts/"+ro.ID, nil, 410, api.KindGone)
	f.errorOf("GET", "/v1/rollouts/"+ro.ID, nil, 410, api.KindGone)
	f.errorOf("DELETE", "/v1/rollouts/nope", nil, 404, api.KindNotFound)

	// The routes' own errors.
	f.errorOf("GET", "/v1/nothing", nil, 404, api.KindNotFound)
	var e api.Error
	code, h := f.call("PUT", api.PathTasks, nil, &e)
	if code != 405 || e.Kind != api.KindBadMethod || h.Get("Allow") != "GET" {
		t.Fatalf("PUT tasks: %d %+v %v", code, e, h)
	}
	req, _ := http.NewRequest("GET", f.srv.URL+api.PathTasks, nil)
	req.Header.Set("Authorization", "Bearer wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	conform(t, "GET", api.PathTasks, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	if resp.StatusCode != 401 {
		t.Fatalf("a wrong token: %d", resp.StatusCode)
	}
}

func TestExpiry(t *testing.T) {
	f := newFixture(t, options{})
	ro := f.create(api.CreateRequest{Task: "count-lines"})
	if n := f.s.Expire(time.Now()); n != 0 {
		t.Fatalf("%d expired at once", n)
	}
	if n := f.s.Expire(time.Now().Add(DefaultTTL)); n != 1 {
		t.Fatalf("%d expired after the TTL, want 1", n)
	}
	e := f.errorOf("POST", "/v1/rollouts/"+ro.ID+"/step", `{"reply":"DONE"}`, 410, api.KindGone)
	if !strings.Contains(e.Error, "expired") {
		t.Fatal(e.Error)
	}
	// Its environment is free again, and the episode is an error, not a
	// reward.
	f.create(api.CreateRequest{Task: "count-lines"})
	rs, _ := f.st.Results()
	if len(rs) != 1 || rs[0].Outcome != string(check.Error) || !strings.Contains(rs[0].Reason, "expired") {
		t.Fatalf("stored: %+v", rs)
	}
}

func TestExhaustedPoolAndClientLimit(t *testing.T) {
	f := newFixture(t, options{places: 2, perClient: 1})
	a := f.create(api.CreateRequest{Task: "count-lines"})
	var e api.Error
	code, h := f.call("POST", api.PathRollouts, api.CreateRequest{Task: "count-lines"}, &e)
	if code != 429 || e.Kind != api.KindClientLimit || h.Get("Retry-After") == "" {
		t.Fatalf("over the client's limit: %d %+v", code, e)
	}
	var b api.Rollout
	if code, _ := f.callAs("other", "POST", api.PathRollouts, api.CreateRequest{Task: "count-lines"}, &b); code != 201 {
		t.Fatalf("another client: %d", code)
	}
	code, h = f.callAs("third", "POST", api.PathRollouts, api.CreateRequest{Task: "count-lines"}, &e)
	if code != 503 || e.Kind != api.KindExhausted || h.Get("Retry-After") != "2" || e.RetryAfter != 2 {
		t.Fatalf("an exhausted pool: %d %+v %v", code, e, h)
	}
	f.call("POST", "/v1/rollouts/"+a.ID+"/finish", nil, nil)
	if code, _ := f.callAs("third", "POST", api.PathRollouts, api.CreateRequest{Task: "count-lines"}, nil); code != 201 {
		t.Fatalf("after a finish: %d", code)
	}
}

// TestQueue checks that a queued rollout takes the environment the next
// rollout that ends frees.
func TestQueue(t *testing.T) {
	f := newFixture(t, options{queue: 1, perClient: 5})
	a := f.create(api.CreateRequest{Task: "count-lines"})
	got := make(chan int)
	go func() {
		req, _ := http.NewRequest("POST", f.srv.URL+api.PathRollouts, strings.NewReader(`{"task":"count-lines"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- 0
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	for { // until the second one waits
		f.s.pool.mu.Lock()
		n := len(f.s.pool.waiters)
		f.s.pool.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var e api.Error
	if code, _ := f.call("POST", api.PathRollouts, api.CreateRequest{Task: "count-lines"}, &e); code != 503 {
		t.Fatalf("past the queue's bound: %d", code)
	}
	f.call("DELETE", "/v1/rollouts/"+a.ID, nil, nil)
	if code := <-got; code != 201 {
		t.Fatalf("the queued rollout: %d", code)
	}
}

// TestDeadEnvironment checks that an environment dying mid-rollout ends
// it with an error and no reward, and that the pool heals.
func TestDeadEnvironment(t *testing.T) {
	f := newFixture(t, options{faults: []mem.Fault{{Method: "Do", Call: 2, Die: true}}})
	tk, _ := loadSuite(t).Task("editor-save")
	ro := f.create(api.CreateRequest{Task: tk.ID})
	sr := f.step(ro.ID, api.StepRequest{Actions: tk.Gold[:1]})
	if sr.Done {
		t.Fatalf("first step: %+v", sr)
	}
	sr = f.step(ro.ID, api.StepRequest{Actions: tk.Gold[1:2]})
	if !sr.Done || sr.Final == nil || sr.Final.Status != api.StatusError || sr.Final.Reward != nil || sr.Reward != 0 ||
		!strings.Contains(sr.Final.Reason, "infrastructure fault") {
		t.Fatalf("the step the environment died in: %+v %+v", sr, sr.Final)
	}
	var got api.Rollout
	f.call("POST", "/v1/rollouts/"+ro.ID+"/finish", nil, &got)
	if got.Status != api.StatusError || got.Final.Reward != nil {
		t.Fatalf("finish: %+v", got.Final)
	}
	rs, _ := f.st.Results()
	if len(rs) != 1 || rs[0].Outcome != string(check.Error) {
		t.Fatalf("stored: %+v", rs)
	}
	// The place was started again: the next rollout runs to its reward.
	ro = f.create(api.CreateRequest{Task: tk.ID})
	steps := f.gold(ro, tk)
	if fin := steps[len(steps)-1].Final; fin == nil || fin.Reward == nil || *fin.Reward != 1 {
		t.Fatalf("after the heal: %+v", fin)
	}
}

// TestUndecidableMilestone checks that a milestone whose evidence cannot
// be read ends the rollout with an error, not a reward.
func TestUndecidableMilestone(t *testing.T) {
	f := newFixture(t, options{faults: []mem.Fault{{Method: "ReadFile", Call: 1, Err: errors.New("disk on fire")}}})
	tk, _ := loadSuite(t).Task("editor-milestones")
	ro := f.create(api.CreateRequest{Task: tk.ID})
	sr := f.step(ro.ID, api.StepRequest{Actions: tk.Gold[:1]})
	if !sr.Done || sr.Final.Status != api.StatusError || sr.Final.Reward != nil || !strings.Contains(sr.Final.Reason, "disk on fire") {
		t.Fatalf("%+v %+v", sr, sr.Final)
	}
}

// TestDeadAtStart checks that an environment that cannot reset is a
// fault answer, not a rollout.
func TestDeadAtStart(t *testing.T) {
	f := newFixture(t, options{faults: []mem.Fault{{Method: "Reset", Call: 1, Err: fmt.Errorf("%w: gone", env.ErrClosed)}}})
	f.errorOf("POST", api.PathRollouts, api.CreateRequest{Task: "count-lines"}, 502, api.KindFault)
}

// TestOpenAPIListsTheRoutes holds the document and the handler to the
// same routes: every route in the document is served, and every route
// served is in the document.
func TestOpenAPIListsTheRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var documented []string
	for p, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	served := Routes()
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Fatalf("documented:\n  %s\nserved:\n  %s", strings.Join(documented, "\n  "), strings.Join(served, "\n  "))
	}
	// Each is answered by its handler, not the catch-all.
	f := newFixture(t, options{})
	for _, rt := range served {
		method, path, _ := strings.Cut(rt, " ")
		var e api.Error
		code, _ := f.call(method, strings.Replace(path, "{id}", "x", 1), nil, &e)
		if code == 405 || strings.HasPrefix(e.Error, "no API at") {
			t.Errorf("%s: %d %s", rt, code, e.Error)
		}
	}
	var got map[string]any
	f.call("GET", api.PathOpenAPI, nil, &got)
	if got["openapi"] != "3.1.0" {
		t.Fatalf("GET %s: %v", api.PathOpenAPI, got["openapi"])
	}
}

// TestSpaces checks the coordinate spaces: the observation is the space's
// image (the screenshot resized, the marks in its pixels), the points of
// actions and replies are read in it, and unknown spaces are refused.
func TestSpaces(t *testing.T) {
	f := newFixture(t, options{})
	tk, _ := loadSuite(t).Task("editor-save")
	ro := f.create(api.CreateRequest{Task: tk.ID, Observation: api.ObsMarks, Inline: true, Space: "640x400"})
	o := ro.Observation
	if o.Space == nil || o.Space.Image != (action.Size{W: 640, H: 400}) || o.Space.Name != "640x400" || o.Space.Unit != "px" {
		t.Fatalf("space: %+v", o.Space)
	}
	b, _ := base64.StdEncoding.DecodeString(o.Image)
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width != 640 || cfg.Height != 400 {
		t.Fatalf("screenshot: %v %dx%d", err, cfg.Width, cfg.Height)
	}
	mark := func(o *api.Observation, role, name string) *action.Point {
		t.Helper()
		for _, m := range o.Marks {
			if m.Role == role && (name == "" || m.Name == name) {
				if m.Box.X+m.Box.W > 640 || m.Box.Y+m.Box.H > 400 {
					t.Fatalf("mark %+v is outside the 640x400 image", m)
				}
				x, y := m.Center()
				return action.At(float64(x), float64(y))
			}
		}
		t.Fatalf("no %s %s mark in %+v", role, name, o.Marks)
		return nil
	}
	// A point outside the image is the policy's mistake.
	sr := f.step(ro.ID, api.StepRequest{Actions: []action.Action{{Kind: action.Click, Point: action.At(700, 10)}}})
	if sr.Done || len(sr.Info.Errors) == 0 || !strings.Contains(sr.Observation.Feedback, "outside the model's 640x400 image") {
		t.Fatalf("a point outside the image: %+v", sr)
	}
	// The gold solution, by points of the image: a click on the text's
	// mark, typing, a click on Save's mark (as a reply).
	text := mark(sr.Observation, "text", "")
	sr = f.step(ro.ID, api.StepRequest{Actions: []action.Action{{Kind: action.Click, Point: text}}})
	ds, _ := agent.DisplaySpace(o.Space.Screen, o.Space.Image)
	x, y, _ := ds.ToScreen(*text)
	if p := sr.Info.Performed; len(p) != 1 || p[0].Point == nil || *p[0].Point != (action.Point{X: float64(x), Y: float64(y), Unit: action.Pixels}) || !ds.Scaled() {
		t.Fatalf("performed: %+v, want the screen's (%d, %d)", p, x, y)
	}
	sr = f.step(ro.ID, api.StepRequest{Actions: []action.Action{{Kind: action.Type, Text: "Bonjour à tous"}}})
	save := mark(sr.Observation, "push button", "Save")
	sr = f.step(ro.ID, api.StepRequest{Reply: new(fmt.Sprintf("pyautogui.click(%d, %d)", int(save.X), int(save.Y))), Format: "pyautogui"})
	if len(sr.Info.Errors) > 0 {
		t.Fatalf("the click on Save: %+v", sr.Info)
	}
	sr = f.step(ro.ID, api.StepRequest{Actions: []action.Action{{Kind: action.Done}}})
	if !sr.Done || sr.Final == nil || sr.Final.Reward == nil || *sr.Final.Reward != 1 {
		t.Fatalf("final: %+v", sr.Final)
	}

	// The other spaces answer their image's size.
	screen := o.Space.Screen
	sm, _ := agent.SmartResizeSize(screen, agent.DefaultMinPixels, agent.DefaultMaxPixels)
	an, _ := agent.AnthropicSpace(screen)
	for space, want := range map[string]action.Size{api.SpaceScreen: screen, api.SpaceSmartResize: sm, api.SpaceAnthropic: an.Image} {
		ro := f.create(api.CreateRequest{Task: "count-lines", Space: space})
		if ro.Observation.Space == nil || ro.Observation.Space.Image != want {
			t.Errorf("space %s: %+v, want an image of %v", space, ro.Observation.Space, want)
		}
		f.call("DELETE", "/v1/rollouts/"+ro.ID, nil, nil)
	}

	for _, bad := range []api.CreateRequest{
		{Task: "count-lines", Space: "hyperbolic"},
		{Task: "count-lines", Space: "0x400"},
		{Task: "count-lines", Space: "640x"},
		{Task: "count-lines", Space: "+640x400"},
		{Task: "count-lines", Space: api.SpaceAnthropic, Unit: "k"},
	} {
		e := f.errorOf("POST", api.PathRollouts, bad, 400, api.KindBadRequest)
		if !strings.Contains(e.Error, "space") {
			t.Errorf("%+v: %s", bad, e.Error)
		}
	}
	ro = f.create(api.CreateRequest{Task: "count-lines", Space: api.SpaceSmartResize})
	f.errorOf("POST", "/v1/rollouts/"+ro.ID+"/step", `{"reply":"click(1,2)","format":"pyautogui","unit":"ratio"}`, 400, api.KindBadRequest)
}

// TestSideEffects checks the side-effect verdict of the final answer: a
// task with a side_effects check counts it in the reward and lists the
// violations; a task that only declares its changes gives the verdict
// for the record, its reward the other checks'.
func TestSideEffects(t *testing.T) {
	f := newFixture(t, options{})
	suite := loadSuite(t)
	tidy, _ := suite.Task("editor-save-tidy")
	copyText := []action.Action{{Kind: action.Hotkey, Keys: []string{"ctrl", "a"}}, {Kind: action.Hotkey, Keys: []string{"ctrl", "c"}}}
	play := func(id string, acts []action.Action) *api.Final {
		t.Helper()
		ro := f.create(api.CreateRequest{Task: id, Observation: api.ObsTree})
		for _, a := range acts {
			sr := f.step(ro.ID, api.StepRequest{Actions: []action.Action{a}})
			if sr.Done {
				return sr.Final
			}
		}
		t.Fatalf("%s: not done after %d steps", id, len(acts))
		return nil
	}
	gold := tidy.Gold
	withCopy := append(slices.Clone(gold[:2]), append(copyText, gold[2:]...)...) // copies the text before the save
	tests := []struct {
		name       string
		task       string
		acts       []action.Action
		reward     float64
		verdict    string
		checked    bool
		violations []string
		allowed    int
	}{
		{"gold", "editor-save-tidy", gold, 1, api.SideEffectsPass, true, nil, 1},
		{"gold and the clipboard", "editor-save-tidy", withCopy, 0, api.SideEffectsFail, true, []string{"changed value of clipboard clipboard"}, 1},
		// editor-save declares no changes: no verdict.
		{"no changes declared", "editor-save", gold, 1, "", false, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fin := play(tc.task, tc.acts)
			if fin.Status != api.StatusFinished || fin.Reward == nil || *fin.Reward != tc.reward {
				t.Fatalf("final: %+v", fin)
			}
			se := fin.SideEffects
			if tc.verdict == "" {
				if se != nil {
					t.Fatalf("side effects of a task that declares none: %+v", se)
				}
				return
			}
			if se == nil || se.Verdict != tc.verdict || se.Checked != tc.checked || se.Allowed != tc.allowed {
				t.Fatalf("side effects: %+v", se)
			}
			var got []string
			for _, v := range se.Violations {
				got = append(got, v.Text)
				if v.Kind == "" || v.Op == "" {
					t.Errorf("violation %+v", v)
				}
			}
			if !slices.Equal(got, tc.violations) {
				t.Fatalf("violations %q, want %q", got, tc.violations)
			}
			if tc.verdict == api.SideEffectsFail && !strings.Contains(fin.Reason, "clipboard") {
				t.Errorf("reason %q names no violation", fin.Reason)
			}
		})
	}
}

// events is an ordered record of what happened, from several goroutines.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) add(what string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, what)
}

func (e *events) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.list)
}

// resetRecorder records the resets of an environment, and closes second
// when the second begins.
type resetRecorder struct {
	env.Env
	ev     *events
	n      int
	second chan struct{}
}

func (r *resetRecorder) Reset(ctx context.Context, s env.Setup) error {
	r.n++
	r.ev.add(fmt.Sprintf("reset %d", r.n))
	if r.n == 2 {
		close(r.second)
	}
	return r.Env.Reset(ctx, s)
}

// waitingJudge passes every judge check once the environment's second
// reset has begun (or, without the overlap, after a while), recording
// when it answers.
type waitingJudge struct {
	ev     *events
	second chan struct{}
}

func (j waitingJudge) Judge(ctx context.Context, req judgment.Request) (judgment.Verdict, error) {
	select {
	case <-j.second:
	case <-time.After(5 * time.Second): // the reset did not overlap: answer, and the order says so
	case <-ctx.Done():
		return judgment.Verdict{}, ctx.Err()
	}
	j.ev.add("judged")
	return judgment.Verdict{Pass: true, Score: 1, Reason: "the answer is right", Model: "waiting"}, nil
}

func (waitingJudge) Name() string { return "test:waiting" }

// TestResetOverlapsJudging checks that a rollout's environment is freed
// as soon as its checks have read it: the next queued rollout's reset
// begins before the finished rollout's judge answers, and both rollouts
// end as they should.
func TestResetOverlapsJudging(t *testing.T) {
	ev := &events{}
	second := make(chan struct{})
	f := newFixture(t, options{suite: "testdata/judged", queue: 1, perClient: 2, judge: waitingJudge{ev: ev, second: second},
		wrap: func(e env.Env) env.Env { return &resetRecorder{Env: e, ev: ev, second: second} }})
	a := f.create(api.CreateRequest{Task: "judged-answer", Observation: api.ObsTree})
	queued := make(chan api.Rollout, 1)
	go func() {
		var b api.Rollout
		req, _ := json.Marshal(api.CreateRequest{Task: "judged-answer", Observation: api.ObsTree})
		hr, _ := http.NewRequest("POST", f.srv.URL+api.PathRollouts, bytes.NewReader(req))
		hr.Header.Set("Authorization", "Bearer "+token)
		if resp, err := http.DefaultClient.Do(hr); err == nil {
			json.NewDecoder(resp.Body).Decode(&b)
			resp.Body.Close()
		}
		queued <- b
	}()
	for { // until the second one waits
		f.s.pool.mu.Lock()
		n := len(f.s.pool.waiters)
		f.s.pool.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	sr := f.step(a.ID, api.StepRequest{Actions: []action.Action{{Kind: action.Answer, Text: "3"}}})
	if !sr.Done || sr.Final == nil || sr.Final.Reward == nil || *sr.Final.Reward != 1 || !strings.Contains(string(sr.Final.Verdict), "test:waiting") {
		t.Fatalf("the judged rollout: %+v", sr.Final)
	}
	b := <-queued
	if b.Status != api.StatusRunning {
		t.Fatalf("the queued rollout: %+v", b)
	}
	if got, want := ev.get(), []string{"reset 1", "reset 2", "judged"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q: the next rollout's reset waited for the judge", got, want)
	}
	sr = f.step(b.ID, api.StepRequest{Actions: []action.Action{{Kind: action.Answer, Text: "4"}}})
	if !sr.Done || sr.Final == nil || sr.Final.Reward == nil || *sr.Final.Reward != 0 {
		t.Fatalf("the second rollout: %+v", sr.Final)
	}
	// The evidence is recorded as a run's: proctor rescore judges it.
	if _, err := f.st.Evidence("judged-answer", 0); err != nil {
		t.Fatal(err)
	}
}
