package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/observe"
)

func readAsset(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../suites/desktop/assets/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadProbe reads each kind of probe from evidence that stands for a
// desktop.
func TestReadProbe(t *testing.T) {
	clip := "copied\n"
	ev := &check.Recorded{
		Files: map[string][]byte{
			"~/notes.txt":  []byte("two\nlines\n"),
			"~/sales.ods":  readAsset(t, "sales.ods"),
			"~/report.odt": readAsset(t, "report.odt"),
			"~/canvas.png": readAsset(t, "gimp/canvas.png"),
		},
		Commands: map[string]observe.CommandResult{
			"ls ~":    {Stdout: "notes.txt\nsales.ods\n"},
			"false":   {Stdout: "partial\n", ExitCode: 1},
			"silence": {ExitCode: 2},
		},
		Nodes: []observe.Element{
			{App: "mousepad", Role: "text", Text: "Hello, Proctor"},
			{App: "kcalc", Role: "push button", Name: "7"},
		},
		WindowList: []string{"notes.txt - Mousepad", "KCalc"},
		Clip:       &clip,
		Steps:      check.Trajectory{Steps: []check.Step{{Action: action.Action{Kind: action.Answer, Text: "42"}}}},
	}
	tests := []struct {
		name   string
		probe  check.Probe
		want   string   // the value
		parts  []string // or parts of it (JSON)
		found  bool
		reason string // a part of the reason, when nothing was read
	}{
		{name: "file", probe: check.Probe{File: "~/notes.txt"}, want: "two\nlines\n", found: true},
		{name: "missing file", probe: check.Probe{File: "~/none.txt"}, reason: "the file does not exist"},
		{name: "cell", probe: check.Probe{File: "~/sales.ods", Cell: "B2"}, want: "120", found: true},
		{name: "text cell", probe: check.Probe{File: "~/sales.ods", Cell: "A6"}, want: "Central", found: true},
		{name: "ods", probe: check.Probe{File: "~/sales.ods", Read: "ods"}, parts: []string{`"cells":{`, `"A1":{`, `"Region"`}, found: true},
		{name: "odt", probe: check.Probe{File: "~/report.odt", Read: "odt"}, parts: []string{`"paragraphs":[`, `"Quarterly sales review"`}, found: true},
		{name: "odt-text", probe: check.Probe{File: "~/report.odt", Read: "odt-text"}, found: true,
			want: "Quarterly sales review\nSales grew in every region this year. The colour of the new brochure was chosen by the East team, and the colour scheme will be used in every region next year.\nThe West region remains the smallest market; its colour campaign starts in spring."},
		{name: "image", probe: check.Probe{File: "~/canvas.png", Read: "image"}, parts: []string{`"width":200,"height":150,`, `"dark":0,`, `"dark_at":[[0,0,0,0,0,0,0,0,0,0]`}, found: true},
		{name: "a text file read as an image", probe: check.Probe{File: "~/notes.txt", Read: "image"}, reason: "~/notes.txt: not a PNG, JPEG or BMP picture"},
		{name: "a picture read as a spreadsheet", probe: check.Probe{File: "~/canvas.png", Cell: "A1"}, reason: "~/canvas.png: "},
		{name: "command", probe: check.Probe{Command: "ls ~"}, want: "notes.txt\nsales.ods\n", found: true},
		{name: "failing command", probe: check.Probe{Command: "false"}, want: "partial\n", reason: "non-zero status (a check fails); its output was:\npartial"},
		{name: "silent failing command", probe: check.Probe{Command: "silence"}, reason: "the command exited with a non-zero status (a check fails)"},
		{name: "element text", probe: check.Probe{Element: &observe.ElementQuery{App: "mousepad", Role: "text"}}, want: "Hello, Proctor", found: true},
		{name: "element name", probe: check.Probe{Element: &observe.ElementQuery{Role: "push button"}}, want: "7", found: true},
		{name: "no element", probe: check.Probe{Element: &observe.ElementQuery{Role: "menu"}}, reason: "no element matches"},
		{name: "windows", probe: check.Probe{Window: true}, want: "notes.txt - Mousepad\nKCalc", found: true},
		{name: "clipboard", probe: check.Probe{Clipboard: true}, want: "copied\n", found: true},
		{name: "answer", probe: check.Probe{Answer: true}, want: "42", found: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			val, found, reason, err := readProbe(context.Background(), tc.probe, ev)
			if err != nil {
				t.Fatal(err)
			}
			if found != tc.found {
				t.Fatalf("found = %v (%s), want %v", found, reason, tc.found)
			}
			if !found && !strings.Contains(reason, tc.reason) {
				t.Errorf("reason %q lacks %q", reason, tc.reason)
			}
			if tc.parts == nil && val != tc.want {
				t.Errorf("value %q, want %q", val, tc.want)
			}
			for _, p := range tc.parts {
				if !strings.Contains(val, p) {
					t.Errorf("value lacks %q:\n%s", p, val)
				}
			}
		})
	}
	// Evidence that cannot be read is an error, not a value.
	if _, _, _, err := readProbe(context.Background(), check.Probe{Command: "never run"}, ev); err == nil || !strings.Contains(err.Error(), "could not be read") {
		t.Errorf("a command that was not recorded: %v", err)
	}
	// No answer without a trajectory that gives one.
	if _, found, reason, _ := readProbe(context.Background(), check.Probe{Answer: true}, &check.Recorded{}); found || !strings.Contains(reason, "--gold") {
		t.Errorf("an answer with no trajectory: found %v, %q", found, reason)
	}
}

