package action

import (
	"strings"
	"testing"
)

// The spellings OS-Atlas's own answers and the converters around its format
// write: its OmniAct action set fuses DOUBLECLICK, RIGHTCLICK and MOVETO and
// joins a hotkey's keys with underscores (HOTKEY [CTRL_A]); its mobile sets
// write LONG_PRESS, PRESS_RECENT and IMPOSSIBLE; converters write LONG_CLICK
// and OPENAPP with a bare name. A verb is one verb in every case and with
// its words joined by underscores, hyphens, spaces or nothing.
func TestParseOSAtlasSpellings(t *testing.T) {
	runParseCases(t, FormatOSAtlas, []parseCase{
		{name: "omniact fused verbs", in: "DOUBLECLICK <point>[[101,872]]</point>\nRIGHTCLICK <point>[[1,2]]</point>\nMOVETO <point>[[3,4]]</point>",
			want: []string{"click (101,872)k x2", "click (1,2)k right", "move (3,4)k"}},
		{name: "omniact answer block", in: "thoughts:\nSelect everything, then page down.\nactions:\nHOTKEY [CTRL_A]\nPRESS_PGDN\nPRESS_RIGHT",
			want: []string{"hotkey ctrl+a", "key pagedown", "key right"}},
		{name: "double click spellings", in: "DOUBLE_CLICK <point>[[1,2]]</point>\nDouble-Click <point>[[1,2]]</point>\ndouble click <point>[[1,2]]</point>\ndoubleclick <point>[[1,2]]</point>\nDOUBLE CLICK <point>[[1,2]]</point>",
			want: []string{"click (1,2)k x2", "click (1,2)k x2", "click (1,2)k x2", "click (1,2)k x2", "click (1,2)k x2"}},
		{name: "right click spellings", in: "right_click <point>[[1,2]]</point>\nRight-Click <point>[[1,2]]</point>\nRIGHT CLICK <point>[[1,2]]</point>",
			want: []string{"click (1,2)k right", "click (1,2)k right", "click (1,2)k right"}},
		{name: "move to spellings", in: "move_to <point>[[1,2]]</point>\nMove To <point>[[1,2]]</point>\nMOVE-TO <point>[[1,2]]</point>",
			want: []string{"move (1,2)k", "move (1,2)k", "move (1,2)k"}},
		{name: "long press spellings", in: "LONGPRESS <point>[[5,6]]</point>\nLONG_CLICK <point>[[5,6]]</point>",
			want: []string{"mouse_down (5,6)k", "wait 1s", "mouse_up (5,6)k", "mouse_down (5,6)k", "wait 1s", "mouse_up (5,6)k"}},
		{name: "open app spellings", in: "OPENAPP [Settings]\nOPENAPP Google Chrome\nopen_app [Clock]",
			want: []string{`api open_app app_name="Settings"`, `api open_app app_name="Google Chrome"`, `api open_app app_name="Clock"`}},
		{name: "impossible", in: "IMPOSSIBLE", want: []string{"fail"}},
		{name: "press spellings", in: "press_back\nPress_Home\nPRESS HOME\nPRESSENTER\nPRESS-TAB\nPRESS_RECENTS",
			want: []string{"back", "key super", "key super", "key enter", "key tab", "api press_recent"}},
		{name: "press key with separators", in: "PRESS_PAGE_DOWN\nPRESS_page-down\nPRESS_BACK_SPACE\nPRESS_CAPS LOCK",
			want: []string{"key pagedown", "key pagedown", "key backspace", "key capslock"}},
		{name: "press a combination", in: "PRESS_CTRL_C\nPRESS [ctrl_v]", want: []string{"hotkey ctrl+c", "key ctrl+v"}},
		{name: "hotkey underscores", in: "HOTKEY [CTRL_C]\nHOTKEY [ctrl_shift_t]\nHOTKEY [ALT_F4]\nHOTKEY [SHIFT_TAB]",
			want: []string{"hotkey ctrl+c", "hotkey ctrl+shift+t", "hotkey alt+f4", "hotkey shift+tab"}},
		{name: "hotkey other separators", in: "HOTKEY [CTRL+SHIFT+T]\nHOTKEY [ctrl-alt-del]\nHOTKEY [ctrl shift t]\nHOTKEY [Ctrl, S]",
			want: []string{"hotkey ctrl+shift+t", "hotkey ctrl+alt+delete", "hotkey ctrl+shift+t", "hotkey ctrl+s"}},
		{name: "hotkey key with its own underscore", in: "HOTKEY [CTRL_PAGE_DOWN]\nHOTKEY [ctrl+Page_Down]\nHOTKEY [CTRL_KP_ADD]",
			want: []string{"hotkey ctrl+pagedown", "hotkey ctrl+pagedown", "hotkey ctrl++"}},
		{name: "hotkey side letter is a letter", in: "HOTKEY [CTRL_L]\nHOTKEY [ctrl_shift_r]", want: []string{"hotkey ctrl+l", "hotkey ctrl+shift+r"}},
		{name: "hotkey separator key", in: "HOTKEY [ctrl_-]\nHOTKEY [ctrl++]\nHOTKEY [CTRL_PLUS]", want: []string{"hotkey ctrl+-", "hotkey ctrl++", "hotkey ctrl++"}},
		{name: "hotkey bare", in: "HOTKEY CTRL_A", want: []string{"hotkey ctrl+a"}},
		{name: "scroll bare and fused", in: "SCROLL DOWN\nSCROLL_UP\nscroll [left]", want: []string{"scroll dx=0 dy=3", "scroll dx=0 dy=-3", "scroll dx=-3 dy=0"}},
		{name: "prose with a spelled verb is a thought", in: "Double-click the icon to open it.\nPress home to leave.\nOpen app settings next.\nDOUBLECLICK <point>[[1,2]]</point>",
			want: []string{"click (1,2)k x2"}},
		{name: "a word that starts with press is no key", in: "PRESSURE is rising.\nCLICK <point>[[1,2]]</point>", want: []string{"click (1,2)k"}},
		{name: "bad fused verb argument", in: "DOUBLECLICK [[1,2]]", err: "DOUBLE_CLICK must be"},
		{name: "unknown key in underscores", in: "HOTKEY [CTRL_WARP]", err: "unknown key"},
		{name: "unknown press key", in: "PRESS_CTRL_WARP", err: "unknown key"},
		{name: "impossible takes no argument", in: "IMPOSSIBLE [x]", err: "IMPOSSIBLE takes no argument"},
	})
}

func TestOSAtlasKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // keys joined by " ", "" when refused
	}{
		{"CTRL_A", "ctrl a"},
		{"ctrl_shift_t", "ctrl shift t"},
		{"CTRL+SHIFT+T", "ctrl shift t"},
		{"ctrl-c", "ctrl c"},
		{"ctrl c", "ctrl c"},
		{"ctrl, c", "ctrl c"},
		{"PGDN", "pagedown"},
		{"PAGE DOWN", "pagedown"},
		{"Page_Down", "pagedown"},
		{"page-down", "pagedown"},
		{"CTRL_PAGE_DOWN", "ctrl pagedown"},
		{"SHIFT_CAPS_LOCK", "shift capslock"},
		{"Control_L+a", "ctrl a"},
		{"CTRL_L", "ctrl l"},
		{"Control_L", "ctrl l"},
		{"SHIFT", "shift"},
		{"ctrl_-", "ctrl -"},
		{"ctrl++", "ctrl +"},
		{"KP_ENTER", "enter"},
		{"'ENTER'", "enter"},
		{"CTRL_WARP", ""},
		{"", ""},
		{"_", "_"},
	} {
		keys, ok := osAtlasKeys(tc.in)
		got := strings.Join(keys, " ")
		if !ok {
			got = ""
		}
		if got != tc.want {
			t.Errorf("osAtlasKeys(%q) = %q (ok %v), want %q", tc.in, got, ok, tc.want)
		}
	}
}
