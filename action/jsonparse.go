package action

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// PixelsPerNotch converts pixel scroll amounts (OpenAI's scroll_x and
// scroll_y) to wheel notches: X11 and VNC scroll in notches.
const PixelsPerNotch = 100

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

// comboAction turns "ctrl+c" (or ["ctrl", "c"]) into a Key or Hotkey action.
func comboAction(names []string) (Action, error) {
	keys, bad, ok := normalizeKeys(names)
	if !ok {
		return Action{}, fmt.Errorf("unknown key %q", bad)
	}
	if len(keys) == 1 {
		return Action{Kind: Key, Keys: keys}, nil
	}
	return Action{Kind: Hotkey, Keys: keys}, nil
}

// ParseScreenAgent parses ScreenAgent's JSON function calls: MouseAction,
// KeyboardAction, WaitAction, PlanAction and EvaluateSubTaskAction.
func ParseScreenAgent(reply string, o Options) ([]Action, error) {
	unit := unitOr(o, Pixels)
	// Markdown-escaped underscores (action\_type) are undone first, as
	// ScreenAgent's own parser does; "\_" is no valid JSON escape anyway.
	// A backslash that is itself escaped ("C:\\_tmp" in JSON) stays.
	reply = unescapeUnderscores(reply)
	return parseObjects(FormatScreenAgent, reply, func(j *jobj) ([]Action, error) {
		switch t := j.str("action_type"); t {
		case "MouseAction":
			var a Action
			if j.has("mouse_position") {
				p := j.obj("mouse_position")
				a.Point = &Point{X: p.num("width"), Y: p.num("height"), Unit: unit}
				if p.err != nil {
					return nil, fmt.Errorf("mouse_position: %v", p.err)
				}
			}
			switch b := strings.ToLower(j.str("mouse_button")); b {
			case "", "left":
			case "right", "middle":
				a.Button = Button(b)
			default:
				return nil, fmt.Errorf("unknown mouse_button %q", b)
			}
			switch mt := strings.ToLower(j.str("mouse_action_type")); mt {
			case "click":
				a.Kind = Click
			case "double_click":
				a.Kind, a.Count = Click, 2
			case "move":
				a.Kind = Move
			case "drag":
				a.Kind, a.To, a.Point = Drag, a.Point, nil
			case "down":
				a.Kind = MouseDown
			case "up":
				a.Kind = MouseUp
			case "scroll_up", "scroll_down":
				rep := 1
				if j.has("scroll_repeat") {
					rep = int(j.num("scroll_repeat"))
				}
				if rep < 1 {
					return nil, fmt.Errorf("scroll_repeat must be at least 1")
				}
				a.Kind, a.DY, a.Button = Scroll, rep, ""
				if mt == "scroll_up" {
					a.DY = -rep
				}
			default:
				return nil, fmt.Errorf("unknown mouse_action_type %q", mt)
			}
			return []Action{a}, nil
		case "KeyboardAction":
			kt := strings.ToLower(j.str("keyboard_action_type"))
			text, key := j.str("keyboard_text"), j.str("keyboard_key")
			if text == "" {
				text = j.str("keyboard_input")
			}
			if kt == "" {
				kt = map[bool]string{true: "press", false: "text"}[key != ""]
			}
			switch kt {
			case "text", "input":
				if text == "" {
					return nil, fmt.Errorf("keyboard_text is required")
				}
				return []Action{{Kind: Type, Text: text}}, nil
			case "press", "down", "up":
				if key == "" {
					return nil, fmt.Errorf("keyboard_key is required")
				}
				a, err := comboAction(splitCombo(key))
				if err != nil {
					return nil, err
				}
				if kt != "press" {
					if len(a.Keys) != 1 {
						return nil, fmt.Errorf("key %s takes one key", kt)
					}
					a.Kind = map[string]Kind{"down": KeyDown, "up": KeyUp}[kt]
				}
				return []Action{a}, nil
			}
			return nil, fmt.Errorf("unknown keyboard_action_type %q", kt)
		case "WaitAction":
			d := 0.5
			if j.has("wait_time") {
				d = j.num("wait_time")
			}
			return []Action{{Kind: Wait, Duration: d}}, nil
		case "PlanAction":
			var text string
			var list []string
			if err := json.Unmarshal(j.m["element"], &list); err == nil {
				text = strings.Join(list, "\n")
			} else {
				text = j.str("element")
			}
			if text == "" {
				return nil, fmt.Errorf("PlanAction needs element")
			}
			return []Action{{Kind: Plan, Text: text}}, nil
		case "EvaluateSubTaskAction":
			s := j.str("situation")
			if s == "goal_success" {
				s = "sub_task_success"
			}
			switch s {
			case "sub_task_success", "need_retry", "need_reformulate":
			default:
				return nil, fmt.Errorf("unknown situation %q", s)
			}
			a := Action{Kind: Reflect, Text: s}
			if adv := j.str("advice"); adv != "" {
				a.Args = map[string]any{"advice": adv}
			}
			return []Action{a}, nil
		case "":
			return nil, fmt.Errorf("action_type is missing")
		default:
			return nil, fmt.Errorf("unknown action_type %q", t)
		}
	})
}

