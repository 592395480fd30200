package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/judge"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/rescore"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/proctor-eval/proctor/validate"
	"github.com/spf13/cobra"
)

func newValidateCommand() *cobra.Command {
	var parallel int
	var envs envOptions
	var out, filter, suiteFlag string
	var asJSON, verbose, judgeOffline, recordVerdicts bool
	var judges judgeOptions
	c := &cobra.Command{
		Use:   "validate [SUITE]",
		Short: "Prove each task's checks: gold passes, doing nothing and wrong trajectories fail",
		Long: `Validate replays, for every task of the suite (the argument, or --suite),
on the pool's environments (--env; local desktops by default): the gold
solution, which must succeed; a do-nothing trajectory (DONE at once), which
must not; giving up at once (FAIL) on a feasible task, or answering at once
on an infeasible one, which must not; and every wrong trajectory the task
declares under wrong:, which must not either. A task without a gold solution
(an imported task that says why in unproven) is proven only to fail on the
start state and its wrong trajectories, and is listed apart as unproven.
It prints a table and exits 1 on any violation, naming the
task and the trajectory. An infrastructure error counts as a violation: it
proves nothing.

After the summary it prints how long the desktops waited for the screen to
settle after each turn, and a warning for every step whose role and name
target matched several showing elements with none preferred (no modal or
active window held just one), so that the first was taken: narrow such a
target with app, window, text or nth.

Judge checks are decided by --judge-model (see proctor run --help), whose
verdicts are kept in the suite's judge-cache/ folder: a later validation
with --judge-offline replays them without a model, as long as the
evidence each check shows is the same byte for byte.

For CI, which has no model and whose screenshots differ from the ones the
judge saw, --record-verdicts (with --judge-model) also writes every judge
check's verdict to SUITE/` + rescore.VerdictsFile + `, keyed by task, trajectory
and check name (commit it with the suite). --judge-offline then decides a
check from the judge cache where the evidence is the same, else from that
file, and asks no model; --judge-model may be left out, the file naming
its judge. The totals say how many verdicts were asked of the judge, came
from the cache, and came from the recorded file; a check with none is an
infrastructure error, so a violation. Recording again after a --filter
keeps the other tasks' verdicts.

--record-verdicts also writes the suite's judge controls, SUITE/` + rescore.ControlsDir + `/:
for each evidence kind, up to ` + fmt.Sprint(rescore.ControlsPerKind) + ` judge checks of gold trajectories that
passed and up to ` + fmt.Sprint(rescore.ControlsPerKind) + ` of wrong trajectories that failed (their episodes
ending as they should), each with the evidence the judge was shown (texts
in ` + rescore.ControlsFile + `, images beside it). proctor run and proctor judge ask their
judge on every control before judging anything, and stop when it gets more
than --judge-controls-tolerance wrong.`,
		Example: `  proctor validate testdata/runner
  proctor validate testdata/runner --parallel 2 --filter dialog
  proctor validate testdata/judged --judge-model gpt-5 --record-verdicts
  proctor validate testdata/judged --judge-offline
  proctor validate testdata/runner --token-file token --env guest=https://10.0.0.5:7400#sha256=FINGERPRINT --env guest=https://10.0.0.6:7400#sha256=FINGERPRINT`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			suite, err := suiteArg(cmd, args, suiteFlag)
			if err != nil {
				return err
			}
			suiteDir, err := suitePath(suite)
			if err != nil {
				return err
			}
			s, ps := task.Load(suiteDir)
			if len(ps) > 0 {
				return fmt.Errorf("the suite has problems (see proctor tasks lint %s):\n%w", suite, ps)
			}
			tasks, err := selectTasks(s.Tasks, filter, "", describeSuite(suite, suiteDir))
			if err != nil {
				return err
			}
			if err := preflight(s, tasks, &envs); err != nil {
				return err
			}
			sources, err := envs.sources(cmd.Context(), parallel, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer releaseSources(sources)
			dir := out
			if dir == "" {
				// A temporary folder is removed at the end unless it
				// holds what a violation or an error needs to be read.
				if dir, err = os.MkdirTemp("", "proctor-validate-"+time.Now().Format("20060102-150405")+"-"); err != nil {
					return err
				}
			}
			st, err := store.Open(dir)
			if err != nil {
				return err
			}
			defer func() {
				rs, rerr := st.Results()
				st.Close()
				if out != "" {
					return
				}
				// A temporary folder is kept when it holds episodes and the
				// validation failed (violations, whose summary names it, or
				// an error); else it goes, and nothing reads it afterwards.
				if err != nil && rerr == nil && len(rs) > 0 {
					if !errors.As(err, new(exitError)) {
						fmt.Fprintf(cmd.ErrOrStderr(), "the episodes are kept in %s\n", dir)
					}
					return
				}
				os.RemoveAll(dir)
			}()
			st.SetRun(store.Run{ID: filepath.Base(dir), Started: time.Now().UTC(), Harness: version, Suite: suite, Agent: "replay", Resolution: resolution(tasks), Kind: store.RunValidation})
			start := time.Now()
			var lost []string
			verdictsPath := filepath.Join(suiteDir, rescore.VerdictsFile)
			var recorded *rescore.Verdicts
			switch {
			case recordVerdicts && (judgeOffline || !judges.set()):
				return fmt.Errorf("--record-verdicts needs a judge to ask: give --judge-model, without --judge-offline")
			case judgeOffline:
				recorded, err = rescore.ReadVerdicts(verdictsPath)
				if errors.Is(err, os.ErrNotExist) && judges.set() {
					err = nil // the judge cache alone
				} else if errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("--judge-offline: no recorded verdicts (%s): record them with --judge-model MODEL --record-verdicts, or give --judge-model to replay the suite's judge cache", verdictsPath)
				}
				if err != nil {
					return fmt.Errorf("--judge-offline: %w", err)
				}
			}
			jm, err := judges.model(filepath.Join(suiteDir, JudgeCacheDir), judgeOffline)
			if err != nil {
				return err
			}
			if jm != nil && !judgeOffline {
				if err := judgeAnswers(cmd.Context(), jm, tasks); err != nil {
					return err
				}
			}
			if jm == nil && recorded != nil {
				jm = notRecorded{recorded.Judge} // every check from the recorded file
			}
			rows, err := validate.Run(cmd.Context(), validate.Config{Suite: s, Tasks: tasks, Sources: sources,
				Lost:  func(l store.Lost) { lost = append(lost, l.Name+": "+l.Reason) },
				Store: st, Progress: cmd.ErrOrStderr(), Judge: jm})
			if err != nil {
				return withFlags(err)
			}
			for _, l := range lost {
				fmt.Fprintf(cmd.ErrOrStderr(), "lost environment %s\n", l)
			}
			if jm != nil {
				rows, err = judgeTotals(cmd, st, s, jm, rows, recorded, verdictsPath)
				if err != nil {
					return err
				}
			}
			if recordVerdicts {
				if err := writeVerdicts(cmd, st, jm.Name(), tasks, verdictsPath); err != nil {
					return err
				}
				if err := recordControls(cmd.Context(), st, s, jm.Name(), tasks, cmd.ErrOrStderr()); err != nil {
					return err
				}
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
			where := "episodes in " + dir
			if out == "" && v == 0 {
				where = "episodes not kept: --out keeps them"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s, %s, %s in %s (%s)\n", plural(len(tasks), "task"), plural(len(rows), "trajectory"),
				plural(v, "violation"), time.Since(start).Round(time.Second), where)
			if u := validate.Unproven(tasks); len(u) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "unproven: %s without a gold solution (%s): their checks were proven to fail on the start state and the wrong trajectories only\n",
					plural(len(u), "task"), strings.Join(u, ", "))
			}
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
	c.Flags().IntVar(&parallel, "parallel", 1, parallelHelp)
	c.Flags().StringVar(&suiteFlag, "suite", DefaultSuite, "suite folder or task file (or give it as the argument)")
	envs.flags(c.Flags())
	judges.flags(c.Flags())
	c.Flags().BoolVar(&judgeOffline, "judge-offline", false, "decide judge checks from the suite's judge-cache/ (the same evidence) or its "+rescore.VerdictsFile+" (the same task, trajectory and check) only; ask no model")
	c.Flags().BoolVar(&recordVerdicts, "record-verdicts", false, "write the judge's verdicts to SUITE/"+rescore.VerdictsFile+", by task, trajectory and check, for --judge-offline in CI (needs --judge-model),\nand the judge controls to SUITE/"+rescore.ControlsDir+"/")
	c.Flags().StringVar(&out, "out", "", "folder for the episodes, kept (default: a new temporary folder, removed after a validation with no violation;\n"+
		"kept, its path printed, after violations, or after an error once episodes were recorded)")
	c.Flags().StringVar(&filter, "filter", "", "validate only tasks whose id matches this regular expression")
	c.Flags().BoolVar(&asJSON, "json", false, "print the rows as JSON")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "print every reason whole (the table cuts them at 90 characters)")
	return c
}

