package score

import "strings"

// ScreenAgent's reference compares the keys of keyboard actions as its
// KeyboardAction converter writes them. The converter maps a few short
// names (ctrl, alt, shift, win, tab, enter, esc, backspace, delete, up,
// down, printscreen) to X keysyms; any other key of a combination is
// lower-cased, and a single key takes its keysym's spelling ("f5" is F5,
// "left" is Left). screenAgentKeys writes Proctor's canonical key names
// the way that converter writes a reply spelled as ScreenAgent's prompt
// asks: modifiers by their short names ("Ctrl+A"), other keys by their
// keysyms. The converter's output depends on the spelling, which parsing
// has normalised away: "Control_L+s" written as a keysym comes out as
// "control_l+s", not "Control_L+s".

// saConverted is the converter's table, indexed by Proctor's names ("win"
// is Proctor's "super").
var saConverted = map[string]string{
	"super": "Super_L", "ctrl": "Control_L", "alt": "Alt_L", "shift": "Shift_L",
	"tab": "Tab", "enter": "Return", "esc": "Escape", "backspace": "BackSpace",
	"delete": "Delete", "up": "Up", "down": "Down", "printscreen": "3270_PrintScreen",
}

// saKeysyms spells a single key that the converter's table lacks as its X
// keysym. The converter finds a keysym by its lower-case name, so a name
// that is not one (pageup, "+") is written as the keysym ScreenAgent's
// annotation tool records for that key (Page_Up, plus).
var saKeysyms = map[string]string{
	"left": "Left", "right": "Right", "home": "Home", "end": "End",
	"pageup": "Page_Up", "pagedown": "Page_Down", "insert": "Insert",
	"capslock": "Caps_Lock", "numlock": "Num_Lock", "scrolllock": "Scroll_Lock",
	"pause": "Pause", "menu": "Menu", "space": "space",
	"volumeup": "XF86AudioRaiseVolume", "volumedown": "XF86AudioLowerVolume",
	"volumemute": "XF86AudioMute",
	"!":          "exclam", `"`: "quotedbl", "#": "numbersign", "$": "dollar", "%": "percent",
	"&": "ampersand", "'": "apostrophe", "(": "parenleft", ")": "parenright",
	"*": "asterisk", "+": "plus", ",": "comma", "-": "minus", ".": "period",
	"/": "slash", ":": "colon", ";": "semicolon", "<": "less", "=": "equal",
	">": "greater", "?": "question", "@": "at", "[": "bracketleft",
	`\`: "backslash", "]": "bracketright", "^": "asciicircum", "_": "underscore",
	"`": "grave", "{": "braceleft", "|": "bar", "}": "braceright", "~": "asciitilde",
}

// screenAgentKeys joins keys (Proctor's canonical names) with "+" in
// ScreenAgent's spelling: ["ctrl", "c"] is "Control_L+c", ["alt", "f4"]
// "Alt_L+f4", ["ctrl", "pageup"] "Control_L+page_up", ["enter"] "Return",
// ["f5"] "F5".
func screenAgentKeys(keys []string) string {
	if len(keys) == 1 {
		k := keys[0]
		if s, ok := saConverted[k]; ok {
			return s
		}
		if s, ok := saKeysyms[k]; ok {
			return s
		}
		if len(k) >= 2 && k[0] == 'f' && k[1] >= '1' && k[1] <= '9' {
			return "F" + k[1:] // f1..f24
		}
		return k // letters and digits are their own keysyms
	}
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('+')
		}
		if s, ok := saConverted[k]; ok {
			b.WriteString(s)
		} else if s, ok := saKeysyms[k]; ok && len(k) > 1 {
			b.WriteString(strings.ToLower(s)) // page_up, caps_lock
		} else {
			b.WriteString(strings.ToLower(k)) // f4, a, `
		}
	}
	return b.String()
}
