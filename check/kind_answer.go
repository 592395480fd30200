package check

import (
	"context"
	"math"
	"strings"
)

// AnswerKind: the agent's answer (or, given a probe, the probe's value)
// matches one of the accepted answers, as numbers within tolerance or as
// normalised text.
const AnswerKind Kind = "answer"

func init() {
	register(AnswerKind, kindDef{
		fields: []string{"probe", "accepted", "tolerance", "case_sensitive"},
		// The probe is optional and stands in for the answer, so a
		// missing value is "no answer", not "nothing to read".
		probe:    probeByKind,
		compile:  compileAnswer,
		evaluate: evalAnswer,
	})
}

func compileAnswer(c *Check) error {
	if len(c.Spec.Accepted) == 0 {
		return ferr("accepted", "an answer check needs at least one accepted answer")
	}
	return nil
}

func evalAnswer(ctx context.Context, c *Check, in input) (bool, string, error) {
	s := c.Spec
	ans, ok := in.ev.Trajectory().Answer()
	if s.Probe != nil {
		v, found, err := c.probe(ctx, in.ev)
		if err != nil {
			return false, "", err
		}
		ans, ok = v, found
	}
	if !ok {
		return failf("the agent gave no answer")
	}
	for _, acc := range s.Accepted {
		if answersMatch(ans, acc, s.Tolerance, s.CaseSense) {
			return pass("answer %s matches %s", quote(ans), quote(acc))
		}
	}
	return failf("answer %s matches none of %v", quote(ans), s.Accepted)
}

// normalizeAnswer lower-cases (unless caseSense), trims quotes, trailing
// punctuation and repeated white space.
func normalizeAnswer(s string, caseSense bool) string {
	s = strings.TrimSpace(s)
	s = strings.Trim(s, "\"'`“”‘’")
	s = strings.TrimRight(s, ".!。")
	s = strings.Join(strings.Fields(s), " ")
	if !caseSense {
		s = strings.ToLower(s)
	}
	return s
}

// answersMatch compares as numbers when both are numbers, else as
// normalised text.
func answersMatch(got, want string, tol float64, caseSense bool) bool {
	if g, ok := parseNumber(got); ok {
		if w, ok := parseNumber(want); ok {
			return math.Abs(g-w) <= tol
		}
	}
	return normalizeAnswer(got, caseSense) == normalizeAnswer(want, caseSense)
}