// notRecorded is the judge of a validation with --judge-offline and no
// --judge-model: it gives no verdict, and every judge check is decided
// afterwards from the recorded verdicts.
type notRecorded struct{ name string }

func (n notRecorded) Name() string { return n.name }

func (n notRecorded) Judge(context.Context, judgment.Request) (judgment.Verdict, error) {
	return judgment.Verdict{}, fmt.Errorf("%w in the judge cache (no --judge-model): decided from %s", judge.ErrNotRecorded, rescore.VerdictsFile)
}

// judgeTotals decides from the recorded verdicts (when given) the judge
// checks that the judge left undecided, updates their rows, and prints how
// each judge check was decided.
func judgeTotals(cmd *cobra.Command, st *store.Store, s *task.Suite, jm judgment.Model, rows []validate.Row, recorded *rescore.Verdicts, path string) ([]validate.Row, error) {
	jgs, err := st.Judgements()
	if err != nil {
		return rows, err
	}
	asked, cached := 0, 0
	for _, jg := range jgs {
		for _, c := range jg.Checks {
			switch {
			case c.Err != "" || c.Judge == nil:
			case c.Judge.Cached:
				cached++
			default:
				asked++
			}
		}
	}
	fromFile, undecided := 0, 0
	if recorded != nil {
		decided, err := rescore.DecideRecorded(cmd.Context(), st, s, recorded)
		if err != nil {
			return rows, fmt.Errorf("deciding from %s: %w", path, err)
		}
		for _, d := range decided {
			fromFile += d.Recorded
			taskID, traj, _ := rescore.SplitVariant(d.Result.Task)
			for i, row := range rows {
				if row.Task == taskID && row.Trajectory == traj {
					rows[i] = rowAgain(row, d.Result)
				}
			}
		}
	}
	results, err := st.Results()
	if err != nil {
		return rows, err
	}
	for _, r := range results {
		if rescore.Undecided(r) {
			undecided++
		}
	}
	line := fmt.Sprintf("judge checks by %s: %d asked of the model, %d from the judge cache (the same evidence)", jm.Name(), asked, cached)
	if recorded != nil {
		line += fmt.Sprintf(", %d from the recorded verdicts (%s)", fromFile, path)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s; %s undecided\n", line, plural(undecided, "episode"))
	return rows, nil
}

// rowAgain compares an episode decided again with what it should be, as
// validate does.
func rowAgain(row validate.Row, r store.Result) validate.Row {
	row.Got, row.Reason, row.Milestone = r.Outcome, r.Reason, r.Milestone
	passed := r.Outcome == string(check.Success)
	if strings.HasPrefix(row.Want, "success") {
		row.OK = passed
	} else {
		row.OK = !passed && r.Outcome != string(check.Error)
	}
	if row.WantMilestone != nil {
		row.Got += fmt.Sprintf(", milestone %.2f", r.Milestone)
		row.OK = row.OK && math.Abs(r.Milestone-*row.WantMilestone) < 1e-6
	}
	return row
}

// writeVerdicts records the judge's verdicts of the validation in st in
// the suite's file of recorded verdicts, keeping those of the tasks not
// validated this time.
func writeVerdicts(cmd *cobra.Command, st *store.Store, judgeName string, tasks []*task.Task, path string) error {
	vs, undecided, err := rescore.CollectVerdicts(st, judgeName)
	if err != nil {
		return err
	}
	if undecided > 0 {
		were := "were"
		if undecided == 1 {
			were = "was"
		}
		return fmt.Errorf("--record-verdicts: %s %s left undecided; nothing recorded in %s (validate again)", plural(undecided, "judge check"), were, path)
	}
	validated := map[string]bool{}
	for _, t := range tasks {
		validated[t.ID] = true
	}
	if old, err := rescore.ReadVerdicts(path); err == nil && old.Judge == judgeName {
		for _, r := range old.Verdicts {
			if !validated[r.Task] {
				vs.Verdicts = append(vs.Verdicts, r)
			}
		}
	}
	vs.About = "recorded by proctor validate --judge-model ... --record-verdicts; proctor validate --judge-offline decides the suite's judge checks from it, by task, trajectory and check"
	if err := vs.Write(path); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "recorded %s of %s in %s\n", plural(len(vs.Verdicts), "verdict"), judgeName, path)
	return nil
}
