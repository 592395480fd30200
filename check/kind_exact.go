package check

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// Exact: the probe's value equals expected, as a string, a number (within
// tolerance) or a JSON value.
const Exact Kind = "exact"

func init() {
	register(Exact, kindDef{
		fields:   []string{"probe", "expected", "as", "tolerance", "case_sensitive"},
		compile:  compileExact,
		evaluate: evalExact,
	})
}

func compileExact(c *Check) error {
	s := c.Spec
	if err := needProbe(c); err != nil {
		return err
	}
	if s.Expected == nil {
		return ferr("expected", "an exact check needs an expected value")
	}
	switch s.As {
	case "", "string", "number", "json":
	default:
		return ferr("as", "must be string, number or json, not %q", s.As)
	}
	if s.As == "number" || s.As == "" && isNumber(s.Expected) {
		if _, ok := toFloat(s.Expected); !ok {
			return ferr("expected", "%v is not a number", s.Expected)
		}
	}
	return nil
}

func evalExact(_ context.Context, c *Check, in input) (bool, string, error) {
	s, val := c.Spec, in.val
	as := s.As
	if as == "" {
		switch s.Expected.(type) {
		case string:
			as = "string"
		case map[string]any, []any:
			as = "json"
		default:
			as = "number"
		}
	}
	switch as {
	case "number":
		want, _ := toFloat(s.Expected)
		got, ok := parseNumber(val)
		if !ok {
			return failf("%s is not a number: %s", s.Probe, quote(val))
		}
		if math.Abs(got-want) <= s.Tolerance {
			return pass("%g equals %g", got, want)
		}
		return failf("%g is not %g", got, want)
	case "json":
		var got any
		if err := json.Unmarshal([]byte(val), &got); err != nil {
			return failf("%s is not JSON: %v", s.Probe, err)
		}
		want := normalizeJSON(s.Expected)
		if reflect.DeepEqual(got, want) {
			return pass("the JSON values are equal")
		}
		wb, _ := json.Marshal(want)
		return failf("JSON %s is not %s", quote(strings.TrimSpace(val)), quote(string(wb)))
	default:
		// Trailing line breaks are ignored on both sides (a command's
		// output, a YAML block scalar); every other space counts.
		want := strings.TrimRight(fmt.Sprint(s.Expected), "\r\n")
		got := strings.TrimRight(val, "\r\n")
		if c.fold(got) == c.fold(want) {
			return pass("value equals %s", quote(want))
		}
		return failf("value %s is not %s", quote(got), quote(want))
	}
}

// normalizeJSON round-trips v so that numbers are float64 and maps are
// map[string]any, as json.Unmarshal produces them.
func normalizeJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func isNumber(v any) bool {
	_, ok := toFloat(v)
	return ok
}
