package action

import (
	"errors"
	"strings"
	"testing"
)

// Class 1: OS-Atlas's desktop and mobile action sets, as its published
// prompts write them.
func TestParseOSAtlasActionSet(t *testing.T) {
	runParseCases(t, FormatOSAtlas, []parseCase{
		{name: "pro prompt example", in: "thoughts:\nThe search box is at the top.\nactions:\nCLICK <point>[[101, 872]]</point>", want: []string{"click (101,872)k"}},
		{name: "double click", in: "DOUBLE_CLICK <point>[[10, 20]]</point>", want: []string{"click (10,20)k x2"}},
		{name: "right click", in: "RIGHT_CLICK <point>[[10,20]]</point>", want: []string{"click (10,20)k right"}},
		{name: "move to", in: "MOVE_TO <point>[[1, 2]]</point>\nHOVER <point>[[3, 4]]</point>", want: []string{"move (1,2)k", "move (3,4)k"}},
		{name: "long press", in: "LONG_PRESS <point>[[5, 6]]</point>", want: []string{"mouse_down (5,6)k", "wait 1s", "mouse_up (5,6)k"}},
		{name: "drag", in: "DRAG <point>[[1, 2]]</point> <point>[[3, 4]]</point>", want: []string{"drag (1,2)k to (3,4)k"}},
		{name: "type", in: "TYPE [Shanghai shopping mall]", want: []string{`type "Shanghai shopping mall"`}},
		{name: "scroll all", in: "SCROLL [UP]\nSCROLL [DOWN]\nSCROLL [LEFT]\nSCROLL [RIGHT]", want: []string{"scroll dx=0 dy=-3", "scroll dx=0 dy=3", "scroll dx=-3 dy=0", "scroll dx=3 dy=0"}},
		{name: "press enter", in: "PRESS_ENTER", want: []string{"key enter"}},
		{name: "press page down variants", in: "PRESS_PGDN\nPRESS_PAGEDOWN\nPRESS_PAGE_DOWN\nPRESS_PAGE DOWN\nPRESS_PGUP", want: []string{"key pagedown", "key pagedown", "key pagedown", "key pagedown", "key pageup"}},
		{name: "press tab esc space", in: "PRESS_TAB\nPRESS_ESC\nPRESS_SPACE\nPRESS_BACKSPACE\nPRESS_DELETE", want: []string{"key tab", "key esc", "key space", "key backspace", "key delete"}},
		{name: "press mobile buttons", in: "PRESS_BACK\nPRESS_HOME\nPRESS_RECENT", want: []string{"back", "key super", "api press_recent"}},
		{name: "press bracket", in: "PRESS [Enter]", want: []string{"key enter"}},
		{name: "hotkey", in: "HOTKEY [ctrl+c]\nHOTKEY [ctrl, shift, t]", want: []string{"hotkey ctrl+c", "hotkey ctrl+shift+t"}},
		{name: "enter", in: "ENTER", want: []string{"key enter"}},
		{name: "open app", in: "OPEN_APP [Settings]", want: []string{`api open_app app_name="Settings"`}},
		{name: "wait complete", in: "WAIT\nCOMPLETE", want: []string{"wait 5s", "done"}},
		{name: "answer", in: "ANSWER [42]", want: []string{`answer "42"`}},
		{name: "backticks", in: "`PRESS_ENTER`", want: []string{"key enter"}},
		{name: "bad press", in: "PRESS_WARP", err: "unknown key"},
		{name: "bad double click", in: "DOUBLE_CLICK [[1,2]]", err: "DOUBLE_CLICK must be"},
		{name: "bad drag", in: "DRAG <point>[[1, 2]]</point>", err: "DRAG must be"},
		{name: "bad open app", in: "OPEN_APP []", err: "OPEN_APP must be"},
		{name: "capital click prose is malformed", in: "CLICK the button", err: "CLICK must be"},
	})
}

