package action

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// ScrollNotches is the wheel notches of a scroll that names only a direction.
const ScrollNotches = 3

const maxJSONScan = 1000

// rejected is one part of a reply that could not be read as an action.
type rejected struct {
	part   string
	reason string
}

// jsonValues finds the JSON values in a reply: the whole reply when it is
// JSON, else the fenced blocks and the complete top-level objects and arrays
// in the prose between them, in order. A value that starts like JSON but is
// truncated or broken is returned as rejected, never mined for a balanced
// inner object. Arrays in prose that hold no object (coordinates such as
// [120, 45]) are not actions and are skipped.
func jsonValues(reply string) ([]json.RawMessage, []rejected) {
	t := strings.TrimSpace(reply)
	if json.Valid([]byte(t)) && t != "" {
		return []json.RawMessage{json.RawMessage(t)}, nil
	}
	var out []json.RawMessage
	var bad []rejected
	tries := 0
	blocks := codeBlocks(reply)
	prev := 0
	for i, loc := range fenceRE.FindAllStringIndex(reply, -1) {
		scanJSON(reply[prev:loc[0]], &out, &bad, &tries)
		prev = loc[1]
		body := strings.TrimSpace(blocks[i].body)
		if body == "" {
			continue
		}
		if json.Valid([]byte(body)) {
			out = append(out, json.RawMessage(body))
			continue
		}
		// One object a line.
		var lines []json.RawMessage
		var lineBad []rejected
		for _, line := range strings.Split(body, "\n") {
			l := strings.TrimSpace(line)
			if l == "" {
				continue
			}
			if json.Valid([]byte(l)) {
				lines = append(lines, json.RawMessage(l))
			} else if looksJSON(l) {
				lineBad = append(lineBad, rejected{l, jsonProblem(l)})
			}
		}
		switch {
		case len(lines) > 0:
			out = append(out, lines...)
			bad = append(bad, lineBad...)
		case looksJSON(body):
			bad = append(bad, rejected{body, jsonProblem(body)})
		default:
			scanJSON(body, &out, &bad, &tries)
		}
	}
	scanJSON(reply[prev:], &out, &bad, &tries)
	return out, bad
}

// looksJSON reports whether s starts like a JSON object or an array of
// objects or arrays, rather than prose in brackets.
func looksJSON(s string) bool {
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return false
	}
	rest := strings.TrimLeft(s[1:], " \t\r\n")
	if rest == "" {
		return true
	}
	if s[0] == '{' {
		return rest[0] == '"' || rest[0] == '}'
	}
	return rest[0] == '{' || rest[0] == '['
}

// jsonProblem describes why s is not JSON.
func jsonProblem(s string) string {
	var v any
	err := json.Unmarshal([]byte(s), &v)
	if err == nil {
		return "not JSON"
	}
	if strings.Contains(err.Error(), "unexpected end of JSON input") {
		return "truncated JSON: the object is not closed"
	}
	return "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}

// matchBracket returns the end (exclusive) of the bracketed value that
// starts at s[i], skipping JSON strings; ok is false when the brackets do not
// close or do not pair up.
func matchBracket(s string, i int) (end int, ok bool) {
	var stack []byte
	inStr, esc := false, false
	for j := i; j < len(s); j++ {
		c := s[j]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return 0, false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// holdsObject reports whether the JSON value v is or contains an object.
func holdsObject(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return true
	case []any:
		for _, it := range x {
			if holdsObject(it) {
				return true
			}
		}
	}
	return false
}

// scanJSON appends the complete top-level JSON objects and arrays of prose.
func scanJSON(text string, out *[]json.RawMessage, bad *[]rejected, tries *int) {
	for i := 0; i < len(text) && *tries < maxJSONScan; i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		*tries++
		looks := looksJSON(text[i:])
		end, ok := matchBracket(text, i)
		if !ok {
			if looks {
				*bad = append(*bad, rejected{text[i:], "truncated JSON: the reply ends before the value is closed"})
				return
			}
			continue
		}
		seg := text[i:end]
		var v any
		if err := json.Unmarshal([]byte(seg), &v); err == nil {
			if holdsObject(v) {
				*out = append(*out, json.RawMessage(seg))
			}
			i = end - 1
			continue
		}
		if looks {
			*bad = append(*bad, rejected{seg, jsonProblem(seg)})
			i = end - 1
		}
		// Otherwise prose in brackets: look inside it.
	}
}

// objects flattens the JSON values into objects: arrays are expanded. A
// value that is not an object is rejected, the others are kept.
func objects(vals []json.RawMessage, bad *[]rejected) []map[string]json.RawMessage {
	var out []map[string]json.RawMessage
	var add func(raw json.RawMessage, depth int)
	add = func(raw json.RawMessage, depth int) {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			return
		}
		switch raw[0] {
		case '[':
			if depth > 2 {
				*bad = append(*bad, rejected{string(raw), "arrays nested too deeply"})
				return
			}
			var items []json.RawMessage
			if err := json.Unmarshal(raw, &items); err != nil {
				*bad = append(*bad, rejected{string(raw), err.Error()})
				return
			}
			for _, it := range items {
				add(it, depth+1)
			}
		case '{':
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				*bad = append(*bad, rejected{string(raw), err.Error()})
				return
			}
			out = append(out, m)
		default:
			*bad = append(*bad, rejected{string(raw), fmt.Sprintf("expected a JSON object, found %s", shorten(string(raw), 40))})
		}
	}
	for _, v := range vals {
		add(v, 0)
	}
	return out
}

