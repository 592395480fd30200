// Package rollout serves the tasks of a suite as rollouts for training:
// a pool of environments made by the same providers as a run's, and
// sessions over it that a policy steps from afar (proctor serve). A
// rollout is one episode (package episode): Create resets an environment
// with the task's setup and returns the first observation; Step performs
// a policy's actions, or parses a model's raw reply, and returns the next
// observation, the step's reward (the rise of the milestone score where
// the task has milestones, else 0) and whether the rollout is done;
// Finish, or the end of the episode (a terminal action, a budget), runs
// the task's checks and gives the final reward. Every episode is stored
// in a run folder like a run's, so that proctor report, view and export
// show rollouts.
//
// Faults are never rewards: an environment that dies, or a check that
// cannot decide, ends the rollout with status error and the reason, and
// no reward.
package rollout

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/episode"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/rollout/api"
	"github.com/proctor-eval/proctor/service"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// Defaults.
const (
	DefaultTTL        = 10 * time.Minute // a rollout idle this long expires
	DefaultQueueWait  = 30 * time.Second // a queued rollout waits this long for an environment
	DefaultRetryAfter = 2 * time.Second  // what an exhausted pool tells a client to wait
)

// Config is a rollout service.
type Config struct {
	Suite *task.Suite
	// Tasks are the tasks served; nil: the suite's.
	Tasks []*task.Task
	// Sources are the places of the pool, from the environment providers.
	Sources []env.Source
	// Store is the run folder every rollout's episode is recorded in;
	// RunID names it in the answers.
	Store *store.Store
	RunID string
	// Judge decides judge checks; tasks with judge checks and no judge
	// are refused when the service starts.
	Judge judgment.Model
	// TTL is how long a rollout may stay idle before it expires and frees
	// its environment; 0: DefaultTTL.
	TTL time.Duration
	// PerClient is how many running rollouts one client may hold; 0: the
	// size of the pool.
	PerClient int
	// Queue is how many rollouts may wait for an environment when none is
	// free, each at most QueueWait (0: DefaultQueueWait); 0: none, an
	// exhausted pool answers at once.
	Queue     int
	QueueWait time.Duration
	// RetryAfter is what an exhausted pool tells the client to wait; 0:
	// DefaultRetryAfter.
	RetryAfter time.Duration
	// EarlyStop, Settle, ResetTimeout and JudgeTimeout are the episodes'
	// (episode.Config).
	EarlyStop    int
	Settle       time.Duration
	ResetTimeout time.Duration
	JudgeTimeout time.Duration
	// Log receives a line per rollout that ends; nil: quiet.
	Log *log.Logger
}

// Error is an error of the API, with its kind (api.Status gives its HTTP
// status).
type Error struct {
	Kind       string
	Msg        string
	RetryAfter time.Duration // for KindExhausted and KindClientLimit
}

func (e *Error) Error() string { return e.Msg }

