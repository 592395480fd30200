package action

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ParsePyAutoGUI parses pyautogui code statically: the code is never run.
// Only calls to the pyautogui functions of the unified space and time.sleep
// are accepted, with literal arguments (numbers, strings, tuples, lists,
// tag_N references, and + - * / between them). The special codes DONE, FAIL,
// WAIT [n] and ANS s may stand alone, quoted or fenced, or as lines of code.
func ParsePyAutoGUI(reply string, o Options) ([]Action, error) {
	locs := fenceRE.FindAllStringIndex(reply, -1)
	if len(locs) == 0 {
		if a, ok := special(reply); ok {
			return []Action{a}, nil
		}
		acts, err := parsePython(reply, o)
		if err == nil && len(acts) > 0 {
			return acts, nil
		}
		// Prose with the special code on a line of its own.
		if sp := specialLines(reply); len(sp) > 0 {
			return sp, nil
		}
		var pe *ParseError
		if errors.As(err, &pe) {
			return nil, &ParseError{Format: FormatPyAutoGUI, Line: pe.Line, Part: pe.Part,
				Reason: "no code block or special code (DONE, FAIL, WAIT n, ANS s) found, and the reply is not code: " + pe.Reason}
		}
		return nil, &ParseError{Format: FormatPyAutoGUI, Reason: "no code block and no special code (DONE, FAIL, WAIT n, ANS s) found"}
	}
	// Code blocks, and special codes on lines of their own between them, in
	// the order they appear.
	var out []Action
	blocks := codeBlocks(reply)
	prev := 0
	for i, loc := range locs {
		out = append(out, specialLines(reply[prev:loc[0]])...)
		acts, err := parsePython(blocks[i].body, o)
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
		prev = loc[1]
	}
	out = append(out, specialLines(reply[prev:])...)
	if len(out) == 0 {
		return nil, &ParseError{Format: FormatPyAutoGUI, Reason: "the code blocks hold no action"}
	}
	return out, nil
}

// specialLines returns the special codes that stand on lines of their own.
func specialLines(text string) []Action {
	var out []Action
	for _, line := range strings.Split(text, "\n") {
		if a, ok := special(line); ok {
			out = append(out, a)
		}
	}
	return out
}

// parsePython parses the statements of one block into actions.
func parsePython(src string, o Options) ([]Action, error) {
	toks, err := pyLex(src)
	if err != nil {
		return nil, &ParseError{Format: FormatPyAutoGUI, Reason: err.Error()}
	}
	lines := strings.Split(src, "\n")
	lineText := func(n int) string {
		if n >= 1 && n <= len(lines) {
			return lines[n-1]
		}
		return ""
	}
	p := &pyParser{toks: toks}
	var out []Action
	for {
		t := p.peek()
		switch {
		case t.kind == tEOF:
			return out, nil
		case t.kind == tNewline || t.kind == tOp && t.text == ";":
			p.next()
			continue
		case t.kind == tSpecial:
			p.next()
			a, _ := special(t.text)
			out = append(out, a)
			continue
		case t.kind == tName && (t.text == "import" || t.text == "from"):
			for p.peek().kind != tNewline && p.peek().kind != tEOF && !p.isOp(";") {
				p.next()
			}
			continue
		case t.kind == tName && t.text == "pass":
			p.next()
			continue
		}
		c, err := p.call()
		if err != nil {
			return nil, &ParseError{Format: FormatPyAutoGUI, Line: t.line, Part: lineText(t.line), Reason: err.Error()}
		}
		if nt := p.peek(); nt.kind != tNewline && nt.kind != tEOF && !(nt.kind == tOp && nt.text == ";") {
			return nil, &ParseError{Format: FormatPyAutoGUI, Line: nt.line, Part: lineText(nt.line), Reason: "unexpected " + describeTok(nt) + " after the call"}
		}
		acts, err := pyAction(c, o)
		if err != nil {
			return nil, &ParseError{Format: FormatPyAutoGUI, Line: c.line, Part: lineText(c.line), Reason: err.Error()}
		}
		out = append(out, acts...)
	}
}