// pstate is shared by the objects of one reply: the parts rejected so far
// and whether an object only asked for an observation.
type pstate struct {
	bad     []rejected
	observe bool
}

// jobj is a decoded JSON object with typed, error-reporting accessors.
type jobj struct {
	m   map[string]json.RawMessage
	f   Format
	err error
	st  *pstate
}

// child wraps an object nested in o (an item of a list in o).
func (o *jobj) child(m map[string]json.RawMessage) *jobj {
	return &jobj{m: m, f: o.f, st: o.st}
}

// observe marks o as a request for an observation only (a screenshot): it
// holds no action, and a reply of nothing else is a no-op step.
func (o *jobj) observe() {
	if o.st != nil {
		o.st.observe = true
	}
}

// each parses the items of a list in o with one; an item that fails is
// rejected (and reported by parseObjects) while the others are kept.
func (o *jobj) each(items []map[string]json.RawMessage, one func(*jobj) ([]Action, error)) []Action {
	var out []Action
	for _, it := range items {
		c := o.child(it)
		acts, err := one(c)
		if err == nil {
			err = c.err
		}
		if err != nil {
			o.st.bad = append(o.st.bad, rejected{c.raw(), err.Error()})
			continue
		}
		out = append(out, acts...)
	}
	return out
}

func (o *jobj) has(k string) bool {
	v, ok := o.m[k]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

func (o *jobj) fail(format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf(format, args...)
	}
}

func (o *jobj) str(k string) string {
	if !o.has(k) {
		return ""
	}
	var s string
	if err := json.Unmarshal(o.m[k], &s); err != nil {
		o.fail("%s must be a string", k)
	}
	return s
}

func (o *jobj) num(k string) float64 {
	if !o.has(k) {
		return 0
	}
	var f float64
	if err := json.Unmarshal(o.m[k], &f); err != nil {
		var s string // some models quote numbers
		if json.Unmarshal(o.m[k], &s) == nil {
			if _, e := fmt.Sscanf(strings.TrimSpace(s), "%g", &f); e == nil {
				return f
			}
		}
		o.fail("%s must be a number", k)
	}
	return f
}

func (o *jobj) boolean(k string) bool {
	if !o.has(k) {
		return false
	}
	var b bool
	if err := json.Unmarshal(o.m[k], &b); err != nil {
		o.fail("%s must be true or false", k)
	}
	return b
}

func (o *jobj) obj(k string) *jobj {
	var m map[string]json.RawMessage
	if o.has(k) {
		if err := json.Unmarshal(o.m[k], &m); err != nil {
			o.fail("%s must be an object", k)
		}
	}
	return &jobj{m: m, f: o.f, st: o.st}
}

// pair reads a [x, y] array.
func (o *jobj) pair(k string, unit Unit) *Point {
	if !o.has(k) {
		return nil
	}
	var xy []float64
	if err := json.Unmarshal(o.m[k], &xy); err != nil || len(xy) != 2 {
		o.fail("%s must be an [x, y] pair of numbers", k)
		return nil
	}
	return &Point{X: xy[0], Y: xy[1], Unit: unit}
}

func (o *jobj) index(k string) *int {
	if !o.has(k) {
		o.fail("%s is required", k)
		return nil
	}
	f := o.num(k)
	if f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
		o.fail("%s must be a non-negative whole number", k)
		return nil
	}
	n := int(f)
	return &n
}

func (o *jobj) raw() string {
	b, _ := json.Marshal(o.m)
	return string(b)
}

func parseObjects(f Format, reply string, one func(o *jobj) ([]Action, error)) ([]Action, error) {
	vals, bad := jsonValues(reply)
	if len(vals) == 0 && len(bad) == 0 {
		return nil, &ParseError{Format: f, Part: reply, Reason: "no JSON found in the reply"}
	}
	st := &pstate{bad: bad}
	objs := objects(vals, &st.bad)
	var out []Action
	for _, m := range objs {
		out = append(out, (&jobj{f: f, st: st}).each([]map[string]json.RawMessage{m}, one)...)
	}
	if len(st.bad) > 0 {
		b := st.bad[0]
		reason := b.reason
		if n := len(st.bad) - 1; n > 0 {
			reason += fmt.Sprintf(" (and %d more part(s) rejected)", n)
		}
		if len(out) > 0 {
			reason += fmt.Sprintf("; %d other action(s) were understood", len(out))
		}
		return nil, &ParseError{Format: f, Part: b.part, Reason: reason, Actions: out}
	}
	if len(out) == 0 {
		if st.observe {
			return nil, nil // only a screenshot request: a step with no action
		}
		return nil, &ParseError{Format: f, Reason: "the reply holds no action"}
	}
	return out, nil
}
