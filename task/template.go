package task

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// A template is a task file with params: a list of values for each
// parameter. Every string of the file may hold {{name}} placeholders; each
// instance fills them with one combination of values. combine: product
// (the default) takes every combination; combine: zip takes the first
// values together, then the second ones, and so on (all lists must then be
// equally long). An instance's id is the template's id with its
// placeholders filled by the values in slug form ("Install now" gives
// install-now), or, when it has none, the id followed by the values.

var placeholderRE = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// MaxInstances bounds how many instances one template may produce.
const MaxInstances = 10000

// MaxExpansion bounds the size of all of a template's instances together:
// the bytes of their strings, and 16 for each value and each placeholder
// filled (an empty value costs work too). Placeholders multiply
// a file: a long value in many placeholders, times many instances, would
// otherwise build gigabytes from a file of a few hundred kilobytes.
const MaxExpansion = 32 << 20

type instanceDoc struct {
	doc      map[string]any
	id       string
	template string
	values   map[string]string
	// typed lists the places where a whole-string placeholder took a
	// number or a boolean; where the schema wants a string there, the
	// value's text is used instead.
	typed [][]any
}

func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return fmt.Sprint(x), true
	case float64:
		return fmt.Sprint(x), true
	}
	return "", false
}

// expand turns a file's document into its instances.
func expand(f *fileCtx, obj map[string]any) ([]instanceDoc, Problems) {
	rawParams, isTemplate := obj["params"]
	if !isTemplate {
		if c, ok := obj["combine"]; ok {
			return nil, Problems{f.problem([]any{"combine"}, "combine %v applies only to a template with params", c)}
		}
		var probs Problems
		walkStrings(obj, nil, func(path []any, s string) {
			if m := placeholderRE.FindStringSubmatch(s); m != nil {
				probs = append(probs, f.problem(path, "placeholder {{%s}} in a file without params", m[1]))
			}
		})
		return []instanceDoc{{doc: obj}}, probs
	}
	params, ok := rawParams.(map[string]any)
	if !ok || len(params) == 0 {
		return nil, Problems{f.problem([]any{"params"}, "params must map each parameter to a list of values")}
	}
	names := make([]string, 0, len(params))
	lists := map[string][]any{}
	var probs Problems
	for n, v := range params {
		names = append(names, n)
		l, ok := v.([]any)
		if !ok || len(l) == 0 {
			probs = append(probs, f.problem([]any{"params", n}, "must be a non-empty list of values"))
			continue
		}
		for i, it := range l {
			if _, ok := scalarString(it); !ok {
				probs = append(probs, f.problem([]any{"params", n, i}, "must be a string, number or boolean"))
			}
		}
		lists[n] = l
	}
	sort.Strings(names)
	combine, _ := obj["combine"].(string)
	if c, ok := obj["combine"]; ok && combine != "product" && combine != "zip" {
		probs = append(probs, f.problem([]any{"combine"}, "must be product or zip, not %v", c))
	}
	if len(probs) > 0 {
		return nil, probs
	}
	var rows []map[string]any
	if combine == "zip" {
		n := len(lists[names[0]])
		for _, name := range names {
			if len(lists[name]) != n {
				return nil, Problems{f.problem([]any{"params", name}, "has %d values but %s has %d: zip needs equal lists", len(lists[name]), names[0], n)}
			}
		}
		for i := 0; i < n; i++ {
			row := map[string]any{}
			for _, name := range names {
				row[name] = lists[name][i]
			}
			rows = append(rows, row)
		}
	} else {
		total := 1
		for _, name := range names {
			total *= len(lists[name])
			if total > MaxInstances {
				return nil, Problems{f.problem([]any{"params"}, "the product of the lists is more than %d instances", MaxInstances)}
			}
		}
		rows = []map[string]any{{}}
		for _, name := range names {
			var next []map[string]any
			for _, r := range rows {
				for _, v := range lists[name] {
					nr := map[string]any{name: v}
					for k, x := range r {
						nr[k] = x
					}
					next = append(next, nr)
				}
			}
			rows = next
		}
	}
	base := map[string]any{}
	for k, v := range obj {
		if k != "params" && k != "combine" {
			base[k] = v
		}
	}
	templateID, _ := obj["id"].(string)
	used := map[string]bool{}
	fl := &filler{used: used, left: MaxExpansion, matches: map[string][][]int{}}
	var out []instanceDoc
	for _, row := range rows {
		values := map[string]string{}
		for k, v := range row {
			values[k], _ = scalarString(v)
		}
		undefined := map[string][]any{}
		fl.row, fl.undefined, fl.typed = row, undefined, nil
		doc, _ := fl.fill(base, nil).(map[string]any)
		if fl.left < 0 {
			return nil, Problems{f.problem([]any{"params"}, "the instances are larger than %d bytes together (limit %d); use fewer values or shorter ones", MaxExpansion, MaxExpansion)}
		}
		for name, path := range undefined {
			probs = append(probs, f.problem(path, "placeholder {{%s}} has no parameter (params: %s)", name, strings.Join(names, ", ")))
		}
		if len(undefined) > 0 {
			return nil, dedupe(probs)
		}
		// In the id, each value is slugged: "Install now" gives install-now.
		id := placeholderRE.ReplaceAllStringFunc(templateID, func(ph string) string {
			if v, ok := values[placeholderRE.FindStringSubmatch(ph)[1]]; ok {
				return slug(v)
			}
			return ph
		})
		doc["id"] = id
		if id == templateID {
			parts := []string{id}
			for _, name := range names {
				parts = append(parts, slug(values[name]))
			}
			id = strings.Join(parts, "-")
			doc["id"] = id
		}
		out = append(out, instanceDoc{doc: doc, id: id, template: templateID, values: values, typed: fl.typed})
	}
	for _, name := range names {
		if !used[name] {
			probs = append(probs, f.problem([]any{"params", name}, "parameter %s is never used in the template", name))
		}
	}
	return out, probs
}