// Class 2: prose that starts with an action word is a thought, not a
// malformed action.
func TestParseThoughtStartsWithActionWord(t *testing.T) {
	runParseCases(t, FormatOSAtlas, []parseCase{
		{name: "click prose", in: "Click the search field, then type the query.\nCLICK <point>[[1, 2]]</point>", want: []string{"click (1,2)k"}},
		{name: "type prose", in: "Type the city name next.\nTYPE [Paris]", want: []string{`type "Paris"`}},
		{name: "scroll prose", in: "Scroll down to find it.\nSCROLL [DOWN]", want: []string{"scroll dx=0 dy=3"}},
		{name: "press prose", in: "Press enter to submit.\nPRESS_ENTER", want: []string{"key enter"}},
		{name: "lower case with argument", in: "Type [hello]", want: []string{`type "hello"`}},
		{name: "prose only", in: "Click the button and wait.", err: "no CLICK"},
	})
	runParseCases(t, FormatProBench, []parseCase{
		{name: "click prose", in: "Click the search bar first.\nCLICK(1, 2)", want: []string{"click (1,2)"}},
		{name: "enter back wait prose", in: "Enter the name, go Back if wrong, Wait for it.\nBack to the list then.\nTYPE [x]", want: []string{`type "x"`}},
		{name: "lower case call", in: "click(3, 4)", want: []string{"click (3,4)"}},
		{name: "quoted type", in: `Type "abc"`, want: []string{`type "abc"`}},
	})
}

// Class 3: every action of a reply is returned, or the error names the one
// that was not understood.
func TestParseNoSilentDrop(t *testing.T) {
	runParseCases(t, FormatOSAtlas, []parseCase{
		{name: "three", in: "CLICK <point>[[1, 2]]</point>\nTYPE [a]\nPRESS_ENTER", want: []string{"click (1,2)k", `type "a"`, "key enter"}},
		{name: "third bad", in: "CLICK <point>[[1, 2]]</point>\nTYPE [a]\nPRESS_WARP", err: `line 3: "PRESS_WARP"`},
	})
	runParseCases(t, FormatScreenAgent, []parseCase{
		{name: "fence and prose object", in: "```json\n{\"action_type\":\"WaitAction\",\"wait_time\":1}\n```\nthen {\"action_type\":\"WaitAction\",\"wait_time\":2}", want: []string{"wait 1s", "wait 2s"}},
		{name: "bad line in fence", in: "```json\n{\"action_type\":\"WaitAction\",\"wait_time\":1}\n{\"action_type\":\"WaitAction\",\"wait_time\":\n{\"action_type\":\"WaitAction\",\"wait_time\":3}\n```", err: "truncated JSON: the object is not closed; 2 other action(s)"},
		{name: "broken second fence", in: "```json\n{\"action_type\":\"WaitAction\"}\n```\n```json\n{\"action_type\": \"WaitAction\",\n```", err: "JSON"},
	})
	runParseCases(t, FormatOpenAI, []parseCase{
		{name: "three in output", in: `{"output":[{"type":"computer_call","action":{"type":"click","x":1,"y":2}},{"type":"computer_call","action":{"type":"type","text":"a"}},{"type":"computer_call","action":{"type":"keypress","keys":["ENTER"]}}]}`, want: []string{"click (1,2)", `type "a"`, "key enter"}},
		{name: "nested action missing x", in: `{"type":"computer_call","action":{"type":"click","y":2}}`, err: "click needs x and y"},
	})
}

// Class 4: truncated or broken JSON is an error, never a source of inner
// objects.
func TestParseTruncatedJSON(t *testing.T) {
	runParseCases(t, FormatBrowserUse, []parseCase{
		{name: "truncated wrapper", in: `{"current_state":{"next_goal":"x"},"action":[{"click_element_by_index":{"index":1}},{"input_text":{"index":2,"te`, err: "truncated JSON"},
		{name: "truncated after prose", in: `I will click. {"action":[{"click_element_by_index":{"index":1}}`, err: "truncated JSON"},
		{name: "broken wrapper", in: `Plan: {"action":[{"click_element_by_index":{"index":1}}],, "x": 1}`, err: "invalid JSON"},
		{name: "truncated fence", in: "```json\n{\"action\":[{\"go_back\":{}}]\n```", err: "truncated JSON"},
		{name: "complete after prose", in: `Next: {"action":[{"go_back":{}}]} ok`, want: []string{"back"}},
	})
	runParseCases(t, FormatOpenAI, []parseCase{
		{name: "truncated response", in: `{"output":[{"type":"computer_call","action":{"type":"click","x":1,"y":2}},{"type":"computer_call","action":{"type":"type","te`, err: "truncated JSON"},
		{name: "unclosed fence", in: "```json\n{\"type\":\"computer_call\",\"action\":{\"type\":\"click\",\"x\":1,\"y\":2}", err: "truncated JSON"},
	})
}

