package main

import (
	"fmt"

	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

func newTasksShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show SUITE ID",
		Short: "Print one task instance in full, as JSON",
		Long: `Show prints a task instance with its templates filled, defaults applied
(step budget and wall time from its level) and every field in its JSON form.`,
		Example: `  proctor tasks show testdata/example calc-add-12-30`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, ps := task.Load(args[0])
			if s == nil {
				return ps
			}
			t, ok := s.Task(args[1])
			if !ok {
				if len(ps) > 0 {
					return fmt.Errorf("no task %q loaded; the suite has problems:\n%w", args[1], ps)
				}
				return fmt.Errorf("no task %q in %s (see proctor tasks list %s)", args[1], args[0], args[0])
			}
			b, err := t.JSON()
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(b))
			fmt.Fprintf(cmd.ErrOrStderr(), "file %s, max steps %d, wall time %s, weight %g\n", t.File, t.MaxSteps(), t.WallTime(), t.Level.Weight())
			return nil
		},
	}
}
