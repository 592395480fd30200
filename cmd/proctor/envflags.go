package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/provider"
	"github.com/spf13/pflag"
)

// envOptions are the flags that choose a run's environments.
type envOptions struct {
	specs     []string
	tokenFile string
}

func (o *envOptions) flags(f *pflag.FlagSet) {
	f.StringArrayVar(&o.specs, "env", nil, "`SPEC` of the pool's environments, repeatable (default local):\n"+provider.Usage())
	f.StringVar(&o.tokenFile, "token-file", "", "file holding the guest daemons' bearer token (default $PROCTOR_TOKEN)")
}

// sources makes the pool's places from the flags.
func (o *envOptions) sources(ctx context.Context, parallel int, log io.Writer) ([]env.Source, error) {
	token := os.Getenv("PROCTOR_TOKEN")
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return nil, fmt.Errorf("--token-file: %s is empty", o.tokenFile)
		}
	}
	return provider.Parse(ctx, o.specs, provider.Options{Parallel: parallel, Token: token, Log: log})
}

// hasLocal reports whether the pool has local desktops, whose
// applications the pre-flight looks for on this machine.
func (o *envOptions) hasLocal() bool {
	if len(o.specs) == 0 {
		return true
	}
	for _, s := range o.specs {
		if s == "local" || strings.HasPrefix(s, "local=") {
			return true
		}
	}
	return false
}
