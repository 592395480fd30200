package action

import (
	"encoding/json"
	"fmt"
	"math"
)

// ParseBrowserUse parses browser-use output: {"action": [{"name": {...}}]}
// or the action objects alone. Tools outside the unified space (files,
// dropdown listing, search, extraction) become API actions of that name.
func ParseBrowserUse(reply string, o Options) ([]Action, error) {
	var one func(j *jobj) ([]Action, error)
	one = func(j *jobj) ([]Action, error) {
		if j.has("action") { // the model output wrapper, with thoughts beside it
			var list []map[string]json.RawMessage
			if err := json.Unmarshal(j.m["action"], &list); err != nil {
				var single map[string]json.RawMessage
				if err2 := json.Unmarshal(j.m["action"], &single); err2 != nil {
					return nil, fmt.Errorf("action must be a list of {name: params} objects")
				}
				list = []map[string]json.RawMessage{single}
			}
			return j.each(list, one), nil
		}
		if len(j.m) != 1 {
			return nil, fmt.Errorf("each action must be one {name: params} object")
		}
		var name string
		for k := range j.m {
			name = k
		}
		p := j.obj(name)
		if j.err != nil {
			return nil, j.err
		}
		var out []Action
		switch name {
		case "go_to_url", "open_tab":
			out = []Action{{Kind: Navigate, Text: p.str("url"), NewTab: p.boolean("new_tab") || name == "open_tab"}}
		case "go_back":
			out = []Action{{Kind: Back}}
		case "click_element_by_index", "click_element":
			a := Action{Kind: Click, Target: &Target{Index: p.index("index")}}
			if p.boolean("while_holding_ctrl") {
				out = []Action{{Kind: KeyDown, Keys: []string{"ctrl"}}, a, {Kind: KeyUp, Keys: []string{"ctrl"}}}
			} else {
				out = []Action{a}
			}
		case "input_text":
			out = []Action{{Kind: Type, Target: &Target{Index: p.index("index")}, Text: p.str("text"), Clear: p.boolean("clear_existing")}}
		case "switch_tab", "close_tab":
			id := p.str("tab_id")
			if id == "" && p.has("page_id") {
				id = fmt.Sprintf("%g", p.num("page_id"))
			}
			if id == "" {
				return nil, fmt.Errorf("%s needs tab_id", name)
			}
			k := TabSwitch
			if name == "close_tab" {
				k = TabClose
			}
			out = []Action{{Kind: k, Tab: id}}
		case "scroll", "scroll_down", "scroll_up":
			pages := 1.0
			if p.has("num_pages") {
				pages = p.num("num_pages")
			}
			down := name == "scroll_down" || (name == "scroll" && (!p.has("down") || p.boolean("down")))
			if !down {
				pages = -pages
			}
			a := Action{Kind: Scroll, Pages: pages}
			if p.has("amount") && !p.has("num_pages") {
				// Older versions scroll by pixels: wheel notches of
				// BrowserNotch pixels, one at least.
				px := p.num("amount")
				if px < 0 || math.IsNaN(px) {
					return nil, fmt.Errorf("%s: amount %g is not a count of pixels", name, px)
				}
				notches := max(1, int(math.Round(px/BrowserNotch)))
				if !down {
					notches = -notches
				}
				a = Action{Kind: Scroll, DY: notches}
			}
			if p.has("frame_element_index") {
				a.Target = &Target{Index: p.index("frame_element_index")}
			}
			out = []Action{a}
		case "scroll_to_text":
			out = []Action{{Kind: ScrollToText, Text: p.str("text")}}
		case "send_keys":
			keys := p.str("keys")
			if a, err := comboAction(splitCombo(keys)); err == nil {
				out = []Action{a}
			} else {
				out = []Action{{Kind: Type, Text: keys}}
			}
		case "select_dropdown_option":
			out = []Action{{Kind: Select, Target: &Target{Index: p.index("index")}, Text: p.str("text")}}
		case "wait":
			d := 3.0
			if p.has("seconds") {
				d = p.num("seconds")
			}
			out = []Action{{Kind: Wait, Duration: d}}
		case "done":
			if p.has("success") && !p.boolean("success") {
				out = []Action{{Kind: Fail, Text: p.str("text")}}
			} else {
				out = []Action{{Kind: Done, Text: p.str("text")}}
			}
		case "get_dropdown_options", "upload_file_to_element", "upload_file", "write_file", "replace_file_str",
			"read_file", "search_google", "extract_structured_data", "extract_content":
			var args map[string]any
			if len(p.m) > 0 {
				b, _ := json.Marshal(p.m)
				_ = json.Unmarshal(b, &args)
			}
			out = []Action{{Kind: API, Name: name, Args: args}}
		default:
			return nil, fmt.Errorf("unknown browser-use action %q", name)
		}
		if p.err != nil {
			return nil, fmt.Errorf("%s: %v", name, p.err)
		}
		return out, nil
	}
	return parseObjects(FormatBrowserUse, reply, one)
}

// BrowserNotch is how far one wheel notch scrolls a page in the browser
// environment, in CSS pixels: a browser-use scroll by an amount of pixels
// becomes that many notches.
const BrowserNotch = 100
