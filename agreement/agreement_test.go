package agreement

import (
	"math"
	"testing"
)

func pairs(pp, pf, fp, ff int) []Pair {
	var out []Pair
	add := func(n int, a, b bool) {
		for range n {
			out = append(out, Pair{Task: "t", Repeat: len(out), A: a, B: b})
		}
	}
	add(pp, true, true)
	add(pf, true, false)
	add(fp, false, true)
	add(ff, false, false)
	return out
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name               string
		pp, pf, fp, ff     int
		agreement, kappa   float64
		kappaNil           bool
		disagree           int
		kappaText, matrix0 string
	}{
		// Cohen's textbook case: 20 yes/yes, 5 yes/no, 10 no/yes, 15
		// no/no: po 0.7, pe 0.5, kappa 0.4.
		{name: "textbook", pp: 20, pf: 5, fp: 10, ff: 15, agreement: 0.7, kappa: 0.4, disagree: 15, kappaText: "0.40"},
		{name: "perfect", pp: 3, ff: 2, agreement: 1, kappa: 1, kappaText: "1.00"},
		{name: "opposite", pf: 2, fp: 2, agreement: 0, kappa: -1, disagree: 4, kappaText: "-1.00"},
		{name: "one verdict throughout", pp: 4, agreement: 1, kappaNil: true, kappaText: "n/a"},
		{name: "none", kappaNil: true, kappaText: "n/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Compare(pairs(tc.pp, tc.pf, tc.fp, tc.ff))
			if s.PassPass != tc.pp || s.PassFail != tc.pf || s.FailPass != tc.fp || s.FailFail != tc.ff || s.N != tc.pp+tc.pf+tc.fp+tc.ff {
				t.Errorf("matrix %+v", s)
			}
			if math.Abs(s.Agreement-tc.agreement) > 1e-9 || len(s.Disagree) != tc.disagree {
				t.Errorf("agreement %v, %d disagree", s.Agreement, len(s.Disagree))
			}
			if tc.kappaNil != (s.Kappa == nil) || (s.Kappa != nil && math.Abs(*s.Kappa-tc.kappa) > 1e-9) {
				t.Errorf("kappa %v", s.KappaString())
			}
			if s.KappaString() != tc.kappaText {
				t.Errorf("kappa text %q, want %q", s.KappaString(), tc.kappaText)
			}
			if s.N > 0 && math.Abs(s.Disagreement()+s.Agreement-1) > 1e-9 {
				t.Errorf("disagreement %v", s.Disagreement())
			}
		})
	}
	if got := Compare(pairs(1, 2, 3, 4)).Matrix(); got != "pass/pass 1, pass/fail 2, fail/pass 3, fail/fail 4" {
		t.Errorf("Matrix() = %q", got)
	}
}
