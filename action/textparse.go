package action

import (
	"regexp"
	"strings"
)

var (
	lineLabelRE  = regexp.MustCompile(`(?i)^(?:actions?|answer|output)\s*:\s*`)
	actionWordRE = regexp.MustCompile(`^[A-Za-z_]+`)
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
