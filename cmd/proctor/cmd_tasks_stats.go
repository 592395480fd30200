package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/proctor-eval/proctor/score"
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
	var rs []score.Result
	for _, t := range tasks {
		rs = append(rs, score.Result{Level: string(t.Level), Domain: t.Domain, Kind: string(t.Kind), Difficulty: t.Difficulty, Interface: t.Interface})
	}
	table := score.DomainBreakdown(rs, score.DomainRows...)
	if table == nil {
		return
	}
	fmt.Fprintf(w, "\nby domain (columns) and kind, interface, level, difficulty\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	var domains []string
	for _, dom := range table.Domains {
		domains = append(domains, orDash(dom))
	}
	fmt.Fprintf(tw, "\t%s\toverall\t\n", strings.Join(domains, "\t"))
	for _, row := range append(table.Rows, table.Total) {
		fmt.Fprintf(tw, "%s\t", orDash(row.Key))
		for _, c := range row.Cells {
			fmt.Fprintf(tw, "%d\t", c.N)
		}
		fmt.Fprintf(tw, "%d\t\n", row.Overall.N)
	}
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

// orDash is s, or "-" for none.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

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
