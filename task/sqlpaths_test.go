package task

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSQLProbePaths: lint refuses an sql probe whose database is not in
// its service's data shipped with the suite, or whose service is unknown
// or static, naming the task file, the check and the missing path; it
// warns of one missing from data that proctor setup left on this
// machine, and says nothing where it cannot know (data not set up here,
// a file probe on the environment).
func TestSQLProbePaths(t *testing.T) {
	const suite = `name: sqlsuite
services:
  - name: crm
    command: [crm-server, "{{port}}", "{{data}}"]
    data: "{{suite}}/crm"
  - name: erp
    command: [erp-server, "{{port}}", "{{data}}"]
    data: erp
  - name: site
    static: site
`
	probe := func(service, db string) string {
		return "\n  - kind: exists\n    probe: {sql: {service: " + service + ", db: " + db + ", query: select 1}}\n"
	}
	milestone := func(service, db string) (checks, tail string) {
		return "\n  - kind: milestones\n    milestones: [m]\n",
			"milestones:\n  - id: m\n    weight: 1\n    rubric: The record is there.\n    checks:\n      - kind: exists\n        probe: {sql: {service: " + service + ", db: " + db + ", query: select 1}}\n"
	}
	for _, tc := range []struct {
		name          string
		checks, tail  string
		setUp         bool   // the data of erp is on this machine, without the database
		want, warning string // a problem's text ("" none); a warning's
	}{
		{"shipped and there", probe("crm", "crm.sqlite"), "", false, "", ""},
		{"shipped, in a folder", probe("crm", "db/nested.sqlite"), "", false, "", ""},
		{"shipped and missing", probe("crm", "crm.sqlit"), "", false,
			`uses-xterm.yaml:10:33: checks[0].probe.sql.db: the database "crm.sqlit" is not in the data of the service crm, which ships with the suite: DIR/crm/crm.sqlit does not exist`, ""},
		{"a folder", probe("crm", "db"), "", false, `DIR/crm/db is a folder`, ""},
		{"in a milestone", "", "", false,
			`milestones[0].checks[0].probe.sql.db: the database "gone.sqlite" is not in the data of the service crm, which ships with the suite: DIR/crm/gone.sqlite does not exist`, ""},
		{"unknown service", probe("crn", "crm.sqlite"), "", false, `checks[0].probe.sql.service: the sql probe names the service "crn", which suite.yaml does not declare (services: crm, erp, site)`, ""},
		{"static service", probe("site", "x.sqlite"), "", false, `site is a static service`, ""},
		{"set up elsewhere", probe("erp", "erp.sqlite"), "", false, "", ""},
		{"set up here, missing", probe("erp", "erp.sqlite"), "", true, "",
			`warning: the database "erp.sqlite" is not in the data of the service erp as proctor setup left it here: DATA/sqlsuite/erp/erp.sqlite does not exist`},
		{"a file on the environment", "\n  - kind: exists\n    probe: {file: ~/notes.sqlite, read: sqlite, query: select 1}\n", "", false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			t.Setenv("PROCTOR_DATA", data)
			dir := writeSuite(t, suite)
			for _, d := range []string{"crm/db", "site"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []string{"crm/crm.sqlite", "crm/db/nested.sqlite"} {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.setUp {
				if err := os.MkdirAll(filepath.Join(data, "sqlsuite", "erp"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			checks, tail := tc.checks, tc.tail
			if tc.name == "in a milestone" {
				checks, tail = milestone("crm", "gone.sqlite")
			}
			file := filepath.Join(dir, "uses-xterm.yaml")
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			task := strings.Replace(string(src), "checks:", "checks:"+strings.TrimSuffix(checks, "\n"), 1) + tail
			if err := os.WriteFile(file, []byte(task), 0o644); err != nil {
				t.Fatal(err)
			}
			s, ps := Load(dir)
			clean := func(l string) string {
				return strings.NewReplacer(dir, "DIR", data, "DATA").Replace(l)
			}
			var lines, warns []string
			for _, l := range problemLines(ps) {
				lines = append(lines, clean(l))
			}
			if s != nil {
				for _, l := range problemLines(s.Warnings) {
					warns = append(warns, clean(l))
				}
			}
			if tc.want == "" && len(lines) > 0 || tc.want != "" && !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, tc.want) }) {
				t.Errorf("problems %q, want one with %q", lines, tc.want)
			}
			if tc.warning == "" && len(warns) > 0 || tc.warning != "" && !slices.ContainsFunc(warns, func(l string) bool { return strings.Contains(l, tc.warning) }) {
				t.Errorf("warnings %q, want one with %q", warns, tc.warning)
			}
		})
	}
}