func errorf(kind, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Service is the rollout service: the pool, the tasks and the rollouts.
type Service struct {
	cfg    Config
	ctx    context.Context // the environments' calls run under it, not a request's
	cancel context.CancelFunc
	pool   *pool
	svcs   *service.Set
	static []string

	tasks     map[string]*task.Task
	order     []*task.Task
	templates map[string][]*task.Task // a template's instances
	local     map[string]bool         // tasks with command services on this machine's loopback

	mu       sync.Mutex
	rollouts map[string]*Rollout
	gone     map[string]string // ids of rollouts no longer kept, and why
	goneIDs  []string          // in the order they went, to bound gone
	repeats  map[string]int    // the next repeat of each task in the store
	clients  map[string]int    // running rollouts by client
	janitor  chan struct{}
	closed   bool
}

// maxGone bounds the ids of ended rollouts kept to answer 410.
const maxGone = 100000

// New starts the service: the suite's services, then every place of the
// pool, at the screen size of the first task it serves. It refuses tasks
// that no place can run, or that need what their places lack.
func New(ctx context.Context, cfg Config) (*Service, error) {
	cfg.TTL = orDefault(cfg.TTL, DefaultTTL)
	cfg.QueueWait = orDefault(cfg.QueueWait, DefaultQueueWait)
	cfg.RetryAfter = orDefault(cfg.RetryAfter, DefaultRetryAfter)
	cfg.ResetTimeout = orDefault(cfg.ResetTimeout, episode.DefaultResetTimeout)
	if cfg.Tasks == nil && cfg.Suite != nil {
		cfg.Tasks = cfg.Suite.Tasks
	}
	if len(cfg.Tasks) == 0 {
		return nil, errors.New("rollout: no task to serve")
	}
	if len(cfg.Sources) == 0 {
		return nil, errors.New("rollout: no environment in the pool")
	}
	if cfg.Store == nil {
		return nil, errors.New("rollout: no store")
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Service{cfg: cfg, ctx: sctx, cancel: cancel, tasks: map[string]*task.Task{}, templates: map[string][]*task.Task{},
		local: map[string]bool{}, rollouts: map[string]*Rollout{}, gone: map[string]string{}, repeats: map[string]int{},
		clients: map[string]int{}, janitor: make(chan struct{})}
	tasks := cfg.Tasks
	if cfg.Suite != nil && len(cfg.Suite.Services) > 0 {
		svcs, err := service.Start(ctx, cfg.Suite.Dir, cfg.Suite.Services)
		if err != nil {
			cancel()
			return nil, err
		}
		s.svcs = svcs
		if tasks, err = svcs.Fill(tasks); err != nil {
			s.Close()
			return nil, err
		}
		s.static = svcs.Reachable()
	}
	for _, t := range tasks {
		s.tasks[t.ID] = t
		s.order = append(s.order, t)
		if t.Template != "" {
			s.templates[t.Template] = append(s.templates[t.Template], t)
		}
		s.local[t.ID] = len(localServices(cfg.Suite, t)) > 0
	}
	done, err := cfg.Store.Finished()
	if err != nil {
		s.Close()
		return nil, err
	}
	for id, reps := range done {
		for r := range reps {
			s.repeats[id] = max(s.repeats[id], r+1)
		}
	}
	s.pool = &pool{queue: cfg.Queue, wait: cfg.QueueWait, retry: cfg.RetryAfter}
	for _, src := range cfg.Sources {
		s.pool.slots = append(s.pool.slots, &slot{src: src})
	}
	if err := s.preflight(ctx); err != nil {
		s.Close()
		return nil, err
	}
	go s.expireLoop()
	return s, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// localServices lists the command services t uses, which Proctor starts
// on this machine's loopback.
func localServices(s *task.Suite, t *task.Task) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, name := range t.UsedServices() {
		if sv, ok := s.Service(name); ok && sv.IsCommand() {
			out = append(out, name)
		}
	}
	return out
}

// preflight starts the places that serve some task and refuses tasks
// that no place can run.
func (s *Service) preflight(ctx context.Context) error {
	var problems []string
	for _, t := range s.order {
		if s.cfg.Judge == nil && judged(t) {
			problems = append(problems, fmt.Sprintf("task %s has judge checks, and no judge model is configured", t.ID))
		}
		if !slices.ContainsFunc(s.pool.slots, func(sl *slot) bool { return sl.fits(t, s.local[t.ID]) }) {
			problems = append(problems, fmt.Sprintf("task %s needs a %s environment of %dx%d, which the pool lacks",
				t.ID, t.Environment.TypeOrDefault(), taskSize(t).W, taskSize(t).H))
		}
	}
	if len(problems) == 0 {
		for _, sl := range s.pool.slots {
			i := slices.IndexFunc(s.order, func(t *task.Task) bool { return sl.fits(t, s.local[t.ID]) })
			if i < 0 {
				continue
			}
			if err := sl.start(ctx, taskSize(s.order[i]), s.cfg.ResetTimeout); err != nil {
				return fmt.Errorf("environment %s does not start: %w", sl.src.Name, err)
			}
			sl.svc = service.NewInstances(s.cfg.Suite)
			for _, t := range s.order {
				if sl.fits(t, s.local[t.ID]) {
					for _, n := range t.Missing(sl.info.Caps) {
						problems = append(problems, fmt.Sprintf("task %s: %s needs %s, which %s does not offer", t.ID, n.Label, n.Cap, sl.src.Name))
					}
				}
			}
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("the service cannot start:\n  %s", strings.Join(slices.Compact(problems), "\n  "))
	}
	return nil
}

// Close ends every running rollout (recorded as an error: the service
// stopped), then closes the pool and the services.
func (s *Service) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	var running []*Rollout
	for _, r := range s.rollouts {
		running = append(running, r)
	}
	s.mu.Unlock()
	if already {
		return nil
	}
	if s.pool != nil {
		close(s.janitor)
	}
	for _, r := range running {
		r.mu.Lock()
		s.abandon(r, "the service stopped before the rollout finished")
		r.mu.Unlock()
	}
	s.cancel()
	if s.pool != nil {
		s.pool.close()
	}
	if s.svcs != nil {
		s.svcs.Close()
	}
	return nil
}

// Tasks lists the tasks served, in the suite's order, with their gold
// solutions when gold is set.
func (s *Service) Tasks(gold bool) api.Tasks {
	out := api.Tasks{Tasks: []api.Task{}}
	for _, t := range s.order {
		at := api.Task{ID: t.ID, Instruction: t.Instruction, Apps: t.AllApps(), Level: string(t.Level), Kind: string(t.Kind),
			Difficulty: t.Difficulty, Interface: t.Interface, Domain: t.Domain, Tags: t.Tags, Template: t.Template,
			Environment: t.Environment.TypeOrDefault(), Screen: taskSize(t), MaxSteps: t.MaxSteps(), WallTime: t.WallTime().Seconds(),
			Milestones: len(t.Milestones)}
		if gold {
			at.Gold = t.Gold
		}
		out.Tasks = append(out.Tasks, at)
	}
	return out
}

// pick finds the task of a create request: an id, or a template's id and
// a seed.
func (s *Service) pick(id string, seed *int64) (*task.Task, error) {
	if t, ok := s.tasks[id]; ok {
		return t, nil
	}
	inst := s.templates[id]
	if len(inst) == 0 {
		return nil, errorf(api.KindNotFound, "no task or template %q (GET %s lists them)", id, api.PathTasks)
	}
	n := int64(len(inst))
	i := rand.Int64N(n)
	if seed != nil {
		i = (*seed%n + n) % n
	}
	return inst[i], nil
}

// newID returns a rollout id.
func newID() string {
	b := make([]byte, 12)
	crand.Read(b)
	return hex.EncodeToString(b)
}

// lookup returns the rollout of id, locked for the caller's call: a
// rollout that another call holds is busy.
func (s *Service) lookup(id string) (*Rollout, error) {
	s.mu.Lock()
	r, ok := s.rollouts[id]
	why, gone := s.gone[id]
	s.mu.Unlock()
	switch {
	case gone:
		return nil, errorf(api.KindGone, "rollout %s is no longer kept: %s", id, why)
	case !ok:
		return nil, errorf(api.KindNotFound, "no rollout %s", id)
	}
	if !r.mu.TryLock() {
		return nil, errorf(api.KindBusy, "another call on rollout %s is in progress; make one call at a time", id)
	}
	s.mu.Lock()
	_, still := s.rollouts[id]
	why = s.gone[id]
	s.mu.Unlock()
	if !still { // it expired, or was deleted, while the lock was taken
		r.mu.Unlock()
		return nil, errorf(api.KindGone, "rollout %s is no longer kept: %s", id, why)
	}
	return r, nil
}

// done unlocks r after a call and marks its use.
func (s *Service) done(r *Rollout) {
	s.mu.Lock()
	r.last = time.Now()
	s.mu.Unlock()
	r.mu.Unlock()
}

// forget drops a rollout, remembering why for the calls that follow.
func (s *Service) forget(r *Rollout, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.rollouts[r.id]; !ok {
		return
	}
	delete(s.rollouts, r.id)
	s.gone[r.id] = why
	s.goneIDs = append(s.goneIDs, r.id)
	if len(s.goneIDs) > maxGone {
		delete(s.gone, s.goneIDs[0])
		s.goneIDs = s.goneIDs[1:]
	}
}

// expireLoop expires idle rollouts until the service closes.
func (s *Service) expireLoop() {
	tick := time.NewTicker(max(s.cfg.TTL/4, 50*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-s.janitor:
			return
		case now := <-tick.C:
			s.Expire(now)
		}
	}
}

// Expire ends the rollouts idle for the TTL at now: a running one frees
// its environment and is recorded as an error (abandoned), an ended one
// is dropped. It returns how many expired.
func (s *Service) Expire(now time.Time) int {
	s.mu.Lock()
	var idle []*Rollout
	for _, r := range s.rollouts {
		if now.Sub(r.last) >= s.cfg.TTL {
			idle = append(idle, r)
		}
	}
	s.mu.Unlock()
	n := 0
	for _, r := range idle {
		if !r.mu.TryLock() {
			continue // a call runs: it is not idle
		}
		s.mu.Lock()
		_, still := s.rollouts[r.id]
		fresh := now.Sub(r.last) < s.cfg.TTL
		s.mu.Unlock()
		if still && !fresh {
			why := fmt.Sprintf("it expired after %s without a call", s.cfg.TTL)
			s.abandon(r, "the rollout was abandoned: "+why)
			s.forget(r, why)
			n++
		}
		r.mu.Unlock()
	}
	return n
}

// Delete ends a rollout: a running one frees its environment and is
// recorded as an error (abandoned, no reward).
func (s *Service) Delete(id string) error {
	r, err := s.lookup(id)
	if err != nil {
		return err
	}
	defer r.mu.Unlock()
	s.abandon(r, "the rollout was abandoned: the client deleted it before it finished")
	s.forget(r, "it was deleted")
	return nil
}

// Get returns where a rollout stands.
func (s *Service) Get(id string) (api.Rollout, error) {
	r, err := s.lookup(id)
	if err != nil {
		return api.Rollout{}, err
	}
	defer s.done(r)
	return r.state(), nil
}

// Image returns the screenshot of a rollout's last observation, if it is
// of step (0: whichever), and its content type.
func (s *Service) Image(id string, step int) ([]byte, string, error) {
	r, err := s.lookup(id)
	if err != nil {
		return nil, "", err
	}
	defer s.done(r)
	switch {
	case r.img == nil:
		return nil, "", errorf(api.KindNotFound, "rollout %s has no screenshot to give (its observation is %s, or it ended)", id, r.obsKind)
	case step != 0 && step != r.obs.Step:
		return nil, "", errorf(api.KindNotFound, "rollout %s is at step %d; the screenshot of step %d is no longer kept", id, r.obs.Step, step)
	}
	return r.img, "image/" + r.image, nil
}

// judged reports whether t has judge checks.
func judged(t *task.Task) bool {
	return compiled(t).Judged()
}
