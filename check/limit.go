package check

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/vm"
	"github.com/expr-lang/expr/vm/runtime"
)

// Predicates run the task author's expression over what the agent left
// behind, so neither may make the harness run out of memory or time.
// expr's own bounds are the node limit and the VM's memory budget, which
// counts ranges, array and map literals and the results of loops, but not
// what builtins such as repeat, join or replace, or string "+", build, nor
// the iterations of a loop. Those are bounded here: the builtins that build
// strings or lists are replaced by versions that measure their result
// before building it, "+" goes through a function that does the same, and
// each loop counts its iterations before it starts. The counts live in the
// context that expr.WithContext passes to those functions, one per run.
const (
	// MaxExprNodes bounds an expression's syntax tree.
	MaxExprNodes = 1000
	// MaxExprMemory bounds the allocations the expression VM counts.
	MaxExprMemory = 1 << 20
	// MaxExprLength bounds an expression's text: it bounds the parser's
	// recursion (nested brackets), which the node limit does not.
	MaxExprLength = 8 << 10
	// MaxExprBytes bounds the strings and lists (16 bytes an element) that
	// builtins and "+" build in one evaluation.
	MaxExprBytes = 32 << 20
	// MaxExprSteps bounds the iterations of all loops (map, filter, all,
	// reduce and the like) in one evaluation.
	MaxExprSteps = 1_000_000
	// MaxExprTime bounds one evaluation's time.
	MaxExprTime = 10 * time.Second
	// maxPattern bounds a regular expression built while evaluating:
	// compiling one costs memory many times its length.
	maxPattern = 64 << 10
)

// exprTimeout is MaxExprTime, shortened by tests.
var exprTimeout = MaxExprTime

// errExprLimit is wrapped by the errors of an evaluation that passed a
// limit.
var errExprLimit = errors.New("expression limit")

// exprCtx is the context of one evaluation, with what it has used.
type exprCtx struct {
	context.Context
	timeout time.Duration
	steps   int
	bytes   int
}

func (c *exprCtx) over(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errExprLimit}, args...)...)
}

// step counts the n iterations of a loop about to start. A loop that
// stops early (any, find) is counted whole: the count is a bound, taken
// once a loop rather than once an iteration, which would double the cost
// of a loop.
func (c *exprCtx) step(n int) error {
	if n > MaxExprSteps-c.steps {
		return c.over("more than %d loop steps", MaxExprSteps)
	}
	c.steps += n
	if c.Err() != nil {
		return c.over("it ran longer than %v", c.timeout)
	}
	return nil
}

// alloc counts n bytes about to be built.
func (c *exprCtx) alloc(n int) error {
	if n < 0 || n > MaxExprBytes-c.bytes {
		return c.over("it would build more than %d bytes of strings and lists", MaxExprBytes)
	}
	c.bytes += n
	if c.Err() != nil {
		return c.over("it ran longer than %v", c.timeout)
	}
	return nil
}

func ctxOf(args []any) (*exprCtx, []any, error) {
	if len(args) > 0 {
		if c, ok := args[0].(*exprCtx); ok {
			return c, args[1:], nil
		}
	}
	return nil, nil, errors.New("internal error: no evaluation context")
}

// mul is a*b, or -1 when it overflows.
func mul(a, b int) int {
	if a < 0 || b < 0 {
		return -1
	}
	if a != 0 && b > math.MaxInt/a {
		return -1
	}
	return a * b
}

// length is the length of a string, list or map, else 0.
func length(v any) int {
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.String, reflect.Slice, reflect.Array, reflect.Map:
		return r.Len()
	}
	return 0
}

// sizeOf estimates how many bytes printing v (as JSON or with fmt) takes,
// giving up once past limit: a list may hold the same long string many
// times over, so the result can be far larger than v's memory.
func sizeOf(v any, depth, limit int) int {
	if depth > 10_000 {
		return limit + 1
	}
	switch x := v.(type) {
	case nil, bool:
		return 5
	case string:
		// JSON escapes may take six bytes a character.
		return 2 + mul(len(x), 6)
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Slice, reflect.Array:
		n := 2
		for i := 0; i < r.Len() && n <= limit; i++ {
			// Indented JSON puts each element on its own line.
			n += 2*depth + 4 + sizeOf(r.Index(i).Interface(), depth+1, limit-n)
		}
		return n
	case reflect.Map:
		n := 2
		it := r.MapRange()
		for it.Next() && n <= limit {
			n += 2*depth + 6 + sizeOf(it.Key().Interface(), depth+1, limit-n) + sizeOf(it.Value().Interface(), depth+1, limit-n)
		}
		return n
	case reflect.Pointer, reflect.Interface:
		if r.IsNil() {
			return 5
		}
		return sizeOf(r.Elem().Interface(), depth, limit)
	case reflect.Struct:
		return 2 + mul(r.NumField(), 64)
	}
	return 32 // a number, a date, a duration
}

