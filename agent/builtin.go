package agent

import (
	"cmp"
	"context"
	"encoding/binary"
	"hash/fnv"
	"math/rand"

	"github.com/proctor-eval/proctor/action"
)

// Replay plays a task's gold solution, one action a step. It proves that
// a task's checks pass when the task is done right.
type Replay struct {
	gold []action.Action
	next int
}

// Start takes the task's gold solution.
func (r *Replay) Start(_ context.Context, t Task) error {
	r.gold, r.next = t.Gold, 0
	return nil
}

// Next returns the next gold action; past the end, DONE.
func (r *Replay) Next(context.Context, Observation, []Turn) (Turn, error) {
	if r.next >= len(r.gold) {
		return Turn{Actions: []action.Action{{Kind: action.Done}}}, nil
	}
	a := r.gold[r.next]
	r.next++
	return Turn{Actions: []action.Action{a}, Raw: a.String()}, nil
}

// Stop does nothing.
func (r *Replay) Stop(context.Context) error { return nil }

// Noop says DONE at once without acting. No task should pass with it.
type Noop struct{}

// Start does nothing.
func (Noop) Start(context.Context, Task) error { return nil }

// Next says DONE.
func (Noop) Next(context.Context, Observation, []Turn) (Turn, error) {
	return Turn{Actions: []action.Action{{Kind: action.Done}}, Raw: "DONE"}, nil
}

// Stop does nothing.
func (Noop) Stop(context.Context) error { return nil }

// Random clicks, scrolls and presses keys at random and never says DONE:
// a floor for scores and a load for the harness.
type Random struct {
	// Seed is the run's seed; each episode draws from its own seed,
	// EpisodeSeed of it, the task and the repeat, so that repeats differ
	// and a run with the same seed repeats every episode's actions.
	Seed int64
	r    *rand.Rand
	size action.Size
}

// Start seeds the generator for the episode of t.
func (a *Random) Start(_ context.Context, t Task) error {
	a.r = rand.New(rand.NewSource(EpisodeSeed(a.Seed, t.ID, t.Repeat)))
	a.size = t.Screen
	return nil
}

// EpisodeSeed is the seed of one episode, repeat of task, in a run seeded
// with seed: an FNV-1a hash of the three.
func EpisodeSeed(seed int64, task string, repeat int) int64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	h.Write([]byte(task))
	h.Write([]byte{0})
	binary.LittleEndian.PutUint64(b[:], uint64(repeat))
	h.Write(b[:])
	return int64(h.Sum64())
}

// DefaultSeed is the random agent's seed when none is given.
const DefaultSeed = 1

// Next proposes one random action on the screen.
func (a *Random) Next(_ context.Context, obs Observation, _ []Turn) (Turn, error) {
	size := obs.Screen
	if size.W == 0 {
		size = a.size
	}
	pt := action.At(float64(a.r.Intn(max(size.W, 1))), float64(a.r.Intn(max(size.H, 1))))
	var act action.Action
	switch a.r.Intn(4) {
	case 0, 1:
		act = action.Action{Kind: action.Click, Point: pt}
	case 2:
		act = action.Action{Kind: action.Scroll, Point: pt, DY: a.r.Intn(7) - 3}
		if act.DY == 0 {
			act.DY = 1
		}
	default:
		keys := []string{"tab", "enter", "esc", "down", "up", "a", "1"}
		act = action.Action{Kind: action.Key, Keys: []string{keys[a.r.Intn(len(keys))]}}
	}
	return Turn{Actions: []action.Action{act}, Raw: act.String()}, nil
}

// Stop does nothing.
func (a *Random) Stop(context.Context) error { return nil }

// The built-in agents need no options: they prove the harness and the
// tasks (replay, noop) and give a floor for scores (random).
func init() {
	Register("replay", Def{Summary: "plays each task's gold solution",
		New: func(Options) (Factory, error) { return func() (Agent, error) { return &Replay{}, nil }, nil }})
	Register("noop", Def{Summary: "says DONE at once without acting",
		New: func(Options) (Factory, error) { return func() (Agent, error) { return Noop{}, nil }, nil }})
	Register("random", Def{Summary: "clicks, scrolls and presses keys at random (each episode seeded from the run's seed, the task and the repeat), never DONE",
		New: func(o Options) (Factory, error) {
			seed := cmp.Or(o.Seed, DefaultSeed)
			return func() (Agent, error) { return &Random{Seed: seed}, nil }, nil
		}})
}
