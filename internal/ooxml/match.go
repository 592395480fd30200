package ooxml

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Match compares a value read from a document with a reference, by a
// method named as the desktop benchmarks name them: eq, ne, lt, le, gt, ge;
// approx:T (numbers within T); re (a regular expression, with flags as
// re.I, re.S ...); range.xy with ref [a, b] (x, y each e for inclusive or t
// for exclusive: range.te is a < v <= b); str_list_eq and str_set_eq (a
// comma-separated list, quotes trimmed, against a list); spreadsheet_range
// with ref [inner, outer] (the value's ranges cover inner and lie within
// outer).
type Match struct {
	Method string `json:"method"`
	Ref    any    `json:"ref"`
}

// Validate checks the method and the shape of its reference.
func (m Match) Validate() error {
	switch {
	case slices.Contains([]string{"eq", "ne", "lt", "le", "gt", "ge"}, m.Method):
	case strings.HasPrefix(m.Method, "approx:"):
		if _, err := strconv.ParseFloat(m.Method[7:], 64); err != nil {
			return fmt.Errorf("method %q: the tolerance after approx: is a number", m.Method)
		}
		if _, ok := m.Ref.(float64); !ok {
			return fmt.Errorf("method %s compares with a number", m.Method)
		}
	case m.Method == "re" || strings.HasPrefix(m.Method, "re."):
		s, ok := m.Ref.(string)
		if !ok {
			return fmt.Errorf("method re takes a regular expression")
		}
		if _, err := m.regexp(s); err != nil {
			return err
		}
	case strings.HasPrefix(m.Method, "range.") && len(m.Method) == 8:
		if a, ok := m.Ref.([]any); !ok || len(a) != 2 || !strings.ContainsRune("et", rune(m.Method[6])) || !strings.ContainsRune("et", rune(m.Method[7])) {
			return fmt.Errorf("method %q takes [low, high] and is range. followed by e or t twice", m.Method)
		}
	case m.Method == "str_list_eq" || m.Method == "str_set_eq":
		if _, ok := strList(m.Ref); !ok {
			return fmt.Errorf("method %s takes a list of strings", m.Method)
		}
	case m.Method == "spreadsheet_range":
		a, ok := strList(m.Ref)
		if !ok || len(a) != 2 {
			return fmt.Errorf("method spreadsheet_range takes [inner ranges, outer ranges]")
		}
	default:
		return fmt.Errorf("unknown method %q", m.Method)
	}
	return nil
}

func strList(v any) ([]string, bool) {
	a, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(a))
	for i, x := range a {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

func (m Match) regexp(s string) (*regexp.Regexp, error) {
	flags := ""
	for _, f := range strings.Split(m.Method, ".")[1:] {
		switch f {
		case "I", "IGNORECASE":
			flags += "i"
		case "S", "DOTALL":
			flags += "s"
		case "M", "MULTILINE":
			flags += "m"
		default:
			return nil, fmt.Errorf("method %q: unknown flag %s", m.Method, f)
		}
	}
	if flags != "" {
		s = "(?" + flags + ")" + s
	}
	return regexp.Compile(s)
}

// Holds reports whether v (nil, float64, bool or string) matches.
func (m Match) Holds(v any) bool {
	switch {
	case m.Method == "eq":
		return equalValues(v, m.Ref)
	case m.Method == "ne":
		return !equalValues(v, m.Ref)
	case m.Method == "lt" || m.Method == "le" || m.Method == "gt" || m.Method == "ge":
		c, ok := compareValues(v, m.Ref)
		return ok && map[string]bool{"lt": c < 0, "le": c <= 0, "gt": c > 0, "ge": c >= 0}[m.Method]
	case strings.HasPrefix(m.Method, "approx:"):
		tol, _ := strconv.ParseFloat(m.Method[7:], 64)
		ref, _ := m.Ref.(float64)
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case bool:
			f = map[bool]float64{true: 1}[x]
		case string:
			var err error
			if f, err = strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
				return false
			}
		default:
			return false
		}
		return math.Abs(f-ref) <= tol
	case m.Method == "re" || strings.HasPrefix(m.Method, "re."):
		s, ok := v.(string)
		ref, _ := m.Ref.(string)
		re, err := m.regexp(ref)
		return ok && err == nil && re.MatchString(s)
	case strings.HasPrefix(m.Method, "range."):
		a := m.Ref.([]any)
		lo, ok1 := compareValues(a[0], v)
		hi, ok2 := compareValues(v, a[1])
		in := func(c int, e byte) bool { return c < 0 || e == 'e' && c == 0 }
		return ok1 && ok2 && in(lo, m.Method[6]) && in(hi, m.Method[7])
	case m.Method == "str_list_eq" || m.Method == "str_set_eq":
		s, ok := v.(string)
		if !ok {
			return false
		}
		got := strings.Split(strings.Trim(s, `"'`), ",")
		want, _ := strList(m.Ref)
		if m.Method == "str_set_eq" {
			return sameSet(got, want)
		}
		return slices.Equal(got, want)
	case m.Method == "spreadsheet_range":
		s, ok := v.(string)
		lims, _ := strList(m.Ref)
		if !ok {
			return false
		}
		inner, e1 := parseRanges(lims[0])
		outer, e2 := parseRanges(lims[1])
		val, e3 := parseRanges(s)
		return e1 == nil && e2 == nil && e3 == nil && coveredBy(inner, val) && coveredBy(val, outer)
	}
	return false
}