// cost says how many bytes a builtin's call will build, from its
// arguments, before it runs.
type cost func(c *exprCtx, args []any) int

func str(args []any, i int) string {
	if i < len(args) {
		s, _ := args[i].(string)
		return s
	}
	return ""
}

func count(s, sep string) int {
	if sep == "" {
		return utf8.RuneCountInString(s) + 1
	}
	return strings.Count(s, sep) + 1
}

func listCost(args []any) int { return mul(16, length(args[0])) }

// builders are the builtins whose result may be large, with their cost.
// The others return a number, a bool, a part of their argument or one of
// its elements, or run a loop that takes steps.
var builders = map[string]cost{
	"repeat": func(_ *exprCtx, a []any) int {
		if len(a) < 2 || runtime.ToInt(a[1]) < 0 {
			return 0 // the builtin refuses it
		}
		return mul(len(str(a, 0)), runtime.ToInt(a[1]))
	},
	"join": func(_ *exprCtx, a []any) int {
		n, sep := 0, str(a, 1)
		r := reflect.ValueOf(a[0])
		if r.Kind() != reflect.Slice && r.Kind() != reflect.Array {
			return 0
		}
		for i := 0; i < r.Len() && n >= 0; i++ {
			if s, ok := r.Index(i).Interface().(string); ok {
				n += len(s) + len(sep)
			}
		}
		return n
	},
	"replace": func(_ *exprCtx, a []any) int {
		s, old, repl := str(a, 0), str(a, 1), str(a, 2)
		if len(repl) <= len(old) {
			return len(s)
		}
		return len(s) + mul(count(s, old), len(repl)-len(old))
	},
	"upper":      func(_ *exprCtx, a []any) int { return mul(len(str(a, 0)), 3) }, // case mapping may grow a character
	"lower":      func(_ *exprCtx, a []any) int { return mul(len(str(a, 0)), 3) },
	"split":      func(_ *exprCtx, a []any) int { return mul(16, count(str(a, 0), str(a, 1))) },
	"splitAfter": func(_ *exprCtx, a []any) int { return mul(16, count(str(a, 0), str(a, 1))) },
	"string": func(c *exprCtx, a []any) int {
		return sizeOf(a[0], 0, MaxExprBytes-c.bytes)
	},
	"toJSON": func(c *exprCtx, a []any) int {
		return sizeOf(a[0], 0, MaxExprBytes-c.bytes)
	},
	"fromJSON":   func(_ *exprCtx, a []any) int { return mul(len(str(a, 0)), 16) }, // a value per two bytes, at worst
	"toBase64":   func(_ *exprCtx, a []any) int { return len(str(a, 0))*4/3 + 4 },
	"fromBase64": func(_ *exprCtx, a []any) int { return len(str(a, 0)) },
	"reverse":    func(_ *exprCtx, a []any) int { return listCost(a) },
	"uniq":       func(_ *exprCtx, a []any) int { return listCost(a) },
	"sort":       func(_ *exprCtx, a []any) int { return listCost(a) },
	"take":       func(_ *exprCtx, a []any) int { return listCost(a) },
	"keys":       func(_ *exprCtx, a []any) int { return listCost(a) },
	"values":     func(_ *exprCtx, a []any) int { return listCost(a) },
	"toPairs":    func(_ *exprCtx, a []any) int { return mul(4, listCost(a)) },
	"fromPairs":  func(_ *exprCtx, a []any) int { return mul(4, listCost(a)) },
	"concat": func(_ *exprCtx, a []any) int {
		n := 0
		for _, x := range a {
			n += mul(16, length(x))
		}
		return n
	},
	"flatten": func(c *exprCtx, a []any) int { return mul(16, leaves(a[0], 0, (MaxExprBytes-c.bytes)/16)) },
}

