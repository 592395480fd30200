package mem

import (
	"context"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/provider"
)

// Provider returns the provider of in-memory desktops: --env
// mem[=N|=WxH|=N:WxH]. Their places serve the tasks of x11 desktops that
// need no shell (launch, write and copy steps, file and element checks):
// a run needs neither Xvfb nor an application, which makes it the
// environment of examples and of tests of the runner.
func Provider() provider.Provider { return memProvider{} }

type memProvider struct{}

func (memProvider) Name() string  { return Kind }
func (memProvider) Usage() string { return "mem[=N|=WxH|=N:WxH]" }
func (memProvider) Help() string {
	return "--parallel (or N) in-memory desktops (windows of widgets, files, a clipboard; no shell), for x11 tasks that need no commands: examples and tests without a desktop"
}

// Sources makes the places: in-memory desktops that serve x11 tasks too.
func (memProvider) Sources(_ context.Context, arg string, o provider.Options) ([]env.Source, error) {
	srcs, err := Sources(arg, o.Parallel)
	if err != nil {
		return nil, err
	}
	for i := range srcs {
		srcs[i].Also = append(srcs[i].Also, "x11")
	}
	return srcs, nil
}
