package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/proctor-eval/proctor/validate"
	"github.com/spf13/cobra"
)

func newValidateCommand() *cobra.Command {
	var parallel int
	var envs envOptions
	var out, filter string
	var asJSON, verbose, judgeOffline bool
	var judges judgeOptions
	c := &cobra.Command{
		Use:   "validate [SUITE]",
		Short: "Prove each task's checks: gold passes, doing nothing and wrong trajectories fail",
		Long: `Validate replays, for every task of the suite, on the pool's desktops (--env;
local desktops by default): the gold
solution, which must succeed; a do-nothing trajectory (DONE at once), which
must not; giving up at once (FAIL) on a feasible task, or answering at once
on an infeasible one, which must not; and every wrong trajectory the task
declares under wrong:, which must not either. It prints a table and exits 1 on any violation, naming the
task and the trajectory. An infrastructure error counts as a violation: it
proves nothing.

After the summary it prints how long the desktops waited for the screen to
settle after each turn, and a warning for every step whose role and name
target matched several showing elements with none preferred (no modal or
active window held just one), so that the first was taken: narrow such a
target with app, window, text or nth.

Judge checks are decided by --judge-model (see proctor run --help), whose
verdicts are kept in the suite's judge-cache/ folder: a later validation
with --judge-offline replays them without a model (CI), as long as the
evidence each check shows is the same byte for byte.`,
		Example: `  proctor validate testdata/runner
  proctor validate testdata/runner --parallel 2 --filter dialog
  proctor validate testdata/runner --token-file token --env guest=https://10.0.0.5:7400#sha256=FINGERPRINT --env guest=https://10.0.0.6:7400#sha256=FINGERPRINT`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			suite := DefaultSuite
			if len(args) == 1 {
				suite = args[0]
			}
			suiteDir, err := suitePath(suite)
			if err != nil {
				return err
			}
			s, ps := task.Load(suiteDir)
			if len(ps) > 0 {
				return fmt.Errorf("the suite has problems (see proctor tasks lint %s):\n%w", suite, ps)
			}
			tasks, err := selectTasks(s.Tasks, filter, "")
			if err != nil {
				return err
			}
			if err := preflight(s, tasks, envs.hasLocal()); err != nil {
				return err
			}
			sources, err := envs.sources(cmd.Context(), parallel, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			dir := out
			if dir == "" {
				dir = filepath.Join(os.TempDir(), "proctor-validate-"+time.Now().Format("20060102-150405"))
			}
			st, err := store.Open(dir)
			if err != nil {
				return err
			}
			defer st.Close()
			st.SetRun(store.Run{ID: filepath.Base(dir), Started: time.Now().UTC(), Harness: version, Suite: suite, Agent: "replay"})
			start := time.Now()
			var lost []string
			jm, err := judges.model(filepath.Join(suiteDir, JudgeCacheDir), judgeOffline)
			if err != nil {
				return err
			}
			rows, err := validate.Run(cmd.Context(), validate.Config{Suite: s, Tasks: tasks, Sources: sources,
				Lost:  func(name, reason string) { lost = append(lost, name+": "+reason) },
				Store: st, Progress: cmd.ErrOrStderr(), Judge: jm})
			if err != nil {
				return err
			}
			for _, l := range lost {
				fmt.Fprintf(cmd.ErrOrStderr(), "lost environment %s\n", l)
			}
			if asJSON {
				b, _ := json.MarshalIndent(rows, "", "  ")
				fmt.Fprintln(cmd.OutOrStdout(), string(b))
			} else if verbose {
				validate.WriteVerbose(cmd.OutOrStdout(), rows)
			} else {
				validate.Write(cmd.OutOrStdout(), rows)
			}
			v := validate.Violations(rows)
			fmt.Fprintf(cmd.ErrOrStderr(), "%d tasks, %d trajectories, %d violations in %s (episodes in %s)\n",
				len(tasks), len(rows), v, time.Since(start).Round(time.Second), dir)
			if cost, err := validate.Settling(st); err == nil {
				fmt.Fprintln(cmd.ErrOrStderr(), cost)
			}
			if amb, err := validate.Ambiguous(st); err == nil {
				for _, a := range amb {
					fmt.Fprintln(cmd.ErrOrStderr(), "warning: ambiguous target:", a)
				}
			}
			if v > 0 {
				return exitError{1}
			}
			return nil
		},
	}
	c.Flags().IntVar(&parallel, "parallel", 1, "local desktops replaying at once")
	envs.flags(c.Flags())
	judges.flags(c.Flags())
	c.Flags().BoolVar(&judgeOffline, "judge-offline", false, "decide judge checks from the verdicts recorded in the suite's judge-cache/ only; ask no model")
	c.Flags().StringVar(&out, "out", "", "folder for the episodes (default a new temporary folder)")
	c.Flags().StringVar(&filter, "filter", "", "validate only tasks whose id matches this regular expression")
	c.Flags().BoolVar(&asJSON, "json", false, "print the rows as JSON")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "print every reason whole (the table cuts them at 90 characters)")
	return c
}
