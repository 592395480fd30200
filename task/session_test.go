package task

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSessions: a task runs in its own session, else its suite's, else
// openbox; a session that is not one of Sessions, or one on an
// environment that is no x11 desktop, is refused.
func TestSessions(t *testing.T) {
	for _, tc := range []struct {
		name, suite, env string
		want             string // the task's session, when it loads
		problem          string // else a problem holding this
	}{
		{"default", "name: x\n", "", SessionOpenbox, ""},
		{"suite's", "session: xfce\n", "", SessionXFCE, ""},
		{"task's over suite's", "session: xfce\n", "environment: {session: gnome}\n", SessionGNOME, ""},
		{"task's", "name: x\n", "environment: {type: x11, session: xfce}\n", SessionXFCE, ""},
		{"openbox named", "session: gnome\n", "environment: {session: openbox}\n", SessionOpenbox, ""},
		{"unknown task session", "name: x\n", "environment: {session: kde}\n", "", "environment.session: value must be one of"},
		{"unknown suite session", "session: kde\n", "", "", "session: value must be one of"},
		{"not a desktop", "name: x\n", "environment: {type: browser, session: gnome}\n", "", "environment.session: a session is an x11 desktop's; the browser environment has its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSuite(t, tc.suite)
			f := filepath.Join(dir, "uses-xterm.yaml")
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, append(src, tc.env...), 0o644); err != nil {
				t.Fatal(err)
			}
			s, ps := Load(dir)
			lines := problemLines(ps)
			if tc.problem != "" {
				if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, tc.problem) }) {
					t.Fatalf("problems %q, want one with %q", lines, tc.problem)
				}
				return
			}
			if len(ps) > 0 || s == nil || len(s.Tasks) != 1 {
				t.Fatalf("problems %q", lines)
			}
			if got := s.SessionOf(s.Tasks[0]); got != tc.want {
				t.Errorf("session %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSessionSchemas: both schemas accept exactly the sessions there
// are, each with its packages.
func TestSessionSchemas(t *testing.T) {
	for _, f := range []string{"schema.json", "suite_schema.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		props := doc["properties"].(map[string]any)
		if f == "schema.json" {
			props = props["environment"].(map[string]any)["properties"].(map[string]any)
		}
		var got []string
		for _, v := range props["session"].(map[string]any)["enum"].([]any) {
			got = append(got, v.(string))
		}
		if !slices.Equal(got, Sessions) {
			t.Errorf("%s: sessions %q, want %q", f, got, Sessions)
		}
	}
	for _, s := range Sessions {
		if _, ok := SessionPackages[s]; !ok {
			t.Errorf("session %s has no packages entry", s)
		}
	}
}
