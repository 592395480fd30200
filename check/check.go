package check

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/proctor-eval/proctor/internal/english"
	"github.com/proctor-eval/proctor/internal/sqlread"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/observe"
)

// Compile validates a spec and prepares it for evaluation. Errors are
// *FieldError values naming the field at fault.
func Compile(s Spec) (*Check, error) {
	def, ok := kinds[s.Kind]
	if !ok {
		return nil, ferr("kind", "unknown check kind %q (known: %v)", s.Kind, Kinds)
	}
	for _, f := range s.setFields() {
		if !slices.Contains(def.fields, f) {
			return nil, ferr(f, "does not apply to %s check", english.A(string(s.Kind)))
		}
	}
	if s.Probe != nil {
		if err := s.Probe.validate(); err != nil {
			return nil, ferr("probe", "%v", err)
		}
	}
	if s.Tolerance < 0 {
		return nil, ferr("tolerance", "must not be negative")
	}
	c := &Check{Spec: s}
	if def.compile != nil {
		if err := def.compile(c); err != nil {
			return nil, err
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
	// Score is a judge check's score in [0, 1]: the weight of its passed
	// criteria over the total (1 or 0 without criteria).
	Score *float64 `json:"score,omitempty"`
	// Judge tells who judged a judge check, and how.
	Judge *JudgeDetail `json:"judge,omitempty"`
}

// Value is the result's score: a judge check's Score, else 1 for a pass
// and 0 for a failure.
func (r Result) Value() float64 {
	switch {
	case r.Score != nil:
		return *r.Score
	case r.Pass:
		return 1
	}
	return 0
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
	return c.evaluate(ctx, input{ev: ev, ms: ms})
}

// EvaluateWith runs the check as Evaluate does, with jm deciding a judge
// check.
func (c *Check) EvaluateWith(ctx context.Context, ev Evidence, ms MilestoneScores, jm judgment.Model) Result {
	return c.evaluate(ctx, input{ev: ev, ms: ms, judge: jm})
}

func (c *Check) evaluate(ctx context.Context, in input) Result {
	r := Result{Name: c.Spec.Label(), Kind: c.Spec.Kind}
	in.res = &r
	ok, reason, err := c.eval(ctx, in)
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
		if errors.Is(err, observe.ErrNotFound) {
			return "", false, nil
		}
		if err != nil {
			return "", false, infraError{err}
		}
		if p.Read == "" && p.Cell == "" {
			return string(b), true, nil
		}
		if p.Read == "sqlite" {
			v, found, err := sqlread.Bytes(ctx, b, p.Query)
			if err != nil {
				return "", true, unreadable{fmt.Errorf("%s: %v", p.File, err)}
			}
			return v, found, nil
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
	case p.Page != nil:
		v, found, err := ev.Page(ctx, *p.Page)
		if err != nil {
			return "", false, infraError{err}
		}
		return v, found, nil
	case p.SQL != nil || p.HTTP != nil || p.XMLRPC != nil:
		q, _ := p.Service()
		v, found, err := ev.Service(ctx, q)
		if err != nil {
			return "", false, infraError{err}
		}
		return v, found, nil
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
	return observe.DefaultCommandTimeout
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

// eval reads the probe as the kind asks and hands over to the kind.
func (c *Check) eval(ctx context.Context, in input) (bool, string, error) {
	ev := in.ev
	s := c.Spec
	def, ok := kinds[s.Kind]
	if !ok {
		// Only a Check built without Compile gets here.
		return false, "", fmt.Errorf("unknown check kind %q", s.Kind)
	}
	if s.Probe != nil && def.probe != probeByKind {
		v, found, err := c.probe(ctx, ev)
		var bad unreadable
		if errors.As(err, &bad) {
			return failf("%v", bad.err) // the file is there but is not what it should be
		}
		if err != nil {
			return false, "", err
		}
		if !found && def.probe != probeMayMiss {
			return failf("%s: nothing to read", s.Probe)
		}
		in.val = v
	}
	return def.evaluate(ctx, c, in)
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
