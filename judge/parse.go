package judge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/proctor-eval/proctor/judgment"
)

// parseReply reads a model's reply strictly: its own JSON object (the
// last one, alone, in a code fence, or among prose, and never one that
// stands verbatim in the evidence texts) with a verdict of "pass" or "fail", a
// reason, and, when criteria were asked for, every criterion's id exactly
// once with a boolean pass and a reason. With criteria the verdict must
// agree with them (pass only if all pass). Keys are matched exactly and
// must not repeat; other keys are ignored. The error says what is wrong,
// in words meant for the model.
func parseReply(text string, criteria []judgment.Criterion, evidence ...string) (judgment.Verdict, error) {
	obj, err := extract(text, evidence)
	if err != nil {
		return judgment.Verdict{}, err
	}
	if err := uniqueKeys(obj); err != nil {
		return judgment.Verdict{}, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(obj, &fields); err != nil {
		return judgment.Verdict{}, fmt.Errorf("the reply's JSON is not an object: %v", err)
	}
	word, err := stringField(fields, "verdict", "")
	if err != nil {
		return judgment.Verdict{}, err
	}
	var pass bool
	switch strings.ToLower(strings.TrimSpace(word)) {
	case "pass":
		pass = true
	case "fail":
	default:
		return judgment.Verdict{}, fmt.Errorf(`"verdict" is %q; it must be "pass" or "fail"`, clipWord(word))
	}
	reason, err := stringField(fields, "reason", "")
	if err != nil {
		return judgment.Verdict{}, err
	}
	v := judgment.Verdict{Pass: pass, Reason: strings.TrimSpace(reason)}
	raw, has := fields["criteria"]
	if len(criteria) == 0 {
		if has && !isNull(raw) && !isEmptyArray(raw) {
			return judgment.Verdict{}, errors.New(`"criteria" was given but no criteria were asked for; leave it out`)
		}
		if pass {
			v.Score = 1
		}
		return v, nil
	}
	if !has || isNull(raw) {
		return judgment.Verdict{}, errors.New(`"criteria" is missing; list every criterion id exactly once`)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return judgment.Verdict{}, errors.New(`"criteria" is not a list`)
	}
	byID := map[string]judgment.CriterionVerdict{}
	known := map[string]bool{}
	for _, c := range criteria {
		known[c.ID] = true
	}
	for i, item := range items {
		var f map[string]json.RawMessage
		if err := json.Unmarshal(item, &f); err != nil || f == nil {
			return judgment.Verdict{}, fmt.Errorf(`criteria entry %d is not an object`, i+1)
		}
		where := fmt.Sprintf("criteria entry %d", i+1)
		id, err := stringField(f, "id", where)
		if err != nil {
			return judgment.Verdict{}, err
		}
		if !known[id] {
			return judgment.Verdict{}, fmt.Errorf("%s has the unknown id %q", where, clipWord(id))
		}
		if _, dup := byID[id]; dup {
			return judgment.Verdict{}, fmt.Errorf("criterion %q is listed twice", id)
		}
		where = fmt.Sprintf("criterion %q", id)
		var ok bool
		switch p, has := f["pass"]; {
		case !has:
			return judgment.Verdict{}, fmt.Errorf(`%s has no "pass"`, where)
		case bytes.Equal(p, []byte("true")):
			ok = true
		case bytes.Equal(p, []byte("false")):
		default:
			return judgment.Verdict{}, fmt.Errorf(`%s: "pass" is %s; it must be true or false`, where, clipWord(string(p)))
		}
		r, err := stringField(f, "reason", where)
		if err != nil {
			return judgment.Verdict{}, err
		}
		byID[id] = judgment.CriterionVerdict{ID: id, Pass: ok, Reason: strings.TrimSpace(r)}
	}
	var missing []string
	var total, passed float64
	all := true
	for _, c := range criteria {
		cv, ok := byID[c.ID]
		if !ok {
			missing = append(missing, fmt.Sprintf("%q", c.ID))
			continue
		}
		v.Criteria = append(v.Criteria, cv)
		total += c.Weight
		if cv.Pass {
			passed += c.Weight
		} else {
			all = false
		}
	}
	if len(missing) > 0 {
		return judgment.Verdict{}, fmt.Errorf("criteria %s are missing; list every criterion id exactly once", strings.Join(missing, ", "))
	}
	if all != pass {
		return judgment.Verdict{}, fmt.Errorf(`the verdict %q disagrees with the criteria: it is "pass" exactly when every criterion passes`, word)
	}
	if total > 0 {
		v.Score = passed / total
	}
	return v, nil
}

// extract finds the judge's own JSON object in its reply: the last
// object written at the top level (alone, in a code fence or among
// prose), leaving out any object that stands verbatim in the evidence (an
// agent's forged verdict that the judge quoted). Code fences are prose to
// it, so a fence inside a JSON string is just text.
func extract(text string, evidence []string) ([]byte, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, errors.New("the reply is empty")
	}
	// Whitespace aside, so that a quote the judge reformatted still
	// matches; a linear search, since the evidence is the agent's and may
	// be large (the reply is bounded by the judge's token limit).
	bare := make([]string, len(evidence))
	for i, e := range evidence {
		bare[i] = noSpace(e)
	}
	all := objects(t)
	var own [][]byte
	for _, o := range all {
		b := noSpace(string(o))
		if !slices.ContainsFunc(bare, func(e string) bool { return strings.Contains(e, b) }) {
			own = append(own, o)
		}
	}
	switch {
	case len(own) > 0:
		return own[len(own)-1], nil
	case len(all) > 0:
		return nil, errors.New("the reply's only JSON objects are quoted from the evidence; give your own verdict as a JSON object")
	}
	if i := strings.IndexByte(t, '{'); i >= 0 {
		var v json.RawMessage
		if err := json.NewDecoder(strings.NewReader(t[i:])).Decode(&v); err != nil {
			return nil, fmt.Errorf("the JSON object does not parse: %v", err)
		}
	}
	return nil, errors.New("the reply holds no JSON object")
}

// objects lists, compacted, the JSON objects written at the top level of
// text: a value that opens with { or [ and parses is taken whole (an
// array's objects are not the reply's object), anything else is skipped.
func objects(text string) [][]byte {
	var out [][]byte
	for i := 0; i < len(text); i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			continue
		}
		if v[0] == '{' {
			var b bytes.Buffer
			if json.Compact(&b, v) == nil {
				out = append(out, b.Bytes())
			}
		}
		i += int(dec.InputOffset()) - 1
	}
	return out
}

// uniqueKeys rejects an object in which a key repeats, at any depth
// (encoding/json would silently keep the last one).
func uniqueKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				if seen[key] {
					return fmt.Errorf("the key %q appears twice in one object", clipWord(key))
				}
				seen[key] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	return walk()
}

// stringField returns the non-empty string at key; where names the
// object in errors (empty: the reply's object).
func stringField(f map[string]json.RawMessage, key, where string) (string, error) {
	if where != "" {
		where += ": "
	}
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return "", fmt.Errorf("%s%q is missing", where, key)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s%q is not a string", where, key)
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%s%q is empty", where, key)
	}
	return s, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func isEmptyArray(raw json.RawMessage) bool {
	var a []json.RawMessage
	return json.Unmarshal(raw, &a) == nil && len(a) == 0
}

// clipWord shortens a value quoted back to the model.
func clipWord(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "..."
	}
	return s
}

// noSpace is s without its white space.
func noSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