// Class 5: special codes with an argument in an inline fence.
func TestParseInlineFenceSpecial(t *testing.T) {
	runParseCases(t, FormatPyAutoGUI, []parseCase{
		{name: "ANS triple", in: "The total is:\n```ANS 42```", want: []string{`answer "42"`}},
		{name: "WAIT triple", in: "```WAIT 3```", want: []string{"wait 3s"}},
		{name: "WAIT brackets", in: "Loading.\n```WAIT [2]```", want: []string{"wait 2s"}},
		{name: "ANS single", in: "`ANS 42`", want: []string{`answer "42"`}},
		{name: "WAIT single after prose", in: "The page loads.\n`WAIT 3`", want: []string{"wait 3s"}},
		{name: "ANS words", in: "```ANS Paris, France```", want: []string{`answer "Paris, France"`}},
		{name: "code block still code", in: "```python\npyautogui.click(1, 2)\n```", want: []string{"click (1,2)"}},
	})
	runParseCases(t, FormatOSAtlas, []parseCase{
		{name: "osatlas WAIT fence", in: "```WAIT 3```", want: []string{"wait 3s"}},
	})
}

// Class 6: a call that only asks for a screenshot is a step without action.
func TestParseScreenshotNoop(t *testing.T) {
	runParseCases(t, FormatAnthropic, []parseCase{
		{name: "screenshot", in: `{"action":"screenshot"}`},
		{name: "tool_use screenshot", in: `[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"t","name":"computer","input":{"action":"screenshot"}}]`},
		{name: "cursor_position", in: `{"action":"cursor_position"}`},
		{name: "text only still an error", in: `[{"type":"text","text":"hi"}]`, err: "holds no action"},
		{name: "screenshot then click", in: `[{"action":"screenshot"},{"action":"left_click","coordinate":[1,2]}]`, want: []string{"click (1,2)"}},
	})
	runParseCases(t, FormatOpenAI, []parseCase{
		{name: "computer_call screenshot", in: `{"type":"computer_call","call_id":"c","action":{"type":"screenshot"}}`},
		{name: "response screenshot", in: `{"output":[{"type":"reasoning","summary":[]},{"type":"computer_call","action":{"type":"screenshot"}}]}`},
		{name: "reasoning only still an error", in: `{"output":[{"type":"reasoning","summary":[]}]}`, err: "holds no action"},
	})
	acts, err := Parse(FormatAnthropic, `{"action":"screenshot"}`, Options{})
	if err != nil || len(acts) != 0 {
		t.Fatalf("screenshot: %v, %v", acts, err)
	}
}

// Class 7: ScreenAgent JSON with Markdown-escaped underscores.
func TestParseScreenAgentEscapedUnderscores(t *testing.T) {
	runParseCases(t, FormatScreenAgent, []parseCase{
		{name: "escaped", in: "```json\n[{\"action\\_type\":\"MouseAction\",\"mouse\\_action\\_type\":\"click\",\"mouse\\_button\":\"left\",\"mouse\\_position\":{\"width\":3,\"height\":4}}]\n```", want: []string{"click (3,4)"}},
		{name: "escaped bare", in: `{"action\_type":"KeyboardAction","keyboard\_action\_type":"press","keyboard\_key":"Ctrl+A"}`, want: []string{"hotkey ctrl+a"}},
		{name: "escaped value", in: `{"action\_type":"EvaluateSubTaskAction","situation":"need\_retry"}`, want: []string{`reflect "need_retry"`}},
	})
}

