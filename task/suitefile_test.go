package task

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/statediff"
)

func writeSuite(t *testing.T, suite string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, SuiteFile), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/badapp/uses-good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.ReplaceAll(strings.ReplaceAll(string(b), "app: good", "app: xterm"), "uses-good", "uses-xterm"))
	if err := os.WriteFile(filepath.Join(dir, "uses-xterm.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func problemLines(ps Problems) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// TestSuiteSchemaMatchesAppSpec keeps the published suite schema and the
// Go types in step.
func TestSuiteSchemaMatchesAppSpec(t *testing.T) {
	var sch struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       struct {
			App struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"app"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(SuiteSchema, &sch); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]json.RawMessage) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	sorted := func(xs []string) []string { xs = slices.Clone(xs); sort.Strings(xs); return xs }
	if got, want := keys(sch.Defs.App.Properties), sorted(fieldNames(AppSpec{})); !slices.Equal(got, want) {
		t.Errorf("schema app fields %v, AppSpec fields %v", got, want)
	}
	if got, want := keys(sch.Properties), sorted(fieldNames(Suite{})); !slices.Equal(got, want) {
		t.Errorf("schema suite fields %v, Suite fields %v", got, want)
	}
	if _, err := compiledSuite(); err != nil {
		t.Fatal(err)
	}
}

// TestSuiteFileSchemaErrorsHavePlaces checks that suite.yaml is
// validated against SuiteSchema, with FILE:LINE:COL.
func TestSuiteFileSchemaErrorsHavePlaces(t *testing.T) {
	for _, tc := range []struct{ name, suite, want string }{
		{"missing command", "apps:\n  foo:\n    package: foo\n", `suite.yaml:2:3: apps.foo: missing required field "command"`},
		{"wrong type", "name: [a, b]\n", `suite.yaml:1:1: name: got array, want string`},
		{"top-level field", "name: x\ncolour: red\n", `suite.yaml:2:1: colour: unknown field "colour" (valid: name, description, apps, services, setup, network, allow, session, changes, personas)`},
		{"env value", "apps:\n  foo:\n    command: foo\n    env:\n      N: 3\n", `suite.yaml:5:7: apps.foo.env.N: got number, want string`},
		{"env name", "apps:\n  foo:\n    command: foo\n    env:\n      A-B: x\n", `suite.yaml:5:7: apps.foo.env.A-B: "A-B" is not a valid name here: 'A-B' does not match pattern`},
		{"network", "network: open\n", `suite.yaml:1:1: network: value must be 'web'`},
		{"allow", "allow: [a.example]\n", `suite.yaml:1:9: allow[0]: 'a.example' does not match pattern`},
		{"marker", "apps:\n  foo:\n    command: foo\n    env:\n      PROCTOR_DESKTOP: x\n", `suite.yaml:5:7: apps.foo.env.PROCTOR_DESKTOP: "PROCTOR_DESKTOP" is not a valid name here`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSuite(t, tc.suite)
			_, ps := Load(dir)
			lines := problemLines(ps)
			if len(lines) == 0 || !strings.HasPrefix(lines[0], filepath.Join(dir, tc.want)) {
				t.Fatalf("problems:\n%s\nwant first to start with %s", strings.Join(lines, "\n"), tc.want)
			}
		})
	}
}

// TestSuiteUnknownAppFieldListsValid: an unknown field in an app entry
// names the valid ones.
func TestSuiteUnknownAppFieldListsValid(t *testing.T) {
	_, ps := Load("testdata/badapp")
	want := `testdata/badapp/suite.yaml:10:5: apps.foo.window_title: unknown field "window_title" (valid: command, package, window, files, env, network)`
	if lines := problemLines(ps); !slices.Contains(lines, want) {
		t.Fatalf("problems:\n%s\nwant %s", strings.Join(lines, "\n"), want)
	}
}

