package task

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSuitePersonas: a suite that declares its personas refuses a task
// that names another (a misspelling is told the nearest one); a suite
// that declares none accepts any.
func TestSuitePersonas(t *testing.T) {
	for _, tc := range []struct {
		name, suite, persona string
		want                 string // "": loads
	}{
		{"declared", "personas: [crm-admin, sales-rep]\n", "sales-rep", ""},
		{"misspelled", "personas: [crm-admin, sales-rep]\n", "sales-repp", `unknown persona "sales-repp": suite.yaml declares crm-admin, sales-rep; did you mean "sales-rep"?`},
		{"unknown", "personas: [crm-admin, sales-rep]\n", "astronaut", `unknown persona "astronaut": suite.yaml declares crm-admin, sales-rep`},
		{"none declared", "name: x\n", "astronaut", ""},
		{"no persona", "personas: [crm-admin]\n", "", ""},
		{"bad list", "personas: [crm-admin, crm-admin]\n", "crm-admin", "personas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSuite(t, tc.suite)
			src, err := os.ReadFile(filepath.Join(dir, "uses-xterm.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.persona != "" {
				src = append(src, []byte("persona: "+tc.persona+"\n")...)
			}
			if err := os.WriteFile(filepath.Join(dir, "uses-xterm.yaml"), src, 0o644); err != nil {
				t.Fatal(err)
			}
			s, ps := Load(dir)
			lines := problemLines(ps)
			if tc.want == "" {
				if len(ps) > 0 || s == nil || len(s.Tasks) != 1 {
					t.Fatalf("problems %q", lines)
				}
				return
			}
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, tc.want) }) {
				t.Fatalf("problems %q, want one with %q", lines, tc.want)
			}
		})
	}
}
