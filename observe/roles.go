package observe

import (
	"slices"
	"strings"
	"unicode"
)

// CanonicalRole is a role as the tree prints it and as targets and checks
// name it: lower case, its words joined by one space. The desktop's
// AT-SPI names are already so ("toggle button"); "toggle-button",
// "Toggle_Button" and "TOGGLE BUTTON" are the same role.
func CanonicalRole(r string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(r), func(c rune) bool {
		return unicode.IsSpace(c) || c == '-' || c == '_'
	}), " ")
}

// SameRole reports whether two spellings name one role.
func SameRole(a, b string) bool { return CanonicalRole(a) == CanonicalRole(b) }

// knownRoles are the roles the environments' trees give: the desktop's
// (the role names of AT-SPI and of the toolkits' bridges to it: GTK's
// spell a few differently, Qt's give Qt's own names, such as "spin box"
// and "cell"), and those the browser's and the Android device's trees map
// theirs to.
var knownRoles = func() []string {
	var rs []string
	for _, r := range strings.Split(`accelerator label, alert, animation, application, arrow, article, audio,
		autocomplete, block quote, button, calendar, canvas, caption, chart, check box, check button,
		check menu item, color chooser, column header, combo box, combo box text, comment,
		content deletion, content insertion, date editor, dateeditor, definition, description list,
		description term, description value, desktop frame, desktop icon, dial, dialog,
		directory pane, document, document email, document frame, document presentation,
		document spreadsheet, document text, document web, drawing area, edit bar, editbar,
		embedded, embedded component, entry, extended, file chooser, filler, focus traversable,
		font chooser, fontchooser, footer, footnote, form, frame, glass pane, grouping, header,
		heading, html container, icon, image, image map, info bar, input method window,
		internal frame, invalid, label, landmark, layered pane, level bar, link, list, list box,
		list item, log, mark, marquee, math, math fraction, math root, menu, menu bar, menu button,
		menu item, notification, option pane, page, page tab, page tab list, panel, paragraph,
		password text, popup menu, progress bar, push button, push button menu, radio button,
		radio menu item, rating, redundant object, root pane, row header, ruler, scroll bar,
		scroll pane, search box, section, separator, slider, spin button, split button,
		split pane, static, status bar, statusbar, subscript, suggestion, superscript, switch,
		table, table cell, table column header, table row, table row header, tear off menu item,
		tearoff menu item, terminal, text, text box, timer, title bar, toggle button, tool bar,
		tool bar item, tool tip, tree, tree item, tree table, unknown, video, viewport, window,
		alert message, assistant, border, button drop down, button drop grid, caret, cell, clock,
		column, cursor, equation, graphic, grip, help balloon, hotkey field, indicator,
		invalid role, pane, property page, radio box, row, sound, spin box, splitter, user role,
		whitespace`, ",") {
		rs = append(rs, CanonicalRole(r))
	}
	slices.Sort(rs)
	return slices.Compact(rs)
}()

// KnownRoles lists the roles the environments' trees give, sorted.
func KnownRoles() []string { return slices.Clone(knownRoles) }

// KnownRole reports whether a role, in any spelling, is one of
// KnownRoles. A browser page may still give a role outside the list (an
// ARIA role Proctor does not map is kept as the page writes it).
func KnownRole(r string) bool {
	_, ok := slices.BinarySearch(knownRoles, CanonicalRole(r))
	return ok
}
