package action

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Canonical key names are lower case: modifiers ctrl, alt, shift, super;
// named keys such as enter, tab, esc, backspace, delete, space, up, down,
// left, right, home, end, pageup, pagedown, insert, capslock, f1..f24,
// printscreen, menu; and any single character as itself ("a", "7", "é").
var keyAliases = map[string]string{
	"control": "ctrl", "control_l": "ctrl", "control_r": "ctrl", "ctrl_l": "ctrl", "ctrl_r": "ctrl",
	"ctrlleft": "ctrl", "ctrlright": "ctrl", "lctrl": "ctrl", "rctrl": "ctrl", "cmd": "super",
	"command": "super", "win": "super", "windows": "super", "winleft": "super", "winright": "super",
	"super_l": "super", "super_r": "super", "meta": "super", "meta_l": "super", "os": "super",
	"alt_l": "alt", "alt_r": "alt", "altleft": "alt", "altright": "alt", "option": "alt", "lalt": "alt",
	"shift_l": "shift", "shift_r": "shift", "shiftleft": "shift", "shiftright": "shift", "lshift": "shift",
	"return": "enter", "kp_enter": "enter", "\n": "enter", "\r": "enter",
	"escape": "esc", "back_space": "backspace", "bksp": "backspace", "del": "delete",
	"pgup": "pageup", "prior": "pageup", "page_up": "pageup", "pgdn": "pagedown", "next": "pagedown",
	"page_down": "pagedown", "arrowup": "up", "arrowdown": "down", "arrowleft": "left",
	"arrowright": "right", "spacebar": "space", " ": "space", "\t": "tab", "iso_left_tab": "tab",
	"caps_lock": "capslock", "print": "printscreen", "prtsc": "printscreen", "prtscn": "printscreen",
	"printscrn": "printscreen", "prntscrn": "printscreen", "apps": "menu", "ins": "insert",
	"plus": "+", "minus": "-", "comma": ",", "period": ".", "slash": "/", "backslash": "\\",
	"semicolon": ";", "apostrophe": "'", "grave": "`", "equal": "=", "bracketleft": "[",
	"bracketright": "]",
}

// keypadKeys maps the names after "KP_" in X keypad keysyms.
var keypadKeys = map[string]string{
	"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "decimal": ".", "separator": ",",
	"equal": "=", "space": "space", "tab": "tab", "begin": "home",
}

var namedKeys = map[string]bool{
	"ctrl": true, "alt": true, "shift": true, "super": true, "enter": true, "tab": true, "esc": true,
	"backspace": true, "delete": true, "space": true, "up": true, "down": true, "left": true,
	"right": true, "home": true, "end": true, "pageup": true, "pagedown": true, "insert": true,
	"capslock": true, "numlock": true, "scrolllock": true, "pause": true, "printscreen": true,
	"menu": true, "volumeup": true, "volumedown": true, "volumemute": true,
}

// NormalizeKey maps a key name from any agent convention (pyautogui, xdotool
// keysyms, DOM key names, "CTRL") to Proctor's canonical name. ok is false for
// a name that is not a key.
func NormalizeKey(name string) (key string, ok bool) {
	if utf8.RuneCountInString(name) == 1 {
		if c, found := keyAliases[name]; found {
			return c, true
		}
		return strings.ToLower(name), true
	}
	l := strings.ToLower(strings.TrimSpace(name))
	if l == "" {
		return "", false
	}
	if utf8.RuneCountInString(l) == 1 {
		return l, true
	}
	if c, found := keyAliases[l]; found {
		return c, true
	}
	if namedKeys[l] {
		return l, true
	}
	// X keypad keysyms: KP_0..KP_9, KP_Enter, KP_Add, KP_Page_Down...
	if rest, found := strings.CutPrefix(l, "kp_"); found && rest != "" {
		if len(rest) == 1 && rest[0] >= '0' && rest[0] <= '9' {
			return rest, true
		}
		if c, found := keypadKeys[rest]; found {
			return c, true
		}
		if utf8.RuneCountInString(rest) > 1 {
			return NormalizeKey(rest)
		}
		return "", false
	}
	if l[0] == 'f' && len(l) <= 3 {
		n := 0
		for _, c := range l[1:] {
			if c < '0' || c > '9' {
				return "", false
			}
			n = n*10 + int(c-'0')
		}
		if n >= 1 && n <= 24 {
			return l, true
		}
	}
	return "", false
}

// normalizeKeys maps every name, failing on the first that is not a key.
func normalizeKeys(names []string) ([]string, string, bool) {
	out := make([]string, 0, len(names))
	for _, n := range names {
		k, ok := NormalizeKey(n)
		if !ok {
			return nil, n, false
		}
		out = append(out, k)
	}
	return out, "", true
}

// splitCombo splits "ctrl+shift+t" or "Control_L+a" into key names; a
// trailing "+" is the plus key itself ("ctrl++").
func splitCombo(s string) []string {
	s = strings.TrimSpace(s)
	if s == "+" {
		return []string{"+"}
	}
	var parts []string
	if strings.HasSuffix(s, "++") {
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
	} else {
		parts = strings.Split(s, "+")
	}
	out := parts[:0]
	for _, p := range parts {
		if p != "+" {
			p = strings.TrimSpace(p)
		}
		out = append(out, p)
	}
	return out
}

// comboAction turns "ctrl+c" (or ["ctrl", "c"]) into a Key or Hotkey action.
func comboAction(names []string) (Action, error) {
	keys, bad, ok := normalizeKeys(names)
	if !ok {
		return Action{}, fmt.Errorf("unknown key %q", bad)
	}
	if len(keys) == 1 {
		return Action{Kind: Key, Keys: keys}, nil
	}
	return Action{Kind: Hotkey, Keys: keys}, nil
}

// Combo turns a key combination as a person writes it ("ctrl+s", "Return",
// "ctrl+shift+t") into a Key action (one key) or a Hotkey action (several
// pressed together). The key names are those NormalizeKey knows.
func Combo(s string) (Action, error) {
	if strings.TrimSpace(s) == "" {
		return Action{}, fmt.Errorf("no key given")
	}
	return comboAction(splitCombo(s))
}
