package action

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	uitarsActionRE = regexp.MustCompile(`(?s)(?:^|\n)\s*Action\s*:\s*(.*)$`)
	uitarsBoxRE    = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?`)
)

// ParseUITARS parses UI-TARS output: "Thought: ...\nAction: click(start_box='(x,y)')".
// Boxes may be points or (x1,y1,x2,y2) boxes (their centre is used), with or
// without <|box_start|> markers or <point> tags. Coordinates are thousandths
// unless Options say otherwise. Only what follows the first "Action:" line
// is read, so the thought is never an action; several actions go on lines
// of their own (each may repeat the label), and an error names the line of
// the first one not understood.
func ParseUITARS(reply string, o Options) ([]Action, error) {
	unit := unitOr(o, Thousand)
	src, base := reply, 0 // base: the lines of the reply before src
	if m := uitarsActionRE.FindStringSubmatchIndex(reply); m != nil {
		src, base = reply[m[2]:m[3]], strings.Count(reply[:m[2]], "\n")
	}
	toks, err := pyLex(src)
	if err != nil {
		return nil, &ParseError{Format: FormatUITARS, Part: src, Reason: err.Error()}
	}
	p := &pyParser{toks: toks}
	var out []Action
	// bad names the line of the action that was not understood.
	bad := func(line int, err error) error {
		part := src
		if lines := strings.Split(src, "\n"); line >= 1 && line <= len(lines) {
			part = lines[line-1]
		}
		return &ParseError{Format: FormatUITARS, Line: base + line, Part: part, Reason: err.Error(), Actions: out}
	}
	for p.peek().kind != tEOF {
		if t := p.peek(); t.kind == tNewline || t.kind == tOp && t.text == ";" {
			p.next()
			continue
		}
		if t := p.peek(); t.kind == tSpecial {
			p.next()
			a, _ := special(t.text)
			out = append(out, a)
			continue
		}
		// Each action may repeat the "Action:" label.
		if t := p.peek(); t.kind == tName && t.text == "Action" && p.toks[p.pos+1].kind == tOp && p.toks[p.pos+1].text == ":" {
			p.next()
			p.next()
			continue
		}
		line := p.peek().line
		c, err := p.call()
		if err != nil {
			return nil, bad(line, err)
		}
		acts, err := uitarsAction(c, unit)
		if err != nil {
			return nil, bad(line, err)
		}
		out = append(out, acts...)
	}
	if len(out) == 0 {
		return nil, &ParseError{Format: FormatUITARS, Part: reply, Reason: "no action found"}
	}
	return out, nil
}

func uitarsPoint(v pyVal, ok bool, name string, unit Unit) (*Point, error) {
	if !ok {
		return nil, fmt.Errorf("%s is required", name)
	}
	var nums []float64
	switch v.kind {
	case vStr:
		for _, s := range uitarsBoxRE.FindAllString(v.str, -1) {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: bad number %q", name, s)
			}
			nums = append(nums, f)
		}
	case vSeq:
		for _, it := range v.items {
			if it.kind != vNum {
				return nil, fmt.Errorf("%s must hold numbers", name)
			}
			nums = append(nums, it.num)
		}
	default:
		return nil, fmt.Errorf("%s must be a string such as '(x,y)'", name)
	}
	switch len(nums) {
	case 2:
		return &Point{X: nums[0], Y: nums[1], Unit: unit}, nil
	case 4:
		return &Point{X: (nums[0] + nums[2]) / 2, Y: (nums[1] + nums[3]) / 2, Unit: unit}, nil
	}
	return nil, fmt.Errorf("%s must hold a point (x,y) or a box (x1,y1,x2,y2), found %d numbers", name, len(nums))
}

func uitarsAction(c pyCall, unit Unit) ([]Action, error) {
	a := &pyArgs{c: c, used: map[string]bool{}}
	switch c.fn {
	case "click", "left_single", "left_double", "right_single":
		return uitarsClick(c.fn, a, unit)
	case "hover", "moveTo":
		return uitarsHover(c.fn, a, unit)
	case "long_press":
		return uitarsLongPress(c.fn, a, unit)
	case "drag", "select", "swipe":
		return uitarsDrag(c.fn, a, unit)
	case "hotkey", "press":
		return uitarsHotkey(c.fn, a, unit)
	case "keydown", "keyup":
		return uitarsKeyHold(c.fn, a, unit)
	case "type":
		return uitarsType(c.fn, a, unit)
	case "scroll":
		return uitarsScroll(c.fn, a, unit)
	case "wait":
		return uitarsWait(c.fn, a, unit)
	case "finished":
		return uitarsFinished(c.fn, a, unit)
	case "call_user":
		return uitarsCallUser(c.fn, a, unit)
	case "press_back":
		return uitarsPressBack(c.fn, a, unit)
	case "press_home":
		return uitarsPressHome(c.fn, a, unit)
	case "open_app":
		return uitarsOpenApp(c.fn, a, unit)
	}
	return nil, fmt.Errorf("unknown UI-TARS action %s", c.fn)
}

// uitarsArgBox reads the box argument name (start_box), or its 1.5 name
// (start_point, or point for start_box).
func uitarsArgBox(a *pyArgs, name string, unit Unit) (*Point, error) {
	v, ok := a.get(0, name)
	if !ok {
		v, ok = a.get(0, strings.Replace(name, "box", "point", 1))
	}
	if !ok && name == "start_box" {
		v, ok = a.get(0, "point")
	}
	return uitarsPoint(v, ok, name, unit)
}

// uitarsArgStr reads the string argument name, "" when it is absent.
func uitarsArgStr(a *pyArgs, name string) (string, error) {
	s, _, err := a.str(0, name)
	return s, err
}

// uitarsClick reads click, left_single, left_double and right_single.
func uitarsClick(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	pt, err := uitarsArgBox(a, "start_box", unit)
	if err != nil {
		return nil, err
	}
	act := Action{Kind: Click, Point: pt}
	switch fn {
	case "left_double":
		act.Count = 2
	case "right_single":
		act.Button = Right
	}
	return []Action{act}, nil
}

// uitarsHover reads hover and moveTo.
func uitarsHover(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	pt, err := uitarsArgBox(a, "start_box", unit)
	if err != nil {
		return nil, err
	}
	return []Action{{Kind: Move, Point: pt}}, nil
}

// uitarsLongPress reads long_press: a press held for a second.
func uitarsLongPress(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	pt, err := uitarsArgBox(a, "start_box", unit)
	if err != nil {
		return nil, err
	}
	return []Action{{Kind: MouseDown, Point: pt}, {Kind: Wait, Duration: 1}, {Kind: MouseUp, Point: pt}}, nil
}

// uitarsDrag reads drag, select and swipe.
func uitarsDrag(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	from, err := uitarsArgBox(a, "start_box", unit)
	if err != nil {
		return nil, err
	}
	v, ok := a.get(1, "end_box")
	if !ok {
		v, ok = a.get(1, "end_point")
	}
	to, err := uitarsPoint(v, ok, "end_box", unit)
	if err != nil {
		return nil, err
	}
	k := Drag
	if fn == "swipe" {
		k = Swipe
	}
	return []Action{{Kind: k, Point: from, To: to}}, nil
}

// uitarsCombo reads the keys of a key action: key (or hotkey), names
// apart or joined by "+".
func uitarsCombo(a *pyArgs) (Action, error) {
	s, err := uitarsArgStr(a, "key")
	if err != nil {
		return Action{}, err
	}
	if s == "" {
		s, _ = uitarsArgStr(a, "hotkey")
	}
	names := strings.Fields(s)
	if len(names) == 1 && strings.Contains(names[0], "+") && names[0] != "+" {
		names = splitCombo(names[0])
	}
	return comboAction(names)
}

// uitarsHotkey reads hotkey and press.
func uitarsHotkey(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	act, err := uitarsCombo(a)
	if err != nil {
		return nil, err
	}
	if fn == "press" {
		act.Kind = Key
	}
	return []Action{act}, nil
}

// uitarsKeyHold reads keydown and keyup.
func uitarsKeyHold(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	act, err := uitarsCombo(a)
	if err != nil {
		return nil, err
	}
	if len(act.Keys) != 1 {
		return nil, fmt.Errorf("%s takes one key", fn)
	}
	act.Kind = map[string]Kind{"keydown": KeyDown, "keyup": KeyUp}[fn]
	return []Action{act}, nil
}

// uitarsType reads type.
func uitarsType(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	s, err := uitarsArgStr(a, "content")
	if err != nil {
		return nil, err
	}
	// A trailing newline means: type, then press enter.
	if strings.HasSuffix(s, "\n") {
		out := []Action{{Kind: Type, Text: strings.TrimRight(s, "\n")}, {Kind: Key, Keys: []string{"enter"}}}
		if out[0].Text == "" {
			out = out[1:]
		}
		return out, nil
	}
	return []Action{{Kind: Type, Text: s}}, nil
}

// uitarsScroll reads scroll.
func uitarsScroll(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	d, _, err := a.str(1, "direction")
	if err != nil {
		return nil, err
	}
	act, ok := directional(d)
	if !ok {
		return nil, fmt.Errorf("unknown scroll direction %q", d)
	}
	// UI-TARS 1.0 writes start_box, 1.5 point (the position is optional).
	v, has := a.get(0, "start_box")
	for _, name := range []string{"start_point", "point"} {
		if !has {
			v, has = a.c.kw[name]
		}
	}
	if has {
		pt, err := uitarsPoint(v, true, "start_box", unit)
		if err != nil {
			return nil, err
		}
		act.Point = pt
	}
	return []Action{act}, nil
}

// uitarsWait reads wait.
func uitarsWait(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	return []Action{{Kind: Wait, Duration: DefaultWait}}, nil
}

// uitarsFinished reads finished: done, or an answer when it has content.
func uitarsFinished(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	s, _ := uitarsArgStr(a, "content")
	if s != "" {
		return []Action{{Kind: Answer, Text: s}}, nil
	}
	return []Action{{Kind: Done}}, nil
}

// uitarsCallUser reads call_user: the task cannot go on.
func uitarsCallUser(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	return []Action{{Kind: Fail}}, nil
}

// uitarsPressBack reads press_back.
func uitarsPressBack(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	return []Action{{Kind: Back}}, nil
}

// uitarsPressHome reads press_home.
func uitarsPressHome(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	return []Action{{Kind: Key, Keys: []string{"super"}}}, nil
}

// uitarsOpenApp reads open_app.
func uitarsOpenApp(fn string, a *pyArgs, unit Unit) ([]Action, error) {
	s, _ := uitarsArgStr(a, "app_name")
	return []Action{{Kind: API, Name: "open_app", Args: map[string]any{"app_name": s}}}, nil
}
