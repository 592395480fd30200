package action

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// Property tests for the formats without one in roundtrip_test.go: UI-TARS,
// Anthropic computer use, OpenAI computer use, browser-use, ProBench and
// ScreenAgent. Each renderer writes random actions as the format publishes
// them, restricted to what the format can express; one written action
// (a unit) may stand for several unified actions (a click with held
// modifiers, a typed text that ends in a newline).

// rtUnit is one action as a format writes it and the actions it means.
type rtUnit struct {
	want []Action
	src  string
}

// checkUnits parses n random replies of 1 to 5 units each and compares.
func checkUnits(t *testing.T, f Format, seed int64, n int, gen func(*rand.Rand) rtUnit, join func(*rand.Rand, []string) string) {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	for i := 0; i < n; i++ {
		var want []Action
		var srcs []string
		for k := 1 + r.Intn(5); k > 0; k-- {
			u := gen(r)
			want = append(want, u.want...)
			srcs = append(srcs, u.src)
		}
		checkRoundTrip(t, f, join(r, srcs), want, Options{})
	}
}

// rtPick returns one of the spellings.
func rtPick(r *rand.Rand, s ...string) string { return s[r.Intn(len(s))] }

// rtOneLine is random text without line breaks or tabs, not starting or
// ending with a space.
func rtOneLine(r *rand.Rand) string {
	t := strings.TrimSpace(strings.NewReplacer("\n", " ", "\t", " ").Replace(rtText(r, true)))
	if t == "" {
		return "x"
	}
	return t
}

func rtCoord(r *rand.Rand) float64 { return float64(r.Intn(1000)) }

func rtJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// spellKey writes a canonical key name in a format's spelling: the first
// spelling the table gives, or one of them, else the name itself.
func spellKey(r *rand.Rand, table map[string][]string, k string) string {
	if s, ok := table[k]; ok {
		return s[r.Intn(len(s))]
	}
	return k
}

// ---- UI-TARS ----

// UI-TARS writes a point as start_box='(x,y)' (1.0, with or without box
// markers, or as a box whose centre is the point) or point='<point>x y</point>'
// (1.5); keys in lower case, separated by spaces.
var uitarsKeys = map[string][]string{"esc": {"esc", "escape"}, "super": {"win", "super", "cmd"},
	"pageup": {"pageup"}, "pagedown": {"pagedown"}}

