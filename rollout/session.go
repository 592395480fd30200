package rollout

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // screenshots come as PNG
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/episode"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/rollout/api"
	"github.com/proctor-eval/proctor/task"
)

// JPEGQuality is the quality of the screenshots a rollout asks for in
// JPEG.
const JPEGQuality = 85

// obsModes maps the API's observation kinds to the episode's modes.
var obsModes = map[string]episode.ObsMode{
	api.ObsScreenshot: episode.ObsScreenshot,
	api.ObsTree:       episode.ObsTree,
	api.ObsBoth:       episode.ObsBoth,
	api.ObsMarks:      episode.ObsMarks,
}

// Rollout is one episode stepped by a client.
type Rollout struct {
	id     string
	client string
	t      *task.Task
	repeat int
	ep     *episode.Episode
	sl     *slot // nil once the rollout freed it
	// envKind is the environment's kind (env.Info.Kind), for the record.
	envKind string

	obsKind string
	image   string // png or jpeg
	inline  bool
	format  action.Format // the replies' default
	unit    action.Unit
	sp      *agent.Space // the coordinate space asked for; nil: none (screen pixels, points as given)
	spName  string

	mu   sync.Mutex // held by the call in progress
	last time.Time  // when the last call ended (Service.mu)

	status     string
	obs        *api.Observation // the last observation, while running
	img        []byte           // its screenshot, in image's format
	milestones *check.Compiled  // the milestones that give step rewards; nil: none do
	progress   float64          // the milestone score so far
	final      *api.Final
	end        string    // why it ended
	observed   time.Time // when the last observation was made
}

