package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/store"
	"github.com/spf13/cobra"
)

func newReportCommand() *cobra.Command {
	var format, suite string
	var ccscore, canonicalKeys bool
	c := &cobra.Command{
		Use:   "report RUN [RUN...]",
		Short: "Report the scores of one or more runs, side by side",
		Long: `Report reads run folders and prints the success rate, the level-weighted
score, the milestone average, the share of each outcome (failure,
uncompleted, early_stopped, error), time, steps, tokens and cost per
episode, the mean and standard deviation over repeats, and breakdowns by
level, app, domain, kind and difficulty. Several runs are shown side by side.
Infrastructure errors are never the agent's failure: they are counted
beside the rates ("errors (left out)", "+N errors") and left
out of every rate and mean; a run that decided nothing shows n/a.

A run judged again with proctor rescore also shows the episodes whose
outcome flipped ("Re-judged: N flipped"); the figures above stay the
run's own.

With --ccscore, each episode's performed actions are compared with its
task's gold solution (ScreenAgent's CC-Score) and the mean CC-Score with
its sub-metrics is shown per run (per task too in JSON). The gold solutions
come from the suite each run was made with, or --suite.`,
		Example: `  proctor report runs/20261122-010000-replay
  proctor report runs/a runs/b --format markdown
  proctor report runs/a --format json
  proctor report runs/a --ccscore --suite testdata/example`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rs []*report.Report
			for _, dir := range args {
				r, err := report.Load(dir)
				if err != nil {
					return fmt.Errorf("%s: %w", dir, err)
				}
				if ccscore {
					if r.CC, err = ccScores(dir, suite, score.CCOptions{CanonicalKeys: canonicalKeys}); err != nil {
						return err
					}
				}
				rs = append(rs, r)
			}
			return report.Write(cmd.OutOrStdout(), rs, format)
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text, markdown or json")
	c.Flags().BoolVar(&ccscore, "ccscore", false, "score the performed actions against the tasks' gold solutions (CC-Score)")
	c.Flags().BoolVar(&canonicalKeys, "ccscore-canonical-keys", false, "with --ccscore: compare keys by Proctor's names (ctrl+c) instead of ScreenAgent's keysym spellings (Control_L+c)")
	c.Flags().StringVar(&suite, "suite", "", "with --ccscore: the suite with the gold solutions (default: the one each run was made with)")
	return c
}

// ccScores computes a run's CC-Score with the gold solutions of its suite.
func ccScores(dir, suite string, o score.CCOptions) (*report.CC, error) {
	if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err != nil {
		return nil, fmt.Errorf("%s: no run there (%v)", dir, err)
	}
	st, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	s, _, err := runSuite(st, suite)
	st.Close()
	if err != nil {
		return nil, err
	}
	return report.CCScores(dir, s, o)
}
