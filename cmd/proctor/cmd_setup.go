package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/receipt"
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

func newSetupCommand() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "setup SUITE",
		Short: "Install and prepare the applications a suite's tasks run on",
		Long: `Setup installs and prepares what a suite declares under setup in its
suite.yaml: the Debian packages (with apt-get, those not installed yet;
with them those of the applications its tasks use, built-in or declared
under apps, and of the desktop sessions, xfce or gnome, that the suite or
its tasks name), then its script (run with bash from the suite's folder, as root), which
prepares the applications' pristine data under the suite's data folder,
$PROCTOR_DATA/NAME (/var/lib/proctor/NAME by default; the script finds it
in PROCTOR_SUITE_DATA). A suite's command services start from that data.

Each phase prints its time; the end prints the data folder's size. Running
it again is cheap where the script skips work already done.`,
		Example: `  proctor setup testdata/example --dry-run`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSetup(cmd.Context(), args[0], dryRun, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be done, and do nothing")
	return c
}

func runSetup(ctx context.Context, suite string, dryRun bool, stdout, stderr io.Writer) error {
	dir, err := suitePath(suite)
	if err != nil {
		return err
	}
	// Only suite.yaml's problems stop the set-up: its tasks may be
	// written while the applications are installed.
	s, ps := task.Load(dir)
	var own task.Problems
	for _, p := range ps {
		if filepath.Base(p.File) == task.SuiteFile {
			own = append(own, p)
		}
	}
	if s == nil {
		return ps
	}
	if len(own) > 0 {
		return fmt.Errorf("%s has problems:\n%w", filepath.Join(suite, task.SuiteFile), own)
	}
	packages := sessionPackages(s)
	apps := receipt.AppPackages(s, s.Tasks)
	if s.Setup == nil && len(packages) == 0 && len(apps) == 0 {
		fmt.Fprintf(stderr, "%s declares no setup in %s: nothing to do\n", suite, task.SuiteFile)
		return nil
	}
	if s.Setup == nil {
		s.Setup = &task.Setup{}
	}
	packages = append(slices.Clone(s.Setup.Packages), packages...)
	for _, p := range apps {
		if !slices.Contains(packages, p) {
			packages = append(packages, p)
		}
	}
	data := s.DataDir()
	start := time.Now()
	var missing []string
	for _, p := range packages {
		if !installed(ctx, p) {
			missing = append(missing, p)
		}
	}
	switch {
	case len(missing) == 0 && len(packages) > 0:
		fmt.Fprintf(stderr, "packages: all %d installed\n", len(packages))
	case len(missing) > 0 && dryRun:
		fmt.Fprintf(stdout, "apt-get install -y --no-install-recommends %s\n", strings.Join(missing, " "))
	case len(missing) > 0:
		fmt.Fprintf(stderr, "packages: installing %s\n", strings.Join(missing, " "))
		t := time.Now()
		if err := aptGet(ctx, stderr, "update", "-qq"); err != nil {
			return err
		}
		if err := aptGet(ctx, stderr, append([]string{"install", "-y", "-qq", "--no-install-recommends"}, missing...)...); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "packages: %d installed in %s\n", len(missing), time.Since(t).Round(100*time.Millisecond))
	}
	if s.Setup.Script != "" {
		dir, err := filepath.Abs(s.Dir)
		if err != nil {
			return err
		}
		script := filepath.Join(dir, s.Setup.Script)
		if dryRun {
			fmt.Fprintf(stdout, "PROCTOR_SUITE_DATA=%s bash %s\n", data, script)
			return nil
		}
		if err := os.MkdirAll(data, 0o755); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "script: %s\n", s.Setup.Script)
		t := time.Now()
		cmd := exec.CommandContext(ctx, "bash", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PROCTOR_SUITE_DATA="+data, "PROCTOR_SUITE="+dir, "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w", s.Setup.Script, err)
		}
		fmt.Fprintf(stderr, "script: done in %s\n", time.Since(t).Round(100*time.Millisecond))
	}
	if dryRun {
		return nil
	}
	if s.Setup.Script == "" {
		fmt.Fprintf(stderr, "%s set up in %s\n", s.Name, time.Since(start).Round(100*time.Millisecond))
		return nil
	}
	size, _ := dirSize(data)
	fmt.Fprintf(stderr, "%s set up in %s; its data folder %s holds %.1f MiB\n", s.Name, time.Since(start).Round(100*time.Millisecond), data, float64(size)/(1<<20))
	return nil
}

// sessionPackages lists the Debian packages of the desktop sessions the
// suite or its tasks name (task.SessionPackages), those the suite itself
// declares left out.
func sessionPackages(s *task.Suite) []string {
	var out []string
	add := func(name string) {
		for _, p := range task.SessionPackages[name] {
			if !slices.Contains(out, p) && (s.Setup == nil || !slices.Contains(s.Setup.Packages, p)) {
				out = append(out, p)
			}
		}
	}
	add(s.Session)
	for _, t := range s.Tasks {
		if t.Environment.TypeOrDefault() == "x11" {
			add(s.SessionOf(t))
		}
	}
	return out
}

// installed reports whether the Debian package is installed.
func installed(ctx context.Context, pkg string) bool {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f", "${Status}", pkg).Output()
	return err == nil && strings.HasSuffix(strings.TrimSpace(string(out)), " installed")
}

// aptGet runs apt-get without questions, its errors on stderr.
func aptGet(ctx context.Context, stderr io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "apt-get", args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("apt-get %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// dirSize sums the sizes of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, err
}
