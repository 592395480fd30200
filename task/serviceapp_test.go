package task

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// serviceSuite is a suite with a command service (crm, its data shipped
// in the suite's folder crm/) and a static one (site).
const serviceSuite = `name: services
services:
  - name: crm
    command: [crm-server, "{{port}}", "{{data}}"]
    data: "{{suite}}/crm"
  - name: site
    static: site
`

// TestServiceApps: a task's app (or apps) may name a command service of
// the suite, the application it drives in the browser (reports group its
// episodes by it); a static service or an unknown name is refused, told
// the command services.
func TestServiceApps(t *testing.T) {
	for _, tc := range []struct {
		name, app string
		want      string // "": loads
	}{
		{"command service", "app: crm", ""},
		{"desktop app", "app: xterm", ""},
		{"among apps", "apps: [xterm, crm]", ""},
		{"static service", "app: site", `unknown app "site"`},
		{"misspelled", "app: crn", `nor a command service (crm)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSuite(t, serviceSuite)
			for _, d := range []string{"crm", "site"} {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			file := filepath.Join(dir, "uses-xterm.yaml")
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(strings.Replace(string(src), "app: xterm\n", tc.app+"\n", 1)), 0o644); err != nil {
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
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, tc.want) && strings.Contains(l, "uses-xterm.yaml") }) {
				t.Fatalf("problems %q, want one of uses-xterm.yaml with %q", lines, tc.want)
			}
		})
	}
}
