package action

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	osAtlasPointRE = regexp.MustCompile(`(?i)^<point>\s*\[\[\s*(-?[0-9.]+)\s*,\s*(-?[0-9.]+)\s*\]\]\s*</point>$`)
	osAtlasArgRE   = regexp.MustCompile(`(?s)^\[(.*)\]$`)
	// osAtlasWordsRE finds the words an action line starts with, joined by
	// spaces, underscores or hyphens: "DOUBLE_CLICK", "Double click",
	// "move-to", "PRESS_PAGE DOWN".
	osAtlasWordsRE = regexp.MustCompile(`^[A-Za-z]+(?:[ _-]+[A-Za-z]+)*`)
	osAtlasWordRE  = regexp.MustCompile(`[A-Za-z]+`)
)

func parseNum(s string) (float64, error) { return strconv.ParseFloat(strings.TrimSpace(s), 64) }

// osAtlasVerbs maps every spelling of a verb, upper-cased with its
// separators removed, to the verb it is. OS-Atlas's own prompts and answers
// write DOUBLE_CLICK and RIGHT_CLICK in some action sets and DOUBLECLICK,
// RIGHTCLICK and MOVETO in others (its OmniAct set); converters between its
// format and others write LONG_CLICK and OPENAPP; GUI-Odyssey's set names
// IMPOSSIBLE. Removing separators makes "Double-Click", "double click" and
// "DOUBLE_CLICK" one verb.
var osAtlasVerbs = map[string]string{
	"CLICK": "CLICK", "DOUBLECLICK": "DOUBLE_CLICK", "RIGHTCLICK": "RIGHT_CLICK",
	"LONGPRESS": "LONG_PRESS", "LONGCLICK": "LONG_PRESS", "MOVETO": "MOVE_TO", "HOVER": "MOVE_TO",
	"DRAG": "DRAG", "TYPE": "TYPE", "SCROLL": "SCROLL", "PRESS": "PRESS", "HOTKEY": "HOTKEY",
	"ENTER": "ENTER", "OPENAPP": "OPEN_APP", "COMPLETE": "COMPLETE", "IMPOSSIBLE": "IMPOSSIBLE",
	"WAIT": "WAIT", "FAIL": "FAIL", "DONE": "DONE", "ANSWER": "ANSWER",
}

// osAtlasAction splits a line into its verb (a key of osAtlasVerbs' values,
// or "PRESS_" for PRESS_<KEY>), the key name of a PRESS_<KEY>, and the rest,
// when the line is meant as an action. Like actionLine, a verb counts when
// it is written in capitals, joined by an underscore (prose never writes
// "Press_Home"), or followed by an argument in brackets, quotes or a point
// tag; "Double-click the icon" is a thought.
func osAtlasAction(line string) (verb, key, rest string, ok bool) {
	head := osAtlasWordsRE.FindString(line)
	if head == "" {
		return "", "", "", false
	}
	words := osAtlasWordRE.FindAllStringIndex(head, -1)
	end := 0
	for k := min(len(words), 3); k >= 1; k-- {
		var fused strings.Builder
		for _, w := range words[:k] {
			fused.WriteString(strings.ToUpper(head[w[0]:w[1]]))
		}
		if v, found := osAtlasVerbs[fused.String()]; found {
			verb, end = v, words[k-1][1]
			break
		}
	}
	first := strings.ToUpper(head[:words[0][1]])
	// PRESS_<KEY>, PRESS <KEY> or PRESS<KEY>: the key name runs to the end
	// of the line and may hold a space ("PRESS_PAGE DOWN"). Fused to the
	// verb, it must be a key or button ("PRESSENTER"), so that a word that
	// merely starts with PRESS is not read as one.
	if strings.HasPrefix(first, "PRESS") && (verb == "" || verb == "PRESS") {
		after := line[len("PRESS"):]
		name := strings.TrimSpace(strings.TrimLeft(after, "_- "))
		sep := after != "" && strings.ContainsRune("_- ", rune(after[0]))
		if name != "" && !strings.ContainsRune("[<(\"'", rune(name[0])) && (sep || len(first) > len("PRESS") && osAtlasIsKey(name)) {
			written := line[:len("PRESS")]
			if written == strings.ToUpper(written) || strings.HasPrefix(after, "_") {
				return "PRESS_", name, "", true
			}
			return "", "", "", false
		}
	}
	if verb == "" {
		return "", "", "", false
	}
	written := line[:end]
	rest = strings.TrimSpace(line[end:])
	if written == strings.ToUpper(written) || strings.Contains(written, "_") {
		return verb, "", rest, true
	}
	if rest != "" && strings.ContainsRune("[<(\"'", rune(rest[0])) {
		return verb, "", rest, true
	}
	return "", "", "", false
}