// Create starts a rollout of req.Task for client: it takes an
// environment of the pool, resets it with the task's setup and observes
// it. A rollout whose environment fails as it starts is answered with
// status error and the reason.
func (s *Service) Create(ctx context.Context, client string, req api.CreateRequest) (api.Rollout, error) {
	t, err := s.pick(req.Task, req.Seed)
	if err != nil {
		return api.Rollout{}, err
	}
	r := &Rollout{id: newID(), client: client, t: t, obsKind: cmpOr(req.Observation, api.ObsScreenshot), image: cmpOr(req.Image, api.ImagePNG),
		inline: req.Inline, format: action.Format(req.Format), unit: action.Unit(req.Unit), status: api.StatusRunning}
	mode, ok := obsModes[r.obsKind]
	if !ok {
		return api.Rollout{}, errorf(api.KindBadRequest, "observation %q: give screenshot, tree, both or som", req.Observation)
	}
	if r.image != api.ImagePNG && r.image != api.ImageJPEG {
		return api.Rollout{}, errorf(api.KindBadRequest, "image %q: give png or jpeg", req.Image)
	}
	if err := checkFormat(r.format, r.unit); err != nil {
		return api.Rollout{}, err
	}
	if r.sp, err = spaceOf(req.Space, taskSize(t), r.unit); err != nil {
		return api.Rollout{}, err
	}
	r.spName = req.Space
	if err := s.admit(client); err != nil {
		return api.Rollout{}, err
	}
	sl, err := s.pool.acquire(ctx, t, s.local[t.ID])
	if err != nil {
		s.leave(client)
		return api.Rollout{}, err
	}
	if err := sl.ready(s.ctx, t, s.cfg.ResetTimeout); err != nil {
		s.recycle(sl, true)
		s.leave(client)
		return api.Rollout{}, errorf(api.KindFault, "environment %s does not start: %v", sl.src.Name, err)
	}
	if mode != episode.ObsScreenshot && !sl.info.Has(task.CapTree) {
		s.recycle(sl, false)
		s.leave(client)
		return api.Rollout{}, errorf(api.KindBadRequest, "observation %s needs the accessibility tree, which %s does not offer", r.obsKind, sl.src.Name)
	}
	r.repeat = s.nextRepeat(t.ID)
	// The environment is freed for the next rollout as soon as the checks
	// have read it: its reset overlaps the judging and the records.
	cfg := episode.Config{Suite: s.cfg.Suite, Obs: mode, EarlyStop: s.cfg.EarlyStop, Settle: s.cfg.Settle, ResetTimeout: s.cfg.ResetTimeout,
		JudgeTimeout: s.cfg.JudgeTimeout, Judge: s.cfg.Judge, Store: s.cfg.Store, Origins: s.static, Release: func() { s.free(r, false) }}
	ep, err := episode.Start(s.ctx, sl.e, sl.svc, cfg, t, r.repeat)
	if err != nil {
		s.recycle(sl, true)
		s.leave(client)
		return api.Rollout{}, errorf(api.KindFault, "the reset of %s for %s failed: %v", sl.src.Name, t.ID, err)
	}
	ep.AgentStarted()
	r.ep, r.sl, r.envKind = ep, sl, sl.info.Kind
	r.milestones = stepMilestones(t)
	r.mu.Lock()
	s.mu.Lock()
	s.rollouts[r.id] = r
	r.last = time.Now()
	s.mu.Unlock()
	defer s.done(r)
	s.advance(r)
	s.logf("rollout %s: %s (repeat %d) on %s", r.id, t.ID, r.repeat, sl.src.Name)
	return r.state(), nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkFormat refuses an unknown reply format or unit.
func checkFormat(f action.Format, u action.Unit) error {
	if f != "" && !slices.Contains(action.Formats(), f) {
		return errorf(api.KindBadRequest, "format %q: give one of %v", f, action.Formats())
	}
	if u != "" && u != action.Pixels && u != action.Ratio && u != action.Thousand {
		return errorf(api.KindBadRequest, "unit %q: give px, ratio or k", u)
	}
	return nil
}

// spaceOf is the coordinate space name asks for on a screen, with the
// replies' default unit: nil for none.
func spaceOf(name string, screen action.Size, unit action.Unit) (*agent.Space, error) {
	var sp agent.Space
	var err error
	switch name {
	case "":
		return nil, nil
	case api.SpaceScreen:
		sp, err = agent.ScreenSpace(screen, unit)
	case api.SpaceSmartResize:
		sp, err = agent.SmartResizeSpace(screen, 0)
	case api.SpaceAnthropic:
		sp, err = agent.AnthropicSpace(screen)
	default:
		d, ok := displaySize(name)
		if !ok {
			return nil, errorf(api.KindBadRequest, "space %q: give %s, %s, %s or a display WIDTHxHEIGHT (e.g. 1024x768)",
				name, api.SpaceScreen, api.SpaceSmartResize, api.SpaceAnthropic)
		}
		sp, err = agent.DisplaySpace(screen, d)
	}
	if err != nil {
		return nil, errorf(api.KindBadRequest, "space %q on the task's %dx%d screen: %v", name, screen.W, screen.H, err)
	}
	if err := spaceUnit(&sp, name, unit); err != nil {
		return nil, err
	}
	return &sp, nil
}

// displaySize reads a display WIDTHxHEIGHT of positive sides.
func displaySize(s string) (action.Size, bool) {
	ws, hs, ok := strings.Cut(s, "x")
	w, werr := strconv.Atoi(ws)
	h, herr := strconv.Atoi(hs)
	if !ok || werr != nil || herr != nil || w <= 0 || h <= 0 || w > 1<<14 || h > 1<<14 || strconv.Itoa(w) != ws || strconv.Itoa(h) != hs {
		return action.Size{}, false
	}
	return action.Size{W: w, H: h}, true
}

// spaceUnit refuses a unit other than pixels in a space of its own image
// (its points are pixels of that image).
func spaceUnit(sp *agent.Space, name string, unit action.Unit) error {
	if name != api.SpaceScreen && unit != "" && unit != action.Pixels {
		return errorf(api.KindBadRequest, "unit %q in space %q: its points are pixels of its %dx%d image; give px, or space screen for ratio and k",
			unit, name, sp.Image.W, sp.Image.H)
	}
	return nil
}

// admit counts a rollout against client's limit.
func (s *Service) admit(client string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errorf(api.KindExhausted, "the service is stopping")
	}
	limit := s.cfg.PerClient
	if limit <= 0 {
		limit = len(s.pool.slots)
	}
	if s.clients[client] >= limit {
		return &Error{Kind: api.KindClientLimit, Msg: fmt.Sprintf("this client holds %d running rollouts, its limit: finish or delete one first", s.clients[client]),
			RetryAfter: s.cfg.RetryAfter}
	}
	s.clients[client]++
	return nil
}

