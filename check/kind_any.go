package check

import (
	"context"
	"fmt"
	"strings"
)

// AnyOf: at least one of the listed checks passes (OSWorld's evaluators
// joined by "or": a document saved in either of two accepted forms).
// The alternatives are plain checks of the task's own evidence: a judge,
// milestones, side_effects, infeasible or another any check cannot be one
// (each decides the episode in its own way, which "one of" would blur).
// When none passes and one could not read its evidence, the check could
// not decide: an infrastructure fault, not a failure.
const AnyOf Kind = "any"

func init() {
	register(AnyOf, kindDef{
		fields:   []string{"any"},
		compile:  compileAny,
		evaluate: evalAny,
	})
}

// notAnAlternative are the kinds an any check cannot hold.
var notAnAlternative = map[Kind]string{
	AnyOf:       "an any check cannot hold another (list every alternative in one)",
	JudgeKind:   "a judge check cannot be an alternative (its verdict is the model's)",
	Milestones:  "a milestones check cannot be an alternative",
	SideEffects: "a side_effects check cannot be an alternative (it is about the whole episode)",
	Infeasible:  "an infeasible check cannot be an alternative (the task's kind decides it)",
}

func compileAny(c *Check) error {
	alts := c.Spec.Any
	if len(alts) < 2 {
		return ferr("any", "an any check needs at least two alternatives")
	}
	c.alts = make([]*Check, 0, len(alts))
	for i, sp := range alts {
		if why, ok := notAnAlternative[sp.Kind]; ok {
			return &PathError{Path: []any{"any", i, "kind"}, Reason: why}
		}
		alt, err := Compile(sp)
		if err != nil {
			return fieldPathErr(err, "any", i)
		}
		c.alts = append(c.alts, alt)
	}
	return nil
}

func evalAny(ctx context.Context, c *Check, in input) (bool, string, error) {
	var failed []string
	var infra error
	for i, alt := range c.alts {
		sub := in
		sub.res, sub.val = nil, ""
		r := alt.evaluate(ctx, sub)
		if r.Pass {
			return pass("alternative %d of %d passes: %s", i+1, len(c.alts), r.Reason)
		}
		if r.Err != "" && infra == nil {
			infra = infraError{fmt.Errorf("alternative %d (%s): %s", i+1, r.Name, r.Err)}
		}
		failed = append(failed, fmt.Sprintf("%d. %s", i+1, r.Reason))
	}
	if infra != nil {
		return false, "", infra
	}
	return failf("no alternative passes: %s", strings.Join(failed, "; "))
}

// Each calls f on every spec of specs and on every alternative of their
// any checks, with its place in the task file (prefix, then the spec's
// index, then any and the alternative's index): what reads a task's
// checks for their probes, files or assets reads the alternatives too.
func Each(prefix []any, specs []Spec, f func(path []any, s Spec)) {
	for i, s := range specs {
		p := append(append([]any(nil), prefix...), i)
		f(p, s)
		if len(s.Any) > 0 {
			Each(append(p, "any"), s.Any, f)
		}
	}
}
