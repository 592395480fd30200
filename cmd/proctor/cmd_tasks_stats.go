package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

func newTasksStatsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stats SUITE",
		Short: "Print a suite's statistics: counts by app, level, kind, difficulty, interface",
		Long: `Stats prints how a suite's task instances spread over apps (a multi-app
task counts under each of its apps), levels, kinds, difficulties and
interfaces, with the average length of the gold solutions.`,
		Example: `  proctor tasks stats testdata/runner`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, ps := task.Load(args[0])
			if len(ps) > 0 {
				return fmt.Errorf("the suite has problems (see proctor tasks lint %s):\n%w", args[0], ps)
			}
			writeStats(cmd.OutOrStdout(), s.Tasks)
			return nil
		},
	}
}

func writeStats(w io.Writer, tasks []*task.Task) {
	count := func(keys func(*task.Task) []string) map[string]int {
		m := map[string]int{}
		for _, t := range tasks {
			for _, k := range keys(t) {
				if k == "" {
					k = "-"
				}
				m[k]++
			}
		}
		return m
	}
	gold, wrong := 0, 0
	for _, t := range tasks {
		gold += len(t.Gold)
		wrong += len(t.Wrong)
	}
	fmt.Fprintf(w, "%d task instances; gold solutions average %.1f actions; %d wrong trajectories\n", len(tasks),
		float64(gold)/float64(max(len(tasks), 1)), wrong)
	for _, d := range []struct {
		name string
		keys func(*task.Task) []string
	}{
		{"app", func(t *task.Task) []string { return t.AllApps() }},
		{"level", func(t *task.Task) []string { return []string{string(t.Level)} }},
		{"kind", func(t *task.Task) []string { return []string{string(t.Kind)} }},
		{"difficulty", func(t *task.Task) []string { return []string{t.Difficulty} }},
		{"interface", func(t *task.Task) []string { return []string{t.Interface} }},
	} {
		m := count(d.keys)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if d.name == "level" { // paper to gold, not by name
			sort.SliceStable(keys, func(i, j int) bool { return task.LevelRank(keys[i]) < task.LevelRank(keys[j]) })
		}
		fmt.Fprintf(w, "\nby %s\n", d.name)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, k := range keys {
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", k, m[k], strings.Repeat("#", m[k]))
		}
		tw.Flush()
	}
}
