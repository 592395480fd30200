package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/proctor-eval/proctor/store"
	"github.com/spf13/cobra"
)

// exportLine is one episode in the JSONL export.
type exportLine struct {
	Run         string       `json:"run"`
	Dir         string       `json:"dir"` // the run folder, which screenshot paths are under
	Task        string       `json:"task"`
	Repeat      int          `json:"repeat"`
	Instruction string       `json:"instruction"`
	Outcome     string       `json:"outcome"`
	Reason      string       `json:"reason"`
	Answer      string       `json:"answer,omitempty"`
	Milestone   float64      `json:"milestone"`
	Steps       []exportStep `json:"steps"`
}

type exportStep struct {
	Index      int             `json:"index"`
	Screenshot string          `json:"screenshot,omitempty"` // path under the run folder
	Tree       string          `json:"tree,omitempty"`
	Output     string          `json:"model_output,omitempty"`
	Actions    json.RawMessage `json:"actions,omitempty"`
	Performed  json.RawMessage `json:"performed,omitempty"`
	ParseError string          `json:"parse_error,omitempty"`
	EnvError   string          `json:"env_error,omitempty"`
}

func newExportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "export RUN...",
		Short: "Write runs' trajectories as JSON Lines",
		Long: `Export prints one JSON object a line for every episode of the runs: the
instruction, every step's observation (screenshot path under the run folder
and accessibility table), the raw model output, the actions parsed and what
the environment performed, and the outcome. The lines can serve as a
training set. Each line names its run and run folder.`,
		Example: `  proctor export runs/20261122-010000-replay > trajectories.jsonl
  proctor export runs/* > all.jsonl`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			enc := json.NewEncoder(cmd.OutOrStdout())
			for _, dir := range args {
				if err := exportRun(enc, dir); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s exported\n", plural(len(args), "run"))
			return nil
		},
	}
}

// exportRun writes the lines of one run folder.
func exportRun(enc *json.Encoder, dir string) error {
	st, err := store.OpenRun(dir)
	if err != nil {
		return err
	}
	defer st.Close()
	run, err := st.Run()
	if err != nil {
		return err
	}
	rs, err := st.Results()
	if err != nil {
		return err
	}
	for _, r := range rs {
		steps, err := st.Turns(r.Task, r.Repeat)
		if err != nil {
			return err
		}
		line := exportLine{Run: run.ID, Dir: dir, Task: r.Task, Repeat: r.Repeat, Instruction: r.Instruction, Outcome: r.Outcome,
			Reason: r.Reason, Answer: r.Answer, Milestone: r.Milestone, Steps: []exportStep{}}
		for _, s := range steps {
			if s.By != "" {
				continue // the harness's steps after the agent are not the agent's
			}
			es := exportStep{Index: s.Index, Tree: s.Tree, Output: s.Raw, Actions: s.Actions, Performed: s.Done,
				ParseError: s.ParseError, EnvError: s.EnvError}
			if s.Shot != "" {
				es.Screenshot = filepath.Join(store.ShotDir, s.Shot)
			}
			line.Steps = append(line.Steps, es)
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}