// TestBadAppReportedOnce: a bad app entry is reported at suite.yaml, and
// the tasks that use it point there instead of calling it unknown; the
// suite's good apps, env included, still load.
func TestBadAppReportedOnce(t *testing.T) {
	s, ps := Load("testdata/badapp")
	lines := problemLines(ps)
	inSuite := 0
	for _, l := range lines {
		if strings.Contains(l, "unknown app") {
			t.Errorf("a task calls a declared app unknown: %s", l)
		}
		if strings.HasPrefix(l, "testdata/badapp/suite.yaml:") {
			inSuite++
		}
	}
	if inSuite != 2 { // foo and xterm, once each
		t.Errorf("%d problems in suite.yaml, want 2:\n%s", inSuite, strings.Join(lines, "\n"))
	}
	want := `testdata/badapp/uses-foo-1.yaml:5:1: app: app "foo" is declared in suite.yaml:8 but has problems (see there)`
	if !slices.Contains(lines, want) {
		t.Errorf("problems:\n%s\nwant %s", strings.Join(lines, "\n"), want)
	}
	// A bad entry of a built-in app's name does not silently fall back.
	if _, ok := s.App("xterm"); ok {
		t.Error("xterm's bad suite entry fell back to the built-in app")
	}
	if len(s.Tasks) != 1 || s.Tasks[0].ID != "uses-good" {
		t.Fatalf("tasks %v, want uses-good only", s.Tasks)
	}
}

