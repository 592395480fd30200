// Package agreement measures how far two raters of pass or fail agree on
// the same episodes - a judge model and a person, or a judge model and
// the rule-based checks: the share of episodes they agree on, Cohen's
// kappa (agreement beyond chance), the confusion matrix and the episodes
// where they disagree.
package agreement

import (
	"fmt"
	"math"
)

// Pair is one episode rated by both: A is the rater being measured (the
// judge), B the reference (a person, the rule-based checks).
type Pair struct {
	Task   string `json:"task"`
	Repeat int    `json:"repeat"`
	Label  string `json:"label,omitempty"` // what was rated, where an episode has several (a check's name)
	A      bool   `json:"a"`
	B      bool   `json:"b"`
}

// Stats compares the two raters.
type Stats struct {
	N int `json:"n"`
	// The confusion matrix: A's verdict first, B's second.
	PassPass int `json:"pass_pass"`
	PassFail int `json:"pass_fail"` // A passed, B failed
	FailPass int `json:"fail_pass"` // A failed, B passed
	FailFail int `json:"fail_fail"`
	// Agreement is the share of pairs rated alike (0 when N is 0).
	Agreement float64 `json:"agreement"`
	// Kappa is Cohen's kappa, (po - pe) / (1 - pe); nil where it is not
	// defined: no pairs, or both raters gave one same verdict throughout
	// (pe = 1).
	Kappa    *float64 `json:"kappa"`
	Disagree []Pair   `json:"disagree,omitempty"`
}

// Compare rates the pairs.
func Compare(pairs []Pair) Stats {
	s := Stats{N: len(pairs)}
	for _, p := range pairs {
		switch {
		case p.A && p.B:
			s.PassPass++
		case p.A:
			s.PassFail++
		case p.B:
			s.FailPass++
		default:
			s.FailFail++
		}
		if p.A != p.B {
			s.Disagree = append(s.Disagree, p)
		}
	}
	if s.N == 0 {
		return s
	}
	n := float64(s.N)
	po := float64(s.PassPass+s.FailFail) / n
	s.Agreement = po
	aPass := float64(s.PassPass+s.PassFail) / n
	bPass := float64(s.PassPass+s.FailPass) / n
	pe := aPass*bPass + (1-aPass)*(1-bPass)
	if math.Abs(1-pe) > 1e-12 {
		k := (po - pe) / (1 - pe)
		s.Kappa = &k
	}
	return s
}

// Disagreement is the share of pairs rated differently.
func (s Stats) Disagreement() float64 {
	if s.N == 0 {
		return 0
	}
	return float64(len(s.Disagree)) / float64(s.N)
}

// KappaString is kappa with two decimals, or "n/a" where it is not
// defined.
func (s Stats) KappaString() string {
	if s.Kappa == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", *s.Kappa)
}

// Matrix is the confusion matrix in a line: "pass/pass 3, pass/fail 1,
// fail/pass 0, fail/fail 4".
func (s Stats) Matrix() string {
	return fmt.Sprintf("pass/pass %d, pass/fail %d, fail/pass %d, fail/fail %d", s.PassPass, s.PassFail, s.FailPass, s.FailFail)
}
