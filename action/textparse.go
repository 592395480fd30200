package action

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	osAtlasClickRE  = regexp.MustCompile(`(?i)^CLICK\s*<point>\s*\[\[\s*(-?[0-9.]+)\s*,\s*(-?[0-9.]+)\s*\]\]\s*</point>$`)
	osAtlasTypeRE   = regexp.MustCompile(`(?is)^TYPE\s*\[(.*)\]$`)
	osAtlasScrollRE = regexp.MustCompile(`(?i)^SCROLL\s*\[\s*(UP|DOWN|LEFT|RIGHT)\s*\]$`)
	lineLabelRE     = regexp.MustCompile(`(?i)^(?:actions?|answer|output)\s*:\s*`)
)

// directional returns a scroll of ScrollNotches notches in direction d.
func directional(d string) (Action, bool) {
	a := Action{Kind: Scroll}
	switch strings.ToUpper(strings.TrimSpace(d)) {
	case "UP":
		a.DY = -ScrollNotches
	case "DOWN":
		a.DY = ScrollNotches
	case "LEFT":
		a.DX = -ScrollNotches
	case "RIGHT":
		a.DX = ScrollNotches
	default:
		return a, false
	}
	return a, true
}

func parseNum(s string) (float64, error) { return strconv.ParseFloat(strings.TrimSpace(s), 64) }

