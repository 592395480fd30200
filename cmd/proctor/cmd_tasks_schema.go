package main

import (
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

func newTasksSchemaCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of task files",
		Long: `Schema prints the JSON Schema (draft 2020-12) that every task file is
validated against before the semantic checks. Editors with YAML language
support can use it for completion: save it and point the editor at it.`,
		Example: `  proctor tasks schema > task.schema.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(task.Schema)
			return err
		},
	}
}
