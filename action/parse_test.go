package action

import (
	"strings"
	"testing"
)

type parseCase struct {
	name  string
	in    string
	want  []string // Action.String() of each action
	err   string   // substring of the error, when one is expected
	unit  Unit
	noVal bool
}

func runParseCases(t *testing.T, f Format, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			acts, err := Parse(f, tc.in, Options{Unit: tc.unit})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse() error = %v, want one containing %q (actions %v)", err, tc.err, acts)
				}
				if !strings.HasPrefix(err.Error(), string(f)) {
					t.Fatalf("error %q does not name the format", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			var got []string
			for _, a := range acts {
				got = append(got, a.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("Parse() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestParsePyAutoGUI(t *testing.T) {
	runParseCases(t, FormatPyAutoGUI, []parseCase{
		{name: "moveTo", in: "```python\npyautogui.moveTo(100, 200)\n```", want: []string{"move (100,200)"}},
		{name: "moveTo duration kw", in: "```python\nimport pyautogui\npyautogui.moveTo(x=1, y=2, duration=0.5)\n```", want: []string{"move (1,2) 0.5s"}},
		{name: "moveTo tuple", in: "```\npyautogui.moveTo((30, 40))\n```", want: []string{"move (30,40)"}},
		{name: "moveRel", in: "```python\npyautogui.moveRel(-10, 5)\n```", want: []string{"move_rel (-10,5)"}},
		{name: "move alias", in: "```python\npyautogui.move(xOffset=3, yOffset=4)\n```", want: []string{"move_rel (3,4)"}},
		{name: "click full", in: "```python\npyautogui.click(x=10, y=20, clicks=2, button='right')\n```", want: []string{"click (10,20) right x2"}},
		{name: "click positional", in: "```python\npyautogui.click(10, 20, 3, 0.1, 'middle')\n```", want: []string{"click (10,20) middle x3"}},
		{name: "click here", in: "```python\npyautogui.click()\n```", want: []string{"click"}},
		{name: "doubleClick", in: "```python\npyautogui.doubleClick(5, 6)\n```", want: []string{"click (5,6) x2"}},
		{name: "rightClick", in: "```python\npyautogui.rightClick(5, 6)\n```", want: []string{"click (5,6) right"}},
		{name: "middleClick", in: "```python\npyautogui.middleClick(5, 6)\n```", want: []string{"click (5,6) middle"}},
		{name: "tripleClick", in: "```python\npyautogui.tripleClick(5, 6)\n```", want: []string{"click (5,6) x3"}},
		{name: "dragTo", in: "```python\npyautogui.dragTo(300, 400, duration=1, button='left')\n```", want: []string{"drag to (300,400) 1s"}},
		{name: "dragTo tag", in: "```python\npyautogui.dragTo(tag_1, button='right')\n```", want: []string{"drag tag_1 right"}},
		{name: "dragRel", in: "```python\npyautogui.dragRel(50, 0)\n```", want: []string{"drag_rel to (50,0)"}},
		{name: "scroll", in: "```python\npyautogui.scroll(-5, x=100, y=200)\n```", want: []string{"scroll (100,200) dx=0 dy=5"}},
		{name: "scroll up", in: "```python\npyautogui.scroll(3)\n```", want: []string{"scroll dx=0 dy=-3"}},
		{name: "hscroll", in: "```python\npyautogui.hscroll(2)\n```", want: []string{"scroll dx=2 dy=0"}},
		{name: "mouseDown up", in: "```python\npyautogui.mouseDown(1, 2, button='left')\npyautogui.mouseUp(3, 4, 'right')\n```", want: []string{"mouse_down (1,2)", "mouse_up (3,4) right"}},
		{name: "typewrite", in: "```python\npyautogui.typewrite('héllo \\'world\\'\\n', interval=0.05)\n```", want: []string{`type "héllo 'world'\n"`}},
		{name: "write", in: "```python\npyautogui.write(\"日本語\")\n```", want: []string{`type "日本語"`}},
		{name: "typewrite keys", in: "```python\npyautogui.typewrite(['a', 'left', 'enter'])\n```", want: []string{"key a+left+enter"}},
		{name: "press", in: "```python\npyautogui.press('Enter')\n```", want: []string{"key enter"}},
		{name: "press presses", in: "```python\npyautogui.press('down', presses=3)\n```", want: []string{"key down+down+down"}},
		{name: "hotkey", in: "```python\npyautogui.hotkey('ctrl', 'shift', 't')\n```", want: []string{"hotkey ctrl+shift+t"}},
		{name: "hotkey list", in: "```python\npyautogui.hotkey(['ctrl', 'c'])\n```", want: []string{"hotkey ctrl+c"}},
		{name: "keyDown keyUp", in: "```python\npyautogui.keyDown('shift'); pyautogui.keyUp('shift')\n```", want: []string{"key_down shift", "key_up shift"}},
		{name: "sleep", in: "```python\nimport time\npyautogui.click(1,1)\ntime.sleep(0.5)\npyautogui.click(2,2)\n```", want: []string{"click (1,1)", "wait 0.5s", "click (2,2)"}},
		{name: "tag click", in: "```python\npyautogui.click(tag_2)\npyautogui.moveTo(tag_3)\n```", want: []string{"click tag_2", "move tag_3"}},
		{name: "arithmetic", in: "```python\npyautogui.click(100 + 20 / 2, 2 * 30 - 1)\n```", want: []string{"click (110,59)"}},
		{name: "multiline call and comment", in: "```python\n# open it\npyautogui.click(\n    x=1,  # here\n    y=2,\n)\n```", want: []string{"click (1,2)"}},
		{name: "thousandths", in: "```python\npyautogui.click(500, 500)\n```", unit: Thousand, want: []string{"click (500,500)k"}},
		{name: "DONE alone", in: "DONE", want: []string{"done"}},
		{name: "DONE quoted", in: "```'DONE'```", want: []string{"done"}},
		{name: "DONE fenced", in: "The file is saved.\n```\nDONE\n```", want: []string{"done"}},
		{name: "FAIL", in: "```FAIL```", want: []string{"fail"}},
		{name: "WAIT default", in: "WAIT", want: []string{"wait 5s"}},
		{name: "WAIT n", in: "```\nWAIT 3\n```", want: []string{"wait 3s"}},
		{name: "ANS", in: "The answer is below.\n```\nANS 42.5 km\n```", want: []string{`answer "42.5 km"`}},
		{name: "ANS FAIL", in: "ANS FAIL", want: []string{"fail"}},
		{name: "prose then DONE line", in: "I have finished the task.\nDONE", want: []string{"done"}},
		{name: "code then DONE", in: "```python\npyautogui.hotkey('ctrl','s')\nDONE\n```", want: []string{"hotkey ctrl+s", "done"}},
		{name: "bare code", in: "pyautogui.click(3, 4)", want: []string{"click (3,4)"}},
		{name: "two blocks", in: "```python\npyautogui.click(1,2)\n```\nthen\n```python\npyautogui.write('x')\n```", want: []string{"click (1,2)", `type "x"`}},
		{name: "raw string", in: "```python\npyautogui.write(r'C:\\dir')\n```", want: []string{`type "C:\\dir"`}},
		{name: "triple quoted", in: "```python\npyautogui.write('''a\nb''')\n```", want: []string{`type "a\nb"`}},

		{name: "unknown function", in: "```python\npyautogui.clik(1, 2)\n```", err: `line 1: "pyautogui.clik(1, 2)": unknown function pyautogui.clik`},
		{name: "os.system", in: "```python\nos.system('rm -rf /')\n```", err: "unknown function os.system"},
		{name: "variable", in: "```python\nx = 5\n```", err: "assignments are not accepted"},
		{name: "loop", in: "```python\nfor i in range(3):\n    pyautogui.press('down')\n```", err: `"for" statements are not accepted`},
		{name: "name argument", in: "```python\npyautogui.click(x, 2)\n```", err: `unknown name "x"`},
		{name: "nested call", in: "```python\npyautogui.click(*pyautogui.locateCenterOnScreen('a.png'))\n```", err: "line 1"},
		{name: "unclosed", in: "```python\npyautogui.click(1, 2\n```", err: "not closed"},
		{name: "unknown key", in: "```python\npyautogui.press('hyperspace')\n```", err: `unknown key "hyperspace"`},
		{name: "bad button", in: "```python\npyautogui.click(1, 2, button='thumb')\n```", err: `unknown button "thumb"`},
		{name: "x without y", in: "```python\npyautogui.click(1)\n```", err: "x given without y"},
		{name: "unknown kwarg", in: "```python\npyautogui.click(1, 2, force=True)\n```", err: `no argument "force"`},
		{name: "string x", in: "```python\npyautogui.moveTo('a', 2)\n```", err: "x must be"},
		{name: "clicks range", in: "```python\npyautogui.click(1, 2, clicks=9)\n```", err: "clicks must be 1, 2 or 3"},
		{name: "line number", in: "```python\npyautogui.click(1, 2)\npyautogui.zoom(3)\n```", err: "line 2"},
		{name: "f-string", in: "```python\npyautogui.write(f'{x}')\n```", err: "f-strings"},
		{name: "prose only", in: "I think we should click the button.", err: `no code block or special code (DONE, FAIL, WAIT n, ANS s) found, and the reply is not code: "I" is not a call`},
		{name: "code then DONE outside", in: "```python\npyautogui.click(1, 2)\n```\nDONE", want: []string{"click (1,2)", "done"}},
		{name: "prose before code", in: "Thought: save first.\n```python\npyautogui.hotkey('ctrl', 's')\n```\nThen I will wait.", want: []string{"hotkey ctrl+s"}},
		{name: "empty block", in: "```python\n# nothing\n```", err: "hold no action"},
		{name: "ANS empty", in: "ANS", err: `the reply is not code: "ANS" is not a call`},
	})
}

func TestParseScreenAgent(t *testing.T) {
	runParseCases(t, FormatScreenAgent, []parseCase{
		{name: "click", in: "```json\n{\"action_type\":\"MouseAction\",\"mouse_action_type\":\"click\",\"mouse_button\":\"left\",\"mouse_position\":{\"width\":368,\"height\":319}}\n```", want: []string{"click (368,319)"}},
		{name: "list with text", in: `Plan done. [{"action_type":"MouseAction","mouse_action_type":"double_click","mouse_button":"right","mouse_position":{"width":1,"height":2}},{"action_type":"KeyboardAction","keyboard_action_type":"text","keyboard_text":"hello"}]`, want: []string{"click (1,2) right x2", `type "hello"`}},
		{name: "press combo", in: `{"action_type":"KeyboardAction","keyboard_action_type":"press","keyboard_key":"Ctrl+A"}`, want: []string{"hotkey ctrl+a"}},
		{name: "press single", in: `{"action_type":"KeyboardAction","keyboard_key":"Return"}`, want: []string{"key enter"}},
		{name: "key down", in: `{"action_type":"KeyboardAction","keyboard_action_type":"down","keyboard_key":"shift"}`, want: []string{"key_down shift"}},
		{name: "scroll", in: `{"action_type":"MouseAction","mouse_action_type":"scroll_down","scroll_repeat":4}`, want: []string{"scroll dx=0 dy=4"}},
		{name: "scroll up", in: `{"action_type":"MouseAction","mouse_action_type":"scroll_up"}`, want: []string{"scroll dx=0 dy=-1"}},
		{name: "drag", in: `{"action_type":"MouseAction","mouse_action_type":"drag","mouse_button":"left","mouse_position":{"width":9,"height":8}}`, want: []string{"drag to (9,8)"}},
		{name: "move down up", in: "```json\n{\"action_type\":\"MouseAction\",\"mouse_action_type\":\"move\",\"mouse_position\":{\"width\":1,\"height\":1}}\n{\"action_type\":\"MouseAction\",\"mouse_action_type\":\"down\",\"mouse_button\":\"left\"}\n{\"action_type\":\"MouseAction\",\"mouse_action_type\":\"up\",\"mouse_button\":\"left\"}\n```", want: []string{"move (1,1)", "mouse_down", "mouse_up"}},
		{name: "wait", in: `{"action_type":"WaitAction","wait_time":2}`, want: []string{"wait 2s"}},
		{name: "plan", in: `{"action_type":"PlanAction","element":["open browser","search"]}`, want: []string{`plan "open browser\nsearch"`}},
		{name: "reflect", in: `{"action_type":"EvaluateSubTaskAction","situation":"need_retry","advice":"click higher"}`, want: []string{`reflect advice="click higher" "need_retry"`}},
		{name: "unknown type", in: `{"action_type":"TeleportAction"}`, err: `unknown action_type "TeleportAction"`},
		{name: "unknown mouse", in: `{"action_type":"MouseAction","mouse_action_type":"wiggle"}`, err: `unknown mouse_action_type "wiggle"`},
		{name: "bad position", in: `{"action_type":"MouseAction","mouse_action_type":"click","mouse_position":{"width":"left","height":2}}`, err: "width must be a number"},
		{name: "no json", in: "I will click the button", err: "no JSON found"},
		{name: "missing type", in: `{"mouse_action_type":"click"}`, err: "action_type is missing"},
		{name: "text missing", in: `{"action_type":"KeyboardAction","keyboard_action_type":"text"}`, err: "keyboard_text is required"},
	})
}

func TestParseOSAtlas(t *testing.T) {
	runParseCases(t, FormatOSAtlas, []parseCase{
		{name: "click", in: "Thoughts: the button is there.\nactions:\nCLICK <point>[[101, 872]]</point>", want: []string{"click (101,872)k"}},
		{name: "click pixels", in: "CLICK <point>[[101,872]]</point>", unit: Pixels, want: []string{"click (101,872)"}},
		{name: "type", in: "TYPE [Shanghai shopping mall]", want: []string{`type "Shanghai shopping mall"`}},
		{name: "scroll", in: "SCROLL [UP]\nSCROLL [right]", want: []string{"scroll dx=0 dy=-3", "scroll dx=3 dy=0"}},
		{name: "bad click", in: "CLICK [[1,2]]", err: "CLICK must be"},
		{name: "bad scroll", in: "SCROLL [SIDEWAYS]", err: "SCROLL must be"},
		{name: "nothing", in: "hello", err: "no CLICK"},
	})
}

func TestParseUITARS(t *testing.T) {
	runParseCases(t, FormatUITARS, []parseCase{
		{name: "click", in: "Thought: click it\nAction: click(start_box='(235,512)')", want: []string{"click (235,512)k"}},
		{name: "click box markers", in: "Action: click(start_box='<|box_start|>(100,200,300,400)<|box_end|>')", want: []string{"click (200,300)k"}},
		{name: "click point tag", in: "Action: click(point='<point>10 20</point>')", want: []string{"click (10,20)k"}},
		{name: "double right", in: "Action: left_double(start_box='(1,2)')\n\nright_single(start_box='(3,4)')", want: []string{"click (1,2)k x2", "click (3,4)k right"}},
		{name: "drag", in: "Action: drag(start_box='(1,2)', end_box='(3,4)')", want: []string{"drag (1,2)k to (3,4)k"}},
		{name: "hotkey", in: "Action: hotkey(key='ctrl c')", want: []string{"hotkey ctrl+c"}},
		{name: "press", in: "Action: press(key='enter')", want: []string{"key enter"}},
		{name: "type enter", in: "Action: type(content='hello\\n')", want: []string{`type "hello"`, "key enter"}},
		{name: "scroll", in: "Action: scroll(start_box='(5,5)', direction='down')", want: []string{"scroll (5,5)k dx=0 dy=3"}},
		{name: "wait", in: "Action: wait()", want: []string{"wait 5s"}},
		{name: "finished", in: "Action: finished(content='Paris')", want: []string{`answer "Paris"`}},
		{name: "finished empty", in: "Action: finished()", want: []string{"done"}},
		{name: "call user", in: "Action: call_user()", want: []string{"fail"}},
		{name: "pixels", in: "Action: click(start_box='(235,512)')", unit: Pixels, want: []string{"click (235,512)"}},
		{name: "unknown", in: "Action: teleport(to='(1,2)')", err: "unknown UI-TARS action teleport"},
		{name: "bad box", in: "Action: click(start_box='(1)')", err: "found 1 numbers"},
		{name: "bad direction", in: "Action: scroll(start_box='(5,5)', direction='sideways')", err: "unknown scroll direction"},
	})
}

func TestParseAnthropic(t *testing.T) {
	runParseCases(t, FormatAnthropic, []parseCase{
		{name: "left_click", in: `{"action":"left_click","coordinate":[500,300]}`, want: []string{"click (500,300)"}},
		{name: "tool_use block", in: `[{"type":"text","text":"Clicking"},{"type":"tool_use","id":"t1","name":"computer","input":{"action":"double_click","coordinate":[1,2]}}]`, want: []string{"click (1,2) x2"}},
		{name: "click with modifier", in: `{"action":"left_click","coordinate":[1,2],"text":"shift"}`, want: []string{"key_down shift", "click (1,2)", "key_up shift"}},
		{name: "right middle triple", in: `[{"action":"right_click","coordinate":[1,2]},{"action":"middle_click","coordinate":[1,2]},{"action":"triple_click","coordinate":[1,2]}]`, want: []string{"click (1,2) right", "click (1,2) middle", "click (1,2) x3"}},
		{name: "key", in: `{"action":"key","text":"ctrl+s"}`, want: []string{"hotkey ctrl+s"}},
		{name: "key sequence", in: `{"action":"key","text":"Return Tab"}`, want: []string{"key enter", "key tab"}},
		{name: "type", in: `{"action":"type","text":"Hello, world"}`, want: []string{`type "Hello, world"`}},
		{name: "move", in: `{"action":"mouse_move","coordinate":[3,4]}`, want: []string{"move (3,4)"}},
		{name: "drag", in: `{"action":"left_click_drag","start_coordinate":[1,2],"coordinate":[3,4]}`, want: []string{"drag (1,2) to (3,4)"}},
		{name: "down up", in: `[{"action":"left_mouse_down"},{"action":"left_mouse_up","coordinate":[5,5]}]`, want: []string{"mouse_down", "mouse_up (5,5)"}},
		{name: "scroll", in: `{"action":"scroll","coordinate":[100,100],"scroll_direction":"down","scroll_amount":5}`, want: []string{"scroll (100,100) dx=0 dy=5"}},
		{name: "scroll left", in: `{"action":"scroll","scroll_direction":"left","scroll_amount":2}`, want: []string{"scroll dx=-2 dy=0"}},
		{name: "hold_key", in: `{"action":"hold_key","text":"shift","duration":1}`, want: []string{"key_down shift", "wait 1s", "key_up shift"}},
		{name: "wait", in: `{"action":"wait","duration":2}`, want: []string{"wait 2s"}},
		{name: "screenshot only", in: `{"action":"screenshot"}`, want: nil}, // a no-op step
		{name: "unknown", in: `{"action":"zoom","region":[0,0,1,1]}`, err: `unknown action "zoom"`},
		{name: "bad coordinate", in: `{"action":"left_click","coordinate":[1]}`, err: "coordinate must be an [x, y] pair"},
		{name: "bad direction", in: `{"action":"scroll","scroll_direction":"in"}`, err: "unknown scroll_direction"},
		{name: "bad key", in: `{"action":"key","text":"ctrl+hyper"}`, err: `unknown key "hyper"`},
		// A tool_use block's input is held to the same rules as a bare
		// input object.
		{name: "tool_use bad coordinate", in: `{"type":"tool_use","name":"computer","input":{"action":"left_click","coordinate":"x"}}`, err: "coordinate must be an [x, y] pair"},
		{name: "tool_use bad modifier", in: `{"type":"tool_use","name":"computer","input":{"action":"left_click","coordinate":[1,2],"text":"hyper"}}`, err: `unknown modifier key "hyper"`},
	})
}

func TestParseOpenAI(t *testing.T) {
	runParseCases(t, FormatOpenAI, []parseCase{
		{name: "computer_call click", in: `{"type":"computer_call","call_id":"c1","action":{"type":"click","button":"left","x":10,"y":20}}`, want: []string{"click (10,20)"}},
		{name: "response output", in: `{"id":"r","output":[{"type":"reasoning","summary":[]},{"type":"computer_call","action":{"type":"double_click","x":1,"y":2}}]}`, want: []string{"click (1,2) x2"}},
		{name: "right wheel", in: `[{"type":"click","button":"right","x":1,"y":2},{"type":"click","button":"wheel","x":1,"y":2}]`, want: []string{"click (1,2) right", "click (1,2) middle"}},
		{name: "back button", in: `{"type":"click","button":"back","x":1,"y":2}`, want: []string{"back"}},
		{name: "drag path", in: `{"type":"drag","path":[{"x":1,"y":2},{"x":5,"y":5},{"x":9,"y":9}]}`, want: []string{"drag (1,2) to (9,9)"}},
		{name: "keypress", in: `{"type":"keypress","keys":["CTRL","A"]}`, want: []string{"hotkey ctrl+a"}},
		{name: "keypress single", in: `{"type":"keypress","keys":["ENTER"]}`, want: []string{"key enter"}},
		{name: "move", in: `{"type":"move","x":3,"y":4}`, want: []string{"move (3,4)"}},
		{name: "scroll", in: `{"type":"scroll","x":100,"y":200,"scroll_x":0,"scroll_y":300}`, want: []string{"scroll (100,200) dx=0 dy=3"}},
		{name: "scroll small", in: `{"type":"scroll","x":1,"y":1,"scroll_x":-20,"scroll_y":0}`, want: []string{"scroll (1,1) dx=-1 dy=0"}},
		{name: "type", in: `{"type":"type","text":"abc"}`, want: []string{`type "abc"`}},
		{name: "wait", in: `{"type":"wait"}`, want: []string{"wait 2s"}},
		{name: "batched actions", in: `{"type":"computer_call","actions":[{"type":"move","x":1,"y":1},{"type":"click","x":1,"y":1}]}`, want: []string{"move (1,1)", "click (1,1)"}},
		{name: "missing x", in: `{"type":"click","y":2}`, err: "click needs x and y"},
		{name: "unknown", in: `{"type":"teleport"}`, err: `unknown action type "teleport"`},
		{name: "bad drag", in: `{"type":"drag","path":[{"x":1,"y":2}]}`, err: "at least two points"},
	})
}

func TestParseBrowserUse(t *testing.T) {
	runParseCases(t, FormatBrowserUse, []parseCase{
		{name: "wrapper", in: `{"current_state":{"next_goal":"log in"},"action":[{"go_to_url":{"url":"http://127.0.0.1:8080/","new_tab":false}},{"click_element_by_index":{"index":12}}]}`, want: []string{`navigate "http://127.0.0.1:8080/"`, "click #12"}},
		{name: "ctrl click", in: `{"action":[{"click_element_by_index":{"index":3,"while_holding_ctrl":true}}]}`, want: []string{"key_down ctrl", "click #3", "key_up ctrl"}},
		{name: "input", in: `{"action":[{"input_text":{"index":4,"text":"Shoe Case Support","clear_existing":true}}]}`, want: []string{`type #4 "Shoe Case Support" clear`}},
		{name: "tabs", in: `{"action":[{"switch_tab":{"tab_id":"a1"}},{"close_tab":{"tab_id":"a1"}},{"go_back":{}}]}`, want: []string{"tab_switch tab=a1", "tab_close tab=a1", "back"}},
		{name: "scroll", in: `{"action":[{"scroll":{"down":false,"num_pages":0.5}},{"scroll":{"down":true,"num_pages":2,"frame_element_index":7}}]}`, want: []string{"scroll pages=-0.5", "scroll #7 pages=2"}},
		{name: "scroll by pixels", in: `{"action":[{"scroll_down":{"amount":300}},{"scroll_up":{"amount":20}},{"scroll_down":{}}]}`, want: []string{"scroll dx=0 dy=3", "scroll dx=0 dy=-1", "scroll pages=1"}},
		{name: "scroll by negative pixels", in: `{"action":[{"scroll_down":{"amount":-5}}]}`, err: "not a count of pixels"},
		{name: "scroll to text", in: `{"action":[{"scroll_to_text":{"text":"Terms"}}]}`, want: []string{`scroll_to_text "Terms"`}},
		{name: "send keys", in: `{"action":[{"send_keys":{"keys":"Control+a"}},{"send_keys":{"keys":"Escape"}}]}`, want: []string{"hotkey ctrl+a", "key esc"}},
		{name: "dropdown", in: `{"action":[{"get_dropdown_options":{"index":5}},{"select_dropdown_option":{"index":5,"text":"Public Read Only"}}]}`, want: []string{"api get_dropdown_options index=5", `select #5 "Public Read Only"`}},
		{name: "wait", in: `{"action":[{"wait":{"seconds":2}}]}`, want: []string{"wait 2s"}},
		{name: "done", in: `{"action":[{"done":{"text":"Queue created","success":true}}]}`, want: []string{`done "Queue created"`}},
		{name: "done failed", in: `{"action":[{"done":{"text":"Cannot find the object","success":false}}]}`, want: []string{`fail "Cannot find the object"`}},
		{name: "files", in: `[{"write_file":{"file_name":"a.md","content":"x","append":false}},{"read_file":{"file_name":"a.md"}}]`, want: []string{`api write_file append=false content="x" file_name="a.md"`, `api read_file file_name="a.md"`}},
		{name: "unknown", in: `{"action":[{"teleport":{}}]}`, err: `unknown browser-use action "teleport"`},
		{name: "missing index", in: `{"action":[{"click_element_by_index":{}}]}`, err: "index is required"},
		{name: "two names", in: `[{"go_back":{},"wait":{}}]`, err: "one {name: params} object"},
	})
}

func TestParseProBench(t *testing.T) {
	runParseCases(t, FormatProBench, []parseCase{
		{name: "click", in: "Thought: tap search\nAction: CLICK(540, 1200)", want: []string{"click (540,1200)"}},
		{name: "click k", in: "CLICK <540, 120>", unit: Thousand, want: []string{"click (540,120)k"}},
		{name: "swipe coords", in: "SWIPE(100, 900, 100, 300)", want: []string{"swipe (100,900) to (100,300) 0.5s"}},
		{name: "swipe up", in: "SWIPE [UP]", want: []string{"swipe (0.5,0.7)ratio to (0.5,0.3)ratio 0.5s"}},
		{name: "type", in: `TYPE [New York]`, want: []string{`type "New York"`}},
		{name: "type quoted", in: `TYPE("sushi")`, want: []string{`type "sushi"`}},
		{name: "enter back complete wait", in: "ENTER\nBACK\nWAIT\nWAIT(2)\nCOMPLETE", want: []string{"key enter", "back", "wait 5s", "wait 2s", "done"}},
		{name: "bad click", in: "CLICK(5)", err: "CLICK needs x and y"},
		{name: "bad swipe", in: "SWIPE(1,2,3)", err: "SWIPE needs"},
		{name: "empty type", in: "TYPE []", err: "TYPE needs text"},
		{name: "nothing", in: "tap the thing", err: "no CLICK"},
	})
}

func TestParseJSON(t *testing.T) {
	runParseCases(t, FormatJSON, []parseCase{
		{name: "one", in: `{"kind":"click","target":{"role":"push button","name":"Save"}}`, want: []string{`click push button "Save"`}},
		{name: "list", in: `[{"kind":"type","text":"hi"},{"kind":"hotkey","keys":["ctrl","s"]},{"kind":"answer","text":"4"}]`, want: []string{`type "hi"`, "hotkey ctrl+s", `answer "4"`}},
		{name: "unknown field", in: `{"kind":"click","colour":"red"}`, err: "unknown field"},
		{name: "invalid action", in: `{"kind":"type"}`, err: "type needs text"},
		{name: "unknown kind", in: `{"kind":"jump"}`, err: "unknown action kind"},
	})
}

func TestParseUnknownFormat(t *testing.T) {
	if _, err := Parse("smoke-signals", "x", Options{}); err == nil || !strings.Contains(err.Error(), "unknown output format") {
		t.Fatalf("err = %v", err)
	}
}
