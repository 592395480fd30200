package main

import (
	"context"
	"io"
	"os"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/provider"
	_ "github.com/proctor-eval/proctor/env/provider/all" // every environment provider
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/pflag"
)

// envOptions are the flags that choose a run's environments.
type envOptions struct {
	specs           []string
	tokenFile       string
	vncPasswordFile string
	vncGuest        string
	resetCommand    string
	// episodes is how many episodes the run has at most (0: not known).
	episodes int
}

func (o *envOptions) flags(f *pflag.FlagSet) {
	f.StringArrayVar(&o.specs, "env", nil, "`SPEC` of the pool's environments, repeatable (default local):\n"+provider.Usage())
	f.StringVar(&o.tokenFile, "token-file", "", "file holding the guest daemons' bearer token (default $PROCTOR_TOKEN)")
	f.StringVar(&o.vncPasswordFile, "vnc-password-file", "", "file holding the password of the --env vnc:// servers (default $PROCTOR_VNC_PASSWORD)")
	f.StringVar(&o.vncGuest, "vnc-guest", "", "`URL` of a \"proctor guest\" beside the --env vnc:// server, https://HOST:PORT#sha256=FINGERPRINT:\n"+
		"its tree, commands and files are used, its reset runs the setup, and the desktop runs x11 tasks too\n"+
		"(token from --token-file or $PROCTOR_TOKEN; \"proctor guest --local --vnc HOST:PORT\" serves both)")
	f.StringVar(&o.resetCommand, "reset-command", "", "shell `COMMAND` run on this machine to reset an --env vnc:// desktop without --vnc-guest\n"+
		"before each task (without it the operator resets the desktop)")
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
	return provider.Parse(ctx, o.specs, provider.Options{Parallel: parallel, Token: token, Warn: stderr, Episodes: o.episodes,
		Settings: map[string]string{"vnc.password": os.Getenv("PROCTOR_VNC_PASSWORD"), "vnc.password-file": o.vncPasswordFile,
			"vnc.guest": o.vncGuest, "vnc.reset-command": o.resetCommand}})
}

// preflight returns the problems the providers of the pool find on this
// machine with tasks (applications that are not installed), before any
// place is made.
func (o *envOptions) preflight(s *task.Suite, tasks []*task.Task) []string {
	return provider.Preflight(o.specs, s, tasks)
}

// releaseSources gives back what the pool's places hold (pods on a
// cluster) when the command ends.
func releaseSources(sources []env.Source) {
	for _, s := range sources {
		if s.Release != nil {
			s.Release()
		}
	}
}