// leaves counts the elements flatten gives, giving up past limit.
func leaves(v any, depth, limit int) int {
	r := reflect.ValueOf(v)
	if r.Kind() != reflect.Slice && r.Kind() != reflect.Array {
		return 1
	}
	if depth > 10_000 {
		return limit + 1
	}
	n := 0
	for i := 0; i < r.Len() && n <= limit; i++ {
		n += leaves(r.Index(i).Interface(), depth+1, limit-n)
	}
	return n
}

var (
	ctxType     = reflect.TypeOf((*context.Context)(nil)).Elem()
	exprCtxType = reflect.TypeOf((*exprCtx)(nil))
)

// withCtx gives the function type t a context.Context first parameter.
func withCtx(t reflect.Type) reflect.Type {
	in := []reflect.Type{ctxType}
	for i := range t.NumIn() {
		in = append(in, t.In(i))
	}
	out := make([]reflect.Type, t.NumOut())
	for i := range out {
		out[i] = t.Out(i)
	}
	return reflect.FuncOf(in, out, t.IsVariadic())
}

// anyFunc is the type given to functions that expr checks otherwise.
var anyFunc = reflect.TypeOf(func(context.Context, ...any) any { return nil })

// measured replaces the builtin name by a version that takes the context
// first (expr.WithContext passes it) and charges the cost of its result
// before building it. Its types are the builtin's, so that expressions are
// checked as before.
func measured(name string, cost cost) expr.Option {
	orig := builtin.Builtins[builtin.Index[name]]
	call := func(args ...any) (any, error) {
		switch {
		case orig.Func != nil:
			return orig.Func(args...)
		case orig.Fast != nil:
			return orig.Fast(args[0]), nil
		default:
			v, _, err := orig.Safe(args...)
			return v, err
		}
	}
	f := &builtin.Function{
		Name: name,
		Func: func(args ...any) (any, error) {
			c, args, err := ctxOf(args)
			if err != nil {
				return nil, err
			}
			if len(args) == 0 {
				return call(args...)
			}
			if err := c.alloc(cost(c, args)); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return call(args...)
		},
	}
	for _, t := range orig.Types {
		f.Types = append(f.Types, withCtx(t))
	}
	if orig.Validate != nil {
		// The context is the first argument once expr.WithContext has
		// added it; the builtin's own check sees the others.
		f.Types = []reflect.Type{anyFunc}
		f.Validate = func(args []reflect.Type) (reflect.Type, error) {
			if len(args) > 0 && args[0] == exprCtxType {
				args = args[1:]
			}
			return orig.Validate(args)
		}
	}
	return func(c *conf.Config) { c.Functions[name] = f }
}

// Names of the functions the limiter calls.
const (
	loopFn    = "_loop"
	addFn     = "_add"
	matchesFn = "_matches"
)

// loops are the builtins that loop over their first argument.
var loops = map[string]bool{
	"all": true, "none": true, "any": true, "one": true, "filter": true, "map": true,
	"count": true, "sum": true, "find": true, "findIndex": true, "findLast": true,
	"findLastIndex": true, "groupBy": true, "sortBy": true, "reduce": true,
}

// exprOptions are the options of every predicate.
func exprOptions(l *limiter) []expr.Option {
	opts := []expr.Option{
		expr.Env(predEnv{}), expr.AsBool(), expr.MaxNodes(MaxExprNodes),
		expr.Function(loopFn, func(args ...any) (any, error) {
			c, args, err := ctxOf(args)
			if err != nil {
				return nil, err
			}
			return args[0], c.step(length(args[0]))
		}, new(func(context.Context, any) any)),
		expr.Function(addFn, func(args ...any) (any, error) {
			c, args, err := ctxOf(args)
			if err != nil {
				return nil, err
			}
			if a, ok := args[0].(string); ok {
				if b, ok := args[1].(string); ok {
					if err := c.alloc(len(a) + len(b)); err != nil {
						return nil, fmt.Errorf("+: %w", err)
					}
					return a + b, nil
				}
			}
			return runtime.Add(args[0], args[1]), nil
		}, new(func(context.Context, any, any) any)),
		expr.Function(matchesFn, func(args ...any) (any, error) {
			_, args, err := ctxOf(args)
			if err != nil {
				return nil, err
			}
			s, ok1 := args[0].(string)
			p, ok2 := args[1].(string)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("matches needs strings, not %T and %T", args[0], args[1])
			}
			if len(p) > maxPattern {
				return nil, fmt.Errorf("matches: %w: a pattern of %d bytes is longer than %d", errExprLimit, len(p), maxPattern)
			}
			return regexp.MatchString(p, s)
		}, new(func(context.Context, any, any) bool)),
	}
	for name, c := range builders {
		opts = append(opts, measured(name, c))
	}
	// The limiter patches before expr.WithContext adds the context to
	// the calls it makes.
	return append(opts, expr.Patch(l), expr.WithContext("ctx"))
}

