package check

import (
	"context"

	"github.com/proctor-eval/proctor/action"
)

// Infeasible: the agent said FAIL. It also marks the task as one that
// expects FAIL (Suite.Infeasible), which changes how Judge scores it.
const Infeasible Kind = "infeasible"

func init() {
	register(Infeasible, kindDef{fields: []string{}, evaluate: evalInfeasible})
}

func evalInfeasible(_ context.Context, _ *Check, in input) (bool, string, error) {
	a, ok := in.ev.Trajectory().Final()
	if ok && a.Kind == action.Fail {
		return pass("the agent said FAIL on an infeasible task")
	}
	if !ok {
		return failf("the agent never said FAIL on an infeasible task")
	}
	return failf("the agent ended with %s, but the task is infeasible", a.Kind)
}
