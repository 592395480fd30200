package action

import (
	"encoding/json"
	"fmt"
	"math"
)

// PixelsPerNotch converts pixel scroll amounts (OpenAI's scroll_x and
// scroll_y) to wheel notches: X11 and VNC scroll in notches.
const PixelsPerNotch = 100

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
