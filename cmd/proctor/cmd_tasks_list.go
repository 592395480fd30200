package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

func newTasksListCommand() *cobra.Command {
	var tag string
	c := &cobra.Command{
		Use:   "list SUITE",
		Short: "List a suite's task instances",
		Long: `List prints one line per task instance (templates expanded): id, level,
kind, apps, step budget and the start of the instruction. Problems in the
suite are printed to standard error and make the exit status 1, after the
tasks that did load.`,
		Example: `  proctor tasks list testdata/example
  proctor tasks list testdata/example --tag calculator`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, ps := task.Load(args[0])
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tLEVEL\tKIND\tAPPS\tSTEPS\tINSTRUCTION")
			n := 0
			if s != nil {
				for _, t := range s.Tasks {
					if tag != "" && !hasTag(t, tag) {
						continue
					}
					n++
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", t.ID, t.Level, t.Kind,
						strings.Join(t.AllApps(), ","), t.MaxSteps(), firstWords(t.Instruction, 60))
				}
			}
			w.Flush()
			fmt.Fprintln(cmd.ErrOrStderr(), plural(n, "task"))
			for _, p := range ps {
				fmt.Fprintln(cmd.ErrOrStderr(), p.String())
			}
			if len(ps) > 0 {
				return exitError{1}
			}
			return nil
		},
	}
	c.Flags().StringVar(&tag, "tag", "", "list only tasks with this tag")
	return c
}

func hasTag(t *task.Task, tag string) bool {
	for _, x := range t.Tags {
		if x == tag {
			return true
		}
	}
	return false
}

func firstWords(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
