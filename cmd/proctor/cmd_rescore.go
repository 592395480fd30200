package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/proctor-eval/proctor/rescore"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

func newRescoreCommand() *cobra.Command {
	var suite string
	c := &cobra.Command{
		Use:   "rescore RUN",
		Short: "Judge a run's episodes again with the suite's current checks",
		Long: `Rescore judges every episode of a finished run again, without a desktop:
the checks of the suite as it is now read the evidence the run recorded when
it judged the episode (files, command outputs, accessibility queries,
windows, clipboard, trajectory). Fixing a check no longer means running the
agent again.

The suite is the one the run was made with (its recorded path), or --suite.
The run's results stay as they were; the new verdicts are stored beside
them in the run folder, and proctor report lists the episodes whose outcome
flipped. Rescore prints those episodes (task, repeat, old -> new outcome,
reason) and the totals. Error episodes are skipped, tasks the suite no
longer has are named, and a changed check that reads evidence the run did
not record is judged an error ("not recorded"), never a guess. Judge checks
are decided by the run's own judge from the run's cache of verdicts, without
asking a model: one whose evidence or expectation changed is an error
until proctor judge decides it.`,
		Example: `  proctor rescore runs/20261122-010000-openai
  proctor rescore runs/20261122-010000-openai --suite testdata/example`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err != nil {
				return fmt.Errorf("%s: no run there (%v)", dir, err)
			}
			st, err := store.Open(dir)
			if err != nil {
				return err
			}
			defer st.Close()
			s, path, err := runSuite(st, suite)
			if err != nil {
				return err
			}
			jm, err := runJudge(st)
			if err != nil {
				return err
			}
			sum, err := rescore.Run(cmd.Context(), st, s, time.Now(), jm)
			if err != nil {
				return err
			}
			note := "changed since the run"
			if sum.SuiteHash == sum.RunHash {
				note = "unchanged since the run"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "re-judged %s with the checks of %s (its tasks %s)\n", dir, path, note)
			sum.Write(cmd.OutOrStdout())
			return nil
		},
	}
	c.Flags().StringVar(&suite, "suite", "", "the suite to take the checks from (default: the one the run was made with)")
	return c
}

// runSuite loads the suite of the run in st: override when given, else
// the suite the run recorded in its configuration. It returns the suite
// and its path.
func runSuite(st *store.Store, override string) (*task.Suite, string, error) {
	path := override
	if path == "" {
		info, err := st.Run()
		if err != nil {
			return nil, "", err
		}
		var rc runConfig
		if len(info.Config) > 0 {
			if err := json.Unmarshal(info.Config, &rc); err != nil {
				return nil, "", fmt.Errorf("%s: unreadable configuration: %v", st.Dir, err)
			}
		}
		if path = rc.Suite; path == "" {
			path = info.Suite
		}
		if path == "" {
			return nil, "", fmt.Errorf("%s: the run recorded no suite; give --suite", st.Dir)
		}
		if path, err = suitePath(path); err != nil {
			return nil, "", err
		}
		if _, err := os.Stat(path); err != nil {
			return nil, "", fmt.Errorf("%s: the suite the run was made with is not there (%v); give --suite", st.Dir, err)
		}
	}
	s, ps := task.Load(path)
	if len(ps) > 0 {
		return nil, "", fmt.Errorf("%s: the suite %s has problems (see proctor tasks lint %s):\n%w", st.Dir, path, path, ps)
	}
	return s, path, nil
}
