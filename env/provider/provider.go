// Package provider turns the --env values of a run into the places of its
// pool. A provider makes environments of one kind: local X11 desktops,
// desktops served by guest daemons on other machines, and later browsers,
// VNC desktops and Android devices. Every provider is registered in this
// package's one table (builtin.go); the commands only parse flags.
package provider

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/proctor-eval/proctor/env"
)

// Options are what the command line gives every provider.
type Options struct {
	Parallel     int       // local: desktops side by side
	Token        string    // guest: the daemons' bearer token
	HomeTemplate string    // local: a folder copied into the home at every reset
	Log          io.Writer // the environments' own output; nil: none
	VNCPassword  string    // vnc: the VNC server's password; empty: none
	VNCGuest     string    // vnc: a guest daemon beside the VNC server, https://HOST:PORT#sha256=FINGERPRINT
	ResetCommand string    // vnc without a guest: a shell command, run here, that resets the desktop
}

// Provider makes the places of a pool from one --env value.
type Provider struct {
	Name  string // the value's name: local, guest, vnc
	Usage string // local, guest=https://HOST:PORT#sha256=FINGERPRINT, vnc://HOST:PORT
	Help  string // one line
	// Sources makes the places for arg (what follows "NAME=" or
	// "NAME://", or ""). It
	// may reach the environment to learn what it is (a remote daemon's
	// screen size), so that a wrong address, token or version is refused
	// before any task is scored.
	Sources func(ctx context.Context, arg string, o Options) ([]env.Source, error)
}

// Lookup returns the provider of a name.
func Lookup(name string) (Provider, bool) {
	for _, p := range builtin {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Usage lists the providers' forms, one a line, for --help.
func Usage() string {
	var lines []string
	for _, p := range builtin {
		lines = append(lines, fmt.Sprintf("  %-48s %s", p.Usage, p.Help))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
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
			for _, p := range builtin {
				known = append(known, p.Usage)
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