// osAtlasPress maps the PRESS_ keys of OS-Atlas's prompts that are buttons
// rather than keys: PRESS_BACK and PRESS_HOME come from its mobile action
// set (as UI-TARS's press_home, Home is the super key), PRESS_RECENT is the
// app switcher.
func osAtlasPress(name string) ([]Action, bool) {
	switch strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToUpper(strings.TrimSpace(name))) {
	case "BACK":
		return []Action{{Kind: Back}}, true
	case "HOME":
		return []Action{{Kind: Key, Keys: []string{"super"}}}, true
	case "RECENT", "RECENTS", "APPSWITCH":
		return []Action{{Kind: API, Name: "press_recent"}}, true
	}
	return nil, false
}

// osAtlasIsKey reports whether name is a button or a key combination.
func osAtlasIsKey(name string) bool {
	if _, ok := osAtlasPress(name); ok {
		return true
	}
	_, ok := osAtlasKeys(name)
	return ok
}

// isModifier reports whether a canonical key is a modifier.
func isModifier(k string) bool { return k == "ctrl" || k == "alt" || k == "shift" || k == "super" }

// osAtlasKey reads one key name in any of its spellings: "PGDN",
// "PAGE DOWN", "Page_Down", "page-down".
func osAtlasKey(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", false
	}
	for _, v := range []string{s, strings.NewReplacer(" ", "_", "-", "_").Replace(s), strings.NewReplacer(" ", "", "_", "", "-", "").Replace(s)} {
		if k, ok := NormalizeKey(v); ok {
			return k, true
		}
	}
	return "", false
}

// osAtlasKeys reads a key or a combination of keys. OS-Atlas's answers join
// a combination's keys with underscores (HOTKEY [CTRL_A], as its OmniAct
// set writes pyautogui.hotkey('ctrl', 'a')); replies also join them with
// "+", "-", spaces or commas: "ctrl+shift+t", "CTRL_SHIFT_T", "ctrl-c",
// "ctrl, c", "ctrl c". A key whose own name holds a separator (PAGE_DOWN,
// CAPS LOCK, BACK_SPACE) is read whole; a name that reads whole only as a
// lone modifier with a side (CTRL_L, SHIFT_R) is, in this format, the
// modifier and a letter.
func osAtlasKeys(s string) ([]string, bool) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "'\""))
	if s == "" {
		return nil, false
	}
	whole, wholeOK := osAtlasKey(s)
	if wholeOK && !isModifier(whole) {
		return []string{whole}, true
	}
	var keys []string
	ok := true
	if strings.Contains(s, "+") && s != "+" {
		for _, n := range splitCombo(s) {
			k, found := osAtlasKey(n)
			if !found {
				if n != "+" {
					ok = false
					break
				}
				k = "+"
			}
			keys = append(keys, k)
		}
	} else {
		keys, ok = osAtlasSplitKeys(s)
	}
	if ok && len(keys) > 1 {
		return keys, true
	}
	if wholeOK {
		return []string{whole}, true
	}
	return keys, ok && len(keys) > 0
}