// uitarsLit writes s as the prompt asks: a single-quoted Python string
// with \', \" and \n escaped.
func uitarsLit(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, c := range s {
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// uitarsBox writes p as the argument name (start_box, end_box) in UI-TARS
// 1.0's spelling, or as pname (point, start_point, end_point) in 1.5's.
func uitarsBox(r *rand.Rand, name, pname string, p *Point) string {
	x, y := num(p.X), num(p.Y)
	switch r.Intn(4) {
	case 0:
		return fmt.Sprintf("%s='(%s,%s)'", name, x, y)
	case 1:
		return fmt.Sprintf("%s='<|box_start|>(%s,%s)<|box_end|>'", name, x, y)
	case 2: // a box around the point
		d := float64(1 + r.Intn(5))
		return fmt.Sprintf("%s='(%s,%s,%s,%s)'", name, num(p.X-d), num(p.Y-d), num(p.X+d), num(p.Y+d))
	default:
		return fmt.Sprintf("%s='<point>%s %s</point>'", pname, x, y)
	}
}

func rtUITARS(r *rand.Rand) rtUnit {
	pt := func() *Point { return &Point{X: float64(5 + r.Intn(990)), Y: float64(5 + r.Intn(990)), Unit: Thousand} }
	one := func(a Action, src string) rtUnit { return rtUnit{[]Action{a}, src} }
	switch r.Intn(12) {
	case 0:
		p := pt()
		return one(Action{Kind: Click, Point: p}, "click("+uitarsBox(r, "start_box", "point", p)+")")
	case 1:
		p := pt()
		return one(Action{Kind: Click, Point: p, Count: 2}, "left_double("+uitarsBox(r, "start_box", "point", p)+")")
	case 2:
		p := pt()
		return one(Action{Kind: Click, Point: p, Button: Right}, "right_single("+uitarsBox(r, "start_box", "point", p)+")")
	case 3:
		p, q := pt(), pt()
		return one(Action{Kind: Drag, Point: p, To: q}, "drag("+uitarsBox(r, "start_box", "start_point", p)+", "+uitarsBox(r, "end_box", "end_point", q)+")")
	case 4: // one key
		k := rtKeys[r.Intn(len(rtKeys))]
		return one(Action{Kind: Key, Keys: []string{k}}, "hotkey(key='"+spellKey(r, uitarsKeys, k)+"')")
	case 5: // up to three keys, space-separated, lower case
		keys := rtHotkey(r)
		var names []string
		for _, k := range keys {
			names = append(names, spellKey(r, uitarsKeys, k))
		}
		return one(Action{Kind: Hotkey, Keys: keys}, "hotkey(key='"+strings.Join(names, " ")+"')")
	case 6: // typed text; a final \n submits it (presses enter)
		s := rtText(r, false)
		for strings.HasSuffix(s, "\n") {
			s = strings.TrimSuffix(s, "\n")
		}
		if s == "" {
			s = "a"
		}
		if r.Intn(3) == 0 {
			return rtUnit{[]Action{{Kind: Type, Text: s}, {Kind: Key, Keys: []string{"enter"}}}, "type(content=" + uitarsLit(s+"\n") + ")"}
		}
		return one(Action{Kind: Type, Text: s}, "type(content="+uitarsLit(s)+")")
	case 7:
		p := pt()
		a, _ := directional(rtPick(r, "up", "down", "left", "right"))
		a.Point = p
		dir := map[[2]int]string{{0, -3}: "up", {0, 3}: "down", {-3, 0}: "left", {3, 0}: "right"}[[2]int{a.DX, a.DY}]
		return one(a, "scroll("+uitarsBox(r, "start_box", "point", p)+", direction='"+dir+"')")
	case 8:
		return one(Action{Kind: Wait, Duration: DefaultWait}, "wait()")
	case 9:
		s := rtText(r, false)
		return one(Action{Kind: Answer, Text: s}, "finished(content="+uitarsLit(s)+")")
	case 10:
		return one(Action{Kind: Fail}, "call_user()")
	default:
		return one(Action{Kind: Done}, "finished()")
	}
}

func TestRoundTripUITARS(t *testing.T) {
	thoughts := []string{"Click the search field, then type the query.", "Type the name into the box.\nScroll down if it is not visible.",
		"Press enter to submit; wait for the page.", "Drag the slider to the right, then finished.", "I will click(start_box='(1,2)') later."}
	join := func(r *rand.Rand, srcs []string) string {
		sep := rtPick(r, "\n\n", "\n")
		return "Thought: " + thoughts[r.Intn(len(thoughts))] + "\nAction: " + strings.Join(srcs, sep)
	}
	checkUnits(t, FormatUITARS, 11, 600, rtUITARS, join)
}

// ---- Anthropic computer use ----

// xdotool key names, as the computer-use tool takes them.
var xdoKeys = map[string][]string{"ctrl": {"ctrl", "Control_L"}, "alt": {"alt", "Alt_L"}, "shift": {"shift", "Shift_L"},
	"super": {"super", "Super_L"}, "enter": {"Return", "KP_Enter"}, "tab": {"Tab"}, "esc": {"Escape"},
	"backspace": {"BackSpace"}, "delete": {"Delete"}, "space": {"space"}, "up": {"Up"}, "down": {"Down"},
	"left": {"Left"}, "right": {"Right"}, "home": {"Home"}, "end": {"End"}, "pageup": {"Page_Up", "Prior"},
	"pagedown": {"Page_Down", "Next"}, "f5": {"F5"}}

func xdoCombo(r *rand.Rand, keys []string) string {
	var names []string
	for _, k := range keys {
		names = append(names, spellKey(r, xdoKeys, k))
	}
	return strings.Join(names, "+")
}

func rtAnthropic(r *rand.Rand) rtUnit {
	xy := func() (*Point, []int) {
		x, y := r.Intn(1920), r.Intn(1080)
		return &Point{X: float64(x), Y: float64(y), Unit: Pixels}, []int{x, y}
	}
	// held wraps a with the modifiers the tool's text field holds.
	held := func(a Action, in map[string]any) rtUnit {
		if r.Intn(3) > 0 {
			return rtUnit{[]Action{a}, rtJSON(in)}
		}
		mods := []string{rtMods[r.Intn(len(rtMods))]}
		if r.Intn(2) == 0 {
			if m := rtMods[r.Intn(len(rtMods))]; m != mods[0] {
				mods = append(mods, m)
			}
		}
		in["text"] = xdoCombo(r, mods)
		var want []Action
		for _, m := range mods {
			want = append(want, Action{Kind: KeyDown, Keys: []string{m}})
		}
		want = append(want, a)
		for i := len(mods) - 1; i >= 0; i-- {
			want = append(want, Action{Kind: KeyUp, Keys: []string{mods[i]}})
		}
		return rtUnit{want, rtJSON(in)}
	}
	one := func(a Action, in map[string]any) rtUnit { return rtUnit{[]Action{a}, rtJSON(in)} }
	switch r.Intn(11) {
	case 0:
		k := rtKeys[r.Intn(len(rtKeys))]
		return one(Action{Kind: Key, Keys: []string{k}}, map[string]any{"action": "key", "text": spellKey(r, xdoKeys, k)})
	case 1:
		keys := rtHotkey(r)
		return one(Action{Kind: Hotkey, Keys: keys}, map[string]any{"action": "key", "text": xdoCombo(r, keys)})
	case 2:
		s := rtText(r, false)
		return one(Action{Kind: Type, Text: s}, map[string]any{"action": "type", "text": s})
	case 3:
		p, c := xy()
		return one(Action{Kind: Move, Point: p}, map[string]any{"action": "mouse_move", "coordinate": c})
	case 4:
		p, c := xy()
		name := rtPick(r, "left_click", "right_click", "middle_click", "double_click", "triple_click")
		a := Action{Kind: Click, Point: p}
		switch name {
		case "right_click":
			a.Button = Right
		case "middle_click":
			a.Button = Middle
		case "double_click":
			a.Count = 2
		case "triple_click":
			a.Count = 3
		}
		return held(a, map[string]any{"action": name, "coordinate": c})
	case 5:
		p, c := xy()
		to, tc := xy()
		if r.Intn(2) == 0 { // computer_20241022: from where the pointer is
			return one(Action{Kind: Drag, To: to}, map[string]any{"action": "left_click_drag", "coordinate": tc})
		}
		return one(Action{Kind: Drag, Point: p, To: to}, map[string]any{"action": "left_click_drag", "start_coordinate": c, "coordinate": tc})
	case 6:
		if r.Intn(2) == 0 {
			return one(Action{Kind: MouseDown}, map[string]any{"action": "left_mouse_down"})
		}
		return one(Action{Kind: MouseUp}, map[string]any{"action": "left_mouse_up"})
	case 7:
		p, c := xy()
		n := 1 + r.Intn(10)
		dir := rtPick(r, "up", "down", "left", "right")
		a := Action{Kind: Scroll, Point: p}
		switch dir {
		case "up":
			a.DY = -n
		case "down":
			a.DY = n
		case "left":
			a.DX = -n
		default:
			a.DX = n
		}
		return held(a, map[string]any{"action": "scroll", "coordinate": c, "scroll_direction": dir, "scroll_amount": n})
	case 8:
		d := float64(1 + r.Intn(9))
		return one(Action{Kind: Wait, Duration: d}, map[string]any{"action": "wait", "duration": d})
	case 9:
		k := rtMods[r.Intn(len(rtMods))]
		d := float64(1 + r.Intn(5))
		return rtUnit{[]Action{{Kind: KeyDown, Keys: []string{k}}, {Kind: Wait, Duration: d}, {Kind: KeyUp, Keys: []string{k}}},
			rtJSON(map[string]any{"action": "hold_key", "text": spellKey(r, xdoKeys, k), "duration": d})}
	default:
		p, c := xy()
		return one(Action{Kind: Click, Point: p}, map[string]any{"action": "left_click", "coordinate": c})
	}
}

func TestRoundTripAnthropic(t *testing.T) {
	toolUse := func(i int, in string) string {
		return fmt.Sprintf(`{"type":"tool_use","id":"toolu_%02d","name":"computer","input":%s}`, i, in)
	}
	join := func(r *rand.Rand, srcs []string) string {
		switch {
		case len(srcs) == 1 && r.Intn(2) == 0: // the bare input object
			return srcs[0]
		case len(srcs) == 1:
			return toolUse(1, srcs[0])
		case r.Intn(2) == 0: // a message's content array
			parts := []string{`{"type":"text","text":"Click the field, then type."}`}
			for i, s := range srcs {
				parts = append(parts, toolUse(i, s))
			}
			return "[" + strings.Join(parts, ",") + "]"
		default: // the input objects alone
			return "[" + strings.Join(srcs, ",") + "]"
		}
	}
	checkUnits(t, FormatAnthropic, 12, 600, rtAnthropic, join)
}

// ---- OpenAI computer use ----

var openaiKeys = map[string][]string{"ctrl": {"CTRL"}, "alt": {"ALT", "OPTION"}, "shift": {"SHIFT"}, "super": {"CMD", "META", "SUPER", "WIN"},
	"enter": {"ENTER", "RETURN"}, "tab": {"TAB"}, "esc": {"ESC", "ESCAPE"}, "backspace": {"BACKSPACE"}, "delete": {"DELETE"},
	"space": {"SPACE"}, "up": {"ARROWUP", "UP"}, "down": {"ARROWDOWN", "DOWN"}, "left": {"ARROWLEFT", "LEFT"},
	"right": {"ARROWRIGHT", "RIGHT"}, "home": {"HOME"}, "end": {"END"}, "pageup": {"PAGEUP"}, "pagedown": {"PAGEDOWN"},
	"f5": {"F5"}, "a": {"A", "a"}, "z": {"Z", "z"}}

func rtOpenAI(r *rand.Rand) rtUnit {
	xy := func() (*Point, int, int) {
		x, y := r.Intn(1920), r.Intn(1080)
		return &Point{X: float64(x), Y: float64(y), Unit: Pixels}, x, y
	}
	one := func(a Action, v map[string]any) rtUnit { return rtUnit{[]Action{a}, rtJSON(v)} }
	switch r.Intn(8) {
	case 0:
		p, x, y := xy()
		a := Action{Kind: Click, Point: p}
		v := map[string]any{"type": "click", "x": x, "y": y}
		switch r.Intn(4) {
		case 0:
			v["button"] = "left"
		case 1:
			v["button"], a.Button = "right", Right
		case 2:
			v["button"], a.Button = "wheel", Middle
		}
		return one(a, v)
	case 1:
		p, x, y := xy()
		return one(Action{Kind: Click, Point: p, Count: 2}, map[string]any{"type": "double_click", "x": x, "y": y})
	case 2:
		p, x, y := xy()
		return one(Action{Kind: Move, Point: p}, map[string]any{"type": "move", "x": x, "y": y})
	case 3:
		from, x1, y1 := xy()
		path := []map[string]int{{"x": x1, "y": y1}}
		for k := r.Intn(3); k > 0; k-- {
			_, x, y := xy()
			path = append(path, map[string]int{"x": x, "y": y})
		}
		to, x2, y2 := xy()
		path = append(path, map[string]int{"x": x2, "y": y2})
		return one(Action{Kind: Drag, Point: from, To: to}, map[string]any{"type": "drag", "path": path})
	case 4:
		keys := []string{rtKeys[r.Intn(len(rtKeys))]}
		kind := Key
		if r.Intn(2) == 0 {
			keys, kind = rtHotkey(r), Hotkey
		}
		var names []string
		for _, k := range keys {
			names = append(names, spellKey(r, openaiKeys, k))
		}
		return one(Action{Kind: kind, Keys: keys}, map[string]any{"type": "keypress", "keys": names})
	case 5:
		s := rtText(r, false)
		return one(Action{Kind: Type, Text: s}, map[string]any{"type": "type", "text": s})
	case 6: // pixels of scroll become wheel notches of 100 pixels
		p, x, y := xy()
		n := 1 + r.Intn(9)
		if r.Intn(2) == 0 {
			n = -n
		}
		jitter := r.Intn(81) - 40
		a := Action{Kind: Scroll, Point: p}
		v := map[string]any{"type": "scroll", "x": x, "y": y, "scroll_x": 0, "scroll_y": 0}
		if r.Intn(2) == 0 {
			a.DY, v["scroll_y"] = n, n*PixelsPerNotch+jitter
		} else {
			a.DX, v["scroll_x"] = n, n*PixelsPerNotch+jitter
		}
		return one(a, v)
	default:
		return one(Action{Kind: Wait, Duration: 2}, map[string]any{"type": "wait"})
	}
}

func TestRoundTripOpenAI(t *testing.T) {
	call := func(i int, action string) string {
		return fmt.Sprintf(`{"type":"computer_call","id":"cu_%d","call_id":"call_%d","action":%s,"pending_safety_checks":[],"status":"completed"}`, i, i, action)
	}
	join := func(r *rand.Rand, srcs []string) string {
		switch {
		case len(srcs) == 1 && r.Intn(2) == 0: // a bare action
			return srcs[0]
		case len(srcs) == 1:
			return call(1, srcs[0])
		case r.Intn(2) == 0: // a whole response
			items := []string{`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Clicking the field."}]}`}
			for i, s := range srcs {
				items = append(items, call(i, s))
			}
			return `{"id":"resp_1","object":"response","output":[` + strings.Join(items, ",") + `]}`
		default: // one call with a batch of actions
			return `{"type":"computer_call","call_id":"call_1","actions":[` + strings.Join(srcs, ",") + `]}`
		}
	}
	checkUnits(t, FormatOpenAI, 13, 600, rtOpenAI, join)
}

// ---- browser-use ----

var playwrightKeys = map[string][]string{"ctrl": {"Control"}, "alt": {"Alt"}, "shift": {"Shift"}, "super": {"Meta"},
	"enter": {"Enter"}, "tab": {"Tab"}, "esc": {"Escape"}, "backspace": {"Backspace"}, "delete": {"Delete"},
	"space": {"Space"}, "up": {"ArrowUp"}, "down": {"ArrowDown"}, "left": {"ArrowLeft"}, "right": {"ArrowRight"},
	"home": {"Home"}, "end": {"End"}, "pageup": {"PageUp"}, "pagedown": {"PageDown"}, "f5": {"F5"}}

func rtBrowserUse(r *rand.Rand) rtUnit {
	idx := func() *int { n := r.Intn(200); return &n }
	one := func(a Action, name string, params map[string]any) rtUnit {
		return rtUnit{[]Action{a}, rtJSON(map[string]any{name: params})}
	}
	switch r.Intn(13) {
	case 0:
		u := "https://example.com/" + strconv.Itoa(r.Intn(100))
		if r.Intn(2) == 0 {
			return one(Action{Kind: Navigate, Text: u, NewTab: true}, "open_tab", map[string]any{"url": u})
		}
		nt := r.Intn(2) == 0
		return one(Action{Kind: Navigate, Text: u, NewTab: nt}, "go_to_url", map[string]any{"url": u, "new_tab": nt})
	case 1:
		return one(Action{Kind: Back}, "go_back", map[string]any{})
	case 2:
		i := idx()
		if r.Intn(3) == 0 {
			return rtUnit{[]Action{{Kind: KeyDown, Keys: []string{"ctrl"}}, {Kind: Click, Target: &Target{Index: i}}, {Kind: KeyUp, Keys: []string{"ctrl"}}},
				rtJSON(map[string]any{"click_element_by_index": map[string]any{"index": *i, "while_holding_ctrl": true}})}
		}
		return one(Action{Kind: Click, Target: &Target{Index: i}}, "click_element_by_index", map[string]any{"index": *i})
	case 3:
		i, s, c := idx(), rtText(r, false), r.Intn(2) == 0
		return one(Action{Kind: Type, Target: &Target{Index: i}, Text: s, Clear: c}, "input_text", map[string]any{"index": *i, "text": s, "clear_existing": c})
	case 4:
		id := r.Intn(9)
		if r.Intn(2) == 0 {
			return one(Action{Kind: TabSwitch, Tab: strconv.Itoa(id)}, "switch_tab", map[string]any{"page_id": id})
		}
		tab := fmt.Sprintf("%04x", r.Intn(65536))
		return one(Action{Kind: TabClose, Tab: tab}, "close_tab", map[string]any{"tab_id": tab})
	case 5:
		pages := float64(1+r.Intn(8)) / 2
		down := r.Intn(2) == 0
		a := Action{Kind: Scroll, Pages: pages}
		if !down {
			a.Pages = -pages
		}
		p := map[string]any{"down": down, "num_pages": pages}
		if r.Intn(3) == 0 {
			i := idx()
			a.Target, p["frame_element_index"] = &Target{Index: i}, *i
		}
		return one(a, "scroll", p)
	case 6:
		if r.Intn(2) == 0 {
			return one(Action{Kind: Scroll, Pages: 1}, "scroll_down", map[string]any{})
		}
		return one(Action{Kind: Scroll, Pages: -1}, "scroll_up", map[string]any{})
	case 7:
		s := rtOneLine(r)
		return one(Action{Kind: ScrollToText, Text: s}, "scroll_to_text", map[string]any{"text": s})
	case 8:
		keys := []string{rtKeys[r.Intn(len(rtKeys))]}
		kind := Key
		if r.Intn(2) == 0 {
			keys, kind = rtHotkey(r), Hotkey
		}
		var names []string
		for _, k := range keys {
			names = append(names, spellKey(r, playwrightKeys, k))
		}
		return one(Action{Kind: kind, Keys: keys}, "send_keys", map[string]any{"keys": strings.Join(names, "+")})
	case 9:
		i, s := idx(), rtOneLine(r)
		return one(Action{Kind: Select, Target: &Target{Index: i}, Text: s}, "select_dropdown_option", map[string]any{"index": *i, "text": s})
	case 10:
		d := float64(1 + r.Intn(9))
		return one(Action{Kind: Wait, Duration: d}, "wait", map[string]any{"seconds": d})
	case 11:
		s := rtText(r, false)
		if r.Intn(2) == 0 {
			return one(Action{Kind: Fail, Text: s}, "done", map[string]any{"text": s, "success": false})
		}
		return one(Action{Kind: Done, Text: s}, "done", map[string]any{"text": s, "success": true})
	default:
		q := rtOneLine(r)
		name, key := rtPick(r, "search_google", "extract_content"), "query"
		if name == "extract_content" {
			key = "goal"
		}
		return one(Action{Kind: API, Name: name, Args: map[string]any{key: q}}, name, map[string]any{key: q})
	}
}

func TestRoundTripBrowserUse(t *testing.T) {
	join := func(r *rand.Rand, srcs []string) string {
		list := "[" + strings.Join(srcs, ",") + "]"
		switch r.Intn(3) {
		case 0:
			return `{"current_state":{"evaluation_previous_goal":"Success","memory":"Typed the query.","next_goal":"Click the first result."},"action":` + list + `}`
		case 1:
			return "```json\n" + `{"thinking":"Click it, then type.","evaluation_previous_goal":"Unknown","memory":"","next_goal":"Search.","action":` + list + "}\n```"
		default:
			return list
		}
	}
	checkUnits(t, FormatBrowserUse, 14, 600, rtBrowserUse, join)
}

// ---- ProBench ----

func rtProBench(r *rand.Rand) rtUnit {
	open, shut := "(", ")"
	switch r.Intn(3) {
	case 1:
		open, shut = "[", "]"
	case 2:
		open, shut = "<", ">"
	}
	one := func(a Action, src string) rtUnit { return rtUnit{[]Action{a}, src} }
	switch r.Intn(8) {
	case 0, 1:
		x, y := rtCoord(r), rtCoord(r)
		return one(Action{Kind: Click, Point: &Point{X: x, Y: y, Unit: Pixels}}, fmt.Sprintf("CLICK%s%s, %s%s", open, num(x), num(y), shut))
	case 2:
		x1, y1, x2, y2 := rtCoord(r), rtCoord(r), rtCoord(r), rtCoord(r)
		return one(Action{Kind: Swipe, Point: &Point{X: x1, Y: y1, Unit: Pixels}, To: &Point{X: x2, Y: y2, Unit: Pixels}, Duration: 0.5},
			fmt.Sprintf("SWIPE%s%s, %s, %s, %s%s", open, num(x1), num(y1), num(x2), num(y2), shut))
	case 3: // a finger moving up scrolls the content down
		dir := rtPick(r, "UP", "DOWN", "LEFT", "RIGHT")
		from, to := &Point{X: 0.5, Y: 0.5, Unit: Ratio}, &Point{X: 0.5, Y: 0.5, Unit: Ratio}
		switch dir {
		case "UP":
			from.Y, to.Y = 0.7, 0.3
		case "DOWN":
			from.Y, to.Y = 0.3, 0.7
		case "LEFT":
			from.X, to.X = 0.7, 0.3
		default:
			from.X, to.X = 0.3, 0.7
		}
		return one(Action{Kind: Swipe, Point: from, To: to, Duration: 0.5}, "SWIPE ["+dir+"]")
	case 4: // text in matching quotes reads as quoted text, so none is
		s := rtOneLine(r)
		if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
			s += "."
		}
		if r.Intn(3) == 0 && !strings.Contains(s, `"`) {
			return one(Action{Kind: Type, Text: s}, `TYPE "`+s+`"`)
		}
		return one(Action{Kind: Type, Text: s}, "TYPE ["+s+"]")
	case 5:
		return one(Action{Kind: Key, Keys: []string{"enter"}}, "ENTER")
	case 6:
		return one(Action{Kind: Back}, "BACK")
	default:
		if r.Intn(2) == 0 {
			return one(Action{Kind: Wait, Duration: DefaultWait}, "WAIT")
		}
		d := float64(1 + r.Intn(9))
		return one(Action{Kind: Wait, Duration: d}, "WAIT ["+num(d)+"]")
	}
}

func TestRoundTripProBench(t *testing.T) {
	join := func(r *rand.Rand, srcs []string) string {
		return "Thought: Click the search bar, then type the name.\nAction: " + strings.Join(srcs, "\n") + "\n" + rtPick(r, "COMPLETE", "")
	}
	gen := rtProBench
	r := rand.New(rand.NewSource(15))
	for i := 0; i < 600; i++ {
		var want []Action
		var srcs []string
		for k := 1 + r.Intn(5); k > 0; k-- {
			u := gen(r)
			want = append(want, u.want...)
			srcs = append(srcs, u.src)
		}
		reply := join(r, srcs)
		if strings.HasSuffix(reply, "COMPLETE") {
			want = append(want, Action{Kind: Done})
		}
		checkRoundTrip(t, FormatProBench, reply, want, Options{})
	}
}

// ---- ScreenAgent ----

// ScreenAgent's prompt asks for keysym names, and writes combinations as
// "Ctrl+A".
var screenAgentSpell = map[string][]string{"ctrl": {"Ctrl", "Control_L", "ctrl"}, "alt": {"Alt", "Alt_L"}, "shift": {"Shift", "Shift_L"},
	"super": {"Win", "Super_L"}, "enter": {"Return", "Enter"}, "tab": {"Tab"}, "esc": {"Escape", "ESC"},
	"backspace": {"BackSpace"}, "delete": {"Delete"}, "space": {"space"}, "up": {"Up"}, "down": {"Down"},
	"left": {"Left"}, "right": {"Right"}, "home": {"Home"}, "end": {"End"}, "pageup": {"Page_Up", "Prior"},
	"pagedown": {"Page_Down", "Next"}, "f5": {"F5"}, "a": {"a", "A"}, "z": {"z", "Z"}}

func rtScreenAgent(r *rand.Rand) rtUnit {
	pos := func() (*Point, map[string]int) {
		x, y := r.Intn(1920), r.Intn(1080)
		return &Point{X: float64(x), Y: float64(y), Unit: Pixels}, map[string]int{"width": x, "height": y}
	}
	button := func(v map[string]any) Button {
		switch r.Intn(4) {
		case 0:
			v["mouse_button"] = "right"
			return Right
		case 1:
			v["mouse_button"] = "middle"
			return Middle
		default:
			v["mouse_button"] = "left"
			return ""
		}
	}
	one := func(a Action, v map[string]any) rtUnit { return rtUnit{[]Action{a}, rtJSON(v)} }
	mouse := func(mt string) map[string]any {
		return map[string]any{"action_type": "MouseAction", "mouse_action_type": mt}
	}
	switch r.Intn(12) {
	case 0:
		p, mp := pos()
		v := mouse(rtPick(r, "click", "double_click"))
		v["mouse_position"] = mp
		a := Action{Kind: Click, Point: p, Button: button(v)}
		if v["mouse_action_type"] == "double_click" {
			a.Count = 2
		}
		return one(a, v)
	case 1:
		p, mp := pos()
		v := mouse("move")
		v["mouse_position"] = mp
		return one(Action{Kind: Move, Point: p}, v)
	case 2: // the position of a drag is where it ends
		p, mp := pos()
		v := mouse("drag")
		v["mouse_position"] = mp
		return one(Action{Kind: Drag, To: p, Button: button(v)}, v)
	case 3:
		mt := rtPick(r, "down", "up")
		v := mouse(mt)
		a := Action{Kind: map[string]Kind{"down": MouseDown, "up": MouseUp}[mt], Button: button(v)}
		if r.Intn(2) == 0 {
			p, mp := pos()
			a.Point, v["mouse_position"] = p, mp
		}
		return one(a, v)
	case 4:
		n := 1 + r.Intn(10)
		v := mouse(rtPick(r, "scroll_up", "scroll_down"))
		v["scroll_repeat"] = n
		a := Action{Kind: Scroll, DY: n}
		if v["mouse_action_type"] == "scroll_up" {
			a.DY = -n
		}
		if r.Intn(2) == 0 {
			p, mp := pos()
			a.Point, v["mouse_position"] = p, mp
		}
		return one(a, v)
	case 5:
		k := rtKeys[r.Intn(len(rtKeys))]
		return one(Action{Kind: Key, Keys: []string{k}}, map[string]any{"action_type": "KeyboardAction", "keyboard_action_type": "press", "keyboard_key": spellKey(r, screenAgentSpell, k)})
	case 6:
		keys := rtHotkey(r)
		var names []string
		for _, k := range keys {
			names = append(names, spellKey(r, screenAgentSpell, k))
		}
		return one(Action{Kind: Hotkey, Keys: keys}, map[string]any{"action_type": "KeyboardAction", "keyboard_action_type": "press", "keyboard_key": strings.Join(names, "+")})
	case 7:
		kt := rtPick(r, "down", "up")
		k := rtMods[r.Intn(len(rtMods))]
		return one(Action{Kind: map[string]Kind{"down": KeyDown, "up": KeyUp}[kt], Keys: []string{k}},
			map[string]any{"action_type": "KeyboardAction", "keyboard_action_type": kt, "keyboard_key": spellKey(r, screenAgentSpell, k)})
	case 8:
		s := rtText(r, false)
		return one(Action{Kind: Type, Text: s}, map[string]any{"action_type": "KeyboardAction", "keyboard_action_type": "text", "keyboard_text": s})
	case 9:
		d := float64(1+r.Intn(20)) / 4
		return one(Action{Kind: Wait, Duration: d}, map[string]any{"action_type": "WaitAction", "wait_time": d})
	case 10:
		steps := []string{rtOneLine(r), rtOneLine(r)}
		if r.Intn(2) == 0 {
			return one(Action{Kind: Plan, Text: strings.Join(steps, "\n")}, map[string]any{"action_type": "PlanAction", "element": steps})
		}
		return one(Action{Kind: Plan, Text: steps[0]}, map[string]any{"action_type": "PlanAction", "element": steps[0]})
	default:
		s := rtPick(r, "sub_task_success", "need_retry", "need_reformulate")
		a := Action{Kind: Reflect, Text: s}
		v := map[string]any{"action_type": "EvaluateSubTaskAction", "situation": s}
		if s != "sub_task_success" {
			adv := rtText(r, false)
			a.Args, v["advice"] = map[string]any{"advice": adv}, adv
		}
		return one(a, v)
	}
}

func TestRoundTripScreenAgent(t *testing.T) {
	join := func(r *rand.Rand, srcs []string) string {
		switch r.Intn(3) {
		case 0: // one list in a fence, after the plan in prose
			return "My plan is to click the Start button, so my action will be:\n```json\n[" + strings.Join(srcs, ",\n") + "]\n```"
		case 1: // one object a line in a fence
			return "Click the field, then type.\n```json\n" + strings.Join(srcs, "\n") + "\n```"
		default: // a fence for each object
			var b strings.Builder
			for _, s := range srcs {
				b.WriteString("Next:\n```json\n" + s + "\n```\n")
			}
			return b.String()
		}
	}
	checkUnits(t, FormatScreenAgent, 16, 600, rtScreenAgent, join)
}
