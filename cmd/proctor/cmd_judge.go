package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/rescore"
	"github.com/proctor-eval/proctor/store"
	"github.com/spf13/cobra"
)

func newJudgeCommand() *cobra.Command {
	var (
		o       judgeOptions
		suite   string
		prices  string
		offline bool
		format  string
		// tolerance is --judge-controls-tolerance.
		tolerance int
	)
	c := &cobra.Command{
		Use:   "judge RUN [--judge-model [PROVIDER:]MODEL ...]",
		Short: "Decide a finished run's judge checks again, with another judge",
		Long: `Judge has the judge checks of every episode of a finished run decided again,
without a desktop, from what the run kept: the agent's answer and actions,
the element under each click, the command outputs the checks read, each
step's screenshot and the screen after the last action.

The judge is --judge-model (repeat it for a panel that votes), or the run's
own judge when none is given (--prices and --judge-timeout still apply to
it). Its verdicts are kept in the run folder beside the run's own verdicts
and every other judge's: nothing is replaced but the same judge's earlier
verdicts. A judge is known by its name (provider:model, a panel's joined by
"+"), so judging with the run's own judge, or the same models, replaces the
verdicts the run recorded (their source becomes "judge"): that is how the
episodes it left undecided get decided. To keep the run's verdicts, judge
with another model. Verdicts are cached in RUN/` + JudgeCacheDir + ` by the
evidence, the prompt and the model, so judging a run again with the same
judge asks no model and costs nothing; --offline answers from that cache
only.

Episodes whose judge gave no verdict during the run (down, timed out) are
recorded as infrastructure errors with their evidence kept, the agent not
run again: judge decides them like the others, and names them in its totals.
Other error episodes, without evidence, are left alone.

Before judging, the judge is asked on the suite's judge controls, when it
has some (SUITE/` + rescore.ControlsDir + `/, written by proctor validate
--record-verdicts): judge checks of the suite's validation whose verdict is
known. A judge that gets more than --judge-controls-tolerance (default 0)
wrong judges nothing, and the controls it got wrong are named; its answers
are kept in the run folder either way, and proctor report shows them.
--offline asks no controls.

It prints a line per episode, the totals (how many judge checks were
decided by asking the model and how many came from the cache, and the
judge's tokens and cost, apart from the agent's) and how far each judge
agrees with the people who reviewed the episodes (proctor view) and with
the tasks' rule-based checks: agreement, Cohen's kappa, the confusion
matrix by evidence kind, and the episodes they disagree on. proctor report
shows the same. A judge that gives no verdict (down, timed out, a reply
that stays malformed, a refusal) leaves the episode undecided, never
failed, and judge exits 1.`,
		Example: `  proctor judge runs/20261122-010000-openai --judge-model gpt-5
  proctor judge runs/20261122-010000-openai --judge-model anthropic:claude-sonnet-4-5 --judge-model gpt-5 --judge-model gpt-5-mini
  proctor judge runs/20261122-010000-openai --judge-model qwen2.5-vl --judge-base-url http://127.0.0.1:8000/v1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err != nil {
				return fmt.Errorf("%s: no run there (%v)", dir, err)
			}
			if format != "text" && format != "markdown" && format != "json" {
				return fmt.Errorf("--report: unknown format %q (text, markdown, json)", format)
			}
			st, err := store.Open(dir)
			if err != nil {
				return err
			}
			defer st.Close()
			if !o.set() {
				rc, err := recordedConfig(st)
				if err != nil {
					return err
				}
				if rc.Judge == nil || !rc.Judge.set() {
					return fmt.Errorf("%s: the run had no judge: give --judge-model", dir)
				}
				timeout := o.Timeout
				o = *rc.Judge
				if cmd.Flags().Changed("judge-timeout") {
					o.Timeout = timeout
				}
				if prices != "" {
					o.Prices = prices // the run's judge, priced as asked
				}
			} else {
				o.Prices = prices
			}
			jm, err := o.model(runJudgeCache(dir), offline)
			if err != nil {
				return err
			}
			s, path, err := runSuite(st, suite)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			if !offline {
				controls, err := askControls(cmd.Context(), jm, s.Dir, tolerance, stderr)
				if controls != nil {
					if serr := st.SaveJudgeControls(jm.Name(), controls); serr != nil {
						return serr
					}
				}
				if err != nil {
					return fmt.Errorf("%w; nothing judged", err)
				}
			}
			fmt.Fprintf(stderr, "judging %s with %s, the judge checks of %s\n", dir, jm.Name(), path)
			sum, err := rescore.Judge(cmd.Context(), st, s, jm, 0, stderr)
			if err != nil {
				return err
			}
			r, err := report.Load(dir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if format == "json" {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					Summary *rescore.JudgeSummary `json:"summary"`
					Judges  []report.Trust        `json:"judges"`
				}{sum, r.Judges}); err != nil {
					return err
				}
			} else {
				sum.Write(out)
				report.WriteJudges(out, []*report.Report{r}, format == "markdown")
			}
			if sum.Episodes == 0 {
				fmt.Fprintln(stderr, "no episode of the run has judge checks (or evidence to judge)")
			}
			if sum.Undecided > 0 {
				fmt.Fprintf(stderr, "%s undecided: run proctor judge again to retry them (decided verdicts come from the cache)\n", plural(sum.Undecided, "episode"))
				return exitError{1}
			}
			return nil
		},
	}
	f := c.Flags()
	o.flags(f)
	f.StringVar(&prices, "prices", "", `JSON price file {"model": {"input": 3, "output": 15}} of the judges' models, the run's own judge's too (default: built-in list prices, or the run's price file for its own judge)`)
	f.BoolVar(&offline, "offline", false, "answer from the run's cache of verdicts only; ask no model (a miss leaves the episode undecided)")
	f.StringVar(&suite, "suite", "", "the suite to take the judge checks from (default: the one the run was made with)")
	f.StringVar(&format, "report", "text", "output: text, markdown or json")
	controlsToleranceFlag(f, &tolerance)
	return c
}

// recordedConfig reads the configuration a run recorded.
func recordedConfig(st *store.Store) (runConfig, error) {
	var rc runConfig
	info, err := st.Run()
	if err != nil {
		return rc, err
	}
	if len(info.Config) > 0 {
		if err := json.Unmarshal(info.Config, &rc); err != nil {
			return rc, fmt.Errorf("%s: unreadable configuration: %v", st.Dir, err)
		}
	}
	return rc, nil
}

// runJudge is the run's own judge answering from the run's cache only,
// which rescore uses: nil when the run had none.
func runJudge(st *store.Store) (judgment.Model, error) {
	rc, err := recordedConfig(st)
	if err != nil || rc.Judge == nil || !rc.Judge.set() {
		return nil, err
	}
	return rc.Judge.model(runJudgeCache(st.Dir), true)
}
