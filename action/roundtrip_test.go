package action

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// Property tests: for the formats that can express an action, parsing the
// rendering of random actions gives the actions back. The renderers are
// test-only.

var rtKeys = []string{"enter", "tab", "esc", "backspace", "delete", "space", "up", "down", "left",
	"right", "home", "end", "pageup", "pagedown", "f5", "a", "z", "7"}
var rtMods = []string{"ctrl", "alt", "shift", "super"}
var rtRunes = []rune("abcXYZ 019'\"\\\n\t{}[]()#,.+-_é日本語😀")

func rtText(r *rand.Rand, oneLine bool) string {
	var b strings.Builder
	n := 1 + r.Intn(12)
	for i := 0; i < n; i++ {
		c := rtRunes[r.Intn(len(rtRunes))]
		if oneLine && (c == '\n' || c == '\t') {
			c = '_'
		}
		b.WriteRune(c)
	}
	return b.String()
}

func rtHotkey(r *rand.Rand) []string {
	n := 1 + r.Intn(2)
	keys := append([]string(nil), rtMods[r.Intn(len(rtMods))])
	for len(keys) < n {
		keys = append(keys, rtMods[r.Intn(len(rtMods))])
	}
	return append(keys, rtKeys[r.Intn(len(rtKeys))])
}

func rtPoint(r *rand.Rand, unit Unit) *Point {
	return &Point{X: float64(r.Intn(1000)), Y: float64(r.Intn(1000)), Unit: unit}
}

