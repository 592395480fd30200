package check

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestPredicateBombs: expressions that pass the compiler but would build
// gigabytes or loop for hours fail their check with a reason naming the
// limit, and the process stays small. Before the limits, the first ones
// died with "out of memory" and the loops ran for hours.
func TestPredicateBombs(t *testing.T) {
	// The limits of size and steps must stop these, not the time limit,
	// even on a slow machine or under the race detector.
	defer func(d time.Duration) { exprTimeout = d }(exprTimeout)
	exprTimeout = time.Minute
	ev := evidence(t)
	tests := []struct {
		name, expr string
		why        string // substring of the reason
	}{
		{"nested repeat", `repeat(repeat("x", 1000000), 1000000) == ""`, "repeat: expression limit: it would build more than 33554432 bytes"},
		{"concatenation in a loop", `len(reduce(1..1000000, #acc + "xxxxxxxxxx", "")) > 0`, "+: expression limit: it would build more than"},
		{"doubling", `let a = repeat("x", 1000000); let b = a + a; let c = b + b; let d = c + c; let e = d + d; let f = e + e; let g = f + f; let h = g + g; len(h) > 0`, "+: expression limit"},
		{"join of many references", `let s = repeat("x", 1000000); len(join(map(1..1000, s))) > 0`, "join: expression limit"},
		{"join of a huge range", `len(join(map(1..(len(text) * 1000000), "x"))) > 0`, "expression limit: it would hold more than 1048576 values"},
		{"string of many references", `let s = repeat("x", 100000); len(string(map(1..1000, s))) > 0`, "string: expression limit"},
		{"toJSON of many references", `let s = repeat("x", 100000); len(toJSON(map(1..1000, s))) > 0`, "toJSON: expression limit"},
		{"replace by itself", `let s = repeat("ab", 500000); len(replace(s, "a", s)) > 0`, "replace: expression limit"},
		{"split in a loop", `let s = repeat("x", 1000000); len(map(1..100, split(s, ""))) > 0`, "split: expression limit"},
		{"upper in a loop", `let s = repeat("x", 1000000); len(map(1..1000, upper(s))) > 0`, "upper: expression limit"},
		{"concat of one list", `let a = 1..100000; len(concat(a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a)) > 0`, "concat: expression limit"},
		{"flatten of references", `let a = 1..100000; len(flatten(map(1..100, a))) > 0`, "flatten: expression limit"},
		{"nested loops", `let r = 1..1000; all(r, all(r, all(r, # > 0)))`, "expression limit: more than 1000000 loop steps"},
		{"long built pattern", `text matches repeat("a", 100000)`, "expression limit: a pattern of 100000 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compile(Spec{Kind: Predicate, Probe: &Probe{Clipboard: true}, Expr: tc.expr})
			if err != nil {
				t.Fatalf("does not compile: %v", err)
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r := c.Evaluate(context.Background(), ev, nil)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d MB allocated: %s", alloc>>20, r.Reason)
			if r.Pass || r.Err != "" || !strings.Contains(r.Reason, tc.why) {
				t.Errorf("got %+v, want a failure with %q", r, tc.why)
			}
			if alloc > 256<<20 {
				t.Errorf("allocated %d MB", alloc>>20)
			}
		})
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.Sys > 512<<20 {
		t.Errorf("the process holds %d MB", m.Sys>>20)
	}
}

// TestPredicateTimeLimit: a predicate that is still running at the
// deadline fails then, whether a measured function notices (a loop about
// to start) or not (one long loop of slow steps), and a cancelled context
// stops it at once.
func TestPredicateTimeLimit(t *testing.T) {
	defer func(d time.Duration) { exprTimeout = d }(exprTimeout)
	exprTimeout = 100 * time.Millisecond
	tests := []string{
		// Many loops, each measured: a function sees the deadline.
		`let s = repeat("x", 1000000); all(1..1000, all(1..30, indexOf(s, "y") < 0))`,
		// One loop of 10,000 slow steps (about 0.3 s): nothing is measured
		// inside it, and the check returns at the deadline.
		`let s = repeat("x", 1000000); all(1..10000, indexOf(s, "y") < 0)`,
	}
	for _, e := range tests {
		c, err := compilePredicate(e)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = runPredicate(context.Background(), c, predEnv{})
		t.Logf("%v: %v", time.Since(start), err)
		if !errors.Is(err, errExprLimit) || !strings.Contains(err.Error(), "ran longer than 100ms") {
			t.Errorf("%s: got %v, want the time limit", e, err)
		}
	}
	c, err := compilePredicate(`let r = 1..1000; all(r, all(r, # > 0))`)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = runPredicate(ctx, c, predEnv{})
	if !errors.Is(err, errExprLimit) || !strings.Contains(err.Error(), "ran longer than") {
		t.Errorf("cancelled: got %v, want the time limit", err)
	}
}

// TestPredicateLint: what is sure to pass a limit is refused when the
// task is linted.
func TestPredicateLint(t *testing.T) {
	tests := []struct{ expr, why string }{
		{`repeat("x", 1000000000) == ""`, "repeat builds 1 × 1000000000 bytes, more than the limit of 33554432"},
		{`repeat("xy", 1000000000000) == ""`, "repeat builds 2 × 1000000000000 bytes, more than the limit"},
		{`len(1..100000000) > 0`, "the range 1..100000000 has more elements than the limit of 1048576"},
		{strings.Repeat("(", 5000) + "true" + strings.Repeat(")", 5000), "the expression has 10004 bytes, more than the limit of 8192"},
		{strings.Repeat("[", 4000) + strings.Repeat("]", 4000) + " == []", "nodes"},
	}
	for _, tc := range tests {
		_, err := Compile(Spec{Kind: Predicate, Probe: &Probe{Clipboard: true}, Expr: tc.expr})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "expr" || !strings.Contains(fe.Reason, tc.why) {
			t.Errorf("%.40s: got %v, want expr: %s", tc.expr, err, tc.why)
		}
	}
}

// TestPredicatesStillWork: the rewritten "+", the measured builtins and
// the counted loops behave as expr's own.
func TestPredicatesStillWork(t *testing.T) {
	ev := evidence(t)
	tests := []struct {
		probe Probe
		expr  string
	}{
		{Probe{Clipboard: true}, `text + "!" == "copied text!" && upper(text) == "COPIED TEXT" && lower("AB") == "ab"`},
		{Probe{Clipboard: true}, `len(split(text, " ")) == 2 && splitAfter("a,b", ",")[0] == "a," && join(map(["a", "b"], # + "1"), ",") == "a1,b1"`},
		{Probe{Clipboard: true}, `repeat("ab", 3) == "ababab" && replace("aXa", "a", "bb") == "bbXbb" && trim("  x ") == "x"`},
		{Probe{Clipboard: true}, `1 + 2 == 3 && 1.5 + 1 == 2.5 && all([1, 2, 3], # > 0) && sum(map(1..10, #)) == 55 && reduce(1..4, #acc + #, 0) == 10`},
		{Probe{Clipboard: true}, `string(12) == "12" && toJSON([1]) == "[\n  1\n]" && fromJSON("[1,2]")[1] == 2 && fromBase64(toBase64("hi")) == "hi"`},
		{Probe{Clipboard: true}, `reverse([1, 2])[0] == 2 && uniq([1, 1, 2]) == [1, 2] && sort([3, 1])[0] == 1 && take([1, 2, 3], 2) == [1, 2]`},
		{Probe{Clipboard: true}, `keys({"a": 1})[0] == "a" && values({"a": 1})[0] == 1 && toPairs({"a": 1})[0][0] == "a" && fromPairs([["a", 1]]).a == 1`},
		{Probe{Clipboard: true}, `concat([1], [2]) == [1, 2] && flatten([[1], [2, [3]]]) == [1, 2, 3] && text matches "^cop" && text matches ("^" + "cop")`},
		{Probe{Clipboard: true}, `filter(["a", "bb"], len(#) > 1) == ["bb"] && sortBy([{"n": 2}, {"n": 1}], .n)[0].n == 1 && count([1, 2, 3], # > 1) == 2`},
		{Probe{File: "/root/state.json"}, `value.cells.A1 + value.cells.A2 == 12 && value.sheet + "!" == "Sheet1!"`},
		{Probe{File: "/root/report.json"}, `sum(value.rows) == 6 && any(value.rows, # == 3) && join(map(value.rows, string(#)), "") == "123"`},
	}
	for _, tc := range tests {
		p := tc.probe
		c, err := Compile(Spec{Kind: Predicate, Probe: &p, Expr: tc.expr})
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		if r := c.Evaluate(context.Background(), ev, nil); !r.Pass {
			t.Errorf("%s: %s", tc.expr, r.Reason)
		}
	}
	// Type errors are still found when the task is linted.
	for _, e := range []string{`upper(1) == ""`, `repeat("x") == ""`, `text + 1`, `reverse(1) == []`} {
		if _, err := Compile(Spec{Kind: Predicate, Probe: &Probe{Clipboard: true}, Expr: e}); err == nil {
			t.Errorf("%s: compiled", e)
		}
	}
}
