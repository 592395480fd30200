// Package probetext reads a probe written on the command line as in a
// task file, and lays out the JSON value a probe reads for a person.
package probetext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/task"
)

// Parse reads a probe written as in a task file. It is checked by the
// task loader itself, inside a minimal task with one check that reads it,
// so that it meets the schema and the checks' own rules, and each problem
// is named by its field (probe.read) and its column in src.
func Parse(src string) (*check.Probe, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("the probe is empty: give one as in a task file, such as 'file: ~/out.txt'")
	}
	const head = "id: probe\ninstruction: Print a probe's value.\napp: xterm\nlevel: paper\nkind: state\ngold: [{kind: done}]\nchecks:\n  - kind: not_contains\n    value: proctor probe\n"
	firstLine := strings.Count(head, "\n") + 1 // where src begins
	var doc string
	var colShift, lineShift int
	if !strings.Contains(src, "\n") {
		flow := src
		prefix := "    probe: "
		colShift = len(prefix)
		if !strings.HasPrefix(strings.TrimSpace(src), "{") {
			flow = "{" + src + "}"
			colShift++
		}
		doc = head + prefix + flow + "\n"
	} else {
		lineShift = 1
		colShift = 6
		doc = head + "    probe:\n" + indent(src, "      ")
	}
	ts, ps := task.Parse("probe.yaml", []byte(doc))
	if len(ps) == 0 && (len(ts) != 1 || len(ts[0].Checks) != 1 || ts[0].Checks[0].Probe == nil) {
		ps = task.Problems{{Msg: "not one probe"}}
	}
	if len(ps) > 0 {
		lines := make([]string, len(ps))
		for i, pr := range ps {
			field := pr.Field
			if rest, ok := strings.CutPrefix(field, "checks[0]."); ok {
				field = rest
			} else if field == "" || strings.HasPrefix(field, "checks[0]") {
				field = "probe"
			}
			where := ""
			if l := pr.Line - firstLine - lineShift + 1; l >= 1 && pr.Col > colShift {
				if lineShift == 0 {
					where = fmt.Sprintf(" (column %d)", pr.Col-colShift)
				} else {
					where = fmt.Sprintf(" (line %d, column %d)", l, pr.Col-colShift)
				}
			}
			lines[i] = fmt.Sprintf("  %s: %s%s", field, pr.Msg, where)
		}
		return nil, fmt.Errorf("invalid probe %q:\n%s", src, strings.Join(lines, "\n"))
	}
	return ts[0].Checks[0].Probe, nil
}

// IndentJSON lays a JSON document out for reading: objects one field a
// line, arrays of plain values on one line (a row of a grid, a colour),
// field order kept.
func IndentJSON(s string) (string, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := readJSON(dec)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	writeJSON(&b, v, "")
	b.WriteByte('\n')
	return b.String(), nil
}

// jsonNode is a JSON value with its object fields in order.
type jsonNode struct {
	scalar string // encoded, for a plain value
	keys   []string
	vals   []jsonNode
	object bool
	array  bool
}

func readJSON(dec *json.Decoder) (jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return jsonNode{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := jsonNode{object: t == '{', array: t == '['}
		for dec.More() {
			if n.object {
				kt, err := dec.Token()
				if err != nil {
					return n, err
				}
				n.keys = append(n.keys, kt.(string))
			}
			v, err := readJSON(dec)
			if err != nil {
				return n, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return n, err
		}
		return n, nil
	case string:
		return jsonNode{scalar: encodeJSONString(t)}, nil
	case nil:
		return jsonNode{scalar: "null"}, nil
	default:
		return jsonNode{scalar: fmt.Sprint(t)}, nil
	}
}

func encodeJSONString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func (n jsonNode) plain() bool { return !n.object && !n.array }

func writeJSON(b *bytes.Buffer, n jsonNode, indent string) {
	switch {
	case n.plain():
		b.WriteString(n.scalar)
	case len(n.vals) == 0 && n.object:
		b.WriteString("{}")
	case len(n.vals) == 0:
		b.WriteString("[]")
	case n.array && allPlain(n.vals):
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v.scalar)
		}
		b.WriteByte(']')
	default:
		open, end := byte('['), byte(']')
		if n.object {
			open, end = '{', '}'
		}
		b.WriteByte(open)
		inner := indent + "  "
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n" + inner)
			if n.object {
				b.WriteString(encodeJSONString(n.keys[i]) + ": ")
			}
			writeJSON(b, v, inner)
		}
		b.WriteString("\n" + indent)
		b.WriteByte(end)
	}
}

func allPlain(ns []jsonNode) bool {
	for _, n := range ns {
		if !n.plain() {
			return false
		}
	}
	return true
}

// indent puts prefix before each line of s.
func indent(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(prefix + l + "\n")
	}
	return b.String()
}