// position reads pyautogui's flexible x, y: two numbers, one (x, y) tuple,
// or a tag. It returns the number of positional slots used.
func (a *pyArgs) position(o Options, unit Unit) (*Point, *Target, int, error) {
	xv, hasX := a.get(0, "x")
	if !hasX || xv.kind == vNone {
		if yv, hasY := a.get(1, "y"); hasY && yv.kind != vNone {
			return nil, nil, 0, fmt.Errorf("y given without x")
		}
		return nil, nil, 0, nil
	}
	switch xv.kind {
	case vTag:
		return nil, &Target{Tag: xv.tag}, 1, nil
	case vSeq:
		if len(xv.items) != 2 || xv.items[0].kind != vNum || xv.items[1].kind != vNum {
			return nil, nil, 0, fmt.Errorf("a position tuple must hold two numbers")
		}
		return &Point{X: xv.items[0].num, Y: xv.items[1].num, Unit: unit}, nil, 1, nil
	case vNum:
		y, ok, err := a.num(1, "y")
		if err != nil {
			return nil, nil, 0, err
		}
		if !ok {
			return nil, nil, 0, fmt.Errorf("x given without y")
		}
		return &Point{X: xv.num, Y: y, Unit: unit}, nil, 2, nil
	}
	return nil, nil, 0, fmt.Errorf("x must be a number, a (x, y) tuple or tag_N, not %s", xv.describe())
}

func pyButton(a *pyArgs, i int, def Button) (Button, error) {
	s, ok, err := a.str(i, "button")
	if err != nil || !ok {
		return def, err
	}
	switch b := Button(strings.ToLower(s)); b {
	case Left, Right, Middle:
		return b, nil
	case "primary":
		return Left, nil
	case "secondary":
		return Right, nil
	}
	return "", fmt.Errorf("unknown button %q", s)
}

func pyKeyList(v pyVal, what string) ([]string, error) {
	var names []string
	switch v.kind {
	case vStr:
		names = []string{v.str}
	case vSeq:
		for _, it := range v.items {
			if it.kind != vStr {
				return nil, fmt.Errorf("%s must be strings", what)
			}
			names = append(names, it.str)
		}
	default:
		return nil, fmt.Errorf("%s must be a string or a list of strings, not %s", what, v.describe())
	}
	keys, bad, ok := normalizeKeys(names)
	if !ok {
		return nil, fmt.Errorf("unknown key %q", bad)
	}
	return keys, nil
}

func pyAction(c pyCall, o Options) ([]Action, error) {
	fn := strings.TrimPrefix(c.fn, "pyautogui.")
	if c.fn == "time.sleep" {
		fn = "sleep"
	} else if fn == c.fn {
		return nil, fmt.Errorf("unknown function %s: only pyautogui.* and time.sleep are accepted", c.fn)
	}
	a := &pyArgs{c: c, used: map[string]bool{}}
	unit := unitOr(o, Pixels)
	var acts []Action
	var maxPos int
	var err error
	// Each function reads its arguments into its actions and says how
	// many positional arguments it takes.
	switch fn {
	case "moveTo":
		acts, maxPos, err = pyMoveTo(fn, a, o, unit)
	case "moveRel", "move":
		acts, maxPos, err = pyMoveRel(fn, a, o, unit)
	case "click", "doubleClick", "rightClick", "middleClick", "tripleClick":
		acts, maxPos, err = pyClick(fn, a, o, unit)
	case "dragTo", "dragRel", "drag":
		acts, maxPos, err = pyDrag(fn, a, o, unit)
	case "mouseDown", "mouseUp":
		acts, maxPos, err = pyMouseButton(fn, a, o, unit)
	case "scroll", "vscroll", "hscroll":
		acts, maxPos, err = pyScroll(fn, a, o, unit)
	case "typewrite", "write":
		acts, maxPos, err = pyWrite(fn, a, o, unit)
	case "press":
		acts, maxPos, err = pyPress(fn, a, o, unit)
	case "hotkey":
		acts, maxPos, err = pyHotkey(fn, a, o, unit)
	case "keyDown", "keyUp":
		acts, maxPos, err = pyKeyHold(fn, a, o, unit)
	case "sleep":
		acts, maxPos, err = pySleep(fn, a, o, unit)
	default:
		return nil, fmt.Errorf("unknown function pyautogui.%s", fn)
	}
	if err != nil {
		return nil, err
	}
	if err := a.unknown(maxPos); err != nil {
		return nil, err
	}
	return acts, nil
}

// pyPointer reads what the pointer functions share: the position (an
// offset in pixels for the relative ones: xOffset, yOffset stand for x,
// y) and the duration. n is the number of positional arguments the
// position took.
func pyPointer(a *pyArgs, o Options, unit Unit, relative bool) (act Action, n int, err error) {
	c := a.c
	u := unit
	if relative {
		u = Pixels
		a.used["xOffset"], a.used["yOffset"] = true, true
		if v, ok := c.kw["xOffset"]; ok {
			c.kw["x"] = v
		}
		if v, ok := c.kw["yOffset"]; ok {
			c.kw["y"] = v
		}
	}
	pt, tg, n, err := a.position(o, u)
	if err != nil {
		return Action{}, 0, err
	}
	act.Point, act.Target = pt, tg
	if d, ok, err := a.num(-1, "duration"); err != nil {
		return Action{}, 0, err
	} else if ok {
		act.Duration = d
	}
	a.used["tween"], a.used["logScreenshot"], a.used["_pause"], a.used["interval"] = true, true, true, true
	return act, n, nil
}

