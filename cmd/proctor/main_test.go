package main

import (
	"bytes"
	"errors"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/env/provider"
)

// TestMain lets this test binary serve as the watchdog of the desktops
// its tests start.
func TestMain(m *testing.M) {
	provider.RunHelpers()
	os.Exit(m.Run())
}

// runCLI executes the proctor command line in-process.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := newRootCommand()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	err := cmd.Execute()
	var ee exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case err != nil:
		errb.WriteString(err.Error())
		code = 1
	}
	return out.String(), errb.String(), code
}

func TestCLI(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout []string
		stderr []string
	}{
		{name: "lint example", args: []string{"tasks", "lint", "../../testdata/example"}, stderr: []string{"26 tasks valid, 0 problems"}},
		{name: "lint broken", args: []string{"tasks", "lint", "../../task/testdata/broken/bad-check-field.yaml"}, code: 1,
			stdout: []string{"../../task/testdata/broken/bad-check-field.yaml:12:5: checks[1].expected: does not apply to a range check"}},
		{name: "lint warnings leave the exit status", args: []string{"tasks", "lint", "../../task/testdata/roles"},
			stdout: []string{`gold[1].target.role: warning: unknown role "togle button": no environment's tree gives it, so nothing matches; did you mean "toggle button"?`},
			stderr: []string{"1 task valid, 0 problems, 3 warnings"}},
		{name: "lint json", args: []string{"tasks", "lint", "--json", "../../task/testdata/broken/unknown-field.yaml"}, code: 1,
			stdout: []string{`"line": 5`, `"field": "colour"`}},
		{name: "list", args: []string{"tasks", "list", "../../testdata/example"},
			stdout: []string{"ID", "calc-add-12-30", "wood", "gnome-calculator"}, stderr: []string{"26 tasks"}},
		{name: "list tag", args: []string{"tasks", "list", "--tag", "template", "../../testdata/example"}, stderr: []string{"6 tasks"}},
		{name: "expand", args: []string{"tasks", "expand", "../../testdata/example/calc-add-template.yaml"},
			stdout: []string{"calc-add-12-30  [a=12 b=30 sum=42]", "Use the calculator to add 250 and 7"}, stderr: []string{"2 instances"}},
		{name: "expand broken", args: []string{"tasks", "expand", "../../task/testdata/broken/template-zip.yaml"}, code: 1,
			stderr: []string{"template-zip.yaml:8:3: params.b"}},
		{name: "show", args: []string{"tasks", "show", "../../testdata/example", "terminal-count-rows"},
			stdout: []string{`"id": "terminal-count-rows"`, `"accepted": [`}, stderr: []string{"max steps 5, wall time 1m40s, weight 0.5"}},
		{name: "show missing", args: []string{"tasks", "show", "../../testdata/example", "nope"}, code: 1, stderr: []string{`no task "nope"`}},
		{name: "schema", args: []string{"tasks", "schema"}, stdout: []string{`"$schema": "https://json-schema.org/draft/2020-12/schema"`}},
		{name: "suite schema", args: []string{"tasks", "schema", "--suite"}, stdout: []string{`"apps"`, `"env"`, `"window"`}},
		{name: "parse arg", args: []string{"parse", "--format", "pyautogui", "```python\npyautogui.click(1, 2)\n```\nDONE"}, stdout: []string{"click (1,2)"}},
		{name: "parse stdin", args: []string{"parse", "-f", "anthropic"}, stdin: `{"action":"key","text":"ctrl+s"}`, stdout: []string{"hotkey ctrl+s"}},
		{name: "parse json", args: []string{"parse", "-f", "uitars", "--json", "Action: click(start_box='(500,500)')"}, stdout: []string{`"unit": "k"`}},
		{name: "parse error", args: []string{"parse", "-f", "pyautogui", "pyautogui.clik(1,2)"}, code: 1, stderr: []string{"unknown function"}},
		{name: "parse unknown format", args: []string{"parse", "-f", "morse", "x"}, code: 1, stderr: []string{"unknown output format"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}

func TestBuildVersion(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "unknown"},
		{"work tree, clean", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "false"})}, true, "devel 0123456789ab"},
		{"work tree, dirty", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, true, "devel 0123456789ab-dirty"},
		{"module version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, true, "v1.2.0"},
		{"pseudo-version with the revision", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261122150000-0123456789ab"}, Settings: rev}, true, "v0.0.0-20261122150000-0123456789ab"},
		{"no VCS", &debug.BuildInfo{}, true, "devel"},
	}
	for _, tc := range tests {
		if got := buildVersion(tc.bi, tc.ok); got != tc.want {
			t.Errorf("%s: buildVersion = %q, want %q", tc.name, got, tc.want)
		}
	}
	if version == "" || version == "dev" {
		t.Errorf("version = %q: the build's own version was not taken", version)
	}
}
