package check

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Lines: the probe's lines equal the expected lines as a set, ignoring
// order, surrounding space and blank lines.
const Lines Kind = "lines"

func init() {
	register(Lines, kindDef{
		fields:   []string{"probe", "expected", "case_sensitive"},
		compile:  compileLines,
		evaluate: evalLines,
	})
}

func compileLines(c *Check) error {
	if err := needProbe(c); err != nil {
		return err
	}
	if _, ok := expectedLines(c.Spec.Expected); !ok {
		return ferr("expected", "a lines check needs a list of strings or a multi-line string")
	}
	return nil
}

func evalLines(_ context.Context, c *Check, in input) (bool, string, error) {
	want, _ := expectedLines(c.Spec.Expected)
	got := splitLines(in.val)
	norm := func(xs []string) []string {
		out := make([]string, 0, len(xs))
		for _, x := range xs {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, c.fold(x))
			}
		}
		sort.Strings(out)
		return out
	}
	if slices.Equal(norm(got), norm(want)) {
		return pass("the %d lines match, in any order", len(norm(want)))
	}
	missing, extra := diffSets(norm(want), norm(got))
	return failf("lines differ: missing %v, unexpected %v", missing, extra)
}

func expectedLines(v any) ([]string, bool) {
	switch x := v.(type) {
	case string:
		return splitLines(x), true
	case []any:
		out := make([]string, 0, len(x))
		for _, it := range x {
			s, ok := it.(string)
			if !ok {
				s = fmt.Sprint(it)
			}
			out = append(out, s)
		}
		return out, true
	case []string:
		return x, true
	}
	return nil, false
}

func splitLines(s string) []string {
	return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
}

func diffSets(want, got []string) (missing, extra []string) {
	count := map[string]int{}
	for _, w := range want {
		count[w]++
	}
	for _, g := range got {
		if count[g] > 0 {
			count[g]--
		} else {
			extra = append(extra, g)
		}
	}
	for _, w := range want {
		if count[w] > 0 {
			missing = append(missing, w)
			count[w]--
		}
	}
	return missing, extra
}
