package check

import (
	"context"
	"fmt"
)

// Milestones: the weighted share of the listed milestones that passed
// reaches min_score (1 when not given). CompileAll checks the ids and keeps
// this kind out of milestones' own checks.
const Milestones Kind = "milestones"

func init() {
	register(Milestones, kindDef{
		fields:   []string{"milestones", "min_score"},
		compile:  compileMilestones,
		evaluate: evalMilestones,
	})
}

func compileMilestones(c *Check) error {
	s := c.Spec
	if len(s.Milestones) == 0 {
		return ferr("milestones", "a milestones check needs the milestone ids it scores")
	}
	if s.MinScore != nil && (*s.MinScore < 0 || *s.MinScore > 1) {
		return ferr("min_score", "must lie in 0..1")
	}
	return nil
}

func evalMilestones(_ context.Context, c *Check, in input) (bool, string, error) {
	s := c.Spec
	var got, total float64
	for _, id := range s.Milestones {
		m, ok := in.ms[id]
		if !ok {
			return false, "", fmt.Errorf("milestone %q was not evaluated", id)
		}
		total += m.Weight
		if m.Pass {
			got += m.Weight
		}
	}
	min := 1.0
	if s.MinScore != nil {
		min = *s.MinScore
	}
	score := 0.0
	if total > 0 {
		score = got / total
	}
	if score >= min-1e-9 {
		return pass("milestone score %.2f reaches %.2f", score, min)
	}
	return failf("milestone score %.2f is below %.2f", score, min)
}
