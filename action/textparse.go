package action

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	osAtlasPointRE = regexp.MustCompile(`(?i)^<point>\s*\[\[\s*(-?[0-9.]+)\s*,\s*(-?[0-9.]+)\s*\]\]\s*</point>$`)
	osAtlasArgRE   = regexp.MustCompile(`(?s)^\[(.*)\]$`)
	lineLabelRE    = regexp.MustCompile(`(?i)^(?:actions?|answer|output)\s*:\s*`)
	actionWordRE   = regexp.MustCompile(`^[A-Za-z_]+`)
)

// actionLine splits a line into its action word (upper-cased) and the rest,
// when the line is meant as an action of verbs: the word is one of verbs
// and is either written in capitals, as the formats write their actions
// ("CLICK the button" is a malformed action), or followed by an argument
// in brackets, quotes or a point tag. A line of prose that merely starts
// with an action word ("Click the search field, then type...") is no
// action.
func actionLine(line string, verbs map[string]bool) (verb, rest string, ok bool) {
	w := actionWordRE.FindString(line)
	if w == "" {
		return "", "", false
	}
	rest = strings.TrimSpace(line[len(w):])
	up := strings.ToUpper(w)
	// "PRESS_PAGE DOWN": the key name may hold a space.
	if strings.HasPrefix(up, "PRESS_") && up != "PRESS_" {
		if !verbs["PRESS_"] {
			return "", "", false
		}
		verb = "PRESS_"
	} else if verbs[up] {
		verb = up
	} else {
		return "", "", false
	}
	if w == up {
		return verb, rest, true
	}
	if rest != "" && strings.ContainsRune("[<(\"'", rune(rest[0])) {
		return verb, rest, true
	}
	return "", "", false
}

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

var osAtlasVerbs = map[string]bool{
	"CLICK": true, "DOUBLE_CLICK": true, "RIGHT_CLICK": true, "LONG_PRESS": true, "MOVE_TO": true,
	"HOVER": true, "TYPE": true, "SCROLL": true, "PRESS_": true, "PRESS": true, "HOTKEY": true,
	"ENTER": true, "OPEN_APP": true, "COMPLETE": true, "WAIT": true, "FAIL": true, "DONE": true,
	"ANSWER": true, "DRAG": true,
}

// osAtlasPress maps the PRESS_ keys of OS-Atlas's prompts that are buttons
// rather than keys: PRESS_BACK and PRESS_HOME come from its mobile action
// set (as UI-TARS's press_home, Home is the super key), PRESS_RECENT is the
// app switcher.
func osAtlasPress(name string) ([]Action, bool) {
	switch name {
	case "BACK":
		return []Action{{Kind: Back}}, true
	case "HOME":
		return []Action{{Kind: Key, Keys: []string{"super"}}}, true
	case "RECENT", "RECENTS", "APP_SWITCH":
		return []Action{{Kind: API, Name: "press_recent"}}, true
	}
	return nil, false
}

// osAtlasKeys reads key names: "PGDN", "PAGE DOWN", "Page_Down", "ctrl+c",
// "ctrl, c" or "ctrl c".
func osAtlasKeys(s string) ([]string, bool) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "'\""))
	if s == "" {
		return nil, false
	}
	for _, v := range []string{s, strings.ReplaceAll(s, " ", "_"), strings.ReplaceAll(strings.ReplaceAll(s, " ", ""), "_", "")} {
		if k, ok := NormalizeKey(v); ok {
			return []string{k}, true
		}
	}
	var names []string
	switch {
	case strings.Contains(s, "+") && s != "+":
		names = splitCombo(s)
	case strings.Contains(s, ","):
		names = strings.Split(s, ",")
	default:
		names = strings.Fields(s)
	}
	keys, _, ok := normalizeKeys(names)
	return keys, ok && len(keys) > 0
}