// limiter rewrites an expression so that evaluating it is measured, and
// notes what is sure to pass a limit whatever the input.
type limiter struct{ err error }

func call(name string, args ...ast.Node) ast.Node {
	return &ast.CallNode{Callee: &ast.IdentifierNode{Value: name}, Arguments: args}
}

// stringy reports whether a value of type t may be a string.
func stringy(t reflect.Type) bool {
	return t == nil || t.Kind() == reflect.String || t.Kind() == reflect.Interface
}

func constInt(n ast.Node) (int, bool) {
	switch x := n.(type) {
	case *ast.IntegerNode:
		return x.Value, true
	case *ast.FloatNode:
		if x.Value >= math.MinInt32 && x.Value <= math.MaxInt64/2 {
			return int(x.Value), true
		}
	}
	return 0, false
}

func (l *limiter) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.BuiltinNode:
		if loops[n.Name] && len(n.Arguments) > 0 {
			n.Arguments[0] = call(loopFn, n.Arguments[0])
		}
	case *ast.BinaryNode:
		switch n.Operator {
		case "+":
			// Only strings grow; numbers, dates and mismatched types
			// are left to expr, which also reports the mismatches.
			if stringy(n.Left.Type()) && stringy(n.Right.Type()) {
				ast.Patch(node, call(addFn, n.Left, n.Right))
			}
		case "matches":
			if _, ok := n.Right.(*ast.StringNode); !ok {
				ast.Patch(node, call(matchesFn, n.Left, n.Right))
			}
		case "..":
			a, ok1 := constInt(n.Left)
			b, ok2 := constInt(n.Right)
			if ok1 && ok2 && b-a >= int(MaxExprMemory) && l.err == nil {
				l.err = fmt.Errorf("the range %d..%d has more elements than the limit of %d", a, b, MaxExprMemory)
			}
		}
	case *ast.CallNode:
		id, ok := n.Callee.(*ast.IdentifierNode)
		if !ok || id.Value != "repeat" || len(n.Arguments) != 2 {
			return
		}
		s, ok1 := n.Arguments[0].(*ast.StringNode)
		k, ok2 := constInt(n.Arguments[1])
		if ok1 && ok2 && (mul(len(s.Value), k) < 0 || mul(len(s.Value), k) > MaxExprBytes) && l.err == nil {
			l.err = fmt.Errorf("repeat builds %d × %d bytes, more than the limit of %d", len(s.Value), k, MaxExprBytes)
		}
	}
}

// compilePredicate compiles a predicate's expression with the limits.
func compilePredicate(src string) (*vm.Program, error) {
	if len(src) > MaxExprLength {
		return nil, fmt.Errorf("the expression has %d bytes, more than the limit of %d", len(src), MaxExprLength)
	}
	l := &limiter{}
	p, err := expr.Compile(src, exprOptions(l)...)
	if err != nil {
		return nil, errors.New(firstLine(err.Error()))
	}
	if l.err != nil {
		return nil, l.err
	}
	return p, nil
}

// runPredicate evaluates a compiled predicate within the limits. The
// measured functions stop it once the time is up; between their calls
// (inside one loop) expr cannot be interrupted, so the evaluation runs on
// its own goroutine and is left to finish, within the step and size
// limits, while the check returns at the deadline.
func runPredicate(ctx context.Context, p *vm.Program, env predEnv) (any, error) {
	timeout := exprTimeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	env.Ctx = &exprCtx{Context: ctx, timeout: timeout}
	type result struct {
		out any
		err error
	}
	done := make(chan result, 1)
	go func() {
		machine := vm.VM{MemoryBudget: MaxExprMemory}
		out, err := machine.Run(p, env)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && strings.Contains(r.err.Error(), "memory budget exceeded") {
			return nil, fmt.Errorf("%w: it would hold more than %d values (the VM's memory budget)", errExprLimit, MaxExprMemory)
		}
		return r.out, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: it ran longer than %v", errExprLimit, timeout)
	}
}
