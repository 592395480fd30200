package action

import (
	"fmt"
	"strings"
)

// ParseAnthropic parses the input of Anthropic's computer-use tool (a bare
// input object, a tool_use block, or a content array holding them).
func ParseAnthropic(reply string, o Options) ([]Action, error) {
	unit := unitOr(o, Pixels)
	return parseObjects(FormatAnthropic, reply, func(j *jobj) ([]Action, error) {
		if t := j.str("type"); t != "" && t != "tool_use" {
			return nil, nil // text and thinking blocks carry no action
		}
		if !j.has("input") {
			return anthropicInput(j, unit)
		}
		in := j.obj("input")
		if j.err != nil {
			return nil, j.err
		}
		acts, err := anthropicInput(in, unit)
		if err == nil {
			err = in.err // what went wrong inside the block's input
		}
		return acts, err
	})
}

// anthropicInput parses one input object of the computer-use tool.
func anthropicInput(j *jobj, unit Unit) ([]Action, error) {
	act := j.str("action")
	pt := j.pair("coordinate", unit)
	switch act {
	case "key":
		return anthropicKey(act, j, pt, unit)
	case "type":
		return anthropicType(act, j, pt, unit)
	case "mouse_move":
		return anthropicMouseMove(act, j, pt, unit)
	case "left_click", "right_click", "middle_click", "double_click", "triple_click":
		return anthropicClick(act, j, pt, unit)
	case "left_click_drag":
		return anthropicDrag(act, j, pt, unit)
	case "left_mouse_down", "left_mouse_up":
		return anthropicMouseButton(act, j, pt, unit)
	case "scroll":
		return anthropicScroll(act, j, pt, unit)
	case "hold_key":
		return anthropicHoldKey(act, j, pt, unit)
	case "wait":
		return anthropicWait(act, j, pt, unit)
	case "screenshot", "cursor_position":
		return anthropicObserve(act, j, pt, unit)
	case "":
		return nil, fmt.Errorf("action is missing")
	}
	return nil, fmt.Errorf("unknown action %q", act)
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