// TestAppEnvLoads: env in an app entry loads and lints.
func TestAppEnvLoads(t *testing.T) {
	dir := writeSuite(t, "apps:\n  good:\n    command: good-tool\n    env:\n      GREETING: hello\n      LANG: de_DE.UTF-8\n")
	b, _ := os.ReadFile("testdata/badapp/uses-good.yaml")
	if err := os.WriteFile(filepath.Join(dir, "uses-good.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, ps := Load(dir)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	app, ok := s.App("good")
	if !ok || app.Env["GREETING"] != "hello" || app.Env["LANG"] != "de_DE.UTF-8" {
		t.Fatalf("good = %+v, %v", app, ok)
	}
}

func TestEmptySuiteFile(t *testing.T) {
	if _, ps := Load(writeSuite(t, "# nothing yet\n")); len(ps) > 0 {
		t.Fatal(ps)
	}
}

func TestSuiteServices(t *testing.T) {
	const task = "id: t\ninstruction: Open {{services.%s}}/a.html\nenvironment: {type: browser}\nlevel: paper\nkind: state\n" +
		"setup:\n  - open: {url: \"{{services.%s}}/a.html\"}\nchecks:\n  - kind: exact\n    probe: {page: {url: true}}\n    expected: \"{{services.%s}}/b.html\"\ngold:\n  - kind: done\n"
	for _, tc := range []struct {
		name, suite, uses string
		want              []string // problem fragments; none: loads clean
	}{
		{"declared", "services:\n  - {name: site, static: site}\n", "site", nil},
		{"undeclared", "services:\n  - {name: site, static: site}\n", "shop",
			[]string{"t.yaml:2:14: {{services.shop}} names a service suite.yaml does not declare (services: site)"}},
		{"twice", "services:\n  - {name: site, static: site}\n  - {name: site, static: site}\n", "site",
			[]string{"suite.yaml:4:6: services[1].name: service \"site\" is declared twice"}},
		{"outside", "services:\n  - {name: site, static: ../x}\n", "site",
			[]string{"suite.yaml:3:18: services[0].static: \"../x\" is not a folder inside the suite", "names a service suite.yaml does not declare (services: none)"}},
		{"no folder", "services:\n  - {name: site, static: nothere}\n", "site",
			[]string{"DIR/suite.yaml:3:18: services[0].static: the suite has no folder \"nothere\" (DIR/nothere does not exist)"}},
		{"a file for a folder", "services:\n  - {name: site, static: site/setup.sh}\n", "site",
			[]string{"DIR/suite.yaml:3:18: services[0].static: the suite has no folder \"site/setup.sh\" (DIR/site/setup.sh is not a folder)"}},
		{"no static", "services:\n  - {name: site}\n", "site", []string{"suite.yaml:3:5: services[0]"}},
		{"command", "services:\n  - {name: site, command: [bash, \"{{suite}}/start\", \"{{port}}\", \"{{data}}\"], data: site, ready: /up, start_timeout: 30s}\n", "site", nil},
		{"static and command", "services:\n  - {name: site, static: site, command: [x, \"{{port}}\"]}\n", "site", []string{"suite.yaml:3:5: services[0]"}},
		{"no port", "services:\n  - {name: site, command: [x, \"{{data}}\"], data: d}\n", "site",
			[]string{"suite.yaml:3:18: services[0].command: the command must take the port it listens on as {{port}}"}},
		{"unknown placeholder", "services:\n  - {name: site, command: [x, \"{{port}}\", \"{{home}}\"]}\n", "site",
			[]string{"unknown placeholder {{home}} in the command"}},
		{"data without folder", "services:\n  - {name: site, command: [x, \"{{port}}\", \"{{data}}\"]}\n", "site",
			[]string{"the command names {{data}} but the service has no data folder"}},
		{"data outside", "services:\n  - {name: site, command: [x, \"{{port}}\"], data: ../d}\n", "site",
			[]string{"services[0].data: \"../d\" is neither absolute, nor {{suite}}/PATH"}},
		{"data in the suite", "services:\n  - {name: site, command: [x, \"{{port}}\", \"{{data}}\"], data: \"{{suite}}/site\"}\n", "site", nil},
		{"data missing in the suite", "services:\n  - {name: site, command: [x, \"{{port}}\"], data: \"{{suite}}/nothere\"}\n", "site",
			[]string{"DIR/suite.yaml:3:44: services[0].data: the suite has no folder \"nothere\" (DIR/nothere does not exist)"}},
		{"bad reset", "services:\n  - {name: site, command: [x, \"{{port}}\"], reset: never}\n", "site", []string{"services[0].reset"}},
		{"setup", "services:\n  - {name: site, static: site}\nsetup:\n  packages: [sqlite3]\n  script: site/setup.sh\n", "site", nil},
		{"setup without script", "services:\n  - {name: site, static: site}\nsetup:\n  script: nothere.sh\n", "site",
			[]string{"DIR/suite.yaml:5:3: setup.script: the suite has no file \"nothere.sh\" (DIR/nothere.sh does not exist)"}},
		{"setup with a folder for a script", "services:\n  - {name: site, static: site}\nsetup:\n  script: site\n", "site",
			[]string{"DIR/suite.yaml:5:3: setup.script: the suite has no file \"site\" (DIR/site is not a regular file)"}},
		{"setup bad package", "services:\n  - {name: site, static: site}\nsetup:\n  packages: [\"Not A Package\"]\n", "site", []string{"setup.packages[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "site"), 0o755)
			os.WriteFile(filepath.Join(dir, "site", "setup.sh"), []byte("true\n"), 0o644)
			os.WriteFile(filepath.Join(dir, SuiteFile), []byte("name: s\n"+tc.suite), 0o644)
			os.WriteFile(filepath.Join(dir, "t.yaml"), []byte(fmt.Sprintf(task, tc.uses, tc.uses, tc.uses)), 0o644)
			s, probs := Load(dir)
			got := strings.Join(problemLines(probs), "\n")
			for _, w := range tc.want {
				if w = strings.ReplaceAll(w, "DIR", dir); !strings.Contains(got, w) {
					t.Errorf("problems:\n%s\nwant one with %q", got, w)
				}
			}
			if len(tc.want) == 0 && len(probs) > 0 {
				t.Errorf("problems:\n%s", got)
			}
			if len(tc.want) == 0 && (len(s.Services) != 1 || s.Services[0].Name != "site") {
				t.Errorf("services = %+v", s.Services)
			}
			// A data folder is named with where suite.yaml names it.
			if len(tc.want) == 0 && s.Services[0].Data != "" {
				want := filepath.Join(dir, SuiteFile) + ":3:" + strconv.Itoa(strings.Index(tc.suite, "data:")-strings.Index(tc.suite, "- {")+3) + ": services[0].data"
				if got := s.Services[0].DataDeclared(); got != want {
					t.Errorf("DataDeclared() = %q, want %q", got, want)
				}
			}
		})
	}
}

func TestSuiteChanges(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       string // a problem, or "" for none
	}{
		{"default", "changes:\n  paths: [~/out/**]\n  clipboard: true\n", ""},
		{"bad glob", "changes:\n  paths: [\"~/[x\"]\n", `changes: paths[0]: "~/[x" is not a valid glob`},
		{"unknown field", "changes:\n  files: [~/x]\n", `unknown field "files"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s Suite
			ps := s.parseSuiteFile("suite.yaml", []byte(tc.yaml))
			if tc.want == "" {
				if len(ps) > 0 || s.Changes == nil || s.Changes.Paths[0] != "~/out/**" || !s.Changes.Clipboard {
					t.Fatalf("problems %v, changes %+v", ps, s.Changes)
				}
				tk := &Task{Changes: &statediff.Allowed{Paths: []string{"~/a"}}}
				if a := tk.AllowedChanges(&s); len(a.Paths) != 2 || !a.Clipboard {
					t.Errorf("joined: %+v", a)
				}
				return
			}
			if len(ps) == 0 || !strings.Contains(ps.Error(), tc.want) {
				t.Fatalf("problems %v, want %q", ps, tc.want)
			}
		})
	}
}