// osAtlasSplitKeys splits "CTRL_SHIFT_T", "ctrl-alt-del" or "ctrl, c" into
// keys, reading the longest run of words that names one key that is not a
// modifier ("CTRL_PAGE_DOWN" is ctrl and pagedown). A separator character
// at the end after another separator is the key itself ("ctrl_-").
func osAtlasSplitKeys(s string) ([]string, bool) {
	isSep := func(r byte) bool { return r == '_' || r == '-' || r == ' ' || r == ',' }
	var last string
	if n := len(s); n >= 2 && isSep(s[n-1]) && isSep(s[n-2]) {
		last, s = s[n-1:], s[:n-2]
	}
	var words []string
	for w := range strings.FieldsFuncSeq(s, func(r rune) bool { return r < 0x80 && isSep(byte(r)) }) {
		words = append(words, w)
	}
	var keys []string
	for i := 0; i < len(words); {
		n := 0
		for j := min(len(words), i+3); j > i+1 && n == 0; j-- {
			for _, joined := range []string{strings.Join(words[i:j], "_"), strings.Join(words[i:j], "")} {
				if k, ok := NormalizeKey(joined); ok && !isModifier(k) {
					keys, n = append(keys, k), j-i
					break
				}
			}
		}
		if n == 0 {
			k, ok := NormalizeKey(words[i])
			if !ok {
				return nil, false
			}
			keys, n = append(keys, k), 1
		}
		i += n
	}
	if last != "" {
		k, _ := NormalizeKey(last)
		keys = append(keys, k)
	}
	return keys, len(keys) > 0
}

// ParseOSAtlas parses OS-Atlas actions, one a line, as its published
// prompts and answers write them: CLICK <point>[[x, y]]</point>,
// DOUBLE_CLICK (or DOUBLECLICK), RIGHT_CLICK (RIGHTCLICK), LONG_PRESS
// (LONG_CLICK) and MOVE_TO (MOVETO, HOVER) with a point, DRAG with two
// points, TYPE [text], SCROLL [UP|DOWN|LEFT|RIGHT], PRESS_<KEY>
// (PRESS_ENTER, PRESS_PGDN, PRESS_PAGE DOWN, PRESS_BACK, PRESS_HOME,
// PRESS_RECENT...), PRESS [key], HOTKEY [CTRL_A] (or [ctrl+a]), ENTER,
// OPEN_APP [name] (OPENAPP name), WAIT, COMPLETE, IMPOSSIBLE, and the
// special codes. A verb is read in any case and with its words joined by
// underscores, hyphens, spaces or nothing ("Double-Click", "move to").
// Coordinates are thousandths of the screen unless Options say otherwise.
// Lines that are not actions (thoughts) are skipped; a line meant as an
// action but malformed is an error.
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
		verb, name, rest, ok := osAtlasAction(line)
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
		// bareArg is the argument in brackets or, for the verbs whose
		// argument is one word or name, written bare ("SCROLL DOWN",
		// "OPENAPP Settings").
		bareArg := func() (string, bool) {
			if t, ok := arg(); ok {
				return t, true
			}
			t := strings.TrimSpace(strings.TrimLeft(rest, "_-"))
			return t, t != "" && !strings.ContainsAny(t[:1], "[<(")
		}
		switch verb {
		case "CLICK", "DOUBLE_CLICK", "RIGHT_CLICK", "LONG_PRESS", "MOVE_TO":
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
			t, _ := bareArg()
			a, ok := directional(t)
			if !ok {
				return nil, bad("SCROLL must be SCROLL [UP|DOWN|LEFT|RIGHT]")
			}
			out = append(out, a)
		case "PRESS_":
			if acts, ok := osAtlasPress(name); ok {
				out = append(out, acts...)
				continue
			}
			keys, ok := osAtlasKeys(name)
			if !ok {
				return nil, bad("unknown key in " + line)
			}
			a, err := comboAction(keys)
			if err != nil {
				return nil, bad(err.Error())
			}
			out = append(out, a)
		case "PRESS", "HOTKEY":
			t, ok := bareArg()
			if !ok {
				return nil, bad(verb + " must be " + verb + " [key]")
			}
			if acts, ok := osAtlasPress(t); ok && verb == "PRESS" {
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
			t, ok := bareArg()
			if !ok || strings.TrimSpace(t) == "" {
				return nil, bad("OPEN_APP must be OPEN_APP [app name]")
			}
			out = append(out, Action{Kind: API, Name: "open_app", Args: map[string]any{"app_name": strings.TrimSpace(t)}})
		case "COMPLETE", "IMPOSSIBLE":
			if rest != "" {
				return nil, bad(verb + " takes no argument")
			}
			if verb == "IMPOSSIBLE" {
				out = append(out, Action{Kind: Fail})
			} else {
				out = append(out, Action{Kind: Done})
			}
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