// unescapeUnderscores removes the backslash of each "\_" that ends an odd
// run of backslashes: an even run is escaped backslashes followed by an
// underscore, valid JSON to keep.
func unescapeUnderscores(s string) string {
	if !strings.Contains(s, `\_`) {
		return s
	}
	out := make([]byte, 0, len(s))
	run := 0 // backslashes just before s[i]
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			run++
		case c == '_' && run%2 == 1:
			out = out[:len(out)-1] // the escaping backslash
			run = 0
		default:
			run = 0
		}
		out = append(out, s[i])
	}
	return string(out)
}

// ParseAnthropic parses the input of Anthropic's computer-use tool (a bare
// input object, a tool_use block, or a content array holding them).
func ParseAnthropic(reply string, o Options) ([]Action, error) {
	unit := unitOr(o, Pixels)
	return parseObjects(FormatAnthropic, reply, func(j *jobj) ([]Action, error) {
		if t := j.str("type"); t != "" && t != "tool_use" {
			return nil, nil // text and thinking blocks carry no action
		}
		if j.has("input") {
			j = j.obj("input")
			if j.err != nil {
				return nil, j.err
			}
		}
		act := j.str("action")
		pt := j.pair("coordinate", unit)
		f, ok := anthropicFuncs[act]
		if !ok {
			if act == "" {
				return nil, fmt.Errorf("action is missing")
			}
			return nil, fmt.Errorf("unknown action %q", act)
		}
		return f(act, j, pt, unit)
	})
}

// anthropicFunc reads one action (act) of the computer-use tool from its
// input j; pt is its coordinate, unit the convention of its coordinates.
type anthropicFunc func(act string, j *jobj, pt *Point, unit Unit) ([]Action, error)

// anthropicFuncs are the computer-use tool's actions, by name.
var anthropicFuncs = map[string]anthropicFunc{
	"key":             anthropicKey,
	"type":            anthropicType,
	"mouse_move":      anthropicMouseMove,
	"left_click":      anthropicClick,
	"right_click":     anthropicClick,
	"middle_click":    anthropicClick,
	"double_click":    anthropicClick,
	"triple_click":    anthropicClick,
	"left_click_drag": anthropicDrag,
	"left_mouse_down": anthropicMouseButton,
	"left_mouse_up":   anthropicMouseButton,
	"scroll":          anthropicScroll,
	"hold_key":        anthropicHoldKey,
	"wait":            anthropicWait,
	"screenshot":      anthropicObserve,
	"cursor_position": anthropicObserve,
}

// anthropicHeld wraps a in the modifier keys that j's text names (a click
// or scroll with keys held): each goes down before a and up after it, in
// reverse.
func anthropicHeld(j *jobj, a Action) []Action {
	if mods := j.str("text"); mods != "" {
		keys, bad, ok := normalizeKeys(splitCombo(mods))
		if !ok {
			j.fail("unknown modifier key %q", bad)
			return nil
		}
		out := make([]Action, 0, 2*len(keys)+1)
		for _, k := range keys {
			out = append(out, Action{Kind: KeyDown, Keys: []string{k}})
		}
		out = append(out, a)
		for i := len(keys) - 1; i >= 0; i-- {
			out = append(out, Action{Kind: KeyUp, Keys: []string{keys[i]}})
		}
		return out
	}
	return []Action{a}
}

// anthropicKey reads key: combos such as "ctrl+s", apart by spaces.
func anthropicKey(act string, j *jobj, pt *Point, unit Unit) ([]Action, error) {
	var out []Action
	for _, combo := range strings.Fields(j.str("text")) {
		a, err := comboAction(splitCombo(combo))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("key needs text")
	}
	return out, nil
}

