package main

import (
	"fmt"

	"github.com/proctor-eval/proctor/report"
	"github.com/spf13/cobra"
)

func newReportCommand() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "report RUN [RUN...]",
		Short: "Report the scores of one or more runs, side by side",
		Long: `Report reads run folders and prints the success rate, the level-weighted
score, the milestone average, the share of each outcome (failure,
uncompleted, early_stopped, error), time, steps, tokens and cost per
episode, the mean and standard deviation over repeats, and breakdowns by
level, app, domain, kind and difficulty. Several runs are shown side by side.`,
		Example: `  proctor report runs/20261122-010000-replay
  proctor report runs/a runs/b --format markdown
  proctor report runs/a --format json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rs []*report.Report
			for _, dir := range args {
				r, err := report.Load(dir)
				if err != nil {
					return fmt.Errorf("%s: %w", dir, err)
				}
				rs = append(rs, r)
			}
			return report.Write(cmd.OutOrStdout(), rs, format)
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text, markdown or json")
	return c
}
