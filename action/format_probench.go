package action

import (
	"regexp"
	"strconv"
	"strings"
)

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
