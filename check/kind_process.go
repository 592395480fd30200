package check

import (
	"context"
	"strings"
)

// Process: the required steps appear, in order, on the trajectory.
const Process Kind = "process"

func init() {
	register(Process, kindDef{
		fields:   []string{"steps", "case_sensitive"},
		compile:  compileProcess,
		evaluate: evalProcess,
	})
}

func compileProcess(c *Check) error {
	s := c.Spec
	if len(s.Steps) == 0 {
		return ferr("steps", "a process check needs at least one step")
	}
	for i, st := range s.Steps {
		if strings.TrimSpace(st) == "" {
			return ferr("steps", "step %d is empty", i+1)
		}
	}
	return nil
}

func evalProcess(_ context.Context, c *Check, in input) (bool, string, error) {
	return c.process(in.ev.Trajectory())
}

// process checks that the required steps appear, in order, among the
// descriptions of the trajectory's steps (the element clicked, else the
// action itself).
func (c *Check) process(t Trajectory) (bool, string, error) {
	i := 0
	for _, st := range t.Steps {
		if i == len(c.Spec.Steps) {
			break
		}
		desc := st.Element
		if desc == "" {
			desc = st.Action.String()
		}
		if strings.Contains(c.fold(desc), c.fold(c.Spec.Steps[i])) {
			i++
		}
	}
	if i == len(c.Spec.Steps) {
		return pass("all %d required steps happened in order", i)
	}
	return failf("required step %d (%s) never happened after the steps before it", i+1, quote(c.Spec.Steps[i]))
}
