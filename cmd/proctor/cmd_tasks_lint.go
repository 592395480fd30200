package main

import (
	"encoding/json"
	"fmt"

	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

type lintOptions struct {
	json bool
}

func newTasksLintCommand() *cobra.Command {
	var o lintOptions
	c := &cobra.Command{
		Use:   "lint SUITE...",
		Short: "Check task files against the schema and the semantic rules",
		Long: `Lint loads every task file of each suite (a directory or a single file),
validates it against Proctor's JSON Schema (an unknown field names the
known field nearest it), expands templates, and runs the
semantic checks: known apps and check kinds, milestones that checks refer
to, assets that exist, gold solutions made of known actions that end with
done, fail or answer, kinds that match their checks, and sql probes of
declared command services whose database is in the data the suite ships.

Every problem is printed as FILE:LINE:COLUMN: FIELD: MESSAGE. The exit
status is 1 when any problem is found. Warnings, printed as problems with
"warning: " before the message, name likely mistakes that do not stop a
task from loading (a target's or element query's role that no
environment's tree gives, with the known role nearest it; an sql probe's
database missing from the data proctor setup left on this machine) and
leave the exit status alone.`,
		Example: `  proctor tasks lint testdata/example
  proctor tasks lint my-suite/ other-task.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTasksLint(cmd, o, args)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print the problems as a JSON array")
	return c
}

func runTasksLint(cmd *cobra.Command, o lintOptions, args []string) error {
	var all task.Problems
	tasks, problems, warnings := 0, 0, 0
	for _, a := range args {
		s, ps := task.Load(a)
		all = append(all, ps...)
		problems += len(ps)
		if s != nil {
			tasks += len(s.Tasks)
			all = append(all, s.Warnings...)
			warnings += len(s.Warnings)
		}
	}
	out := cmd.OutOrStdout()
	if o.json {
		if all == nil {
			all = task.Problems{}
		}
		b, _ := json.MarshalIndent(all, "", "  ")
		fmt.Fprintln(out, string(b))
	} else {
		for _, p := range all {
			fmt.Fprintln(out, p.String())
		}
		summary := fmt.Sprintf("%s valid, %s", plural(tasks, "task"), plural(problems, "problem"))
		if warnings > 0 {
			summary += ", " + plural(warnings, "warning")
		}
		fmt.Fprintln(cmd.ErrOrStderr(), summary)
	}
	if problems > 0 {
		return exitError{1}
	}
	return nil
}