// leave uncounts a rollout of client's.
func (s *Service) leave(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients[client]--; s.clients[client] <= 0 {
		delete(s.clients, client)
	}
}

// nextRepeat numbers a task's rollouts in the store.
func (s *Service) nextRepeat(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.repeats[id]
	s.repeats[id]++
	return n
}

// recycle gives a slot back to the pool; after a fault it is probed and,
// when dead, started again first, in the background.
func (s *Service) recycle(sl *slot, fault bool) {
	if !fault {
		s.pool.release(sl)
		return
	}
	go func() {
		sl.heal(s.ctx, s.cfg.ResetTimeout)
		s.pool.release(sl)
	}()
}

// free ends r's hold on its environment.
func (s *Service) free(r *Rollout, fault bool) {
	if r.sl == nil {
		return
	}
	sl := r.sl
	r.sl = nil
	s.leave(r.client)
	s.recycle(sl, fault)
}

// compiled is t's checks and milestones, compiled (lint proved them).
func compiled(t *task.Task) *check.Compiled {
	c, err := check.CompileAll(t.Checks, t.Milestones)
	if err != nil {
		return &check.Compiled{}
	}
	return c
}

// stepMilestones compiles the milestones whose rise gives the step
// rewards: none when the task has none, or when one needs a judge (a
// model call per step; such a task's milestones count at the end only).
func stepMilestones(t *task.Task) *check.Compiled {
	if len(t.Milestones) == 0 {
		return nil
	}
	c, err := check.CompileAll(nil, t.Milestones)
	if err != nil || c.Judged() {
		return nil
	}
	return c
}

// advance begins the next step, or ends the rollout when none may run.
func (s *Service) advance(r *Rollout) {
	r.obs, r.img = nil, nil
	if !r.ep.Next(s.ctx) {
		s.end(r)
		return
	}
	obs, err := r.ep.Observe(s.ctx)
	if err != nil {
		s.end(r)
		return
	}
	o := &api.Observation{Step: obs.Step, Screen: obs.Screen, Tree: obs.Tree, Marks: obs.Marks, Tabs: obs.Tabs, Feedback: obs.Feedback}
	scaled := r.sp != nil && r.sp.Scaled()
	if r.sp != nil {
		o.Space = &api.Space{Name: r.spName, Screen: r.sp.Screen, Image: r.sp.Image, Unit: string(r.sp.Unit), Rule: r.sp.Rule}
		if scaled {
			o.Tree, o.Marks = r.sp.Tree(o.Tree), marksIn(*r.sp, o.Marks)
		}
	}
	if obs.Screenshot != nil {
		img := obs.Screenshot
		if scaled {
			// Resized to the space's image, in the format asked for.
			if img, err = r.sp.Shot(img, r.image); err != nil {
				s.fail(r, fmt.Sprintf("infrastructure fault: step %d: %v", obs.Step, err), true)
				return
			}
		} else if r.image == api.ImageJPEG && obs.Format != api.ImageJPEG {
			if img, err = toJPEG(img); err != nil {
				s.fail(r, fmt.Sprintf("infrastructure fault: step %d: the screenshot does not decode: %v", obs.Step, err), true)
				return
			}
		}
		r.img = img
		o.ImageFormat = r.image
		if r.inline {
			o.Image = base64.StdEncoding.EncodeToString(img)
		} else {
			o.ImageURL = fmt.Sprintf("%s?step=%d", strings.Replace(api.PathImage, "{id}", r.id, 1), obs.Step)
		}
	}
	r.obs, r.observed = o, time.Now()
}