// pyMoveTo reads moveTo.
func pyMoveTo(fn string, a *pyArgs, o Options, unit Unit) ([]Action, int, error) {
	act, n, err := pyPointer(a, o, unit, false)
	if err != nil {
		return nil, 0, err
	}
	act.Kind = Move
	if act.Point == nil && act.Target == nil {
		return nil, 0, fmt.Errorf("moveTo needs a position")
	}
	return []Action{act}, n, nil
}

// pyMoveRel reads moveRel and move.
func pyMoveRel(fn string, a *pyArgs, o Options, unit Unit) ([]Action, int, error) {
	act, n, err := pyPointer(a, o, unit, true)
	if err != nil {
		return nil, 0, err
	}
	act.Kind = MoveRel
	if act.Target != nil || act.Point == nil {
		return nil, 0, fmt.Errorf("%s needs an x and y offset", fn)
	}
	return []Action{act}, n, nil
}

// pyDrag reads dragTo, and dragRel and drag (by an offset).
func pyDrag(fn string, a *pyArgs, o Options, unit Unit) ([]Action, int, error) {
	relative := fn == "dragRel" || fn == "drag"
	act, n, err := pyPointer(a, o, unit, relative)
	if err != nil {
		return nil, 0, err
	}
	pt, tg := act.Point, act.Target
	act.Kind = Drag
	if relative {
		act.Kind = DragRel
	}
	if pt == nil && tg == nil {
		return nil, 0, fmt.Errorf("%s needs a position", fn)
	}
	if relative && tg != nil {
		return nil, 0, fmt.Errorf("%s needs an x and y offset, not a tag", fn)
	}
	act.To, act.Point = pt, nil
	b, err := pyButton(a, n+2, Left) // dragTo(x, y, duration, tween, button)
	if err != nil {
		return nil, 0, err
	}
	if b != Left {
		act.Button = b
	}
	return []Action{act}, n + 3, nil
}

// pyMouseButton reads mouseDown and mouseUp.
func pyMouseButton(fn string, a *pyArgs, o Options, unit Unit) ([]Action, int, error) {
	act, n, err := pyPointer(a, o, unit, false)
	if err != nil {
		return nil, 0, err
	}
	act.Kind = MouseDown
	if fn == "mouseUp" {
		act.Kind = MouseUp
	}
	b, err := pyButton(a, n, Left)
	if err != nil {
		return nil, 0, err
	}
	if b != Left {
		act.Button = b
	}
	return []Action{act}, n + 1, nil
}

// pyClick reads click and its kin: doubleClick, tripleClick, rightClick,
// middleClick.
func pyClick(fn string, a *pyArgs, o Options, unit Unit) ([]Action, int, error) {
	act, n, err := pyPointer(a, o, unit, false)
	if err != nil {
		return nil, 0, err
	}
	var maxPos int
	act.Kind = Click
	def := map[string]Button{"rightClick": Right, "middleClick": Middle}[fn]
	if def == "" {
		def = Left
	}
	count := map[string]int{"doubleClick": 2, "tripleClick": 3}[fn]
	if fn == "click" {
		cl, ok, err := a.num(n, "clicks")
		if err != nil {
			return nil, 0, err
		}
		if ok {
			if cl != math.Trunc(cl) || cl < 1 || cl > 3 {
				return nil, 0, fmt.Errorf("clicks must be 1, 2 or 3, not %g", cl)
			}
			count = int(cl)
		}
		b, err := pyButton(a, n+2, def)
		if err != nil {
			return nil, 0, err
		}
		def = b
		maxPos = n + 4
	} else if fn == "doubleClick" || fn == "tripleClick" {
		b, err := pyButton(a, n+1, def)
		if err != nil {
			return nil, 0, err
		}
		def = b
		maxPos = n + 3
	} else {
		maxPos = n + 2
	}
	if count > 1 {
		act.Count = count
	}
	if def != Left {
		act.Button = def
	}
	return []Action{act}, maxPos, nil
}

