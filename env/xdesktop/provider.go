package xdesktop

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/provider"
	"github.com/proctor-eval/proctor/task"
)

// Provider returns the provider of local desktops: --env local[=N].
func Provider() provider.Provider { return localProvider{} }

type localProvider struct{}

func (localProvider) Name() string  { return "local" }
func (localProvider) Usage() string { return "local" }
func (localProvider) Help() string {
	return "--parallel local X11 desktops, each started at the size its task asks for (the default); they run browser tasks in Chromium, seen as pixels"
}

// Sources makes N desktops (o.Parallel without N), started when the pool
// needs them.
func (localProvider) Sources(_ context.Context, arg string, o provider.Options) ([]env.Source, error) {
	n, err := provider.Count("local", arg, "desktops", o)
	if err != nil {
		return nil, err
	}
	out := make([]env.Source, n)
	for i := range out {
		out[i] = env.Source{Name: fmt.Sprintf("local %d", i+1), Type: "x11",
			// A browser task runs in Chromium on the desktop, seen as pixels.
			Also: []string{"browser"},
			Start: func(ctx context.Context, size action.Size) (env.Env, error) {
				return Start(ctx, Config{Width: size.W, Height: size.H})
			}}
	}
	return out, nil
}

// Preflight looks on this machine for the applications that the setups of
// the desktop tasks launch or open.
func (localProvider) Preflight(s *task.Suite, tasks []*task.Task) []string {
	missing := map[string]string{}
	for _, t := range tasks {
		if t.Environment.TypeOrDefault() != "x11" {
			continue
		}
		var apps []string
		for _, sec := range t.Sections() {
			for _, st := range sec.Steps {
				if st.Launch != nil {
					apps = append(apps, st.Launch.App)
				}
				if st.Open != nil && st.Open.App != "" {
					apps = append(apps, st.Open.App)
				}
			}
		}
		for _, a := range apps {
			spec, ok := s.App(a)
			if !ok {
				continue // lint reports it
			}
			bin := strings.Fields(spec.Command)[0]
			if _, err := LookPath(bin); err != nil {
				missing[bin] = spec.Package
			}
		}
	}
	var problems []string
	for bin, pkg := range missing {
		problems = append(problems, fmt.Sprintf("%s is not installed (apt-get install %s)", bin, pkg))
	}
	sort.Strings(problems)
	return problems
}

// Helper makes this process a desktop's watchdog when it was started as
// one (Watchdog).
func (localProvider) Helper() { Watchdog() }

var (
	_ provider.Preflighter = localProvider{}
	_ provider.Helper      = localProvider{}
)

// Watch says how a person watches the desktop and acts on it.
func (d *Desktop) Watch() string {
	return fmt.Sprintf("the desktop is display %s: view it with `x11vnc -display %s -auth %s -localhost -forever` and a VNC viewer on 127.0.0.1:5900",
		d.Display(), d.Display(), d.XAuthority())
}

var _ provider.Watchable = (*Desktop)(nil)
