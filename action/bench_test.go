package action

import "testing"

var benchReplies = map[Format]string{
	FormatPyAutoGUI: "The Save button is at the top left. I will click it and then confirm.\n```python\n" +
		"import pyautogui\nimport time\npyautogui.click(x=153, y=87)\ntime.sleep(0.5)\n" +
		"pyautogui.typewrite('report-2026.ods', interval=0.02)\npyautogui.press('enter')\n```",
	FormatScreenAgent: "```json\n[{\"action_type\":\"MouseAction\",\"mouse_action_type\":\"click\",\"mouse_button\":\"left\"," +
		"\"mouse_position\":{\"width\":368,\"height\":319}},{\"action_type\":\"KeyboardAction\"," +
		"\"keyboard_action_type\":\"text\",\"keyboard_text\":\"hello\"}]\n```",
	FormatUITARS:    "Thought: The search box is at the top.\nAction: click(start_box='<|box_start|>(235,512)<|box_end|>')",
	FormatAnthropic: `{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"left_click","coordinate":[512,384]}}`,
	FormatOpenAI:    `{"type":"computer_call","call_id":"c1","action":{"type":"click","button":"left","x":512,"y":384}}`,
	FormatOSAtlas:   "The plan says to click the menu.\nCLICK <point>[[101, 872]]</point>",
	FormatBrowserUse: `{"current_state":{"evaluation_previous_goal":"ok","memory":"","next_goal":"search"},` +
		`"action":[{"input_text":{"index":4,"text":"shoes"}},{"click_element_by_index":{"index":5}}]}`,
	FormatProBench: "Thought: open the filter\nAction: CLICK(540, 1200)",
}

func BenchmarkParse(b *testing.B) {
	for _, f := range Formats() {
		reply, ok := benchReplies[f]
		if !ok {
			continue
		}
		b.Run(string(f), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(f, reply, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
