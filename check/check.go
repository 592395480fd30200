package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // expected screenshots may be JPEG
	_ "image/png"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/proctor-eval/proctor/action"
)

// Limits of predicate expressions.
const (
	MaxExprNodes  = 1000
	MaxExprMemory = 1 << 20 // allocations counted by the expression VM
	// DefaultCommandTimeout bounds a check's command when the spec gives none.
	DefaultCommandTimeout = 30 * time.Second
)

// predEnv is what a predicate sees: value is the probe's output decoded
// from JSON (or the plain text when it is not JSON), text the raw output.
type predEnv struct {
	Value any    `expr:"value"`
	Text  string `expr:"text"`
	// Ctx carries the evaluation's limits to the functions that measure
	// it (see limit.go).
	Ctx *exprCtx `expr:"ctx"`
}

// Compile validates a spec and prepares it for evaluation. Errors are
// *FieldError values naming the field at fault.
func Compile(s Spec) (*Check, error) {
	allowed, ok := fields[s.Kind]
	if !ok {
		return nil, ferr("kind", "unknown check kind %q (known: %v)", s.Kind, Kinds)
	}
	for _, f := range s.setFields() {
		if !slices.Contains(allowed, f) {
			return nil, ferr(f, "does not apply to a %s check", s.Kind)
		}
	}
	if s.Probe != nil {
		if err := s.Probe.validate(); err != nil {
			return nil, ferr("probe", "%v", err)
		}
	}
	c := &Check{Spec: s}
	needProbe := func() error {
		if s.Probe == nil {
			return ferr("probe", "a %s check needs a probe", s.Kind)
		}
		return nil
	}
	if s.Tolerance < 0 {
		return nil, ferr("tolerance", "must not be negative")
	}
	switch s.Kind {
	case Exact:
		if err := needProbe(); err != nil {
			return nil, err
		}
		if s.Expected == nil {
			return nil, ferr("expected", "an exact check needs an expected value")
		}
		switch s.As {
		case "", "string", "number", "json":
		default:
			return nil, ferr("as", "must be string, number or json, not %q", s.As)
		}
		if s.As == "number" || s.As == "" && isNumber(s.Expected) {
			if _, ok := toFloat(s.Expected); !ok {
				return nil, ferr("expected", "%v is not a number", s.Expected)
			}
		}
	case Lines:
		if err := needProbe(); err != nil {
			return nil, err
		}
		if _, ok := expectedLines(s.Expected); !ok {
			return nil, ferr("expected", "a lines check needs a list of strings or a multi-line string")
		}
	case AnswerKind:
		if len(s.Accepted) == 0 {
			return nil, ferr("accepted", "an answer check needs at least one accepted answer")
		}
	case Contains, NotContains:
		if err := needProbe(); err != nil {
			return nil, err
		}
		if s.Value == "" {
			return nil, ferr("value", "a %s check needs a value", s.Kind)
		}
		if s.Regex {
			pat := s.Value
			if !s.CaseSense {
				pat = "(?i)" + pat
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				return nil, ferr("value", "bad regular expression: %v", err)
			}
			c.re = re
		}
	case Exists, NotExists:
		n := 0
		for _, set := range []bool{s.File != "", s.Element != nil, s.Window != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, ferr("file", "an %s check needs exactly one of file, element, window", s.Kind)
		}
	case Range:
		if err := needProbe(); err != nil {
			return nil, err
		}
		if s.Min == nil && s.Max == nil {
			return nil, ferr("min", "a range check needs min, max or both")
		}
		if s.Min != nil && s.Max != nil && *s.Min > *s.Max {
			return nil, ferr("max", "max %g is below min %g", *s.Max, *s.Min)
		}
	case FileEqual:
		if s.File == "" {
			return nil, ferr("file", "a file_equal check needs the file to compare")
		}
		if s.Asset == "" {
			return nil, ferr("asset", "a file_equal check needs the expected asset")
		}
		switch s.Mode {
		case "", "text", "json", "image":
		default:
			return nil, ferr("mode", "must be text, json or image, not %q", s.Mode)
		}
		if s.Tolerance > 1 {
			return nil, ferr("tolerance", "is the share of differing pixels, 0..1")
		}
	case CommandKind:
		if s.Command == "" {
			return nil, ferr("command", "a command check needs a command")
		}
		if s.ExitCode == nil && s.Stdout == nil && s.StdoutRE == "" {
			return nil, ferr("exit_code", "a command check needs exit_code, stdout or stdout_regex")
		}
		if s.StdoutRE != "" {
			re, err := regexp.Compile(s.StdoutRE)
			if err != nil {
				return nil, ferr("stdout_regex", "bad regular expression: %v", err)
			}
			c.re = re
		}
	case Predicate:
		if err := needProbe(); err != nil {
			return nil, err
		}
		if s.Expr == "" {
			return nil, ferr("expr", "a predicate check needs an expression")
		}
		p, err := compilePredicate(s.Expr)
		if err != nil {
			return nil, ferr("expr", "%v", err)
		}
		c.program = p
	case Process:
		if len(s.Steps) == 0 {
			return nil, ferr("steps", "a process check needs at least one step")
		}
		for i, st := range s.Steps {
			if strings.TrimSpace(st) == "" {
				return nil, ferr("steps", "step %d is empty", i+1)
			}
		}
	case Milestones:
		if len(s.Milestones) == 0 {
			return nil, ferr("milestones", "a milestones check needs the milestone ids it scores")
		}
		if s.MinScore != nil && (*s.MinScore < 0 || *s.MinScore > 1) {
			return nil, ferr("min_score", "must lie in 0..1")
		}
	}
	return c, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Result is the verdict of one check.
type Result struct {
	Name   string `json:"name"`
	Kind   Kind   `json:"kind"`
	Pass   bool   `json:"pass"`
	Reason string `json:"reason"`
	// Err is set when the evidence could not be read (an infrastructure
	// fault, not the agent's): the run should be retried, not scored.
	Err string `json:"error,omitempty"`
}

// MilestoneScores gives the score (0..1) of each milestone by id; a
// milestones check reads it.
type MilestoneScores map[string]MilestoneResult

// MilestoneResult is one milestone's outcome.
type MilestoneResult struct {
	ID     string   `json:"id"`
	Weight float64  `json:"weight"`
	Rubric string   `json:"rubric,omitempty"`
	Pass   bool     `json:"pass"`
	Checks []Result `json:"checks"`
}

// infraError marks evidence that could not be read.
type infraError struct{ err error }

func (e infraError) Error() string { return e.err.Error() }

func pass(format string, args ...any) (bool, string, error) {
	return true, fmt.Sprintf(format, args...), nil
}
func failf(format string, args ...any) (bool, string, error) {
	return false, fmt.Sprintf(format, args...), nil
}

// Evaluate runs the check on the evidence. ms is consulted by milestones
// checks only and may be nil otherwise.
func (c *Check) Evaluate(ctx context.Context, ev Evidence, ms MilestoneScores) Result {
	r := Result{Name: c.Spec.Label(), Kind: c.Spec.Kind}
	ok, reason, err := c.eval(ctx, ev, ms)
	if err != nil {
		var ie infraError
		if errors.As(err, &ie) {
			r.Err = err.Error()
			r.Reason = "evidence could not be read: " + err.Error()
			return r
		}
		r.Reason = err.Error()
		return r
	}
	r.Pass, r.Reason = ok, reason
	return r
}

// probe reads the probe's value. A missing file or element yields found=false.
func (c *Check) probe(ctx context.Context, ev Evidence) (val string, found bool, err error) {
	p := c.Spec.Probe
	switch {
	case p.Command != "":
		res, err := ev.Command(ctx, p.Command, c.timeout())
		if err != nil {
			return "", false, infraError{err}
		}
		if res.ExitCode != 0 {
			return res.Stdout, false, nil
		}
		return res.Stdout, true, nil
	case p.File != "":
		b, err := ev.ReadFile(ctx, p.File)
		if errors.Is(err, ErrNotExist) {
			return "", false, nil
		}
		if err != nil {
			return "", false, infraError{err}
		}
		if p.Read == "" && p.Cell == "" {
			return string(b), true, nil
		}
		v, err := decodeFile(b, p.Read, p.Cell)
		if err != nil {
			return "", true, unreadable{fmt.Errorf("%s: %v", p.File, err)}
		}
		return v, true, nil
	case p.Answer:
		a, ok := ev.Trajectory().Answer()
		return a, ok, nil
	case p.Element != nil:
		els, err := ev.Elements(ctx, *p.Element)
		if err != nil {
			return "", false, infraError{err}
		}
		if len(els) == 0 {
			return "", false, nil
		}
		if els[0].Text != "" {
			return els[0].Text, true, nil
		}
		return els[0].Name, true, nil
	case p.Window:
		ws, err := ev.Windows(ctx)
		if err != nil {
			return "", false, infraError{err}
		}
		return strings.Join(ws, "\n"), true, nil
	default:
		s, err := ev.Clipboard(ctx)
		if err != nil {
			return "", false, infraError{err}
		}
		return s, true, nil
	}
}

func (c *Check) timeout() time.Duration {
	if c.Spec.Timeout > 0 {
		return time.Duration(c.Spec.Timeout)
	}
	return DefaultCommandTimeout
}

func (c *Check) fold(s string) string {
	if c.Spec.CaseSense {
		return s
	}
	return strings.ToLower(s)
}

func quote(s string) string { return strconv.Quote(shorten(s, 120)) }

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

func (c *Check) eval(ctx context.Context, ev Evidence, ms MilestoneScores) (bool, string, error) {
	s := c.Spec
	var val string
	if s.Probe != nil && s.Kind != AnswerKind {
		v, found, err := c.probe(ctx, ev)
		var bad unreadable
		if errors.As(err, &bad) {
			return failf("%v", bad.err) // the file is there but is not what it should be
		}
		if err != nil {
			return false, "", err
		}
		if !found && s.Kind != NotContains {
			return failf("%s: nothing to read", s.Probe)
		}
		val = v
	}
	switch s.Kind {
	case Exact:
		return c.exact(val)
	case Lines:
		want, _ := expectedLines(s.Expected)
		got := splitLines(val)
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
	case AnswerKind:
		ans, ok := ev.Trajectory().Answer()
		if s.Probe != nil {
			v, found, err := c.probe(ctx, ev)
			if err != nil {
				return false, "", err
			}
			ans, ok = v, found
		}
		if !ok {
			return failf("the agent gave no answer")
		}
		for _, acc := range s.Accepted {
			if answersMatch(ans, acc, s.Tolerance, s.CaseSense) {
				return pass("answer %s matches %s", quote(ans), quote(acc))
			}
		}
		return failf("answer %s matches none of %v", quote(ans), s.Accepted)
	case Contains, NotContains:
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
	case Exists, NotExists:
		what, present, err := c.exists(ctx, ev)
		if err != nil {
			return false, "", err
		}
		if present == (s.Kind == Exists) {
			return pass("%s %s", what, map[bool]string{true: "exists", false: "does not exist"}[present])
		}
		return failf("%s %s", what, map[bool]string{true: "exists", false: "does not exist"}[present])
	case Range:
		f, ok := parseNumber(val)
		if !ok {
			return failf("%s is not a number: %s", s.Probe, quote(val))
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
	case Infeasible:
		a, ok := ev.Trajectory().Final()
		if ok && a.Kind == action.Fail {
			return pass("the agent said FAIL on an infeasible task")
		}
		if !ok {
			return failf("the agent never said FAIL on an infeasible task")
		}
		return failf("the agent ended with %s, but the task is infeasible", a.Kind)
	case FileEqual:
		return c.fileEqual(ctx, ev)
	case CommandKind:
		res, err := ev.Command(ctx, s.Command, c.timeout())
		if err != nil {
			return false, "", infraError{err}
		}
		if s.ExitCode != nil && res.ExitCode != *s.ExitCode {
			return failf("`%s` exited %d, want %d (stderr %s)", s.Command, res.ExitCode, *s.ExitCode, quote(res.Stderr))
		}
		if s.Stdout != nil && strings.TrimRight(res.Stdout, "\n") != strings.TrimRight(*s.Stdout, "\n") {
			return failf("`%s` printed %s, want %s", s.Command, quote(res.Stdout), quote(*s.Stdout))
		}
		if c.re != nil && !c.re.MatchString(res.Stdout) {
			return failf("`%s` printed %s, which does not match /%s/", s.Command, quote(res.Stdout), s.StdoutRE)
		}
		return pass("`%s` exited %d with the expected output", s.Command, res.ExitCode)
	case Predicate:
		env := predEnv{Text: val, Value: val}
		var v any
		if json.Unmarshal([]byte(val), &v) == nil {
			env.Value = v
		}
		out, err := runPredicate(ctx, c.program, env)
		if err != nil {
			return failf("predicate %s could not be evaluated: %s", s.Expr, firstLine(err.Error()))
		}
		if b, _ := out.(bool); b {
			return pass("predicate %s holds", s.Expr)
		}
		return failf("predicate %s is false for %s", s.Expr, quote(val))
	case Process:
		return c.process(ev.Trajectory())
	case Milestones:
		var got, total float64
		for _, id := range s.Milestones {
			m, ok := ms[id]
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
	return false, "", fmt.Errorf("unknown check kind %q", s.Kind)
}

func (c *Check) exact(val string) (bool, string, error) {
	s := c.Spec
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
		want := fmt.Sprint(s.Expected)
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

func (c *Check) exists(ctx context.Context, ev Evidence) (string, bool, error) {
	s := c.Spec
	switch {
	case s.File != "":
		_, err := ev.ReadFile(ctx, s.File)
		if errors.Is(err, ErrNotExist) {
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
		return "element " + s.Element.describe(), len(els) > 0, nil
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

func (c *Check) fileEqual(ctx context.Context, ev Evidence) (bool, string, error) {
	s := c.Spec
	got, err := ev.ReadFile(ctx, s.File)
	if errors.Is(err, ErrNotExist) {
		return failf("file %s does not exist", s.File)
	}
	if err != nil {
		return false, "", infraError{err}
	}
	want, err := ev.Asset(s.Asset)
	if err != nil {
		return false, "", infraError{fmt.Errorf("asset %s: %w", s.Asset, err)}
	}
	switch s.Mode {
	case "json":
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			return failf("file %s is not JSON: %v", s.File, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			return false, "", infraError{fmt.Errorf("asset %s is not JSON: %w", s.Asset, err)}
		}
		if reflect.DeepEqual(g, w) {
			return pass("file %s holds the same JSON as %s", s.File, s.Asset)
		}
		return failf("file %s holds different JSON from %s", s.File, s.Asset)
	case "image":
		share, err := imageDiff(got, want)
		if err != nil {
			return failf("file %s: %v", s.File, err)
		}
		if share <= s.Tolerance {
			return pass("%.4f of the pixels differ, within %.4f", share, s.Tolerance)
		}
		return failf("%.4f of the pixels differ, more than %.4f", share, s.Tolerance)
	default:
		norm := func(b []byte) string {
			return strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
		}
		if norm(got) == norm(want) {
			return pass("file %s has the same text as %s", s.File, s.Asset)
		}
		return failf("file %s differs from %s at line %d", s.File, s.Asset, firstDiffLine(norm(got), norm(want)))
	}
}

func firstDiffLine(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		if i >= len(al) || i >= len(bl) || al[i] != bl[i] {
			return i + 1
		}
	}
	return 0
}

// PixelTolerance is how far apart (0..255 per channel) two pixels may be
// and still count as equal: it absorbs compression noise.
const PixelTolerance = 8

// imageDiff returns the share of pixels that differ between two images.
func imageDiff(a, b []byte) (float64, error) {
	ia, _, err := image.Decode(bytes.NewReader(a))
	if err != nil {
		return 0, fmt.Errorf("not an image: %v", err)
	}
	ib, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return 0, fmt.Errorf("expected image cannot be decoded: %v", err)
	}
	ra, rb := ia.Bounds(), ib.Bounds()
	if ra.Dx() != rb.Dx() || ra.Dy() != rb.Dy() {
		return 1, nil
	}
	diff := 0
	for y := 0; y < ra.Dy(); y++ {
		for x := 0; x < ra.Dx(); x++ {
			r1, g1, b1, a1 := ia.At(ra.Min.X+x, ra.Min.Y+y).RGBA()
			r2, g2, b2, a2 := ib.At(rb.Min.X+x, rb.Min.Y+y).RGBA()
			if far(r1, r2) || far(g1, g2) || far(b1, b2) || far(a1, a2) {
				diff++
			}
		}
	}
	return float64(diff) / float64(ra.Dx()*ra.Dy()), nil
}

func far(a, b uint32) bool {
	d := int(a>>8) - int(b>>8)
	return d > PixelTolerance || d < -PixelTolerance
}

// process checks that the required steps appear, in order, among the
// descriptions of the trajectory's steps (the element clicked, else the
// action itself).
func (c *Check) process(t Trajectory) (bool, string, error) {
	i := 0
	for _, st := range t.Steps {
		if i == len(c.Spec.Steps) {
			break
		}
		desc := st.Element
		if desc == "" {
			desc = st.Action.String()
		}
		if strings.Contains(c.fold(desc), c.fold(c.Spec.Steps[i])) {
			i++
		}
	}
	if i == len(c.Spec.Steps) {
		return pass("all %d required steps happened in order", i)
	}
	return failf("required step %d (%s) never happened after the steps before it", i+1, quote(c.Spec.Steps[i]))
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

func isNumber(v any) bool {
	_, ok := toFloat(v)
	return ok
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case string:
		return parseNumber(x)
	}
	return 0, false
}

// parseNumber reads a number written by a person or a program: surrounding
// space, a thousands separator, a trailing percent sign or unit are allowed.
func parseNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, ",", "")
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || strings.IndexByte("+-.eE", s[end]) >= 0) {
		end++
	}
	for end > 0 {
		if f, err := strconv.ParseFloat(s[:end], 64); err == nil {
			rest := strings.TrimSpace(s[end:])
			if rest == "" || len(rest) <= 8 && !strings.ContainsFunc(rest, unicode.IsDigit) {
				return f, true
			}
			return 0, false
		}
		end--
	}
	return 0, false
}

// normalizeAnswer lower-cases (unless caseSense), trims quotes, trailing
// punctuation and repeated white space.
func normalizeAnswer(s string, caseSense bool) string {
	s = strings.TrimSpace(s)
	s = strings.Trim(s, "\"'`“”‘’")
	s = strings.TrimRight(s, ".!。")
	s = strings.Join(strings.Fields(s), " ")
	if !caseSense {
		s = strings.ToLower(s)
	}
	return s
}

// answersMatch compares as numbers when both are numbers, else as
// normalised text.
func answersMatch(got, want string, tol float64, caseSense bool) bool {
	if g, ok := parseNumber(got); ok {
		if w, ok := parseNumber(want); ok {
			return math.Abs(g-w) <= tol
		}
	}
	return normalizeAnswer(got, caseSense) == normalizeAnswer(want, caseSense)
}