func dedupe(ps Problems) Problems {
	seen := map[string]bool{}
	var out Problems
	for _, p := range ps {
		if k := p.String(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

// filler fills one instance.
type filler struct {
	row       map[string]any
	used      map[string]bool  // the parameters used, in any instance
	undefined map[string][]any // placeholders without a parameter
	typed     [][]any
	left      int // what MaxExpansion leaves, for all the instances
	// matches holds the placeholders of each string of the template,
	// found once for all the instances.
	matches map[string][][]int
}

// fill copies v with every placeholder replaced by its value. A string that
// is exactly one placeholder takes the value with its type (a number stays
// a number); such places are listed in typed. fill takes the size of what
// it builds from left, measuring each string before building it, and
// stops once left is negative.
func (fl *filler) fill(v any, path []any) any {
	if fl.left -= 16; fl.left < 0 {
		return nil
	}
	row, used, undefined := fl.row, fl.used, fl.undefined
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = fl.fill(e, append(append([]any(nil), path...), k))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fl.fill(e, append(append([]any(nil), path...), i))
		}
		return out
	case string:
		// The placeholders are found once; each instance measures its
		// string, then builds it.
		idx, ok := fl.matches[x]
		if !ok {
			idx = placeholderRE.FindAllStringSubmatchIndex(x, -1)
			fl.matches[x] = idx
		}
		if len(idx) == 0 {
			fl.left -= len(x)
			return x
		}
		n := len(x)
		for _, m := range idx {
			if val, ok := row[x[m[2]:m[3]]]; ok {
				s, _ := scalarString(val)
				n += len(s) - (m[1] - m[0])
			}
		}
		if fl.left -= n + 16*len(idx); fl.left < 0 {
			return nil
		}
		if m := idx[0]; m[0] == 0 && m[1] == len(x) {
			if val, ok := row[x[m[2]:m[3]]]; ok {
				used[x[m[2]:m[3]]] = true
				if _, isString := val.(string); !isString {
					fl.typed = append(fl.typed, append([]any(nil), path...))
				}
				return val
			}
		}
		var b strings.Builder
		b.Grow(n)
		last := 0
		for _, m := range idx {
			b.WriteString(x[last:m[0]])
			last = m[1]
			name := x[m[2]:m[3]]
			val, ok := row[name]
			if !ok {
				if _, seen := undefined[name]; !seen {
					undefined[name] = path
				}
				b.WriteString(x[m[0]:m[1]])
				continue
			}
			used[name] = true
			s, _ := scalarString(val)
			b.WriteString(s)
		}
		b.WriteString(x[last:])
		return b.String()
	}
	return v
}

// stringAt replaces the value at path in doc with its text; it reports
// whether the value was a number or a boolean.
func stringAt(doc any, path []any) bool {
	cur := doc
	for i, p := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			k, _ := p.(string)
			if last {
				if s, ok := scalarString(c[k]); ok {
					if _, isString := c[k].(string); !isString {
						c[k] = s
						return true
					}
				}
				return false
			}
			cur = c[k]
		case []any:
			n, ok := p.(int)
			if !ok || n < 0 || n >= len(c) {
				return false
			}
			if last {
				if s, ok := scalarString(c[n]); ok {
					if _, isString := c[n].(string); !isString {
						c[n] = s
						return true
					}
				}
				return false
			}
			cur = c[n]
		default:
			return false
		}
	}
	return false
}

func walkStrings(v any, path []any, fn func([]any, string)) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkStrings(x[k], append(append([]any(nil), path...), k), fn)
		}
	case []any:
		for i, e := range x {
			walkStrings(e, append(append([]any(nil), path...), i), fn)
		}
	case string:
		fn(path, x)
	}
}

// slug makes a value fit in an id: lower case letters, digits, dots and
// dashes, at most 40 characters.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.'
		if ok {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimRight(b.String(), "-")
	if len(out) > 40 {
		out = strings.TrimRight(out[:40], "-")
	}
	if out == "" {
		out = "x"
	}
	return out
}