// pyScroll reads scroll, vscroll and hscroll.
func pyScroll(fn string, a *pyArgs, o Options, unit Unit) ([]Action, int, error) {
	var act Action
	cl, ok, err := a.num(0, "clicks")
	if err != nil {
		return nil, 0, err
	}
	if !ok || cl == 0 {
		return nil, 0, fmt.Errorf("%s needs a non-zero number of clicks", fn)
	}
	act.Kind = Scroll
	// pyautogui: positive scrolls up (or right for hscroll); Proctor: DY positive is down.
	if fn == "hscroll" {
		act.DX = int(math.Round(cl))
	} else {
		act.DY = -int(math.Round(cl))
	}
	if act.DX == 0 && act.DY == 0 {
		return nil, 0, fmt.Errorf("%s needs a whole number of clicks", fn)
	}
	xv, hasX := a.get(1, "x")
	if hasX && xv.kind != vNone {
		if xv.kind == vTag {
			act.Target = &Target{Tag: xv.tag}
		} else {
			x, _, err := a.num(1, "x")
			if err != nil {
				return nil, 0, err
			}
			y, oky, err := a.num(2, "y")
			if err != nil {
				return nil, 0, err
			}
			if !oky {
				return nil, 0, fmt.Errorf("x given without y")
			}
			act.Point = &Point{X: x, Y: y, Unit: unit}
		}
	}
	return []Action{act}, 3, nil
}

// pyWrite reads typewrite and write: a message to type, or a list of key
// names to press.
func pyWrite(fn string, a *pyArgs, o Options, unit Unit) ([]Action, int, error) {
	v, ok := a.get(0, "message")
	a.used["interval"], a.used["_pause"] = true, true
	if !ok {
		return nil, 0, fmt.Errorf("%s needs a message", fn)
	}
	if v.kind == vSeq { // a list of key names
		keys, err := pyKeyList(v, "keys")
		if err != nil {
			return nil, 0, err
		}
		return []Action{{Kind: Key, Keys: keys}}, 2, nil
	}
	if v.kind != vStr {
		return nil, 0, fmt.Errorf("message must be a string, not %s", v.describe())
	}
	return []Action{{Kind: Type, Text: v.str}}, 2, nil
}

// pyPress reads press: keys, pressed one after another, presses times.
func pyPress(fn string, a *pyArgs, o Options, unit Unit) ([]Action, int, error) {
	v, ok := a.get(0, "keys")
	if !ok {
		return nil, 0, fmt.Errorf("press needs a key")
	}
	keys, err := pyKeyList(v, "keys")
	if err != nil {
		return nil, 0, err
	}
	n, ok, err := a.num(1, "presses")
	if err != nil {
		return nil, 0, err
	}
	a.used["interval"], a.used["_pause"] = true, true
	reps := 1
	if ok {
		if n < 1 || n > 100 || n != math.Trunc(n) {
			return nil, 0, fmt.Errorf("presses must be a whole number from 1 to 100")
		}
		reps = int(n)
	}
	all := make([]string, 0, len(keys)*reps)
	for range reps {
		all = append(all, keys...)
	}
	return []Action{{Kind: Key, Keys: all}}, 3, nil
}

// pyHotkey reads hotkey: its positional arguments are the keys.
func pyHotkey(fn string, a *pyArgs, o Options, unit Unit) ([]Action, int, error) {
	var names []string
	for _, v := range a.c.pos {
		ks, err := pyKeyList(v, "hotkey keys")
		if err != nil {
			return nil, 0, err
		}
		names = append(names, ks...)
	}
	if len(names) == 0 {
		return nil, 0, fmt.Errorf("hotkey needs keys")
	}
	a.used["interval"], a.used["_pause"] = true, true
	return []Action{{Kind: Hotkey, Keys: names}}, len(a.c.pos), nil
}

// pyKeyHold reads keyDown and keyUp.
func pyKeyHold(fn string, a *pyArgs, o Options, unit Unit) ([]Action, int, error) {
	v, ok := a.get(0, "key")
	if !ok {
		return nil, 0, fmt.Errorf("%s needs a key", fn)
	}
	keys, err := pyKeyList(v, "key")
	if err != nil {
		return nil, 0, err
	}
	if len(keys) != 1 {
		return nil, 0, fmt.Errorf("%s takes one key", fn)
	}
	act := Action{Kind: KeyDown, Keys: keys}
	if fn == "keyUp" {
		act.Kind = KeyUp
	}
	return []Action{act}, 1, nil
}

// pySleep reads time.sleep (or pyautogui.sleep): a wait, or no action for
// no time.
func pySleep(fn string, a *pyArgs, o Options, unit Unit) ([]Action, int, error) {
	d, ok, err := a.num(0, "secs")
	if err != nil {
		return nil, 0, err
	}
	if !ok || d < 0 {
		return nil, 0, fmt.Errorf("sleep needs a non-negative number of seconds")
	}
	if d == 0 {
		return nil, 1, nil
	}
	return []Action{{Kind: Wait, Duration: d}}, 1, nil
}