// Class 8: one bad object among several; number arrays in prose; keypad
// keysyms.
func TestParsePartial(t *testing.T) {
	runParseCases(t, FormatScreenAgent, []parseCase{
		{name: "one bad of three", in: `[{"action_type":"WaitAction","wait_time":1},{"action_type":"Teleport"},{"action_type":"WaitAction","wait_time":2}]`, err: `unknown action_type "Teleport"; 2 other action(s) were understood`},
		{name: "numbers before", in: `The button spans [120, 45, 200, 80]. {"action_type":"WaitAction","wait_time":1}`, want: []string{"wait 1s"}},
		{name: "nested numbers before", in: `Boxes [[1,2],[3,4]] seen. {"action_type":"WaitAction","wait_time":1}`, want: []string{"wait 1s"}},
		{name: "keypad", in: `[{"action_type":"KeyboardAction","keyboard_key":"KP_2"},{"action_type":"KeyboardAction","keyboard_key":"KP_Enter"},{"action_type":"KeyboardAction","keyboard_key":"KP_Add"},{"action_type":"KeyboardAction","keyboard_key":"KP_Page_Down"}]`, want: []string{"key 2", "key enter", "key +", "key pagedown"}},
		{name: "bad keypad", in: `{"action_type":"KeyboardAction","keyboard_key":"KP_Zap"}`, err: `unknown key "KP_Zap"`},
	})
	runParseCases(t, FormatBrowserUse, []parseCase{
		{name: "one bad in wrapper", in: `{"action":[{"go_back":{}},{"teleport":{}},{"wait":{"seconds":1}}]}`, err: `"{\"teleport\":{}}": unknown browser-use action "teleport"`},
	})

	// The partial result carries the good actions.
	cases := []struct {
		f    Format
		in   string
		want []string
	}{
		{FormatScreenAgent, `[{"action_type":"WaitAction","wait_time":1},{"action_type":"Teleport"},{"action_type":"WaitAction","wait_time":2}]`, []string{"wait 1s", "wait 2s"}},
		{FormatBrowserUse, `{"action":[{"go_back":{}},{"teleport":{}},{"wait":{"seconds":1}}]}`, []string{"back", "wait 1s"}},
		{FormatOpenAI, `{"output":[{"type":"computer_call","action":{"type":"click","x":1,"y":2}},{"type":"computer_call","action":{"type":"warp"}}]}`, []string{"click (1,2)"}},
		{FormatAnthropic, `[{"action":"left_click","coordinate":[1,2]},{"action":"zoom"},{"action":"type","text":"a"}]`, []string{"click (1,2)", `type "a"`}},
		{FormatJSON, `[{"kind":"done"},{"kind":"type"}]`, []string{"done"}},
		{FormatOSAtlas, "CLICK <point>[[1, 2]]</point>\nPRESS_WARP", []string{"click (1,2)k"}},
	}
	for _, c := range cases {
		acts, err := Parse(c.f, c.in, Options{})
		var pe *ParseError
		if acts != nil || !errors.As(err, &pe) {
			t.Fatalf("%s %s: acts %v err %v, want no actions and a *ParseError", c.f, c.in, acts, err)
		}
		var got []string
		for _, a := range pe.Actions {
			got = append(got, a.String())
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: ParseError.Actions = %q, want %q (%v)", c.f, got, c.want, err)
		}
	}
}

func TestNormalizeKeypad(t *testing.T) {
	for in, want := range map[string]string{"KP_0": "0", "KP_9": "9", "KP_Enter": "enter", "KP_Add": "+",
		"KP_Subtract": "-", "KP_Multiply": "*", "KP_Divide": "/", "KP_Decimal": ".", "KP_Home": "home",
		"KP_Up": "up", "KP_Prior": "pageup", "KP_Next": "pagedown", "KP_Delete": "delete", "KP_Insert": "insert"} {
		if got, ok := NormalizeKey(in); !ok || got != want {
			t.Errorf("NormalizeKey(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"KP_", "KP_x", "KP_Zap"} {
		if got, ok := NormalizeKey(in); ok {
			t.Errorf("NormalizeKey(%q) = %q, want not a key", in, got)
		}
	}
}