// ParseOSAtlas parses OS-Atlas actions, one a line, as its published
// prompts list them: CLICK <point>[[x, y]]</point>, DOUBLE_CLICK,
// RIGHT_CLICK, LONG_PRESS and MOVE_TO (or HOVER) with a point, DRAG with two
// points, TYPE [text], SCROLL [UP|DOWN|LEFT|RIGHT], PRESS_<KEY> (PRESS_ENTER,
// PRESS_PGDN, PRESS_PAGE DOWN, PRESS_BACK, PRESS_HOME, PRESS_RECENT...),
// PRESS [key], HOTKEY [ctrl+c], ENTER, OPEN_APP [name], WAIT, COMPLETE, and
// the special codes. Coordinates are thousandths of the screen unless
// Options say otherwise. Lines that are not actions (thoughts) are
// skipped; a line meant as an action but malformed is an error.
func ParseOSAtlas(reply string, o Options) ([]Action, error) {
	unit := unitOr(o, Thousand)
	var out []Action
	for i, raw := range strings.Split(reply, "\n") {
		line := strings.TrimSpace(lineLabelRE.ReplaceAllString(strings.TrimSpace(raw), ""))
		line = strings.TrimSpace(strings.Trim(line, "`*"))
		bad := func(why string) error {
			return &ParseError{Format: FormatOSAtlas, Line: i + 1, Part: line, Reason: why, Actions: out}
		}
		if sp, ok := special(line); ok {
			out = append(out, sp)
			continue
		}
		verb, rest, ok := actionLine(line, osAtlasVerbs)
		if !ok {
			continue
		}
		point := func(s string) (*Point, bool) {
			m := osAtlasPointRE.FindStringSubmatch(strings.TrimSpace(s))
			if m == nil {
				return nil, false
			}
			x, e1 := parseNum(m[1])
			y, e2 := parseNum(m[2])
			if e1 != nil || e2 != nil {
				return nil, false
			}
			return &Point{X: x, Y: y, Unit: unit}, true
		}
		arg := func() (string, bool) {
			m := osAtlasArgRE.FindStringSubmatch(rest)
			if m == nil {
				return "", false
			}
			return m[1], true
		}
		switch verb {
		case "CLICK", "DOUBLE_CLICK", "RIGHT_CLICK", "LONG_PRESS", "MOVE_TO", "HOVER":
			pt, ok := point(rest)
			if !ok {
				return nil, bad(verb + " must be " + verb + " <point>[[x, y]]</point>")
			}
			switch verb {
			case "CLICK":
				out = append(out, Action{Kind: Click, Point: pt})
			case "DOUBLE_CLICK":
				out = append(out, Action{Kind: Click, Point: pt, Count: 2})
			case "RIGHT_CLICK":
				out = append(out, Action{Kind: Click, Point: pt, Button: Right})
			case "LONG_PRESS":
				out = append(out, Action{Kind: MouseDown, Point: pt}, Action{Kind: Wait, Duration: 1}, Action{Kind: MouseUp, Point: pt})
			default:
				out = append(out, Action{Kind: Move, Point: pt})
			}
		case "DRAG":
			parts := strings.SplitAfter(rest, "</point>")
			if len(parts) != 3 || strings.TrimSpace(parts[2]) != "" {
				return nil, bad("DRAG must be DRAG <point>[[x1, y1]]</point> <point>[[x2, y2]]</point>")
			}
			from, ok1 := point(parts[0])
			to, ok2 := point(parts[1])
			if !ok1 || !ok2 {
				return nil, bad("DRAG must be DRAG <point>[[x1, y1]]</point> <point>[[x2, y2]]</point>")
			}
			out = append(out, Action{Kind: Drag, Point: from, To: to})
		case "TYPE":
			t, ok := arg()
			if !ok || t == "" {
				return nil, bad("TYPE must be TYPE [text]")
			}
			out = append(out, Action{Kind: Type, Text: t})
		case "SCROLL":
			t, _ := arg()
			a, ok := directional(t)
			if !ok {
				return nil, bad("SCROLL must be SCROLL [UP|DOWN|LEFT|RIGHT]")
			}
			out = append(out, a)
		case "PRESS_":
			name := strings.ToUpper(strings.TrimSpace(line[len("PRESS_"):]))
			if acts, ok := osAtlasPress(name); ok {
				out = append(out, acts...)
				continue
			}
			keys, ok := osAtlasKeys(name)
			if !ok || len(keys) != 1 {
				return nil, bad("unknown key in " + line)
			}
			out = append(out, Action{Kind: Key, Keys: keys})
		case "PRESS", "HOTKEY":
			t, ok := arg()
			if !ok {
				return nil, bad(verb + " must be " + verb + " [key]")
			}
			if acts, ok := osAtlasPress(strings.ToUpper(strings.TrimSpace(t))); ok && verb == "PRESS" {
				out = append(out, acts...)
				continue
			}
			keys, ok := osAtlasKeys(t)
			if !ok {
				return nil, bad("unknown key in " + line)
			}
			a, err := comboAction(keys)
			if err != nil {
				return nil, bad(err.Error())
			}
			if verb == "PRESS" {
				a.Kind = Key
			}
			out = append(out, a)
		case "ENTER":
			if rest != "" {
				return nil, bad("ENTER takes no argument")
			}
			out = append(out, Action{Kind: Key, Keys: []string{"enter"}})
		case "OPEN_APP":
			t, ok := arg()
			if !ok || strings.TrimSpace(t) == "" {
				return nil, bad("OPEN_APP must be OPEN_APP [app name]")
			}
			out = append(out, Action{Kind: API, Name: "open_app", Args: map[string]any{"app_name": strings.TrimSpace(t)}})
		case "COMPLETE":
			if rest != "" {
				return nil, bad("COMPLETE takes no argument")
			}
			out = append(out, Action{Kind: Done})
		case "ANSWER":
			t, ok := arg()
			if !ok || t == "" {
				return nil, bad("ANSWER must be ANSWER [text]")
			}
			out = append(out, Action{Kind: Answer, Text: t})
		default: // WAIT, DONE, FAIL with an argument that special refused
			return nil, bad("malformed " + verb)
		}
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

// uitarsFunc reads the arguments of one UI-TARS action (fn) into actions;
// unit is the convention of its boxes.
type uitarsFunc func(fn string, a *pyArgs, unit Unit) ([]Action, error)

// uitarsFuncs are the UI-TARS actions, by name.
var uitarsFuncs = map[string]uitarsFunc{
	"click":        uitarsClick,
	"left_single":  uitarsClick,
	"left_double":  uitarsClick,
	"right_single": uitarsClick,
	"hover":        uitarsHover,
	"moveTo":       uitarsHover,
	"long_press":   uitarsLongPress,
	"drag":         uitarsDrag,
	"select":       uitarsDrag,
	"swipe":        uitarsDrag,
	"hotkey":       uitarsHotkey,
	"press":        uitarsHotkey,
	"keydown":      uitarsKeyHold,
	"keyup":        uitarsKeyHold,
	"type":         uitarsType,
	"scroll":       uitarsScroll,
	"wait":         uitarsWait,
	"finished":     uitarsFinished,
	"call_user":    uitarsCallUser,
	"press_back":   uitarsPressBack,
	"press_home":   uitarsPressHome,
	"open_app":     uitarsOpenApp,
}

func uitarsAction(c pyCall, unit Unit) ([]Action, error) {
	f, ok := uitarsFuncs[c.fn]
	if !ok {
		return nil, fmt.Errorf("unknown UI-TARS action %s", c.fn)
	}
	return f(c.fn, &pyArgs{c: c, used: map[string]bool{}}, unit)
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

var (
	probenchVerbs = map[string]bool{"CLICK": true, "SWIPE": true, "TYPE": true, "ENTER": true, "BACK": true, "COMPLETE": true, "WAIT": true}
	probenchNums  = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?`)
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
		verb, rest, ok := actionLine(line, probenchVerbs)
		if !ok {
			continue // prose, even when it starts with an action word
		}
		inner := strings.TrimSpace(strings.TrimLeft(strings.TrimRight(rest, ")]>"), "([<"))
		bad := func(why string) error {
			return &ParseError{Format: FormatProBench, Line: i + 1, Part: line, Reason: why, Actions: out}
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
			// One bracket on each side encloses the text; brackets of the
			// text itself stay ("TYPE [f(x)]" types f(x)).
			t := strings.TrimSpace(rest)
			if t != "" && strings.IndexByte("([<", t[0]) >= 0 {
				t = t[1:]
			}
			if t != "" && strings.IndexByte(")]>", t[len(t)-1]) >= 0 {
				t = t[:len(t)-1]
			}
			t = strings.TrimSpace(t)
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
