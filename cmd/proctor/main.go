// Command proctor evaluates computer-use agents on real desktops.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/proctor-eval/proctor/env/provider"

	// The agents and judges that call a model API register themselves.
	_ "github.com/proctor-eval/proctor/agent/anthropic"
	_ "github.com/proctor-eval/proctor/agent/openai"
	_ "github.com/proctor-eval/proctor/judge/judgeapi"
)

// version is the harness's version, recorded with every run: the value
// given at build time with -ldflags "-X main.version=...", else what the
// Go toolchain embedded (see buildVersion).
var version string

func init() {
	if version == "" {
		version = buildVersion(debug.ReadBuildInfo())
	}
}

// buildVersion names a build from the information the Go toolchain
// embeds: the module version ("devel" for a build from a work tree) and
// the VCS revision, marked "-dirty" when the tree had changes.
func buildVersion(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		v += " " + rev[:min(12, len(rev))]
	}
	if dirty && !strings.HasSuffix(v, "+dirty") {
		v += "-dirty"
	}
	return v
}

// exitError carries an exit code without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	provider.RunHelpers() // a desktop's watchdog is this binary, run again
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, the default action comes back, so that a
		// second Ctrl-C or SIGTERM ends the process at once.
		<-ctx.Done()
		stop()
	}()
	cmd := newRootCommand()
	err := cmd.ExecuteContext(ctx)
	var ee exitError
	switch {
	case errors.As(err, &ee):
		os.Exit(ee.code)
	case err != nil:
		fmt.Fprintln(os.Stderr, "proctor:", err)
		os.Exit(1)
	}
}
