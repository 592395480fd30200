package main

import (
	"fmt"
	"os"
	"regexp"

	"github.com/proctor-eval/proctor/imports"
	"github.com/proctor-eval/proctor/imports/osuniverse"
	"github.com/proctor-eval/proctor/imports/osworld"
	"github.com/proctor-eval/proctor/imports/scienceboard"
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

func newImportCommand() *cobra.Command {
	var out, filter string
	var fetch bool
	c := &cobra.Command{
		Use:   "import osworld|osuniverse|scienceboard SRC --out SUITE",
		Short: "Write a suite from another benchmark's task files",
		Long: `Import reads another benchmark's task files and writes a Proctor suite:
suite.yaml, a task file per task (DOMAIN/ID.yaml, recording its origin:
the benchmark, file, id, revision and hash), and the files the tasks need
as assets. Beside them it writes IMPORT.md and import.json, a table of every
task, and prints the counts:

  runnable      imported, and runnable on this machine offline;
  blocked       imported (it lints), but not runnable here as it is: an
                application Debian lacks (VS Code), the live web, a file not
                fetched yet, XFCE's own desktop (its menus and settings);
  not imported  a setup step, an evaluator or an option with no counterpart
                in Proctor, named.

The benchmark ships no solutions: an imported task says so (unproven), and
lint accepts it without gold; an infeasible task's gold is fail.

SRC is a checkout of the benchmark: for osworld xlang-ai/OSWorld (or its
evaluation_examples folder), for osuniverse agentsea/osuniverse (its
testcases/GROUP/NAME.yaml; the checks a model judges become judge checks,
a literal returned_result an answer check and gold), for scienceboard
OS-Copilot/ScienceBoard (its VM tasks, tasks/VM/APP/ID.json; an answer
becomes an answer check and gold, FAIL an infeasible task). --filter
matches OSWorld's ids and the others' GROUP/NAME. The files tasks download (OSWorld's cloud
files) are fetched into the suite's assets with --fetch, which needs the
internet; offline, each task that needs one is blocked and names it, and
an import run again with --fetch into the same folder fetches what is
missing.`,
		Example: `  proctor import osworld ../OSWorld --out suites/osworld
  proctor import osworld ../OSWorld --out suites/osworld --fetch --filter '^0[0-9a-f]'
  proctor import osuniverse ../osuniverse --out suites/osuniverse --fetch
  proctor import scienceboard ../ScienceBoard --out suites/scienceboard --filter '^TeXstudio/'`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("--out names the suite folder to write")
			}
			var re *regexp.Regexp
			if filter != "" {
				var err error
				if re, err = regexp.Compile(filter); err != nil {
					return fmt.Errorf("--filter: %w", err)
				}
			}
			var tasks []*imports.Task
			var suite imports.Suite
			switch args[0] {
			case osworld.Peer:
				var err error
				if tasks, err = osworld.Read(args[1], re); err != nil {
					return err
				}
				suite = imports.Suite{Name: "osworld", Description: "OSWorld's tasks, imported by proctor import from " + args[1], Setup: &task.Setup{Packages: osworld.Packages}}
			case osuniverse.Peer:
				var err error
				if tasks, suite, err = osuniverse.Read(args[1], re); err != nil {
					return err
				}
			case scienceboard.Peer:
				var err error
				if tasks, suite, err = scienceboard.Read(args[1], re); err != nil {
					return err
				}
			default:
				return fmt.Errorf("unknown benchmark %q: proctor import reads osworld, osuniverse and scienceboard", args[0])
			}
			if len(tasks) == 0 {
				return fmt.Errorf("no task of %s matches --filter %q", args[1], filter)
			}
			errOut := cmd.ErrOrStderr()
			o := imports.Options{Fetch: fetch, Progress: func(format string, a ...any) { fmt.Fprintf(errOut, format+"\n", a...) }}
			if err := imports.Write(cmd.Context(), out, suite, tasks, o); err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), imports.Count(tasks).Summary())
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (every task in %s)\n", out, out+string(os.PathSeparator)+imports.TableFile)
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "the suite folder to write (created)")
	c.Flags().StringVar(&filter, "filter", "", "import only the tasks whose id matches this regular expression")
	c.Flags().BoolVar(&fetch, "fetch", false, "download the files tasks need into the suite's assets (needs the internet)")
	return c
}
