package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/spf13/cobra"
)

func newParseCommand() *cobra.Command {
	var format, unit string
	var asJSON bool
	c := &cobra.Command{
		Use:   "parse [REPLY]",
		Short: "Parse a model reply into unified actions",
		Long: `Parse turns a model's reply (the argument, or standard input) into
Proctor's unified actions, as the runner does after every step, and prints
them one a line, or as JSON. A reply that cannot be parsed gets an error
naming the part rejected and why.

Formats: ` + formatsList() + `.`,
		Example: `  proctor parse --format pyautogui "pyautogui.click(100, 200)"
  echo '{"action":"left_click","coordinate":[10,20]}' | proctor parse --format anthropic
  proctor parse --format uitars --unit k "Action: click(start_box='(500,500)')"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var reply string
			if len(args) == 1 {
				reply = args[0]
			} else {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				reply = string(b)
			}
			acts, err := action.Parse(action.Format(format), reply, action.Options{Unit: action.Unit(unit)})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, _ := json.MarshalIndent(acts, "", "  ")
				fmt.Fprintln(out, string(b))
				return nil
			}
			for _, a := range acts {
				fmt.Fprintln(out, a.String())
			}
			return nil
		},
	}
	c.Flags().StringVarP(&format, "format", "f", string(action.FormatPyAutoGUI), "output format of the reply")
	c.Flags().StringVar(&unit, "unit", "", "convention of bare coordinates: px, ratio or k (default: the format's own)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the actions as JSON")
	return c
}

func formatsList() string {
	var fs []string
	for _, f := range action.Formats() {
		fs = append(fs, string(f))
	}
	return strings.Join(fs, ", ")
}
