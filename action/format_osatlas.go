package action

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	osAtlasPointRE = regexp.MustCompile(`(?i)^<point>\s*\[\[\s*(-?[0-9.]+)\s*,\s*(-?[0-9.]+)\s*\]\]\s*</point>$`)
	osAtlasArgRE   = regexp.MustCompile(`(?s)^\[(.*)\]$`)
)

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