func sameSet(a, b []string) bool {
	in := func(x []string, s string) bool { return slices.Contains(x, s) }
	for _, s := range a {
		if !in(b, s) {
			return false
		}
	}
	for _, s := range b {
		if !in(a, s) {
			return false
		}
	}
	return true
}

// equalValues compares as Python's == does: numbers by value (true is 1),
// strings exactly, nil only with nil.
func equalValues(a, b any) bool {
	if c, ok := compareValues(a, b); ok {
		return c == 0
	}
	return a == nil && b == nil
}

// compareValues orders two numbers or two strings; ok is false for other
// pairs.
func compareValues(a, b any) (int, bool) {
	num := func(v any) (float64, bool) {
		switch x := v.(type) {
		case float64:
			return x, true
		case bool:
			if x {
				return 1, true
			}
			return 0, true
		}
		return 0, false
	}
	if x, ok := num(a); ok {
		if y, ok := num(b); ok {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
		return 0, false
	}
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true
		}
	}
	return 0, false
}

// cellRange is a rectangle of cells, zero-based and inclusive.
type cellRange struct{ r0, c0, r1, c1 int }

// parseRanges reads "A1:B6 D2" (spaces or commas between ranges).
func parseRanges(s string) ([]cellRange, error) {
	var out []cellRange
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }) {
		a, b, found := strings.Cut(strings.ToUpper(strings.ReplaceAll(part, "$", "")), ":")
		if !found {
			b = a
		}
		r0, c0, err := splitRef(a)
		if err != nil {
			return nil, err
		}
		r1, c1, err := splitRef(b)
		if err != nil {
			return nil, err
		}
		out = append(out, cellRange{min(r0, r1), min(c0, c1), max(r0, r1), max(c0, c1)})
		if len(out) > 1024 {
			return nil, fmt.Errorf("more than 1024 ranges")
		}
	}
	return out, nil
}

// coveredBy reports whether every range of a lies within one range of b.
func coveredBy(a, b []cellRange) bool {
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y cellRange) bool {
			return y.r0 <= x.r0 && y.c0 <= x.c0 && x.r1 <= y.r1 && x.c1 <= y.c1
		}) {
			return false
		}
	}
	return true
}

// cells lists the cell names of ranges, at most limit of them.
func (r cellRange) cells(limit int) ([]string, error) {
	n := (r.r1 - r.r0 + 1) * (r.c1 - r.c0 + 1)
	if n > limit {
		return nil, fmt.Errorf("range of %d cells, more than %d", n, limit)
	}
	out := make([]string, 0, n)
	for row := r.r0; row <= r.r1; row++ {
		for col := r.c0; col <= r.c1; col++ {
			out = append(out, CellName(row, col))
		}
	}
	return out, nil
}

// Ratio is the similarity of two texts, 0..1: twice their longest common
// subsequence over their total length (the normalized Indel similarity,
// rapidfuzz's ratio divided by 100). Two empty texts are alike.
func Ratio(a, b string) float64 {
	x, y := []rune(a), []rune(b)
	if len(x)+len(y) == 0 {
		return 1
	}
	return 2 * float64(lcs(x, y)) / float64(len(x)+len(y))
}

// lcs is the length of the longest common subsequence, computed 64
// characters of the shorter text at a time (Hyyrö's bit-parallel method).
func lcs(a, b []rune) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 {
		return 0
	}
	words := (len(a) + 63) / 64
	peq := map[rune][]uint64{}
	for i, r := range a {
		m, ok := peq[r]
		if !ok {
			m = make([]uint64, words)
			peq[r] = m
		}
		m[i/64] |= 1 << (i % 64)
	}
	v := make([]uint64, words)
	for i := range v {
		v[i] = ^uint64(0)
	}
	zero := make([]uint64, words)
	for _, r := range b {
		m, ok := peq[r]
		if !ok {
			m = zero
		}
		var carry uint64
		for w := range words {
			u := v[w] & m[w]
			sum, c1 := addc(v[w], u, carry)
			carry = c1
			v[w] = sum | (v[w] - u)
		}
	}
	n := 0
	for w := range words {
		bits := v[w]
		if w == words-1 && len(a)%64 != 0 {
			bits |= ^uint64(0) << (len(a) % 64)
		}
		n += 64 - popcount(bits)
	}
	return n
}

func addc(x, y, carry uint64) (uint64, uint64) {
	s := x + y
	c := uint64(0)
	if s < x {
		c = 1
	}
	s2 := s + carry
	if s2 < s {
		c = 1
	}
	return s2, c
}

func popcount(x uint64) int {
	n := 0
	for x != 0 {
		x &= x - 1
		n++
	}
	return n
}

// pyStr writes a value as Python's str() does: None, True, 3.0, 0.1, 1e+16.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return map[bool]string{true: "inf", false: "nan"}[math.IsInf(x, 1)]
		}
		abs := math.Abs(x)
		if abs != 0 && (abs >= 1e16 || abs < 1e-4) {
			s := strconv.FormatFloat(x, 'e', -1, 64)
			mant, exp, _ := strings.Cut(s, "e")
			if len(exp) == 3 && (exp[1] == '0') {
				exp = exp[:1] + exp[2:]
			}
			if len(exp) == 2 {
				exp = exp[:1] + "0" + exp[1:]
			}
			return mant + "e" + exp
		}
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	case string:
		return x
	}
	return fmt.Sprint(v)
}