// TestSameAsChecks: a value that differs from the checks' in any way, a
// trailing line break included (which an exact check alone forgives), is
// refused.
func TestSameAsChecks(t *testing.T) {
	ev := &check.Recorded{Files: map[string][]byte{"~/a.txt": []byte("Größe: 42\n")}}
	p := check.Probe{File: "~/a.txt"}
	tests := []struct {
		val string
		ok  bool
	}{
		{"Größe: 42\n", true},
		{"Größe: 42", false},
		{"Größe: 42\n\n", false},
		{"größe: 42\n", false},
		{"Größe:  42\n", false},
	}
	for _, tc := range tests {
		err := sameAsChecks(context.Background(), p, tc.val, ev)
		if (err == nil) != tc.ok {
			t.Errorf("sameAsChecks(%q) = %v, want ok %v", tc.val, err, tc.ok)
		}
	}
}

// TestProbeErrors: a bad probe or task is refused before any desktop
// starts, naming what is wrong.
func TestProbeErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr []string
	}{
		{"bad read", []string{"probe", "../../suites/desktop", "editor-write-1", "file: ~/draft1.txt, read: text"},
			[]string{`invalid probe "file: ~/draft1.txt, read: text"`, "probe.read: value must be one of"}},
		{"no source", []string{"probe", "../../suites/desktop", "editor-write-1", "read: image"},
			[]string{"probe: probe needs exactly one of command, file, answer, element, window, clipboard"}},
		{"no task", []string{"probe", "../../suites/desktop", "nope", "file: ~/x"}, []string{`no task "nope" in ../../suites/desktop`}},
		{"no suite", []string{"probe", "../../nowhere", "t", "file: ~/x"}, []string{"../../nowhere"}},
		{"arguments", []string{"probe", "../../suites/desktop", "editor-write-1"}, []string{"accepts 3 arg(s), received 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", tc.args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, errs)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}

// TestProbeOnDesktop probes a task of the built-in suite on a local
// desktop, before and after its gold solution.
func TestProbeOnDesktop(t *testing.T) {
	needX(t, "mousepad")
	type report struct {
		Task   string `json:"task"`
		Gold   bool   `json:"gold"`
		Found  bool   `json:"found"`
		Value  string `json:"value"`
		Reason string `json:"reason"`
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		want   report
		stderr string
	}{
		{name: "after the gold solution", args: []string{"file: ~/draft1.txt", "--gold"}, want: report{Task: "editor-write-1", Gold: true, Found: true, Value: "Meeting at noon"},
			stderr: "editor-write-1: gold solution replayed (5 steps): success"},
		{name: "after the setup", args: []string{"file: ~/draft1.txt"}, want: report{Task: "editor-write-1", Found: true, Value: ""}},
		{name: "an element after the gold solution", args: []string{"element: {app: mousepad, role: text}", "--gold"}, want: report{Task: "editor-write-1", Gold: true, Found: true, Value: "Meeting at noon"}},
		{name: "a missing file", args: []string{"file: ~/draft9.txt"}, code: 1, want: report{Task: "editor-write-1", Reason: "nothing to read: the file does not exist (a check fails; not_contains and not_exists pass)"},
			stderr: "file ~/draft9.txt: nothing to read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", append([]string{"probe", "../../suites/desktop", "editor-write-1", "--json"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s\n%s", code, tc.code, out, errs)
			}
			var got report
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if !strings.Contains(errs, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, errs)
			}
		})
	}
}

// TestProbeOnGuest probes through a guest daemon (--env), as on another
// machine.
func TestProbeOnGuest(t *testing.T) {
	needX(t, "mousepad")
	tok := tokenFile(t, "probe-token")
	addr, _ := startGuest(t, tok)
	out, errs, code := runCLI(t, "", "probe", "../../suites/desktop", "editor-write-2", "file: ~/draft2.txt", "--gold",
		"--env", "guest="+addr, "--token-file", tok)
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errs)
	}
	if want := "Café au lait, s'il vous plaît\n"; out != want {
		t.Fatalf("stdout %q, want %q", out, want)
	}
}
