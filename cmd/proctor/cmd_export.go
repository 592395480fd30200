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
		Use:   "export RUN",
		Short: "Write a run's trajectories as JSON Lines",
		Long: `Export prints one JSON object a line for every episode of a run: the
instruction, every step's observation (screenshot path under the run folder
and accessibility table), the raw model output, the actions parsed and what
the environment performed, and the outcome. The lines can serve as a
training set.`,
		Example: `  proctor export runs/20261122-010000-replay > trajectories.jsonl`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := store.Open(args[0])
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
			enc := json.NewEncoder(cmd.OutOrStdout())
			for _, r := range rs {
				steps, err := st.Steps(r.Task, r.Repeat)
				if err != nil {
					return err
				}
				line := exportLine{Run: run.ID, Task: r.Task, Repeat: r.Repeat, Instruction: r.Instruction, Outcome: r.Outcome,
					Reason: r.Reason, Answer: r.Answer, Milestone: r.Milestone, Steps: []exportStep{}}
				for _, s := range steps {
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
			fmt.Fprintf(cmd.ErrOrStderr(), "%d episodes\n", len(rs))
			return nil
		},
	}
}