// anthropicType reads type.
func anthropicType(act string, j *jobj, pt *Point, unit Unit) ([]Action, error) {
	return []Action{{Kind: Type, Text: j.str("text")}}, nil
}

// anthropicMouseMove reads mouse_move.
func anthropicMouseMove(act string, j *jobj, pt *Point, unit Unit) ([]Action, error) {
	return []Action{{Kind: Move, Point: pt}}, nil
}

// anthropicClick reads left_click, right_click, middle_click, double_click
// and triple_click.
func anthropicClick(act string, j *jobj, pt *Point, unit Unit) ([]Action, error) {
	a := Action{Kind: Click, Point: pt}
	switch act {
	case "right_click":
		a.Button = Right
	case "middle_click":
		a.Button = Middle
	case "double_click":
		a.Count = 2
	case "triple_click":
		a.Count = 3
	}
	return anthropicHeld(j, a), nil
}

// anthropicDrag reads left_click_drag.
func anthropicDrag(act string, j *jobj, pt *Point, unit Unit) ([]Action, error) {
	return []Action{{Kind: Drag, Point: j.pair("start_coordinate", unit), To: pt}}, nil
}

// anthropicMouseButton reads left_mouse_down and left_mouse_up.
func anthropicMouseButton(act string, j *jobj, pt *Point, unit Unit) ([]Action, error) {
	if act == "left_mouse_up" {
		return []Action{{Kind: MouseUp, Point: pt}}, nil
	}
	return []Action{{Kind: MouseDown, Point: pt}}, nil
}

// anthropicScroll reads scroll.
func anthropicScroll(act string, j *jobj, pt *Point, unit Unit) ([]Action, error) {
	n := ScrollNotches
	if j.has("scroll_amount") {
		n = int(j.num("scroll_amount"))
	}
	if n < 1 {
		return nil, fmt.Errorf("scroll_amount must be at least 1")
	}
	a := Action{Kind: Scroll, Point: pt}
	switch d := j.str("scroll_direction"); d {
	case "up":
		a.DY = -n
	case "down":
		a.DY = n
	case "left":
		a.DX = -n
	case "right":
		a.DX = n
	default:
		return nil, fmt.Errorf("unknown scroll_direction %q", d)
	}
	return anthropicHeld(j, a), nil
}

// anthropicHoldKey reads hold_key: keys held for a duration.
func anthropicHoldKey(act string, j *jobj, pt *Point, unit Unit) ([]Action, error) {
	keys, bad, ok := normalizeKeys(splitCombo(j.str("text")))
	if !ok || len(keys) == 0 {
		return nil, fmt.Errorf("unknown key %q", bad)
	}
	d := j.num("duration")
	var out []Action
	for _, k := range keys {
		out = append(out, Action{Kind: KeyDown, Keys: []string{k}})
	}
	out = append(out, Action{Kind: Wait, Duration: d})
	for i := len(keys) - 1; i >= 0; i-- {
		out = append(out, Action{Kind: KeyUp, Keys: []string{keys[i]}})
	}
	if d <= 0 {
		return nil, fmt.Errorf("hold_key needs a positive duration")
	}
	return out, nil
}

// anthropicWait reads wait: a second unless it says how long.
func anthropicWait(act string, j *jobj, pt *Point, unit Unit) ([]Action, error) {
	d := j.num("duration")
	if d <= 0 {
		d = 1
	}
	return []Action{{Kind: Wait, Duration: d}}, nil
}

// anthropicObserve reads screenshot and cursor_position: requests for an
// observation, which the next observation answers.
func anthropicObserve(act string, j *jobj, pt *Point, unit Unit) ([]Action, error) {
	j.observe()
	return nil, nil
}

