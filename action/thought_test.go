package action

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestThought(t *testing.T) {
	cases := []struct{ name, reply, want string }{
		{"prose then block", "The Save button is at the top.\n```python\npyautogui.click(10, 20)\n```", "The Save button is at the top."},
		{"prose on both sides", "First I open the menu.\n```python\npyautogui.click(1, 2)\n```\nThen I wait.", "First I open the menu.\n\nThen I wait."},
		{"special code line", "The file is saved, so the task is finished.\nDONE", "The file is saved, so the task is finished."},
		{"answer line", "The total in B7 reads 42.\nANS 42", "The total in B7 reads 42."},
		{"ui-tars", "Thought: I need to click OK.\nAction: click(start_box='(100,200)')", "I need to click OK."},
		{"only actions", "```python\npyautogui.press('enter')\n```", ""},
		{"only a code", "DONE", ""},
		{"json block", "Typing the name.\n```json\n[{\"kind\": \"type\", \"text\": \"x\"}]\n```", "Typing the name."},
		{"blank runs shrink", "a\n```\nx\n```\n\n\n```\ny\n```\nb", "a\n\nb"},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Thought(c.reply); got != c.want {
				t.Fatalf("Thought(%q) = %q, want %q", c.reply, got, c.want)
			}
		})
	}
}

// FuzzThought checks that Thought never panics, never grows its input,
// returns trimmed text and keeps valid UTF-8 valid.
func FuzzThought(f *testing.F) {
	for _, s := range []string{"x\n```python\npyautogui.click(1, 2)\n```", "Thought: a\nAction: b", "DONE", "```DONE```", "ANS 4\nWAIT 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		got := Thought(reply)
		if len(got) > len(reply) {
			t.Fatalf("Thought(%q) = %q is longer than the reply", reply, got)
		}
		if got != strings.TrimSpace(got) {
			t.Fatalf("Thought(%q) = %q is not trimmed", reply, got)
		}
		if utf8.ValidString(reply) && !utf8.ValidString(got) {
			t.Fatalf("Thought(%q) = %q is not valid UTF-8", reply, got)
		}
	})
}