// ParseOSAtlas parses OS-Atlas actions, one a line:
// CLICK <point>[[x, y]]</point>, TYPE [text], SCROLL [UP|DOWN|LEFT|RIGHT].
// Coordinates are thousandths of the screen unless Options say otherwise.
// Lines that are not actions (thoughts) are skipped; a line that starts
// with an action word but is malformed is an error.
func ParseOSAtlas(reply string, o Options) ([]Action, error) {
	unit := unitOr(o, Thousand)
	var out []Action
	for i, raw := range strings.Split(reply, "\n") {
		line := strings.TrimSpace(lineLabelRE.ReplaceAllString(strings.TrimSpace(raw), ""))
		line = strings.Trim(line, "`")
		up := strings.ToUpper(line)
		var a Action
		switch {
		case strings.HasPrefix(up, "CLICK"):
			m := osAtlasClickRE.FindStringSubmatch(line)
			if m == nil {
				return nil, &ParseError{Format: FormatOSAtlas, Line: i + 1, Part: line, Reason: "CLICK must be CLICK <point>[[x, y]]</point>"}
			}
			x, e1 := parseNum(m[1])
			y, e2 := parseNum(m[2])
			if e1 != nil || e2 != nil {
				return nil, &ParseError{Format: FormatOSAtlas, Line: i + 1, Part: line, Reason: "bad coordinate"}
			}
			a = Action{Kind: Click, Point: &Point{X: x, Y: y, Unit: unit}}
		case strings.HasPrefix(up, "TYPE"):
			m := osAtlasTypeRE.FindStringSubmatch(line)
			if m == nil || m[1] == "" {
				return nil, &ParseError{Format: FormatOSAtlas, Line: i + 1, Part: line, Reason: "TYPE must be TYPE [text]"}
			}
			a = Action{Kind: Type, Text: m[1]}
		case strings.HasPrefix(up, "SCROLL"):
			m := osAtlasScrollRE.FindStringSubmatch(line)
			if m == nil {
				return nil, &ParseError{Format: FormatOSAtlas, Line: i + 1, Part: line, Reason: "SCROLL must be SCROLL [UP|DOWN|LEFT|RIGHT]"}
			}
			a, _ = directional(m[1])
		default:
			if sp, ok := special(line); ok {
				a = sp
			} else {
				continue
			}
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, &ParseError{Format: FormatOSAtlas, Part: reply, Reason: "no CLICK, TYPE or SCROLL action found"}
	}
	return out, nil
}

var (
	uitarsActionRE = regexp.MustCompile(`(?s)(?:^|\n)\s*Action\s*:\s*(.*)$`)
	uitarsBoxRE    = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?`)
)

// ParseUITARS parses UI-TARS output: "Thought: ...\nAction: click(start_box='(x,y)')".
// Boxes may be points or (x1,y1,x2,y2) boxes (their centre is used), with or
// without <|box_start|> markers or <point> tags. Coordinates are thousandths
// unless Options say otherwise.
func ParseUITARS(reply string, o Options) ([]Action, error) {
	unit := unitOr(o, Thousand)
	src := reply
	if m := uitarsActionRE.FindStringSubmatch(reply); m != nil {
		src = m[1]
	}
	toks, err := pyLex(src)
	if err != nil {
		return nil, &ParseError{Format: FormatUITARS, Part: src, Reason: err.Error()}
	}
	p := &pyParser{toks: toks}
	var out []Action
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
		c, err := p.call()
		if err != nil {
			return nil, &ParseError{Format: FormatUITARS, Part: src, Reason: err.Error()}
		}
		acts, err := uitarsAction(c, unit)
		if err != nil {
			return nil, &ParseError{Format: FormatUITARS, Part: src, Reason: err.Error()}
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
	box := func(name string) (*Point, error) {
		v, ok := a.get(0, name)
		if !ok {
			v, ok = a.get(0, strings.Replace(name, "box", "point", 1))
		}
		if !ok && name == "start_box" {
			v, ok = a.get(0, "point")
		}
		return uitarsPoint(v, ok, name, unit)
	}
	str := func(name string) (string, error) {
		s, _, err := a.str(0, name)
		return s, err
	}
	var out []Action
	switch c.fn {
	case "click", "left_single", "left_double", "right_single", "long_press", "hover", "moveTo":
		pt, err := box("start_box")
		if err != nil {
			return nil, err
		}
		act := Action{Kind: Click, Point: pt}
		switch c.fn {
		case "left_double":
			act.Count = 2
		case "right_single":
			act.Button = Right
		case "hover", "moveTo":
			act.Kind = Move
		case "long_press":
			out = []Action{{Kind: MouseDown, Point: pt}, {Kind: Wait, Duration: 1}, {Kind: MouseUp, Point: pt}}
			return out, nil
		}
		out = []Action{act}
	case "drag", "select", "swipe":
		from, err := box("start_box")
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
		if c.fn == "swipe" {
			k = Swipe
		}
		out = []Action{{Kind: k, Point: from, To: to}}
	case "hotkey", "press", "keydown", "keyup":
		s, err := str("key")
		if err != nil {
			return nil, err
		}
		if s == "" {
			s, _ = str("hotkey")
		}
		names := strings.Fields(s)
		if len(names) == 1 && strings.Contains(names[0], "+") && names[0] != "+" {
			names = splitCombo(names[0])
		}
		act, err := comboAction(names)
		if err != nil {
			return nil, err
		}
		switch c.fn {
		case "keydown", "keyup":
			if len(act.Keys) != 1 {
				return nil, fmt.Errorf("%s takes one key", c.fn)
			}
			act.Kind = map[string]Kind{"keydown": KeyDown, "keyup": KeyUp}[c.fn]
		case "press":
			act.Kind = Key
		}
		out = []Action{act}
	case "type":
		s, err := str("content")
		if err != nil {
			return nil, err
		}
		// A trailing newline means: type, then press enter.
		if strings.HasSuffix(s, "\n") {
			out = []Action{{Kind: Type, Text: strings.TrimRight(s, "\n")}, {Kind: Key, Keys: []string{"enter"}}}
			if out[0].Text == "" {
				out = out[1:]
			}
		} else {
			out = []Action{{Kind: Type, Text: s}}
		}
	case "scroll":
		d, _, err := a.str(1, "direction")
		if err != nil {
			return nil, err
		}
		act, ok := directional(d)
		if !ok {
			return nil, fmt.Errorf("unknown scroll direction %q", d)
		}
		if v, has := a.get(0, "start_box"); has {
			pt, err := uitarsPoint(v, true, "start_box", unit)
			if err != nil {
				return nil, err
			}
			act.Point = pt
		}
		a.used["point"] = true
		out = []Action{act}
	case "wait":
		out = []Action{{Kind: Wait, Duration: DefaultWait}}
	case "finished":
		s, _ := str("content")
		if s != "" {
			out = []Action{{Kind: Answer, Text: s}}
		} else {
			out = []Action{{Kind: Done}}
		}
	case "call_user":
		out = []Action{{Kind: Fail}}
	case "press_back":
		out = []Action{{Kind: Back}}
	case "press_home":
		out = []Action{{Kind: Key, Keys: []string{"super"}}}
	case "open_app":
		s, _ := str("app_name")
		out = []Action{{Kind: API, Name: "open_app", Args: map[string]any{"app_name": s}}}
	default:
		return nil, fmt.Errorf("unknown UI-TARS action %s", c.fn)
	}
	return out, nil
}

var (
	probenchRE   = regexp.MustCompile(`(?is)^(CLICK|SWIPE|TYPE|ENTER|BACK|COMPLETE|WAIT)\b\s*(.*)$`)
	probenchNums = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?`)
)