// ParseOpenAI parses OpenAI computer-use output: a response output array, a
// computer_call item, or a bare action object.
func ParseOpenAI(reply string, o Options) ([]Action, error) {
	unit := unitOr(o, Pixels)
	var one func(j *jobj) ([]Action, error)
	one = func(j *jobj) ([]Action, error) {
		if j.has("output") { // a whole response
			var items []map[string]json.RawMessage
			if err := json.Unmarshal(j.m["output"], &items); err != nil {
				return nil, fmt.Errorf("output must be an array of items")
			}
			return j.each(items, one), nil
		}
		t := j.str("type")
		if t == "computer_call" {
			if j.has("actions") {
				var list []map[string]json.RawMessage
				if err := json.Unmarshal(j.m["actions"], &list); err != nil {
					return nil, fmt.Errorf("actions must be an array of objects")
				}
				return j.each(list, one), nil
			}
			if !j.has("action") {
				return nil, fmt.Errorf("computer_call needs action")
			}
			a := j.obj("action")
			if j.err != nil {
				return nil, j.err
			}
			return j.each([]map[string]json.RawMessage{a.m}, one), nil
		}
		pt := func() *Point {
			if !j.has("x") || !j.has("y") {
				j.fail("%s needs x and y", t)
				return nil
			}
			return &Point{X: j.num("x"), Y: j.num("y"), Unit: unit}
		}
		switch t {
		case "click", "double_click":
			a := Action{Kind: Click, Point: pt()}
			if t == "double_click" {
				a.Count = 2
			}
			switch b := j.str("button"); b {
			case "", "left":
			case "right":
				a.Button = Right
			case "wheel", "middle":
				a.Button = Middle
			case "back":
				return []Action{{Kind: Back}}, nil
			case "forward":
				return nil, fmt.Errorf("button %q has no action in the unified space", b)
			default:
				return nil, fmt.Errorf("unknown button %q", b)
			}
			return []Action{a}, nil
		case "move":
			return []Action{{Kind: Move, Point: pt()}}, nil
		case "drag":
			var path []struct{ X, Y float64 }
			if err := json.Unmarshal(j.m["path"], &path); err != nil || len(path) < 2 {
				return nil, fmt.Errorf("drag needs a path of at least two points")
			}
			last := path[len(path)-1]
			return []Action{{Kind: Drag, Point: &Point{X: path[0].X, Y: path[0].Y, Unit: unit},
				To: &Point{X: last.X, Y: last.Y, Unit: unit}}}, nil
		case "keypress":
			var keys []string
			if err := json.Unmarshal(j.m["keys"], &keys); err != nil || len(keys) == 0 {
				return nil, fmt.Errorf("keypress needs keys")
			}
			a, err := comboAction(keys)
			return []Action{a}, err
		case "type":
			return []Action{{Kind: Type, Text: j.str("text")}}, nil
		case "scroll":
			notches := func(px float64) int {
				n := int(math.Round(px / PixelsPerNotch))
				if n == 0 && px != 0 {
					n = int(math.Copysign(1, px))
				}
				return n
			}
			a := Action{Kind: Scroll, DX: notches(j.num("scroll_x")), DY: notches(j.num("scroll_y"))}
			if j.has("x") {
				a.Point = pt()
			}
			return []Action{a}, nil
		case "wait":
			return []Action{{Kind: Wait, Duration: 2}}, nil
		case "screenshot":
			j.observe() // the next observation answers it
			return nil, nil
		case "message", "reasoning", "function_call", "text":
			return nil, nil
		case "":
			return nil, fmt.Errorf("type is missing")
		}
		return nil, fmt.Errorf("unknown action type %q", t)
	}
	return parseObjects(FormatOpenAI, reply, one)
}

