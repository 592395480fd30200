package check

import (
	"context"
	"github.com/proctor-eval/proctor/internal/english"
	"regexp"
	"strings"
)

// Contains and NotContains: the probe's value contains value, as text or,
// with regex, as a match. The two share one definition with the sense
// flipped, so they live together.
const (
	Contains    Kind = "contains"
	NotContains Kind = "not_contains"
)

func init() {
	fields := []string{"probe", "value", "regex", "case_sensitive"}
	register(Contains, kindDef{fields: fields, compile: compileContains, evaluate: evalContains})
	// A probe with nothing to read (a missing file) contains nothing.
	register(NotContains, kindDef{fields: fields, probe: probeMayMiss, compile: compileContains, evaluate: evalContains})
}

func compileContains(c *Check) error {
	s := c.Spec
	if err := needProbe(c); err != nil {
		return err
	}
	if s.Value == "" {
		return ferr("value", "%s check needs a value", english.A(string(s.Kind)))
	}
	if s.Regex {
		pat := s.Value
		if !s.CaseSense {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return ferr("value", "bad regular expression: %v", err)
		}
		c.re = re
	}
	return nil
}

func evalContains(_ context.Context, c *Check, in input) (bool, string, error) {
	s, val := c.Spec, in.val
	var has bool
	if c.re != nil {
		has = c.re.MatchString(val)
	} else {
		has = strings.Contains(c.fold(val), c.fold(s.Value))
	}
	if s.Kind == Contains {
		if has {
			return pass("%s contains %s", s.Probe, quote(s.Value))
		}
		return failf("%s does not contain %s; it is %s", s.Probe, quote(s.Value), quote(val))
	}
	if has {
		return failf("%s contains %s", s.Probe, quote(s.Value))
	}
	return pass("%s does not contain %s", s.Probe, quote(s.Value))
}
