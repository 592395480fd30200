package main

import (
	"context"
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

// sources makes the pool's places from the flags; warnings go to stderr.
func (o *envOptions) sources(ctx context.Context, parallel int, stderr io.Writer) ([]env.Source, error) {
	token := os.Getenv("PROCTOR_TOKEN")
	if o.tokenFile != "" {
		var err error
		if token, err = readTokenFile(o.tokenFile, stderr); err != nil {
			return nil, err
		}
	}
	return provider.Parse(ctx, o.specs, provider.Options{Parallel: parallel, Token: token})
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
