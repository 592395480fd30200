package action

import (
	"encoding/json"
	"fmt"
	"strings"
)

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
