package run

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/service"
)

// place is one place of the pool: its source and the environment it
// started, replaced when it dies. The mutex lets an interrupt close the
// environment while an episode runs on it.
type place struct {
	src  env.Source
	mu   sync.Mutex
	e    env.Env
	size action.Size // what e was started at
	info env.Info
	lost error // set when the place left the pool
	// startTimeout bounds starting the environment (a daemon that
	// accepts the connection and never answers, a desktop that hangs).
	startTimeout time.Duration
	// svc are the suite's command services of this place, restored
	// before every episode; nil when the suite has none.
	svc *service.Instances
}

func (p *place) env() env.Env {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.e
}

func (p *place) close() {
	p.mu.Lock()
	e := p.e
	p.e = nil
	p.mu.Unlock()
	if e != nil {
		e.Close()
	}
}

// serves reports whether the place can run the job.
func (p *place) serves(j job) bool {
	return p.fits(j) && !(p.src.Remote && len(j.local) > 0)
}

// kind tells places apart by the jobs they can serve.
func (p *place) kind() string {
	return fmt.Sprint(p.src.Type, p.src.Also, p.src.Size, p.src.Remote)
}

// fits reports whether the place has the job's environment type and size.
func (p *place) fits(j job) bool {
	if p.lost != nil || p.src.Type != j.typ() && !slices.Contains(p.src.Also, j.typ()) {
		return false
	}
	return p.src.Size == (action.Size{}) || p.src.Size == j.size()
}

// start starts the place's environment at size and reads its Info.
func (p *place) start(ctx context.Context, size action.Size) error {
	p.close()
	sctx, cancel := context.WithTimeout(ctx, p.startTimeout)
	defer cancel()
	e, err := p.src.Start(sctx, size)
	if err != nil {
		return err
	}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	info, err := e.Info(ictx)
	cancel()
	if err != nil {
		e.Close()
		return err
	}
	p.mu.Lock()
	p.e, p.size, p.info = e, size, info
	p.mu.Unlock()
	return nil
}

// ready makes sure the place has a live environment of the job's size.
func (p *place) ready(ctx context.Context, j job) error {
	if p.env() != nil && (p.src.Size != (action.Size{}) || p.size == j.size()) {
		return nil
	}
	return p.start(ctx, j.size())
}

// heal checks the place's environment after an infrastructure fault and
// starts it again when it died, telling lost (when set) what the dead
// environment said. An error means the place left the pool.
func (p *place) heal(ctx context.Context, pr *progress, lost func(reason string)) error {
	e := p.env()
	var died error // what the dead environment said
	if e != nil {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := e.Info(pctx)
		cancel()
		if err == nil || ctx.Err() != nil {
			return nil
		}
		pr.notef("environment %s died (%v)", p.src.Name, err)
		died = err
	}
	if p.src.Once {
		p.close()
		if died != nil {
			return fmt.Errorf("%w: %s died and cannot be started again: %v", ErrNoEnvironment, p.src.Name, died)
		}
		return fmt.Errorf("%w: %s died and cannot be started again", ErrNoEnvironment, p.src.Name)
	}
	if err := p.start(ctx, p.size); err != nil {
		return fmt.Errorf("%w: %s died and could not be started again: %v", ErrNoEnvironment, p.src.Name, err)
	}
	pr.notef("environment %s started again", p.src.Name)
	if died != nil && lost != nil {
		lost(fmt.Sprintf("%v (started again)", died))
	}
	return nil
}

// queue hands out the episodes; a worker takes the first its place can
// serve, and one whose environment is gone puts its episode back. A
// worker with nothing to take waits while episodes are in flight, since
// one may come back to it, unless as many workers of its kind wait
// already as there are episodes in flight: then it is not needed, and
// its place is given back before the run ends.
type queue struct {
	mu       sync.Mutex
	cond     sync.Cond
	jobs     []job
	inflight int
	closed   bool
	waiting  map[string]int // workers waiting, by the kind of their place
}

func newQueue(jobs []job) *queue {
	q := &queue{jobs: jobs, waiting: map[string]int{}}
	q.cond.L = &q.mu
	return q
}

// pop takes the first job ok accepts for a worker whose place is of
// kind (places of one kind serve the same jobs); false when there is
// none and none can come back, when the workers of its kind that wait
// can take every job that comes back, or when the queue was closed.
func (q *queue) pop(kind string, ok func(job) bool) (job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed {
		for i, j := range q.jobs {
			if ok(j) {
				q.jobs = append(q.jobs[:i:i], q.jobs[i+1:]...)
				q.inflight++
				return j, true
			}
		}
		if q.inflight == 0 || len(q.jobs) == 0 && q.waiting[kind] >= q.inflight {
			break
		}
		q.waiting[kind]++
		q.cond.Wait()
		q.waiting[kind]--
	}
	return job{}, false
}

// done ends a popped job; back puts it back instead.
func (q *queue) done()      { q.end(nil) }
func (q *queue) back(j job) { q.end(&j) }

func (q *queue) end(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j != nil {
		q.jobs = append(q.jobs, *j)
	}
	q.inflight--
	q.cond.Broadcast()
}

// close wakes every waiting worker for good (an interrupt).
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

func (q *queue) drain() []job {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.jobs
	q.jobs = nil
	return out
}

// sources are the pool's places: cfg.Sources, or Parallel x11 places
// made with NewEnv.
func sources(cfg Config) []env.Source {
	if len(cfg.Sources) > 0 {
		return cfg.Sources
	}
	out := make([]env.Source, cfg.Parallel)
	for i := range out {
		out[i] = env.Source{Name: fmt.Sprintf("local %d", i+1), Type: "x11",
			Start: func(ctx context.Context, _ action.Size) (env.Env, error) { return cfg.NewEnv(ctx) }}
	}
	return out
}
