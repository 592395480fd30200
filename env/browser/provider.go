package browser

import (
	"context"
	"fmt"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/provider"
)

// Provider returns the provider of headless browsers: --env browser[=N].
func Provider() provider.Provider { return browserProvider{} }

type browserProvider struct{}

func (browserProvider) Name() string  { return "browser" }
func (browserProvider) Usage() string { return "browser[=N]" }
func (browserProvider) Help() string {
	return "--parallel (or N) headless Chromium browsers over the DevTools protocol, a fresh browser context per episode, for tasks of environment.type: browser"
}

// Sources makes N browsers (o.Parallel without N), started when the pool
// needs them; Chromium must be installed.
func (browserProvider) Sources(_ context.Context, arg string, o provider.Options) ([]env.Source, error) {
	n, err := provider.Count("browser", arg, "browsers", o)
	if err != nil {
		return nil, err
	}
	if _, err := ExecPath(); err != nil {
		return nil, err
	}
	out := make([]env.Source, n)
	for i := range out {
		out[i] = env.Source{Name: fmt.Sprintf("browser %d", i+1), Type: "browser",
			Start: func(ctx context.Context, size action.Size) (env.Env, error) {
				return Start(ctx, Config{Width: size.W, Height: size.H})
			}}
	}
	return out, nil
}