// pyLit renders s as a Python string literal.
func pyLit(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, c := range s {
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// renderPyAutoGUI writes actions as a pyautogui code block; special codes
// go on lines of their own.
func renderPyAutoGUI(acts []Action) string {
	var lines []string
	for _, a := range acts {
		var l string
		switch a.Kind {
		case Move:
			l = fmt.Sprintf("pyautogui.moveTo(%s, %s)", num(a.Point.X), num(a.Point.Y))
		case Click:
			b := a.Button
			if b == "" {
				b = Left
			}
			c := a.Count
			if c == 0 {
				c = 1
			}
			l = fmt.Sprintf("pyautogui.click(x=%s, y=%s, clicks=%d, button=%s)", num(a.Point.X), num(a.Point.Y), c, pyLit(string(b)))
		case Drag:
			l = fmt.Sprintf("pyautogui.dragTo(%s, %s)", num(a.To.X), num(a.To.Y))
		case Scroll:
			l = fmt.Sprintf("pyautogui.scroll(%d)", -a.DY)
		case MouseDown:
			l = "pyautogui.mouseDown()"
		case MouseUp:
			l = "pyautogui.mouseUp()"
		case Type:
			l = "pyautogui.write(" + pyLit(a.Text) + ")"
		case Key:
			l = "pyautogui.press(" + pyLit(a.Keys[0]) + ")"
		case Hotkey:
			var ks []string
			for _, k := range a.Keys {
				ks = append(ks, pyLit(k))
			}
			l = "pyautogui.hotkey(" + strings.Join(ks, ", ") + ")"
		case KeyDown:
			l = "pyautogui.keyDown(" + pyLit(a.Keys[0]) + ")"
		case KeyUp:
			l = "pyautogui.keyUp(" + pyLit(a.Keys[0]) + ")"
		case Wait:
			l = "WAIT " + num(a.Duration)
		case Done:
			l = "DONE"
		case Fail:
			l = "FAIL"
		case Answer:
			l = "ANS " + a.Text
		default:
			panic("renderPyAutoGUI: " + string(a.Kind))
		}
		lines = append(lines, l)
	}
	return "Thought: doing it.\n```python\n" + strings.Join(lines, "\n") + "\n```"
}

func rtPyAction(r *rand.Rand) Action {
	switch r.Intn(14) {
	case 0:
		return Action{Kind: Move, Point: rtPoint(r, Pixels)}
	case 1:
		a := Action{Kind: Click, Point: rtPoint(r, Pixels)}
		if n := r.Intn(3); n > 0 {
			a.Count = n + 1
		}
		a.Button = []Button{"", Right, Middle}[r.Intn(3)]
		return a
	case 2:
		return Action{Kind: Drag, To: rtPoint(r, Pixels)}
	case 3:
		dy := r.Intn(20) - 10
		if dy >= 0 {
			dy++
		}
		return Action{Kind: Scroll, DY: dy}
	case 4:
		return Action{Kind: MouseDown}
	case 5:
		return Action{Kind: MouseUp}
	case 6:
		return Action{Kind: Type, Text: rtText(r, false)}
	case 7:
		return Action{Kind: Key, Keys: []string{rtKeys[r.Intn(len(rtKeys))]}}
	case 8:
		return Action{Kind: Hotkey, Keys: rtHotkey(r)}
	case 9:
		return Action{Kind: KeyDown, Keys: []string{rtMods[r.Intn(len(rtMods))]}}
	case 10:
		return Action{Kind: KeyUp, Keys: []string{rtMods[r.Intn(len(rtMods))]}}
	case 11:
		return Action{Kind: Wait, Duration: float64(1 + r.Intn(9))}
	case 12:
		return []Action{{Kind: Done}, {Kind: Fail}}[r.Intn(2)]
	default:
		t := strings.TrimSpace(strings.NewReplacer("\n", " ", "\t", " ", "`", "", "'", "", "\"", "").Replace(rtText(r, true)))
		if t == "" || t == "FAIL" {
			t = "42"
		}
		return Action{Kind: Answer, Text: t}
	}
}

func checkRoundTrip(t *testing.T, f Format, reply string, want []Action, o Options) {
	t.Helper()
	got, err := Parse(f, reply, o)
	if err != nil {
		t.Fatalf("%s: Parse(%q) error %v", f, reply, err)
	}
	if !reflect.DeepEqual(got, want) {
		for i := range want {
			if i < len(got) && !reflect.DeepEqual(got[i], want[i]) {
				gb, _ := json.Marshal(got[i])
				wb, _ := json.Marshal(want[i])
				t.Fatalf("%s: action %d = %s (%#v), want %s (%#v)\nreply:\n%s", f, i+1, gb, got[i], wb, want[i], reply)
			}
		}
		t.Fatalf("%s: Parse(render(%v)) =\n%v\nreply:\n%s", f, want, got, reply)
	}
}

func TestRoundTripPyAutoGUI(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 500; i++ {
		var acts []Action
		for n := 1 + r.Intn(5); n > 0; n-- {
			acts = append(acts, rtPyAction(r))
		}
		checkRoundTrip(t, FormatPyAutoGUI, renderPyAutoGUI(acts), acts, Options{})
	}
}

func TestRoundTripJSON(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 500; i++ {
		var acts []Action
		for n := 1 + r.Intn(5); n > 0; n-- {
			a := rtPyAction(r)
			switch r.Intn(4) {
			case 0:
				idx := r.Intn(50)
				a = Action{Kind: Type, Target: &Target{Index: &idx}, Text: rtText(r, false), Clear: r.Intn(2) == 0}
			case 1:
				a = Action{Kind: Navigate, Text: "http://127.0.0.1:8080/" + strconv.Itoa(r.Intn(9)), NewTab: r.Intn(2) == 0}
			}
			acts = append(acts, a)
		}
		b, err := json.Marshal(acts)
		if err != nil {
			t.Fatal(err)
		}
		reply := string(b)
		if len(acts) == 1 && r.Intn(2) == 0 {
			b, _ = json.Marshal(acts[0])
			reply = "I will act now.\n```json\n" + string(b) + "\n```"
		}
		checkRoundTrip(t, FormatJSON, reply, acts, Options{})
	}
}

// renderOSAtlas writes actions in OS-Atlas's action language.
func renderOSAtlas(acts []Action) string {
	pt := func(p *Point) string { return fmt.Sprintf("<point>[[%s, %s]]</point>", num(p.X), num(p.Y)) }
	lines := []string{"thoughts:", "Click the box, then type.", "actions:"}
	for _, a := range acts {
		var l string
		switch a.Kind {
		case Click:
			switch {
			case a.Count == 2:
				l = "DOUBLE_CLICK " + pt(a.Point)
			case a.Button == Right:
				l = "RIGHT_CLICK " + pt(a.Point)
			default:
				l = "CLICK " + pt(a.Point)
			}
		case Move:
			l = "MOVE_TO " + pt(a.Point)
		case Drag:
			l = "DRAG " + pt(a.Point) + " " + pt(a.To)
		case Type:
			l = "TYPE [" + a.Text + "]"
		case Scroll:
			l = map[[2]int]string{{0, -3}: "SCROLL [UP]", {0, 3}: "SCROLL [DOWN]", {-3, 0}: "SCROLL [LEFT]", {3, 0}: "SCROLL [RIGHT]"}[[2]int{a.DX, a.DY}]
		case Key:
			l = "PRESS_" + strings.ToUpper(a.Keys[0])
		case Hotkey:
			l = "HOTKEY [" + strings.Join(a.Keys, "+") + "]"
		case Wait:
			l = "WAIT"
		case Done:
			l = "COMPLETE"
		default:
			panic("renderOSAtlas: " + string(a.Kind))
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

func TestRoundTripOSAtlas(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	named := []string{"enter", "tab", "esc", "backspace", "delete", "space", "up", "down", "end", "pageup", "pagedown", "f5"}
	for i := 0; i < 500; i++ {
		var acts []Action
		for n := 1 + r.Intn(5); n > 0; n-- {
			var a Action
			switch r.Intn(10) {
			case 0:
				a = Action{Kind: Click, Point: rtPoint(r, Thousand)}
			case 1:
				a = Action{Kind: Click, Point: rtPoint(r, Thousand), Count: 2}
			case 2:
				a = Action{Kind: Click, Point: rtPoint(r, Thousand), Button: Right}
			case 3:
				a = Action{Kind: Move, Point: rtPoint(r, Thousand)}
			case 4:
				a = Action{Kind: Drag, Point: rtPoint(r, Thousand), To: rtPoint(r, Thousand)}
			case 5:
				txt := strings.TrimSpace(rtText(r, true))
				if txt == "" {
					txt = "x"
				}
				a = Action{Kind: Type, Text: txt}
			case 6:
				a, _ = directional([]string{"UP", "DOWN", "LEFT", "RIGHT"}[r.Intn(4)])
			case 7:
				a = Action{Kind: Key, Keys: []string{named[r.Intn(len(named))]}}
			case 8:
				a = Action{Kind: Hotkey, Keys: rtHotkey(r)}
			default:
				a = []Action{{Kind: Wait, Duration: DefaultWait}, {Kind: Done}}[r.Intn(2)]
			}
			acts = append(acts, a)
		}
		checkRoundTrip(t, FormatOSAtlas, renderOSAtlas(acts), acts, Options{})
	}
}
