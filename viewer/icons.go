package viewer

import (
	"html/template"
	"strings"

	"github.com/proctor-eval/proctor/action"
)

// iconPaths are the viewer's icons, drawn as SVG paths on a 16 by 16
// grid in the text's colour: no glyph of a font is needed (an emoji font
// is missing from many installs). A path starting with "F" is filled,
// the others stroked.
var iconPaths = map[string]string{
	"click":    "FM3 1.5v12l3-3 2.4 5 2-1-2.4-4.8H12z",
	"drag":     "M1.5 8h13M4.5 5l-3 3 3 3M11.5 5l3 3-3 3",
	"scroll":   "M8 1.5v13M5 4.5l3-3 3 3M5 11.5l3 3 3-3",
	"keys":     "M1.5 4.5h13v8h-13zM4 7.5h1M7.5 7.5h1M11 7.5h1M4.5 10h7",
	"select":   "M2.5 4h11M2.5 8h11M2.5 12h11",
	"navigate": "M8 1.5a6.5 6.5 0 1 0 0 13a6.5 6.5 0 1 0 0-13M1.5 8h13M8 1.5c-3 3.5-3 9.5 0 13M8 1.5c3 3.5 3 9.5 0 13",
	"back":     "M14.5 8h-13M5.5 4l-4 4 4 4",
	"pass":     "M2.5 8.5l3.5 3.5 7.5-8",
	"fail":     "M3.5 3.5l9 9M12.5 3.5l-9 9",
	"answer":   "M1.5 2.5h13v9h-7l-3.5 3v-3h-2.5z",
	"wait":     "M3.5 1.5h9M3.5 14.5h9M4.5 1.5c0 4 7 5 7 13M11.5 1.5c0 4-7 5-7 13",
	"code":     "M2 4l4 4-4 4M8 12.5h6",
	"api":      "M6 1.5c-2 0-2 1-2 3s-.5 3.5-2 3.5c1.5 0 2 1.5 2 3.5s0 3 2 3M10 1.5c2 0 2 1 2 3s.5 3.5 2 3.5c-1.5 0-2 1.5-2 3.5s0 3-2 3",
	"move":     "M2.5 13.5l11-11M6.5 2.5h7v7",
	"write":    "M2 14l1-4 8-8 3 3-8 8zM9.5 3.5l3 3",
	"other":    "FM8 6a2 2 0 1 0 0 4a2 2 0 1 0 0-4",
	"prev":     "FM11.5 2v12L3 8z",
	"next":     "FM4.5 2v12L13 8z",
}

// actionIcons name the filmstrip's sign of each kind of action.
var actionIcons = map[action.Kind]string{
	action.Click: "click", action.Drag: "drag", action.DragRel: "drag", action.Swipe: "drag", action.Scroll: "scroll",
	action.Type: "keys", action.Key: "keys", action.Hotkey: "keys", action.Select: "select", action.Navigate: "navigate",
	action.Back: "back", action.Done: "pass", action.Fail: "fail", action.Answer: "answer", action.Wait: "wait",
	action.Code: "code", action.API: "api", action.Move: "move", action.ScrollToText: "scroll", action.Plan: "write",
	action.Reflect: "write",
}

// icon draws the named icon as inline SVG; label, when given, is what a
// screen reader says (else the icon is hidden from it).
func icon(name, label string) template.HTML {
	d, ok := iconPaths[name]
	if !ok {
		d = iconPaths["other"]
	}
	paint := `fill="none" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" stroke-linejoin="round"`
	if rest, filled := strings.CutPrefix(d, "F"); filled {
		d, paint = rest, `fill="currentColor"`
	}
	a11y := `aria-hidden="true"`
	if label != "" {
		a11y = `role="img" aria-label="` + template.HTMLEscapeString(label) + `"`
	}
	return template.HTML(`<svg class="icon icon-` + name + `" viewBox="0 0 16 16" width="1em" height="1em" ` + a11y + `><path d="` + d + `" ` + paint + `/></svg>`)
}
