package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/rescore"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/pflag"
)

// controlsToleranceHelp is the help of --judge-controls-tolerance.
const controlsToleranceHelp = "judge controls (SUITE/" + rescore.ControlsDir + ", written by proctor validate --record-verdicts) the judge may get wrong\n" +
	"before it is refused: each is a judge check of the suite's validation with a known verdict, asked before any episode is judged"

// controlsToleranceFlag adds --judge-controls-tolerance to f.
func controlsToleranceFlag(f *pflag.FlagSet, tolerance *int) {
	f.IntVar(tolerance, "judge-controls-tolerance", 0, controlsToleranceHelp)
}

// askControls asks jm on the judge controls of the suite in the folder
// suiteDir (task.Suite.Dir),
// when it has some, and prints how it did; the error names the controls
// it got wrong when they are more than tolerance. No controls: nil, nil.
func askControls(ctx context.Context, jm judgment.Model, suiteDir string, tolerance int, stderr io.Writer) ([]store.JudgeControl, error) {
	dir := filepath.Join(suiteDir, rescore.ControlsDir)
	cs, err := rescore.ReadControls(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("judge controls: %w", err)
	}
	if len(cs.Controls) == 0 {
		return nil, nil
	}
	rs := rescore.AskControls(ctx, jm, cs.Controls, 0)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := rescore.ControlsFailed(rs, tolerance); err != nil {
		return rs, err
	}
	fmt.Fprintf(stderr, "judge controls: %s by %s (%s)\n", rescore.ControlsSummary(rs), jm.Name(), dir)
	return rs, nil
}

// recordControls writes the judge controls of the validation in st into
// the suite's folder of controls, keeping those of the tasks not
// validated this time.
func recordControls(ctx context.Context, st *store.Store, s *task.Suite, judgeName string, tasks []*task.Task, stderr io.Writer) error {
	fresh, err := rescore.CollectControls(ctx, st, s, judgeName, rescore.ControlsPerKind)
	if err != nil {
		return fmt.Errorf("--record-verdicts: judge controls: %w", err)
	}
	dir := filepath.Join(s.Dir, rescore.ControlsDir)
	validated := make([]string, len(tasks))
	for i, t := range tasks {
		validated[i] = t.ID
	}
	var old []rescore.Control
	if prev, err := rescore.ReadControls(dir); err == nil && prev.Judge == judgeName {
		old = prev.Controls
	}
	cs := &rescore.Controls{Judge: judgeName, Controls: rescore.Merge(fresh, old, validated, rescore.ControlsPerKind),
		About: "recorded by proctor validate --judge-model ... --record-verdicts: judge checks of gold trajectories (which pass) and wrong ones (which fail), " +
			"which proctor run and proctor judge ask their judge before judging"}
	if len(cs.Controls) == 0 {
		return nil
	}
	if err := rescore.WriteControls(dir, cs); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "recorded %s in %s\n", plural(len(cs.Controls), "judge control"), dir)
	return nil
}
