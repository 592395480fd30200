package mem

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/input"
)

// Methods are the names a Fault can fall on: the env.Env methods but
// Close, and Start, the start of an environment by a Source.
var Methods = []string{"Info", "Screenshot", "Tree", "Do", "Run", "ReadFile", "WriteFile",
	"Windows", "Elements", "Clipboard", "Reset", "RunSteps", "Start"}

// Fault is a failure injected into calls of an environment, for tests of
// the runner and the episode: retries, healing, wall-time limits. Calls
// are counted from 1 per method over every environment that one Source
// started (or the one New made), so that "the third Do" means the third
// Do of the run, whichever environment serves it. Where several faults
// fall on one call, each applies in turn: delays first where they come
// first.
type Fault struct {
	// Method is the method the fault falls on (see Methods); "" falls on
	// every method, its calls counted together.
	Method string
	// Call is the call it falls on; 0: every call.
	Call int
	// Delay holds the call this long before it goes on; a context that
	// ends first ends the call with the context's error.
	Delay time.Duration
	// Err is returned (wrapped, naming the method) instead of the call's
	// result. An error that wraps env.ErrClosed makes the call look like
	// one to a dead environment without killing it.
	Err error
	// Die kills the environment (as Kill): this call and every later one
	// fail with env.ErrClosed. A Source starts a new one after a death.
	Die bool
}

func (f Fault) validate() error {
	if f.Method != "" && !slices.Contains(Methods, f.Method) {
		return fmt.Errorf("fault on %q: not a method (%v)", f.Method, Methods)
	}
	if f.Call < 0 || f.Delay < 0 {
		return fmt.Errorf("fault on %q: a negative call or delay", f.Method)
	}
	if f.Delay == 0 && f.Err == nil && !f.Die {
		return fmt.Errorf("fault on %q: no delay, error or death", f.Method)
	}
	return nil
}

// apply applies the fault to call n of method on e (nil for Start).
func (f Fault) apply(ctx context.Context, e *Env, method string, n int) error {
	if err := input.Sleep(ctx, f.Delay); err != nil {
		return err
	}
	if f.Die {
		why := fmt.Errorf("a fault on call %d of %s", n, method)
		if e == nil {
			return fmt.Errorf("%w: %v", env.ErrClosed, why)
		}
		e.die(why)
		return e.alive()
	}
	if f.Err != nil {
		return fmt.Errorf("mem %s (call %d): %w", method, n, f.Err)
	}
	return nil
}

// plan holds the faults and the call counts that the environments of one
// Source share.
type plan struct {
	mu     sync.Mutex
	faults []Fault
	calls  map[string]int
}

// hit counts a call of method and returns its number and the faults that
// fall on it.
func (p *plan) hit(method string) (int, []Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[method]++
	p.calls[""]++
	n := p.calls[method]
	var out []Fault
	for _, f := range p.faults {
		if f.Method != method && f.Method != "" {
			continue
		}
		if c := p.calls[f.Method]; f.Call == 0 || f.Call == c {
			out = append(out, f)
		}
	}
	return n, out
}

func (p *plan) count(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[method]
}
