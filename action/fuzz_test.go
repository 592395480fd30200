package action

import (
	"testing"
)

// fuzzParser checks that a parser never panics and that every action it
// returns is valid.
func fuzzParser(f *testing.F, format Format, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		acts, err := Parse(format, reply, Options{})
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		for _, a := range acts {
			if verr := a.Validate(); verr != nil {
				t.Fatalf("invalid action %v: %v", a, verr)
			}
		}
	})
}

func FuzzPyAutoGUI(f *testing.F) {
	fuzzParser(f, FormatPyAutoGUI, "```python\npyautogui.click(100, 200)\n```", "DONE", "WAIT 3", "ANS 42",
		"```python\npyautogui.hotkey('ctrl', 'c'); time.sleep(0.5)\npyautogui.write('''x\ny''')\n```",
		"pyautogui.dragTo(tag_1, button='left')", "```python\npyautogui.scroll(-3, x=1, y=2)\n```")
}

func FuzzScreenAgent(f *testing.F) {
	fuzzParser(f, FormatScreenAgent, `{"action_type":"MouseAction","mouse_action_type":"click","mouse_button":"left","mouse_position":{"width":1,"height":2}}`,
		`[{"action_type":"KeyboardAction","keyboard_action_type":"press","keyboard_key":"Ctrl+A"}]`, "```json\n{\"action_type\":\"WaitAction\"}\n```")
}

func FuzzOSAtlas(f *testing.F) {
	fuzzParser(f, FormatOSAtlas, "CLICK <point>[[101, 872]]</point>", "TYPE [hello]", "SCROLL [UP]",
		"Click the box.\nDOUBLE_CLICK <point>[[1, 2]]</point>\nPRESS_PAGE DOWN\nHOTKEY [ctrl+c]", "DRAG <point>[[1, 2]]</point> <point>[[3, 4]]</point>",
		"```WAIT 3```\nPRESS_BACK\nOPEN_APP [x]\nCOMPLETE",
		"DOUBLECLICK <point>[[1,2]]</point>\nRIGHTCLICK <point>[[1,2]]</point>\nMOVETO <point>[[1,2]]</point>\nHOTKEY [CTRL_A]",
		"Double-Click <point>[[1,2]]</point>\nPRESS_CTRL_PAGE_DOWN\nHOTKEY [ctrl_-]\nPRESSENTER\nOPENAPP Clock\nSCROLL_UP\nIMPOSSIBLE")
}

func FuzzUITARS(f *testing.F) {
	fuzzParser(f, FormatUITARS, "Thought: x\nAction: click(start_box='(1,2)')", "Action: type(content='a\\n')",
		"Action: drag(start_box='(1,2,3,4)', end_box='(5,6)')", "Action: finished(content='ok')")
}

func FuzzAnthropic(f *testing.F) {
	fuzzParser(f, FormatAnthropic, `{"action":"left_click","coordinate":[1,2]}`, `{"action":"key","text":"ctrl+s"}`,
		`{"action":"scroll","coordinate":[1,2],"scroll_direction":"down","scroll_amount":3}`)
}

func FuzzOpenAI(f *testing.F) {
	fuzzParser(f, FormatOpenAI, `{"type":"computer_call","action":{"type":"click","x":1,"y":2}}`,
		`{"type":"drag","path":[{"x":1,"y":2},{"x":3,"y":4}]}`, `{"type":"keypress","keys":["CTRL","C"]}`)
}

func FuzzBrowserUse(f *testing.F) {
	fuzzParser(f, FormatBrowserUse, `{"action":[{"click_element_by_index":{"index":1}}]}`,
		`{"action":[{"input_text":{"index":2,"text":"x"}},{"done":{"text":"ok","success":true}}]}`,
		`I see [1, 2]. {"action":[{"go_back":{}}`, "```json\n{\"action\":[{\"go_back\":{}}]}\n```\n{\"action\": [")
}

func FuzzProBench(f *testing.F) {
	fuzzParser(f, FormatProBench, "CLICK(1, 2)", "SWIPE [UP]", "TYPE [abc]\nENTER", "COMPLETE")
}

func FuzzJSON(f *testing.F) {
	fuzzParser(f, FormatJSON, `{"kind":"click","point":{"x":1,"y":2}}`, `[{"kind":"done"}]`)
}
