package check

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/observe"
)

// Exists and NotExists: a file, an element or a window is there, or is
// not; or a probe finds something to read, or does not (a page's
// selector, a cookie, a row of a service's database, a 2xx answer of its
// API). The two share one definition with the sense flipped, so they live
// together.
const (
	Exists    Kind = "exists"
	NotExists Kind = "not_exists"
)

func init() {
	fields := []string{"file", "element", "window", "probe"}
	register(Exists, kindDef{fields: fields, probe: probeByKind, compile: compileExists, evaluate: evalExists})
	register(NotExists, kindDef{fields: fields, probe: probeByKind, compile: compileExists, evaluate: evalExists})
}

func compileExists(c *Check) error {
	s := c.Spec
	n := 0
	for _, set := range []bool{s.File != "", s.Element != nil, s.Window != "", s.Probe != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return ferr("file", "an %s check needs exactly one of file, element, window, probe", s.Kind)
	}
	if s.Probe != nil {
		return needProbe(c)
	}
	return nil
}

func evalExists(ctx context.Context, c *Check, in input) (bool, string, error) {
	what, present, err := c.exists(ctx, in.ev)
	if err != nil {
		return false, "", err
	}
	if present == (c.Spec.Kind == Exists) {
		return pass("%s %s", what, map[bool]string{true: "exists", false: "does not exist"}[present])
	}
	return failf("%s %s", what, map[bool]string{true: "exists", false: "does not exist"}[present])
}

func (c *Check) exists(ctx context.Context, ev Evidence) (string, bool, error) {
	s := c.Spec
	switch {
	case s.Probe != nil:
		_, found, err := c.probe(ctx, ev)
		var bad unreadable
		if err != nil && !errors.As(err, &bad) {
			return "", false, err
		}
		return s.Probe.String(), found, nil
	case s.File != "":
		_, err := ev.ReadFile(ctx, s.File)
		if errors.Is(err, observe.ErrNotFound) {
			return "file " + s.File, false, nil
		}
		if err != nil {
			return "", false, infraError{err}
		}
		return "file " + s.File, true, nil
	case s.Element != nil:
		els, err := ev.Elements(ctx, *s.Element)
		if err != nil {
			return "", false, infraError{err}
		}
		return "element " + s.Element.Describe(), len(els) > 0, nil
	default:
		ws, err := ev.Windows(ctx)
		if err != nil {
			return "", false, infraError{err}
		}
		for _, w := range ws {
			if strings.Contains(strings.ToLower(w), strings.ToLower(s.Window)) {
				return fmt.Sprintf("window %q", s.Window), true, nil
			}
		}
		return fmt.Sprintf("window %q", s.Window), false, nil
	}
}
