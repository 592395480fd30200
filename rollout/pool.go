package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/rollout/api"
	"github.com/proctor-eval/proctor/service"
	"github.com/proctor-eval/proctor/task"
)

// slot is one place of the pool: its source and the environment it
// started, replaced when it dies.
type slot struct {
	src  env.Source
	e    env.Env
	size action.Size // what e was started at
	info env.Info
	svc  *service.Instances // the suite's command services of the place; nil: none
	busy bool               // a rollout holds it (or a heal does)
	lost error              // set when the place left the pool
}

// fits reports whether the slot can run t: its environment type and
// screen size, and, for a place on another machine, no service that
// Proctor starts on this machine's loopback.
func (sl *slot) fits(t *task.Task, local bool) bool {
	typ := t.Environment.TypeOrDefault()
	if sl.lost != nil || sl.src.Type != typ && !slices.Contains(sl.src.Also, typ) || sl.src.Remote && local {
		return false
	}
	return sl.src.Size == (action.Size{}) || sl.src.Size == taskSize(t)
}

// taskSize is the screen size t asks for (lint refuses a bad one).
func taskSize(t *task.Task) action.Size {
	s, err := t.Environment.Size()
	if err != nil {
		s, _ = task.Environment{}.Size()
	}
	return s
}

// start starts the slot's environment at size (closing the one it had)
// and reads its Info.
func (sl *slot) start(ctx context.Context, size action.Size, timeout time.Duration) error {
	if sl.e != nil {
		sl.e.Close()
		sl.e = nil
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	e, err := sl.src.Start(sctx, size)
	if err != nil {
		return err
	}
	info, err := e.Info(sctx)
	if err != nil {
		e.Close()
		return err
	}
	sl.e, sl.size, sl.info = e, size, info
	return nil
}

// ready makes sure the slot has a live environment of t's size.
func (sl *slot) ready(ctx context.Context, t *task.Task, timeout time.Duration) error {
	if sl.e != nil && (sl.src.Size != (action.Size{}) || sl.size == taskSize(t)) {
		return nil
	}
	return sl.start(ctx, taskSize(t), timeout)
}

// heal probes the slot's environment after a fault and starts it again
// when it died; a place that cannot be started again leaves the pool.
func (sl *slot) heal(ctx context.Context, timeout time.Duration) error {
	if sl.e != nil {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := sl.e.Info(pctx)
		cancel()
		if err == nil {
			return nil
		}
	}
	if sl.src.Once {
		if sl.e != nil {
			sl.e.Close()
			sl.e = nil
		}
		sl.lost = fmt.Errorf("%s died and cannot be started again", sl.src.Name)
		return sl.lost
	}
	size := sl.size
	if err := sl.start(ctx, size, timeout); err != nil {
		sl.lost = fmt.Errorf("%s died and could not be started again: %v", sl.src.Name, err)
		return sl.lost
	}
	return nil
}

// pool hands the slots to rollouts: a free slot that fits at once, else
// a place in a bounded queue that the next slot freed serves, else an
// exhausted error that says when to ask again.
type pool struct {
	mu      sync.Mutex
	slots   []*slot
	waiters []*waiter
	queue   int           // waiters allowed
	wait    time.Duration // how long a waiter waits
	retry   time.Duration // what an exhausted answer tells the client to wait
}

type waiter struct {
	t     *task.Task
	local bool
	ch    chan *slot // buffered: a release never blocks on it
}

// acquire takes a slot that can run t for a rollout, waiting in the queue
// when none is free and the queue has room.
func (p *pool) acquire(ctx context.Context, t *task.Task, local bool) (*slot, error) {
	p.mu.Lock()
	fit := false
	var pick *slot
	for _, sl := range p.slots {
		if !sl.fits(t, local) {
			continue
		}
		fit = true
		if sl.busy {
			continue
		}
		// One already started at the task's size saves a restart.
		if pick == nil || sl.e != nil && sl.size == taskSize(t) && !(pick.e != nil && pick.size == taskSize(t)) {
			pick = sl
		}
	}
	if pick != nil {
		pick.busy = true
		p.mu.Unlock()
		return pick, nil
	}
	if !fit {
		p.mu.Unlock()
		return nil, &Error{Kind: api.KindExhausted, Msg: fmt.Sprintf("no environment of the pool can run %s any more (%s environment of %dx%d)",
			t.ID, t.Environment.TypeOrDefault(), taskSize(t).W, taskSize(t).H), RetryAfter: p.retry}
	}
	if len(p.waiters) >= p.queue {
		p.mu.Unlock()
		return nil, p.exhausted(t)
	}
	w := &waiter{t: t, local: local, ch: make(chan *slot, 1)}
	p.waiters = append(p.waiters, w)
	p.mu.Unlock()
	timer := time.NewTimer(p.wait)
	defer timer.Stop()
	select {
	case sl := <-w.ch:
		return p.handed(t, sl)
	case <-timer.C:
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.waiters, w); i >= 0 {
		p.waiters = slices.Delete(p.waiters, i, i+1)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, p.exhausted(t)
	}
	return p.handed(t, <-w.ch) // handed a slot as the wait ended
}

// handed is what a waiter got: a slot, or nil when the slot it waited
// for left the pool and no other can run its task.
func (p *pool) handed(t *task.Task, sl *slot) (*slot, error) {
	if sl == nil {
		return nil, &Error{Kind: api.KindExhausted, Msg: fmt.Sprintf("no environment of the pool can run %s any more: %v", t.ID, errNoPlace), RetryAfter: p.retry}
	}
	return sl, nil
}

func (p *pool) exhausted(t *task.Task) error {
	msg := fmt.Sprintf("every environment that can run %s is in use", t.ID)
	if p.queue > 0 {
		msg += fmt.Sprintf(", and %d rollouts wait for one already", p.queue)
	}
	return &Error{Kind: api.KindExhausted, Msg: msg + "; ask again later", RetryAfter: p.retry}
}

// release frees a slot: the first waiter it fits takes it at once.
func (p *pool) release(sl *slot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if sl.lost == nil {
		for i, w := range p.waiters {
			if sl.fits(w.t, w.local) {
				p.waiters = slices.Delete(p.waiters, i, i+1)
				w.ch <- sl
				return
			}
		}
	}
	sl.busy = false
	// A lost slot fails its waiters' tasks that no other slot fits.
	if sl.lost != nil {
		for i := 0; i < len(p.waiters); i++ {
			w := p.waiters[i]
			if !slices.ContainsFunc(p.slots, func(s *slot) bool { return s.fits(w.t, w.local) }) {
				p.waiters = slices.Delete(p.waiters, i, i+1)
				i--
				close(w.ch)
			}
		}
	}
}

// size counts the slots still in the pool.
func (p *pool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, sl := range p.slots {
		if sl.lost == nil {
			n++
		}
	}
	return n
}

// close closes every environment and the slots' services.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, sl := range p.slots {
		if sl.e != nil {
			sl.e.Close()
			sl.e = nil
		}
		sl.svc.Close()
	}
}

// errNoPlace is what a waiter gets when the slot it waited for
// left the pool.
var errNoPlace = errors.New("the environment it waited for left the pool")
