package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	receiptpkg "github.com/proctor-eval/proctor/receipt"
	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/score"
	"github.com/proctor-eval/proctor/store"
	"github.com/spf13/cobra"
)

func newReportCommand() *cobra.Command {
	var format, suite string
	var ccscore, canonicalKeys, compare, receipt bool
	so := report.StatOptions{K: report.DefaultK}
	c := &cobra.Command{
		Use:   "report RUN [RUN...]",
		Short: "Report the scores of one or more runs, side by side",
		Long: `Report reads run folders and prints the success rate, the level-weighted
score, the milestone average, the share of each outcome (failure,
uncompleted, early_stopped, error), time, steps, tokens and cost per
episode, the mean and standard deviation over repeats, and breakdowns by
level, app, domain, kind, difficulty and interface (gui, gui+cli, cli; shown
where the results name it). Several runs are shown side by side. A run of
several domains also gets ScienceBoard's table: the success of each level,
kind, difficulty and interface in each domain (a column each) and overall.
A run whose tasks have milestones gets a table per template (per set of
milestones): a row per task, a column per milestone (reached or not, or
how many of a task's episodes reached it), and the share of the episodes
that reached each. A run whose tasks name a persona gets SCUBA's metrics
per persona.
A run whose episodes recorded state diffs (tasks with changes:) counts
collateral damage beside success: the successes with side effects (a
change outside what the task allows) apart, "succeeded with side effects
2 of 6 (33.3%)", the success rate without them, the episodes of any
outcome with side effects, the successes with side effects in every
breakdown, and each such episode with its violations.
Infrastructure errors are never the agent's failure: they are counted
beside the rates ("errors (left out)", "+N errors") and left
out of every rate and mean; a run that decided nothing shows n/a.

Each run's success rate, weighted score and milestone average come with
a confidence interval (--confidence, 95 % by default): a percentile
bootstrap (--resamples) over the tasks, the instances of one template
resampled together, reproducible with --seed; for the run, per level and
per app. A run with repeats (proctor run --repeat N) also lists each task's
successes c of n decided tries with pass@k (the chance that at least one of
k tries succeeds, the unbiased estimate 1 − C(n−c,k)/C(n,k)) and pass^k
(all k succeed, C(c,k)/C(n,k)) for each k of --k (n/a where k exceeds n),
the run's flip rate (the share of tasks with mixed outcomes) and its flaky
tasks.

With --compare and two runs A B over the same tasks, the report is their
paired comparison instead: the difference B − A of the success rate,
weighted score and milestone average with a paired bootstrap interval, the
tasks B won and lost (a task's share of successes over its repeats), McNemar's
exact test on them, and the result in a sentence ("B is better than A by
6.2 points (95% CI 1.8 to 10.5; 14 tasks won, 5 lost; p = 0.03)").

A run judged again with proctor rescore also shows the episodes whose
outcome flipped ("Re-judged: N flipped"); the figures above stay the
run's own.

With --ccscore, each episode's performed actions are compared with its
task's gold solution (ScreenAgent's CC-Score) and the mean CC-Score with
its sub-metrics is shown per run (per task too in JSON). The gold solutions
come from the suite each run was made with, or --suite.

With --receipt, the report is each run's receipt instead: the harness
version, the suite with each task's file and content hashes and those of
the assets it uses, the Debian package versions of the apps, Xvfb and
Chromium, the environments of the pool and as they started (kind, screen,
versions), the agent, its model, parameters and prompt template hash, the
judge and its prompt hash, the seeds, the machine (cores, memory), and when
the run started and ended (JSON with --format json). proctor verify says
whether they still match.`,
		Example: `  proctor report runs/20261122-010000-replay
  proctor report runs/a runs/b --format markdown
  proctor report runs/a --k 1,2,5 --seed 7 --confidence 0.9
  proctor report --compare runs/a runs/b
  proctor report runs/a --format json
  proctor report --receipt runs/a
  proctor report runs/a --ccscore --suite testdata/example`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if compare && len(args) != 2 {
				return fmt.Errorf("--compare takes two runs, A and B (got %d)", len(args))
			}
			for _, k := range so.K {
				if k < 1 {
					return fmt.Errorf("--k %d: each k is 1 or more", k)
				}
			}
			if so.Confidence <= 0 || so.Confidence >= 1 {
				return fmt.Errorf("--confidence %g: give a share between 0 and 1, such as 0.95", so.Confidence)
			}
			if so.Resamples < 100 {
				return fmt.Errorf("--resamples %d: give 100 or more (2000 by default)", so.Resamples)
			}
			if receipt {
				return writeReceipts(cmd.OutOrStdout(), args, format)
			}
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
				r.Analyse(so)
				rs = append(rs, r)
			}
			if compare {
				return report.WriteComparison(cmd.OutOrStdout(), report.Compare(rs[0], rs[1], so), format)
			}
			return report.Write(cmd.OutOrStdout(), rs, format)
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text, markdown or json")
	c.Flags().BoolVar(&ccscore, "ccscore", false, "score the performed actions against the tasks' gold solutions (CC-Score)")
	c.Flags().BoolVar(&canonicalKeys, "ccscore-canonical-keys", false, "with --ccscore: compare keys by Proctor's names (ctrl+c) instead of ScreenAgent's keysym spellings (Control_L+c)")
	c.Flags().IntSliceVar(&so.K, "k", report.DefaultK, "the k of pass@k and pass^k over repeats, comma-separated")
	c.Flags().Uint64Var(&so.Seed, "seed", report.DefaultSeed, "the bootstrap's seed: the same seed gives the same intervals")
	c.Flags().Float64Var(&so.Confidence, "confidence", report.DefaultConfidence, "the confidence of the intervals")
	c.Flags().IntVar(&so.Resamples, "resamples", report.DefaultResamples, "the bootstrap's resamples")
	c.Flags().BoolVar(&compare, "compare", false, "with two runs A B over the same tasks: their paired comparison (difference with its interval, tasks won and lost, McNemar's test)")
	c.Flags().BoolVar(&receipt, "receipt", false, "print each run's receipt: what exactly was run (see proctor verify)")
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

// writeReceipts writes the receipts of the runs in dirs, as text or JSON.
func writeReceipts(w io.Writer, dirs []string, format string) error {
	var all []store.Receipt
	for i, dir := range dirs {
		st, err := store.OpenRun(dir)
		if err != nil {
			return err
		}
		r, err := st.Receipt()
		st.Close()
		if err != nil {
			return fmt.Errorf("%w (runs made before receipts were kept have none)", err)
		}
		if format == "json" {
			all = append(all, r)
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := receiptpkg.Write(w, filepath.Base(filepath.Clean(dir)), r); err != nil {
			return err
		}
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if len(all) == 1 {
			return enc.Encode(all[0])
		}
		return enc.Encode(all)
	}
	return nil
}