// ParseProBench parses ProBench's text actions, one a line: CLICK(x, y),
// SWIPE(x1, y1, x2, y2) or SWIPE [UP|DOWN|LEFT|RIGHT], TYPE [text] (or
// TYPE "text"), ENTER, BACK, COMPLETE and WAIT [n]. Brackets may be (), []
// or <>; lines before the action (thoughts) are skipped.
func ParseProBench(reply string, o Options) ([]Action, error) {
	unit := unitOr(o, Pixels)
	var out []Action
	for i, raw := range strings.Split(reply, "\n") {
		line := strings.Trim(strings.TrimSpace(lineLabelRE.ReplaceAllString(strings.TrimSpace(raw), "")), "`*")
		m := probenchRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		verb, rest := strings.ToUpper(m[1]), strings.TrimSpace(m[2])
		inner := strings.TrimSpace(strings.TrimLeft(strings.TrimRight(rest, ")]>"), "([<"))
		bad := func(why string) error {
			return &ParseError{Format: FormatProBench, Line: i + 1, Part: line, Reason: why}
		}
		nums := func() []float64 {
			var f []float64
			for _, s := range probenchNums.FindAllString(inner, 5) {
				v, err := strconv.ParseFloat(s, 64)
				if err == nil {
					f = append(f, v)
				}
			}
			return f
		}
		switch verb {
		case "CLICK":
			n := nums()
			if len(n) != 2 {
				return nil, bad("CLICK needs x and y: CLICK(x, y)")
			}
			out = append(out, Action{Kind: Click, Point: &Point{X: n[0], Y: n[1], Unit: unit}})
		case "SWIPE":
			if a, ok := directional(inner); ok {
				// A finger moving up scrolls the content down; the swipe covers
				// the middle 40% of the screen.
				from, to := &Point{X: 0.5, Y: 0.5, Unit: Ratio}, &Point{X: 0.5, Y: 0.5, Unit: Ratio}
				switch {
				case a.DY < 0:
					from.Y, to.Y = 0.7, 0.3
				case a.DY > 0:
					from.Y, to.Y = 0.3, 0.7
				case a.DX < 0:
					from.X, to.X = 0.7, 0.3
				default:
					from.X, to.X = 0.3, 0.7
				}
				out = append(out, Action{Kind: Swipe, Point: from, To: to, Duration: 0.5})
				continue
			}
			n := nums()
			if len(n) != 4 {
				return nil, bad("SWIPE needs a direction or x1, y1, x2, y2")
			}
			out = append(out, Action{Kind: Swipe, Point: &Point{X: n[0], Y: n[1], Unit: unit}, To: &Point{X: n[2], Y: n[3], Unit: unit}, Duration: 0.5})
		case "TYPE":
			t := inner
			if len(t) >= 2 && (t[0] == '"' || t[0] == '\'') && t[len(t)-1] == t[0] {
				t = t[1 : len(t)-1]
			}
			if t == "" {
				return nil, bad("TYPE needs text: TYPE [text]")
			}
			out = append(out, Action{Kind: Type, Text: t})
		case "ENTER":
			out = append(out, Action{Kind: Key, Keys: []string{"enter"}})
		case "BACK":
			out = append(out, Action{Kind: Back})
		case "COMPLETE":
			out = append(out, Action{Kind: Done})
		case "WAIT":
			a := Action{Kind: Wait, Duration: DefaultWait}
			if n := nums(); len(n) == 1 {
				a.Duration = n[0]
			}
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, &ParseError{Format: FormatProBench, Part: reply, Reason: "no CLICK, SWIPE, TYPE, ENTER, BACK, COMPLETE or WAIT action found"}
	}
	return out, nil
}