// ParseBrowserUse parses browser-use output: {"action": [{"name": {...}}]}
// or the action objects alone. Tools outside the unified space (files,
// dropdown listing, search, extraction) become API actions of that name.
func ParseBrowserUse(reply string, o Options) ([]Action, error) {
	var one func(j *jobj) ([]Action, error)
	one = func(j *jobj) ([]Action, error) {
		if j.has("action") { // the model output wrapper, with thoughts beside it
			var list []map[string]json.RawMessage
			if err := json.Unmarshal(j.m["action"], &list); err != nil {
				var single map[string]json.RawMessage
				if err2 := json.Unmarshal(j.m["action"], &single); err2 != nil {
					return nil, fmt.Errorf("action must be a list of {name: params} objects")
				}
				list = []map[string]json.RawMessage{single}
			}
			return j.each(list, one), nil
		}
		if len(j.m) != 1 {
			return nil, fmt.Errorf("each action must be one {name: params} object")
		}
		var name string
		for k := range j.m {
			name = k
		}
		p := j.obj(name)
		if j.err != nil {
			return nil, j.err
		}
		var out []Action
		switch name {
		case "go_to_url", "open_tab":
			out = []Action{{Kind: Navigate, Text: p.str("url"), NewTab: p.boolean("new_tab") || name == "open_tab"}}
		case "go_back":
			out = []Action{{Kind: Back}}
		case "click_element_by_index", "click_element":
			a := Action{Kind: Click, Target: &Target{Index: p.index("index")}}
			if p.boolean("while_holding_ctrl") {
				out = []Action{{Kind: KeyDown, Keys: []string{"ctrl"}}, a, {Kind: KeyUp, Keys: []string{"ctrl"}}}
			} else {
				out = []Action{a}
			}
		case "input_text":
			out = []Action{{Kind: Type, Target: &Target{Index: p.index("index")}, Text: p.str("text"), Clear: p.boolean("clear_existing")}}
		case "switch_tab", "close_tab":
			id := p.str("tab_id")
			if id == "" && p.has("page_id") {
				id = fmt.Sprintf("%g", p.num("page_id"))
			}
			if id == "" {
				return nil, fmt.Errorf("%s needs tab_id", name)
			}
			k := TabSwitch
			if name == "close_tab" {
				k = TabClose
			}
			out = []Action{{Kind: k, Tab: id}}
		case "scroll", "scroll_down", "scroll_up":
			pages := 1.0
			if p.has("num_pages") {
				pages = p.num("num_pages")
			}
			down := name == "scroll_down" || (name == "scroll" && (!p.has("down") || p.boolean("down")))
			if !down {
				pages = -pages
			}
			a := Action{Kind: Scroll, Pages: pages}
			if p.has("amount") && !p.has("num_pages") {
				// Older versions scroll by pixels: wheel notches of
				// BrowserNotch pixels, one at least.
				px := p.num("amount")
				if px < 0 || math.IsNaN(px) {
					return nil, fmt.Errorf("%s: amount %g is not a count of pixels", name, px)
				}
				notches := max(1, int(math.Round(px/BrowserNotch)))
				if !down {
					notches = -notches
				}
				a = Action{Kind: Scroll, DY: notches}
			}
			if p.has("frame_element_index") {
				a.Target = &Target{Index: p.index("frame_element_index")}
			}
			out = []Action{a}
		case "scroll_to_text":
			out = []Action{{Kind: ScrollToText, Text: p.str("text")}}
		case "send_keys":
			keys := p.str("keys")
			if a, err := comboAction(splitCombo(keys)); err == nil {
				out = []Action{a}
			} else {
				out = []Action{{Kind: Type, Text: keys}}
			}
		case "select_dropdown_option":
			out = []Action{{Kind: Select, Target: &Target{Index: p.index("index")}, Text: p.str("text")}}
		case "wait":
			d := 3.0
			if p.has("seconds") {
				d = p.num("seconds")
			}
			out = []Action{{Kind: Wait, Duration: d}}
		case "done":
			if p.has("success") && !p.boolean("success") {
				out = []Action{{Kind: Fail, Text: p.str("text")}}
			} else {
				out = []Action{{Kind: Done, Text: p.str("text")}}
			}
		case "get_dropdown_options", "upload_file_to_element", "upload_file", "write_file", "replace_file_str",
			"read_file", "search_google", "extract_structured_data", "extract_content":
			var args map[string]any
			if len(p.m) > 0 {
				b, _ := json.Marshal(p.m)
				_ = json.Unmarshal(b, &args)
			}
			out = []Action{{Kind: API, Name: name, Args: args}}
		default:
			return nil, fmt.Errorf("unknown browser-use action %q", name)
		}
		if p.err != nil {
			return nil, fmt.Errorf("%s: %v", name, p.err)
		}
		return out, nil
	}
	return parseObjects(FormatBrowserUse, reply, one)
}

// ParseJSON parses Proctor's own actions: an Action object or an array of
// them, with unknown fields rejected.
func ParseJSON(reply string, o Options) ([]Action, error) {
	return parseObjects(FormatJSON, reply, func(j *jobj) ([]Action, error) {
		b, _ := json.Marshal(j.m)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var a Action
		if err := dec.Decode(&a); err != nil {
			return nil, err
		}
		return []Action{a}, nil
	})
}

// BrowserNotch is how far one wheel notch scrolls a page in the browser
// environment, in CSS pixels: a browser-use scroll by an amount of pixels
// becomes that many notches.
const BrowserNotch = 100
