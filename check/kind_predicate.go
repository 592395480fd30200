package check

import (
	"context"
	"encoding/json"
)

// Predicate: an expression (github.com/expr-lang/expr, within the limits
// of limit.go) over the probe's value is true.
const Predicate Kind = "predicate"

func init() {
	register(Predicate, kindDef{
		fields:   []string{"probe", "expr"},
		compile:  compilePredicateCheck,
		evaluate: evalPredicate,
	})
}

// predEnv is what a predicate sees: value is the probe's output decoded
// from JSON (or the plain text when it is not JSON), text the raw output.
type predEnv struct {
	Value any    `expr:"value"`
	Text  string `expr:"text"`
	// Ctx carries the evaluation's limits to the functions that measure
	// it (see limit.go).
	Ctx *exprCtx `expr:"ctx"`
}

func compilePredicateCheck(c *Check) error {
	s := c.Spec
	if err := needProbe(c); err != nil {
		return err
	}
	if s.Expr == "" {
		return ferr("expr", "a predicate check needs an expression")
	}
	p, err := compilePredicate(s.Expr)
	if err != nil {
		return ferr("expr", "%v", err)
	}
	c.program = p
	return nil
}

func evalPredicate(ctx context.Context, c *Check, in input) (bool, string, error) {
	s, val := c.Spec, in.val
	env := predEnv{Text: val, Value: val}
	var v any
	if json.Unmarshal([]byte(val), &v) == nil {
		env.Value = v
	}
	out, err := runPredicate(ctx, c.program, env)
	if err != nil {
		return failf("predicate %s could not be evaluated: %s", s.Expr, firstLine(err.Error()))
	}
	if b, _ := out.(bool); b {
		return pass("predicate %s holds", s.Expr)
	}
	return failf("predicate %s is false for %s", s.Expr, quote(val))
}