// marksIn gives the marks' boxes in pixels of the space's image.
func marksIn(sp agent.Space, marks []observe.Mark) []observe.Mark {
	if len(marks) == 0 {
		return marks
	}
	sx, sy := sp.Scale()
	out := slices.Clone(marks)
	for i, m := range out {
		p := sp.FromScreen(m.Box.X, m.Box.Y)
		out[i].Box = action.Box{X: int(p.X), Y: int(p.Y), W: int(math.Round(float64(m.Box.W) / sx)), H: int(math.Round(float64(m.Box.H) / sy))}
	}
	return out
}

// toJPEG re-encodes a screenshot in JPEG.
func toJPEG(png []byte) ([]byte, error) {
	im, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, im, &jpeg.Options{Quality: JPEGQuality}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Step performs a step of rollout id: req's actions, or its reply parsed.
// A reply that does not parse, or actions that are not valid, are the
// policy's mistake: the step counts, and the answer's info says why it
// did nothing. A rollout that ends with the step answers its final result.
func (s *Service) Step(id string, req api.StepRequest) (api.StepResponse, error) {
	r, err := s.lookup(id)
	if err != nil {
		return api.StepResponse{}, err
	}
	defer s.done(r)
	if r.status != api.StatusRunning {
		return api.StepResponse{}, errorf(api.KindDone, "rollout %s ended (%s: %s); POST %s gives its result", id, r.status, r.end,
			strings.Replace(api.PathFinish, "{id}", id, 1))
	}
	turn, err := r.turn(req)
	if err != nil {
		return api.StepResponse{}, err
	}
	step := r.ep.Step()
	// The policy's time: from the observation's answer to this request.
	turn.Latency = time.Since(r.observed)
	r.ep.Act(s.ctx, turn)
	resp := api.StepResponse{}
	var performed []action.Action
	for _, st := range r.ep.Trajectory().Steps {
		if st.Turn == step {
			performed = append(performed, st.Action)
		}
	}
	if fb := r.ep.Feedback(); fb != "" {
		resp.Info.Errors = append(resp.Info.Errors, fb)
	}
	if end, ended := r.ep.Ending(); ended && end.How == episode.ByInfrastructure {
		s.end(r)
	} else {
		if r.milestones != nil {
			score, err := s.progress(r)
			if err != nil {
				s.fail(r, fmt.Sprintf("infrastructure fault: step %d: a milestone could not be decided: %v", step, err), true)
			} else {
				resp.Reward = score - r.progress
				r.progress = score
			}
		}
		if r.status == api.StatusRunning {
			s.advance(r)
		}
	}
	st := r.state()
	resp.Observation, resp.Done, resp.Final = st.Observation, r.status != api.StatusRunning, r.final
	errs := resp.Info.Errors
	resp.Info = st.Info
	resp.Info.Errors, resp.Info.Performed = errs, performed
	return resp, nil
}

// turn makes the episode's turn of a step request.
func (r *Rollout) turn(req api.StepRequest) (agent.Turn, error) {
	switch {
	case req.Reply != nil && req.Actions != nil:
		return agent.Turn{}, errorf(api.KindBadRequest, "give actions or a reply, not both")
	case req.Reply != nil:
		f, u := action.Format(cmpOr(req.Format, string(r.format))), action.Unit(cmpOr(req.Unit, string(r.unit)))
		if f == "" {
			f = action.FormatPyAutoGUI
		}
		if err := checkFormat(f, u); err != nil {
			return agent.Turn{}, err
		}
		if r.sp != nil {
			if err := spaceUnit(r.sp, r.spName, u); err != nil {
				return agent.Turn{}, err
			}
			if u == "" && r.spName != api.SpaceScreen {
				u = action.Pixels // the space's image's pixels, whatever the format's default
			}
		}
		turn := agent.Turn{Raw: *req.Reply, Thought: action.Thought(*req.Reply)}
		acts, err := action.Parse(f, *req.Reply, action.Options{Unit: u})
		if err != nil {
			turn.ParseError = err.Error()
		}
		turn.Actions = acts
		return r.toScreen(turn), nil
	case req.Actions != nil:
		b, _ := json.Marshal(req.Actions)
		turn := agent.Turn{Actions: req.Actions, Raw: string(b)}
		for i, a := range req.Actions {
			if err := a.Validate(); err != nil {
				turn.Actions, turn.ParseError = nil, fmt.Sprintf("action %d: %v", i+1, err)
				break
			}
		}
		return r.toScreen(turn), nil
	}
	return agent.Turn{}, errorf(api.KindBadRequest, `give "actions" (a list of unified actions) or "reply" (a model's reply, with "format")`)
}

// toScreen maps the points of a turn's actions from the rollout's space
// to the screen; a point outside the space's image is the policy's
// mistake, as a reply that does not parse.
func (r *Rollout) toScreen(turn agent.Turn) agent.Turn {
	if r.sp == nil || turn.Actions == nil {
		return turn
	}
	turn.Space = r.sp
	acts, err := r.sp.Actions(turn.Actions)
	if err != nil {
		turn.Actions, turn.ParseError = nil, err.Error()
		return turn
	}
	turn.Actions = acts
	return turn
}

// progress evaluates the milestones on the environment as it is now.
func (s *Service) progress(r *Rollout) (float64, error) {
	ev := &episode.Evidence{Env: r.sl.e, Traj: r.ep.Trajectory(), Suite: s.cfg.Suite, Services: r.sl.svc}
	ctx, cancel := context.WithTimeout(s.ctx, orDefault(s.cfg.JudgeTimeout, episode.DefaultJudgeTimeout))
	defer cancel()
	v := r.milestones.Evaluate(ctx, ev, check.EndBudget)
	for _, m := range v.Milestones {
		for _, c := range m.Checks {
			if c.Err != "" {
				return 0, fmt.Errorf("milestone %s: %s", m.ID, c.Err)
			}
		}
	}
	return v.MilestoneScore, nil
}

// Finish ends rollout id, if it runs (as if its budget ran out: an
// uncompleted episode unless the checks say otherwise), and returns its
// final result. A rollout that ended already answers the same result.
func (s *Service) Finish(id string) (api.Rollout, error) {
	r, err := s.lookup(id)
	if err != nil {
		return api.Rollout{}, err
	}
	defer s.done(r)
	if r.status == api.StatusRunning {
		s.end(r)
	}
	return r.state(), nil
}

// end finishes the episode (its checks, unless a fault ended it),
// records it and frees the environment.
func (s *Service) end(r *Rollout) {
	r.obs, r.img = nil, nil
	res, err := r.ep.Finish(s.ctx)
	ending, _ := r.ep.Ending()
	r.end = ending.Reason
	res.Attempts, res.Env = 1, r.envKind
	fault := err != nil
	if fault {
		res.Outcome, res.Reason = string(check.Error), "infrastructure fault: "+err.Error()
		res.Duration, res.Finished = r.ep.Duration(), time.Now().UTC()
	}
	f := &api.Final{Status: api.StatusFinished, Outcome: res.Outcome, Reason: res.Reason, Milestone: res.Milestone, Steps: res.Steps,
		Verdict: res.Verdict, Run: s.cfg.RunID, Repeat: r.repeat}
	if res.Outcome == string(check.Error) {
		// A fault, or a check that could not decide (a judge that gave no
		// verdict): no reward.
		f.Status = api.StatusError
	} else {
		reward := 0.0
		if res.Outcome == string(check.Success) {
			reward = 1
		}
		f.Reward = &reward
		if r.milestones != nil {
			f.MilestoneDelta = res.Milestone - r.progress
		}
		if episode.WantsChanges(s.cfg.Suite, r.t) {
			se, err := s.sideEffects(r)
			if err != nil {
				f.Status, f.Reward, f.Outcome, f.Reason = api.StatusError, nil, string(check.Error), "infrastructure fault: the state diff: "+err.Error()
				res.Outcome, res.Reason = f.Outcome, f.Reason
			}
			f.SideEffects = se
		}
	}
	if err := s.cfg.Store.SaveResult(res); err != nil {
		f.Status, f.Reward, f.Reason = api.StatusError, nil, "the run folder does not record the rollout: "+err.Error()
		fault = true
	}
	r.final, r.status = f, f.Status
	s.logf("rollout %s: %s (repeat %d): %s: %s", r.id, r.t.ID, r.repeat, f.Outcome, f.Reason)
	s.free(r, fault)
}

// sideEffects reads the state diff the episode stored and gives its
// verdict.
func (s *Service) sideEffects(r *Rollout) (*api.SideEffects, error) {
	d, err := s.cfg.Store.Changes(r.t.ID, r.repeat)
	if err != nil {
		return nil, err
	}
	bad := d.Violations()
	se := &api.SideEffects{Verdict: api.SideEffectsPass, Violations: []api.Violation{}, Allowed: len(d.Changes) - len(bad),
		Filtered: len(d.Filtered), Truncated: d.Truncated, Checked: sideEffectsChecked(r.t)}
	if len(bad) > 0 {
		se.Verdict = api.SideEffectsFail
	}
	for _, c := range bad {
		se.Violations = append(se.Violations, api.Violation{Kind: string(c.Kind), Key: c.Key, Origin: c.Origin, Op: string(c.Op),
			What: c.What, Text: c.String()})
	}
	return se, nil
}

// sideEffectsChecked reports whether a check or milestone of t is a
// side_effects check.
func sideEffectsChecked(t *task.Task) bool {
	specs := slices.Clone(t.Checks)
	for _, m := range t.Milestones {
		specs = append(specs, m.Checks...)
	}
	return slices.ContainsFunc(specs, func(c check.Spec) bool { return c.Kind == check.SideEffects })
}

// fail ends a running rollout with status error and why, recorded as an
// error: no checks, no reward.
func (s *Service) fail(r *Rollout, why string, fault bool) {
	if r.status != api.StatusRunning {
		return
	}
	r.obs, r.img = nil, nil
	res := episode.Result(r.t, r.repeat)
	res.Outcome, res.Reason, res.Steps, res.Attempts = string(check.Error), why, r.ep.Step(), 1
	res.Duration, res.Finished = r.ep.Duration(), time.Now().UTC()
	res.Env = r.envKind
	if err := s.cfg.Store.SaveResult(res); err != nil {
		why += "; the run folder does not record it: " + err.Error()
	}
	r.final = &api.Final{Status: api.StatusError, Outcome: res.Outcome, Reason: why, Steps: res.Steps, Run: s.cfg.RunID, Repeat: r.repeat}
	r.status, r.end = api.StatusError, why
	s.logf("rollout %s: %s (repeat %d): error: %s", r.id, r.t.ID, r.repeat, why)
	s.free(r, fault)
}

// abandon ends a rollout that its client left (deleted, expired, or the
// service stopped): recorded as an error, its environment freed.
func (s *Service) abandon(r *Rollout, why string) {
	s.fail(r, why, false)
}

// state is where r stands, for an answer.
func (r *Rollout) state() api.Rollout {
	out := api.Rollout{ID: r.id, Task: r.t.ID, Instruction: r.t.Instruction, Status: r.status, Observation: r.obs, Final: r.final}
	if r.ep != nil {
		out.Instruction = r.ep.Task().Instruction
	}
	out.Info = api.Info{Status: r.status, Step: r.ep.Step(), Milestone: r.progress, Milestones: r.milestones != nil, End: r.end}
	if r.status == api.StatusRunning {
		out.Info.StepsLeft = max(r.t.MaxSteps()-r.ep.Step(), 0)
		out.Info.TimeLeft = max(r.t.WallTime()-r.ep.Duration(), 0).Seconds()
	}
	return out
}

func (s *Service) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		s.cfg.Log.Printf(format, args...)
	}
}
