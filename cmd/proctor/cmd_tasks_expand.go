package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

func newTasksExpandCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "expand TEMPLATE",
		Short: "Print the instances a template file produces",
		Long: `Expand fills a template's {{placeholders}} with each combination of its
params and prints every instance: its id, its parameter values and its
instruction, or with --json the whole instances, as the runner sees them.`,
		Example: `  proctor tasks expand testdata/example/calc-add-template.yaml
  proctor tasks expand testdata/example/calc-add-template.yaml --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, ps := task.Load(args[0])
			if len(ps) > 0 {
				for _, p := range ps {
					fmt.Fprintln(cmd.ErrOrStderr(), p.String())
				}
				return exitError{1}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, err := json.MarshalIndent(s.Tasks, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(out, string(b))
				return nil
			}
			for _, t := range s.Tasks {
				fmt.Fprintf(out, "%s", t.ID)
				if len(t.Values) > 0 {
					keys := make([]string, 0, len(t.Values))
					for k := range t.Values {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					var kv []string
					for _, k := range keys {
						kv = append(kv, k+"="+t.Values[k])
					}
					fmt.Fprintf(out, "  [%s]", strings.Join(kv, " "))
				}
				fmt.Fprintf(out, "\n    %s\n", strings.Join(strings.Fields(t.Instruction), " "))
			}
			fmt.Fprintln(cmd.ErrOrStderr(), plural(len(s.Tasks), "instance"))
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the instances as JSON")
	return c
}
