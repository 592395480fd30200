package main

import (
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

func newTasksSchemaCommand() *cobra.Command {
	var suite bool
	c := &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of task files (or of suite.yaml)",
		Long: `Schema prints the JSON Schema (draft 2020-12) that every task file is
validated against before the semantic checks; with --suite, the schema of a
suite's suite.yaml (its apps). Editors with YAML language support can use
them for completion: save one and point the editor at it.`,
		Example: `  proctor tasks schema > task.schema.json
  proctor tasks schema --suite > suite.schema.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := task.Schema
			if suite {
				out = task.SuiteSchema
			}
			_, err := cmd.OutOrStdout().Write(out)
			return err
		},
	}
	c.Flags().BoolVar(&suite, "suite", false, "print the JSON Schema of suite.yaml instead")
	return c
}
