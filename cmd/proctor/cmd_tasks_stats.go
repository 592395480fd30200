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
		Short: "Print a suite's statistics: counts by app, domain, level, kind, difficulty, interface, persona",
		Long: `Stats prints how a suite's task instances spread over apps (a multi-app
task counts under each of its apps), domains, levels, kinds, difficulties,
interfaces and personas (where tasks name one), each with its share, with the average length of the instructions
(words) and of the gold solutions (actions). A suite of several domains also
gets one table with a column per domain and overall (ScienceBoard's layout):
kinds, interfaces, levels and difficulties down the side.`,
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
	gold, wrong, words := 0, 0, 0
	for _, t := range tasks {
		gold += len(t.Gold)
		wrong += len(t.Wrong)
		words += len(strings.Fields(t.Instruction))
	}
	n := float64(max(len(tasks), 1))
	fmt.Fprintf(w, "%s; instructions average %.1f words; gold solutions average %.1f actions; %s\n",
		plural(len(tasks), "task instance"), float64(words)/n, float64(gold)/n, plural(wrong, "wrong trajectory"))
	for _, d := range append(statDims, personaDim) {
		m := countBy(tasks, d.keys)
		if d.name == personaDim.name && len(m) == 1 && m["-"] > 0 {
			continue // no task names a persona
		}
		fmt.Fprintf(w, "\nby %s\n", d.name)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, k := range d.order(m) {
			fmt.Fprintf(tw, "  %s\t%d\t%5.1f%%\t%s\n", k, m[k], 100*float64(m[k])/n, strings.Repeat("#", m[k]))
		}
		tw.Flush()
	}
	domains := d(countBy(tasks, domainOf))
	if len(domains) < 2 {
		return
	}
	fmt.Fprintf(w, "\nby domain (columns) and kind, interface, level, difficulty\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\t%s\toverall\t\n", strings.Join(domains, "\t"))
	byDomain := map[string][]*task.Task{}
	for _, t := range tasks {
		byDomain[domainOf(t)[0]] = append(byDomain[domainOf(t)[0]], t)
	}
	for _, dim := range statDims[2:] { // level, kind, difficulty, interface
		all := countBy(tasks, dim.keys)
		for _, k := range dim.order(all) {
			fmt.Fprintf(tw, "%s\t", k)
			for _, dom := range domains {
				fmt.Fprintf(tw, "%d\t", countBy(byDomain[dom], dim.keys)[k])
			}
			fmt.Fprintf(tw, "%d\t\n", all[k])
		}
	}
	fmt.Fprintf(tw, "total\t")
	for _, dom := range domains {
		fmt.Fprintf(tw, "%d\t", len(byDomain[dom]))
	}
	fmt.Fprintf(tw, "%d\t\n", len(tasks))
	tw.Flush()
}

// statDim is one dimension stats counts tasks by.
type statDim struct {
	name string
	keys func(*task.Task) []string
}

// order lists the dimension's values: levels from paper to gold, the
// others by name.
func (s statDim) order(m map[string]int) []string {
	keys := d(m)
	if s.name == "level" {
		sort.SliceStable(keys, func(i, j int) bool { return task.LevelRank(keys[i]) < task.LevelRank(keys[j]) })
	}
	return keys
}

var statDims = []statDim{
	{"app", func(t *task.Task) []string { return t.AllApps() }},
	{"domain", domainOf},
	{"level", func(t *task.Task) []string { return []string{string(t.Level)} }},
	{"kind", func(t *task.Task) []string { return []string{string(t.Kind)} }},
	{"difficulty", func(t *task.Task) []string { return []string{t.Difficulty} }},
	{"interface", func(t *task.Task) []string { return []string{t.Interface} }},
}

// personaDim counts tasks by persona, in suites whose tasks name one.
var personaDim = statDim{"persona", func(t *task.Task) []string { return []string{t.Persona} }}

func domainOf(t *task.Task) []string { return []string{t.Domain} }

// countBy counts tasks by the values keys gives ("-" for none).
func countBy(tasks []*task.Task, keys func(*task.Task) []string) map[string]int {
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

// d lists m's keys, sorted.
func d(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
