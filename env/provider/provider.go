// Package provider turns the --env values of a run into the places of its
// pool. A provider makes environments of one kind: local X11 desktops,
// desktops served by guest daemons on other machines, browsers, VNC
// desktops, Android devices. Each lives in its backend's package, with its
// own argument parsing; package env/provider/all registers them all, and
// the commands import it and know no backend.
package provider

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/task"
)

// Options are what the command line gives every provider.
type Options struct {
	// Parallel is how many places side by side a provider that makes its
	// environments here makes (local=N and browser=N say it for one).
	Parallel int
	// Token is the guest daemons' bearer token.
	Token string
	// Settings are the settings of single providers, each named by its
	// provider's name and its own: "vnc.password", "vnc.guest".
	Settings map[string]string
	// Warn receives warnings (a secret file others can read); nil: none.
	Warn io.Writer
	// Episodes is how many episodes the run has at most (0: not known): a
	// provider that makes its places on demand (pods on a cluster) makes
	// no more than that.
	Episodes int
}

// Provider makes the places of a pool from one --env value.
type Provider interface {
	// Name is the value's name: local, guest, vnc.
	Name() string
	// Usage is the value's form: local, guest=https://HOST:PORT#sha256=FINGERPRINT, vnc://HOST:PORT.
	Usage() string
	// Help says in one line what the places are.
	Help() string
	// Sources makes the places for arg (what follows "NAME=" or
	// "NAME://", or ""). It may reach the environment to learn what it
	// is (a remote daemon's screen size), so that a wrong address, token
	// or version is refused before any task is scored.
	Sources(ctx context.Context, arg string, o Options) ([]env.Source, error)
}

// Preflighter is a provider that looks on this machine, before any place
// is made, for what the tasks it would run need (their applications).
type Preflighter interface {
	// Preflight returns the problems it finds, one a line.
	Preflight(s *task.Suite, tasks []*task.Task) []string
}

// Watchable is an environment that a person can watch and act on while
// it runs (the interactive agent): Watch says how, in one line.
type Watchable interface {
	Watch() string
}

// Helper is a provider whose environments run this program again as a
// helper of theirs (a desktop's watchdog): Helper makes this process that
// helper, and never returns, when it was started as one; otherwise it
// returns at once.
type Helper interface {
	Helper()
}

// RunHelpers runs the Helper of every registered provider that has one.
// Every program that starts environments calls it first thing in main (a
// test binary in TestMain).
func RunHelpers() {
	for _, p := range providers() {
		if h, ok := p.(Helper); ok {
			h.Helper()
		}
	}
}

var (
	mu       sync.RWMutex
	registry []Provider
)

// Register adds providers, in the order --help and messages list them. A
// name given twice panics.
func Register(ps ...Provider) {
	mu.Lock()
	defer mu.Unlock()
	for _, p := range ps {
		for _, q := range registry {
			if q.Name() == p.Name() {
				panic("provider: " + p.Name() + " is registered twice")
			}
		}
		registry = append(registry, p)
	}
}

// providers returns the registered providers.
func providers() []Provider {
	mu.RLock()
	defer mu.RUnlock()
	return registry
}

// Lookup returns the provider of a name.
func Lookup(name string) (Provider, bool) {
	for _, p := range providers() {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// Usage lists the providers' forms, one a line, for --help.
func Usage() string {
	var lines []string
	for _, p := range providers() {
		lines = append(lines, fmt.Sprintf("  %-48s %s", p.Usage(), p.Help()))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Preflight returns the problems that the providers of specs (the --env
// values; none is "local") find on this machine with tasks, each provider
// asked once. Unknown providers are left to Parse.
func Preflight(specs []string, s *task.Suite, tasks []*task.Task) []string {
	if len(specs) == 0 {
		specs = []string{"local"}
	}
	var out []string
	asked := map[string]bool{}
	for _, spec := range specs {
		name, _ := splitSpec(spec)
		p, ok := Lookup(name)
		if !ok || asked[name] {
			continue
		}
		asked[name] = true
		if pf, ok := p.(Preflighter); ok {
			out = append(out, pf.Preflight(s, tasks)...)
		}
	}
	return out
}

// Parse makes the pool's places from the --env values, in order. Names of
// places are unique: a place given twice is refused.
func Parse(ctx context.Context, specs []string, o Options) ([]env.Source, error) {
	if len(specs) == 0 {
		specs = []string{"local"}
	}
	var out []env.Source
	names := map[string]bool{}
	for _, spec := range specs {
		name, arg := splitSpec(spec)
		p, ok := Lookup(name)
		if !ok {
			var known []string
			for _, p := range providers() {
				known = append(known, p.Usage())
			}
			return nil, fmt.Errorf("--env %q: unknown environment provider %q (known: %s)", spec, name, strings.Join(known, ", "))
		}
		srcs, err := p.Sources(ctx, arg, o)
		if err != nil {
			return nil, fmt.Errorf("--env %s: %w", redact(spec), err)
		}
		for _, s := range srcs {
			if names[s.Name] {
				return nil, fmt.Errorf("--env %s: %s is given twice", redact(spec), s.Name)
			}
			names[s.Name] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// Count reads the N of local=N or browser=N: the places side by side, 1
// to 64, or o.Parallel (at least 1) when arg is empty; what says what N
// counts in the error ("desktops").
func Count(name, arg, what string, o Options) (int, error) {
	if arg == "" {
		return max(o.Parallel, 1), nil
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 || n > 64 {
		return 0, fmt.Errorf("%s=%s: give the number of %s, 1 to 64", name, arg, what)
	}
	return n, nil
}

// DialTimeout bounds reaching a remote environment while the pool is
// made: one that takes the connection and never answers must not hold
// the run before it starts.
const DialTimeout = 30 * time.Second

// splitSpec splits an --env value into the provider's name and its
// argument: NAME, NAME=ARG, or the URL form NAME://ARG (vnc://HOST:PORT).
func splitSpec(spec string) (name, arg string) {
	if i := strings.Index(spec, "://"); i > 0 && !strings.Contains(spec[:i], "=") {
		return spec[:i], spec[i+len("://"):]
	}
	name, arg, _ = strings.Cut(spec, "=")
	return name, arg
}

// redact keeps a spec fit for messages: nothing after a user-info part.
func redact(spec string) string {
	if i := strings.Index(spec, "@"); i >= 0 {
		if j := strings.Index(spec, "://"); j >= 0 && j < i {
			return spec[:j+3] + "…" + spec[i:]
		}
	}
	return spec
}
