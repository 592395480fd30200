package check

import (
	"context"
	"math"
)

// Range: the probe's value is a number in [min, max], each bound widened
// by tolerance; either bound may be left out.
const Range Kind = "range"

func init() {
	register(Range, kindDef{
		fields:   []string{"probe", "min", "max", "tolerance"},
		compile:  compileRange,
		evaluate: evalRange,
	})
}

func compileRange(c *Check) error {
	s := c.Spec
	if err := needProbe(c); err != nil {
		return err
	}
	if s.Min == nil && s.Max == nil {
		return ferr("min", "a range check needs min, max or both")
	}
	if s.Min != nil && s.Max != nil && *s.Min > *s.Max {
		return ferr("max", "max %g is below min %g", *s.Max, *s.Min)
	}
	return nil
}

func evalRange(_ context.Context, c *Check, in input) (bool, string, error) {
	s := c.Spec
	f, ok := parseNumber(in.val)
	if !ok {
		return failf("%s is not a number: %s", s.Probe, quote(in.val))
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if s.Min != nil {
		lo = *s.Min - s.Tolerance
	}
	if s.Max != nil {
		hi = *s.Max + s.Tolerance
	}
	if f >= lo && f <= hi {
		return pass("%g lies in [%g, %g]", f, lo, hi)
	}
	return failf("%g lies outside [%g, %g]", f, lo, hi)
}
