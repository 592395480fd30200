package pagetree

import (
	"strings"

	"github.com/chromedp/cdproto/accessibility"
)

// textHolders are the roles whose node holds the text of its text
// children (see builder.convert).
var textHolders = map[string]bool{"paragraph": true, "heading": true, "status bar": true, "notification": true,
	"label": true, "table cell": true, "list item": true, "description term": true}

// roles maps Chromium's AX roles (ARIA roles and its own, such as
// StaticText) to the role names the desktop's accessibility tree (AT-SPI)
// uses, so that observe's filters treat web and desktop elements alike.
// Roles that are not here are lower-cased as they are. A page's document
// is "document", not the desktop's "document web": the whole viewport is
// no element an agent picks, and set-of-mark does not number it.
var roles = map[string]string{
	"RootWebArea": "document", "WebArea": "document", "Iframe": "frame", "IframePresentational": "frame",
	"button": "push button", "link": "link", "textbox": "entry", "searchbox": "entry",
	"checkbox": "check box", "radio": "radio button", "combobox": "combo box", "listbox": "list box",
	"option": "list item", "listitem": "list item", "MenuListOption": "list item", "MenuListPopup": "menu",
	"menuitem": "menu item", "menuitemcheckbox": "check menu item", "menuitemradio": "radio menu item",
	"menu": "menu", "menubar": "menu bar", "tab": "page tab", "tablist": "page tab list", "tabpanel": "scroll pane",
	"switch": "switch", "slider": "slider", "spinbutton": "spin button", "heading": "heading",
	"StaticText": "static", "ListMarker": "static", "LabelText": "label", "legend": "label",
	"image": "image", "img": "image", "SvgRoot": "image", "Canvas": "canvas", "Video": "video", "Audio": "audio",
	"paragraph": "paragraph", "list": "list", "DescriptionList": "description list", "term": "description term",
	"definition": "description value", "table": "table", "grid": "table", "treegrid": "tree table",
	"LayoutTable": "table", "row": "table row", "LayoutTableRow": "table row", "cell": "table cell",
	"gridcell": "table cell", "LayoutTableCell": "table cell", "columnheader": "table column header",
	"rowheader": "table row header", "rowgroup": "panel", "caption": "caption", "figcaption": "caption",
	"generic": "section", "group": "panel", "figure": "panel", "Details": "panel", "DisclosureTriangle": "toggle button",
	"form": "form", "navigation": "landmark", "main": "landmark", "banner": "landmark", "contentinfo": "landmark",
	"complementary": "landmark", "region": "landmark", "search": "landmark", "dialog": "dialog",
	"alertdialog": "alert", "alert": "notification", "status": "status bar", "toolbar": "tool bar",
	"tooltip": "tool tip", "tree": "tree", "treeitem": "tree item", "progressbar": "progress bar",
	"meter": "level bar", "separator": "separator", "scrollbar": "scroll bar", "article": "article",
	"blockquote": "block quote", "ColorWell": "push button", "application": "embedded", "document": "document frame",
	"note": "comment", "math": "math", "log": "log", "timer": "timer", "marquee": "marquee",
}

// dropped AX roles carry nothing a person sees as an element of its own.
var dropped = map[string]bool{"InlineTextBox": true, "LineBreak": true}

// plain AX roles are structure only: without a name, and when nothing
// reacts to a click or focus on them, their children take their place.
var plain = map[string]bool{"generic": true, "none": true, "presentation": true, "": true,
	"rowgroup": true, "Section": true}

// role maps an AX node's role to the desktop's name for it.
func role(n *axNode, password bool) string {
	r := n.role()
	switch {
	case r == "textbox" && password:
		return "password text"
	case r == "button" && n.prop(accessibility.PropertyNamePressed) != nil:
		return "toggle button"
	}
	if d, ok := roles[r]; ok {
		return d
	}
	return strings.ToLower(r)
}

// states derives the desktop's (AT-SPI) state names from an AX node's
// properties and from whether the page renders it.
func states(n *axNode, visible bool) []string {
	var s []string
	if visible {
		s = append(s, "visible", "showing")
	}
	if !n.is(accessibility.PropertyNameDisabled) {
		s = append(s, "enabled", "sensitive")
	}
	flag := func(p accessibility.PropertyName, state string) {
		if n.is(p) {
			s = append(s, state)
		}
	}
	flag(accessibility.PropertyNameFocusable, "focusable")
	flag(accessibility.PropertyNameFocused, "focused")
	if v := n.prop(accessibility.PropertyNameEditable); v.text() != "" {
		s = append(s, "editable")
	}
	flag(accessibility.PropertyNameReadonly, "read only")
	flag(accessibility.PropertyNameRequired, "required")
	flag(accessibility.PropertyNameMultiselectable, "multiselectable")
	flag(accessibility.PropertyNameModal, "modal")
	if v := n.prop(accessibility.PropertyNameMultiline); v != nil {
		if v.isTrue() {
			s = append(s, "multi line")
		} else {
			s = append(s, "single line")
		}
	}
	for _, t := range []struct {
		p         accessibility.PropertyName
		can, is   string
		mixedName string
	}{
		{accessibility.PropertyNameChecked, "checkable", "checked", "indeterminate"},
		{accessibility.PropertyNamePressed, "checkable", "pressed", "indeterminate"},
		{accessibility.PropertyNameSelected, "selectable", "selected", ""},
		{accessibility.PropertyNameExpanded, "expandable", "expanded", ""},
	} {
		v := n.prop(t.p)
		if v == nil {
			continue
		}
		s = append(s, t.can)
		switch {
		case v.isTrue():
			s = append(s, t.is)
		case t.mixedName != "" && v.str() == "mixed":
			s = append(s, t.mixedName)
		}
	}
	return s
}
