package main

import (
	"github.com/spf13/cobra"
)

func newTasksCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "tasks",
		Short: "Check, list, expand and show task files",
		Long: `Work with task suites: a suite is a directory of task files (*.yaml),
with an optional suite.yaml that declares extra apps and an assets/ folder
of files that setup steps copy and checks compare with. A single task file
works wherever a suite does.`,
	}
	c.AddCommand(newTasksLintCommand(), newTasksListCommand(), newTasksExpandCommand(), newTasksShowCommand(), newTasksSchemaCommand(), newTasksStatsCommand(), newTasksSelectCommand())
	return c
}
