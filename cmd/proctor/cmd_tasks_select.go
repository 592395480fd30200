package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/store"
	"github.com/spf13/cobra"
)

func newTasksSelectCommand() *cobra.Command {
	var stable, discriminating bool
	var out string
	c := &cobra.Command{
		Use:   "select --stable|--discriminating RUN...",
		Short: "Cut a suite to the tasks that are stable and tell agents apart, from runs",
		Long: `Select reads runs of several agents (or repeats of one, proctor run
--repeat N) over the same suite and keeps the tasks that:

  --stable          never flipped within a run: every decided repeat of a
                    run had the same outcome;
  --discriminating  the runs scored differently: some run's share of
                    successes on the task differs from another's (needs two
                    runs or more).

Both together keep the tasks that are both: each run consistent, the runs
apart. Infrastructure errors are left out; a task that some run did not
decide (not run, or only errors) is left out of the cut and counted.

The result is a filter file, written to --out or printed: a comment saying
how it was made, then one task id a line. proctor run --filter @FILE runs
those tasks only. A line on stderr says how many were kept and why the
others were not.`,
		Example: `  proctor tasks select --stable runs/a
  proctor tasks select --stable --discriminating runs/a runs/b runs/c --out hard.filter
  proctor run suites/desktop --agent replay --filter @hard.filter`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !stable && !discriminating {
				return errors.New("say which tasks to keep: --stable, --discriminating, or both")
			}
			if discriminating && len(args) < 2 {
				return errors.New("--discriminating compares runs: give two runs or more")
			}
			var runs [][]store.Result
			for _, dir := range args {
				st, err := store.OpenRun(dir)
				if err != nil {
					return err
				}
				rs, err := st.Results()
				st.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", dir, err)
				}
				runs = append(runs, rs)
			}
			sel := report.SelectTasks(args, runs, stable, discriminating)
			var b bytes.Buffer
			if err := sel.WriteFilter(&b); err != nil {
				return err
			}
			if out == "" {
				if _, err := cmd.OutOrStdout().Write(b.Bytes()); err != nil {
					return err
				}
			} else if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
				return err
			}
			fmt.Fprintln(cmd.ErrOrStderr(), sel.Summary())
			if len(sel.Kept) == 0 {
				return errors.New("no task kept: the filter file selects nothing")
			}
			if out != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "run them with: proctor run SUITE --filter @%s\n", out)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&stable, "stable", false, "keep the tasks that never flipped within a run")
	c.Flags().BoolVar(&discriminating, "discriminating", false, "keep the tasks the runs scored differently")
	c.Flags().StringVar(&out, "out", "", "write the filter file here (default: standard output)")
	return c
}

// filterPattern is what --filter selects by: the regular expression
// given, or for @FILE the task ids that FILE lists, one a line (blank
// lines and lines beginning with # aside), as an expression matching
// exactly them. A run records the expression, so that the file is no
// longer needed once it started.
func filterPattern(filter string) (string, error) {
	name, ok := strings.CutPrefix(filter, "@")
	if !ok {
		return filter, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("--filter %s: %w", filter, err)
	}
	var ids []string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t") {
			return "", fmt.Errorf("--filter %s: %q is not a task id (one id a line)", filter, line)
		}
		ids = append(ids, regexp.QuoteMeta(line))
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("--filter %s: the file lists no task id", filter)
	}
	return "^(?:" + strings.Join(ids, "|") + ")$", nil
}
