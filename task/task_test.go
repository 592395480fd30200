package task

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/observe"
)

const exampleSuite = "../testdata/example"

func TestExampleSuiteLoads(t *testing.T) {
	s, ps := Load(exampleSuite)
	if len(ps) > 0 {
		t.Fatalf("example suite has problems:\n%v", ps)
	}
	files, _ := filepath.Glob(filepath.Join(exampleSuite, "*.yaml"))
	if n := len(files) - 1; n < 15 { // minus suite.yaml
		t.Fatalf("example suite has %d task files, want at least 15", n)
	}
	if len(s.Tasks) < len(files)-1 {
		t.Fatalf("%d tasks loaded from %d files", len(s.Tasks), len(files)-1)
	}
}

// TestExampleSuiteCoversTheFormat makes sure the example suite uses every
// field of the format, every check kind, every setup step kind and every
// value of the enumerations, so that the suite documents the whole format.
func TestExampleSuiteCoversTheFormat(t *testing.T) {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema, &schema); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(exampleSuite, "*.yaml"))
	used := map[string]bool{}
	for _, f := range files {
		if filepath.Base(f) == SuiteFile {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for _, line := range strings.Split(src, "\n") {
			trimmed := strings.TrimLeft(strings.TrimSpace(line), "- ")
			if k, _, ok := strings.Cut(trimmed, ":"); ok {
				used[k] = true
			}
		}
	}
	for p := range schema.Properties {
		if !used[p] {
			t.Errorf("no example task uses the field %q", p)
		}
	}
	for _, def := range []string{"step", "check", "probe"} {
		for p := range schema.Defs[def].Properties {
			if !used[p] {
				t.Errorf("no example task uses the %s field %q", def, p)
			}
		}
	}
	s, _ := Load(exampleSuite)
	kinds := map[check.Kind]bool{}
	levels, tkinds, diffs, ifaces, envs := map[Level]bool{}, map[Kind]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, tk := range s.Tasks {
		for _, c := range tk.Checks {
			kinds[c.Kind] = true
		}
		for _, m := range tk.Milestones {
			for _, c := range m.Checks {
				kinds[c.Kind] = true
			}
		}
		levels[tk.Level], tkinds[tk.Kind], diffs[tk.Difficulty], ifaces[tk.Interface] = true, true, true, true
		envs[tk.Environment.Type] = true
	}
	for _, k := range check.Kinds {
		if !kinds[k] {
			t.Errorf("no example task uses the check kind %s", k)
		}
	}
	for _, l := range Levels {
		if !levels[l] {
			t.Errorf("no example task has level %s", l)
		}
	}
	for _, k := range []Kind{StateTask, ProcessTask, QATask, InfeasibleTask} {
		if !tkinds[k] {
			t.Errorf("no example task has kind %s", k)
		}
	}
	for _, d := range []string{"easy", "medium", "hard", "open"} {
		if !diffs[d] {
			t.Errorf("no example task has difficulty %s", d)
		}
	}
	for _, i := range []string{"gui", "cli", "gui+cli"} {
		if !ifaces[i] {
			t.Errorf("no example task has interface %s", i)
		}
	}
	for _, e := range []string{"x11", "browser", "vnc", "android"} {
		if !envs[e] {
			t.Errorf("no example task runs on environment %s", e)
		}
	}
}

func TestLintBrokenFiles(t *testing.T) {
	tests := []struct {
		file string
		want []string // each a problem's String(), without the file prefix
	}{
		{"unknown-field.yaml", []string{`5:1: colour: unknown field "colour"`}},
		{"misspelt-field.yaml", []string{
			`1:1: missing required field "instruction"`,
			`2:1: instructon: unknown field "instructon"; did you mean "instruction"?`,
			`10:33: gold[0].target.nmae: unknown field "nmae"; did you mean "name"?`}},
		{"bad-level.yaml", []string{`3:1: level: value must be one of 'paper', 'wood', 'bronze', 'silver', 'gold'`}},
		{"missing-checks.yaml", []string{`1:1: missing required field "checks"`}},
		{"bad-check-field.yaml", []string{`12:5: checks[1].expected: does not apply to a range check`}},
		{"bad-expr.yaml", []string{`9:5: checks[0].expr: unexpected token EOF`}},
		{"unknown-app.yaml", []string{`3:18: apps[1]: unknown app "photoshop"`}},
		{"missing-milestone.yaml", []string{`14:5: checks[0].milestones: no milestone has id "second"`}},
		{"unknown-action.yaml", []string{`11:5: gold[1].kind: unknown action "teleport"`}},
		{"gui-only-command.yaml", []string{`10:5: gold[0].kind: a GUI-only task (interface: gui) refuses commands; its gold solution cannot use one`}},
		{"gold-not-terminal.yaml", []string{
			`10:5: gold[0].point: point (5000, 2) is outside the 1920x1080 screen`,
			`gold[0]: the gold solution must end with done, fail or answer, not click`}},
		{"kind-mismatch.yaml", []string{
			`5:1: checks: a qa task needs an answer check`,
			`6:5: checks[0].kind: an infeasible check belongs to a task of kind infeasible, not qa`,
			`gold[0]: only an infeasible task's gold solution ends with fail`}},
		{"bad-setup.yaml", []string{`13:11: setup[3]: a setup step has exactly one kind`}},
		{"bad-steps.yaml", []string{
			`7:7: setup[0].copy.asset: "missing.csv" is not in`,
			`10:7: setup[1].write.path: "relative/path.txt" must be absolute or start with ~/`,
			`12:5: setup[2].sleep: 5m0s is longer than a minute`,
			`14:7: setup[3].open.url: "not a url" is not an absolute URL`,
			`16:7: setup[4].wait_element.element: give a role, a name or a text`,
			`19:7: setup[5].run.timeout: 1h0m0s is longer than 10m0s`,
			`23:5: checks[0].asset: "expected.csv" is not in the suite's assets/`,
			`26:14: gold[0].target.tag: set-of-mark tags change with every screenshot`}},
		{"bad-after.yaml", []string{
			`6:5: after[0].keys: "ctrl+frob": unknown key "frob"`,
			`7:13: after[1].close.title: give the title`,
			`8:28: after[2].close.timeout: 1h0m0s is longer than 10m0s`}},
		{"bad-after-kind.yaml", []string{`7:5: after[1]: a step after the agent has exactly one kind: launch, run, write, copy, open, wait_window, wait_element, focus, sleep, keys, type, click or close`}},
		{"syntax.yaml", []string{`2:14: could not find end character of double-quoted text`}},
		{"template-undefined.yaml", []string{`2:1: instruction: placeholder {{m}} has no parameter (params: n)`}},
		{"template-zip.yaml", []string{`8:3: params.b: has 2 values but a has 3: zip needs equal lists`}},
		{"loopback-network.yaml", []string{`6:28: setup[0].run.network: value must be 'private'`}},
		{"loopback-null.yaml", []string{`7:5: checks[0].probe: xmlrpc's params[1]: null has no XML-RPC value`}},
		{"write-outside-home.yaml", []string{
			`7:7: setup[0].write.path: "/etc/sky.txt" is outside the home folder, the only one an x11 environment lets a setup step write: give a path under ~/`,
			`10:7: setup[1].write.path: "~/../sky.txt" must not contain ..`}},
		{"network-x11.yaml", []string{`5:1: environment: network and allow rule the pages of a browser (type: browser); the x11 environment keeps its own network`}},
		{"bad-allow.yaml", []string{
			`7:11: environment.allow[0]: 'https://sky.example/path' does not match pattern`,
			`7:39: environment.allow[1]: 'file:///etc' does not match pattern`}},
		{"loopback-browser.yaml", []string{`7:9: checks[0]: check "exact on GET /api/main/status of the loopback's port 8090" needs loopback, which a browser environment does not offer`}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "broken", tc.file)
			_, ps := Load(path)
			if len(ps) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(ps), len(tc.want), ps)
			}
			for i, w := range tc.want {
				got := ps[i].String()
				if !strings.HasPrefix(got, path+":") || !strings.Contains(got, w) {
					t.Errorf("problem %d = %q, want %q in file %s", i, got, w, path)
				}
			}
		})
	}
}

func TestTemplateExpansion(t *testing.T) {
	tests := []struct {
		file   string
		ids    []string
		values map[string]map[string]string
	}{
		{"calc-add-template.yaml", []string{"calc-add-12-30", "calc-add-250-7"},
			map[string]map[string]string{"calc-add-250-7": {"a": "250", "b": "7", "sum": "257"}}},
		{"touch-file-template.yaml", []string{"touch-file-md-draft", "touch-file-md-notes", "touch-file-txt-draft", "touch-file-txt-notes"},
			map[string]map[string]string{"touch-file-md-draft": {"ext": "md", "name": "draft"}}},
	}
	for _, tc := range tests {
		s, ps := Load(filepath.Join(exampleSuite, tc.file))
		if len(ps) > 0 {
			t.Fatalf("%s: %v", tc.file, ps)
		}
		var ids []string
		for _, tk := range s.Tasks {
			ids = append(ids, tk.ID)
			if tk.Template == "" {
				t.Errorf("%s: instance %s does not name its template", tc.file, tk.ID)
			}
		}
		sort.Strings(ids)
		if strings.Join(ids, " ") != strings.Join(tc.ids, " ") {
			t.Errorf("%s: ids %v, want %v", tc.file, ids, tc.ids)
		}
		for id, want := range tc.values {
			tk, ok := s.Task(id)
			if !ok {
				t.Fatalf("no instance %s", id)
			}
			for k, v := range want {
				if tk.Values[k] != v {
					t.Errorf("%s: %s=%q, want %q", id, k, tk.Values[k], v)
				}
			}
		}
	}
	s, _ := Load(filepath.Join(exampleSuite, "calc-add-template.yaml"))
	tk, _ := s.Task("calc-add-250-7")
	// A whole-string placeholder keeps its type: the expected value is a number.
	if n, ok := tk.Checks[0].Expected.(float64); !ok || n != 257 {
		t.Errorf("expected = %#v, want the number 257", tk.Checks[0].Expected)
	}
	if tk.Gold[0].Text != "250+7" || !strings.Contains(tk.Instruction, "add 250 and 7") {
		t.Errorf("instance not filled: %q / %q", tk.Gold[0].Text, tk.Instruction)
	}
}

func TestTemplateProblems(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unused param", "id: t\ninstruction: Hi {{a}}\nlevel: paper\nkind: qa\nparams:\n  a: [1]\n  b: [2]\nchecks:\n  - kind: answer\n    accepted: [x]\ngold:\n  - kind: answer\n    text: x\n",
			"t.yaml:7:3: params.b: parameter b is never used"},
		{"placeholder without params", "id: t\ninstruction: Hi {{a}}\nlevel: paper\nkind: qa\nchecks:\n  - kind: answer\n    accepted: [x]\ngold:\n  - kind: answer\n    text: x\n",
			"t.yaml:2:1: instruction: placeholder {{a}} in a file without params"},
		{"empty list", "id: t\ninstruction: Hi {{a}}\nlevel: paper\nkind: qa\nparams:\n  a: []\nchecks:\n  - kind: answer\n    accepted: [x]\ngold:\n  - kind: answer\n    text: x\n",
			"t.yaml:6:3: params.a: must be a non-empty list"},
		{"bad combine", "id: t\ninstruction: Hi {{a}}\nlevel: paper\nkind: qa\ncombine: shuffle\nparams:\n  a: [1]\nchecks:\n  - kind: answer\n    accepted: [x]\ngold:\n  - kind: answer\n    text: x\n",
			"t.yaml:5:1: combine: must be product or zip"},
		{"instance schema error", "id: t\ninstruction: Go\nlevel: \"{{l}}\"\nkind: qa\nparams:\n  l: [wood, steel]\nchecks:\n  - kind: answer\n    accepted: [x]\ngold:\n  - kind: answer\n    text: x\n",
			"t.yaml:3:1: (instance t-steel) level: value must be one of"},
		{"duplicate ids", "id: t\ninstruction: Go {{n}}\nlevel: paper\nkind: qa\nparams:\n  n: [a b, a-b]\nchecks:\n  - kind: answer\n    accepted: [x]\ngold:\n  - kind: answer\n    text: x\n",
			`t.yaml:1:1: id: task id "t-a-b" is also used in`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "t.yaml"), []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, ps := Load(dir)
			for _, p := range ps {
				if strings.Contains(p.String(), tc.want) {
					return
				}
			}
			t.Fatalf("problems %v, want one containing %q", ps, tc.want)
		})
	}
}

func TestStepValidate(t *testing.T) {
	s := &Suite{Apps: map[string]AppSpec{"tool": {Command: "tool"}}, assets: map[string]bool{"data/a.csv": true}}
	tests := []struct {
		spec StepSpec
		err  string
	}{
		{Launch{App: "mousepad"}, ""},
		{Launch{App: "tool"}, ""},
		{Launch{App: "word"}, `app: unknown app "word"`},
		{Launch{App: "xterm", Timeout: duration.Duration(20 * 60e9)}, "timeout:"},
		{Run{Command: "ls", Timeout: duration.Duration(5e9)}, ""},
		{Run{Command: "srv", Background: true, Timeout: duration.Duration(5e9)}, "nothing to time out"},
		{Write{Path: "~/a.txt"}, ""},
		{Write{Path: "/tmp/../etc/x"}, "must not contain .."},
		{Copy{Asset: "data/a.csv", To: "~/a.csv"}, ""},
		{Copy{Asset: "../secret", To: "~/a.csv"}, "inside the suite's assets"},
		{Copy{Asset: "b.csv", To: "~/b.csv"}, "is not in"},
		{Open{URL: "http://127.0.0.1:8080/"}, ""},
		{Open{Path: "~/a.txt", App: "mousepad"}, ""},
		{Open{Path: "~/a.txt", URL: "http://x/"}, "exactly one"},
		{Open{Path: "~/a.txt", App: "emacs"}, "unknown app"},
		{WaitWindow{Title: "Calculator"}, ""},
		{WaitElement{Element: observe.ElementQuery{Role: "push button"}}, ""},
		{Sleep{For: duration.Duration(2e9)}, ""},
		{Sleep{}, "must be positive"},
	}
	for _, tc := range tests {
		err := tc.spec.Validate(s)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s %+v: Validate() = %v, want %q", tc.spec.Kind(), tc.spec, err, tc.err)
		}
	}
}

func TestLevelDefaults(t *testing.T) {
	want := map[Level][2]float64{Paper: {0.5, 5}, Wood: {1, 25}, Bronze: {2, 50}, Silver: {4, 75}, Gold: {8, 100}}
	for l, w := range want {
		if l.Weight() != w[0] || float64(l.MaxSteps()) != w[1] {
			t.Errorf("%s: weight %v steps %d, want %v", l, l.Weight(), l.MaxSteps(), w)
		}
	}
	tk := &Task{Level: Bronze}
	if tk.MaxSteps() != 50 || tk.WallTime().Seconds() != 1000 {
		t.Errorf("defaults: %d steps, %s", tk.MaxSteps(), tk.WallTime())
	}
	tk.MaxStepsValue = 7
	if tk.MaxSteps() != 7 {
		t.Errorf("override: %d", tk.MaxSteps())
	}
}

func TestEnvironmentSize(t *testing.T) {
	for in, ok := range map[string]bool{"": true, "1280x800": true, "800": false, "axb": false, "8x8": false} {
		_, err := Environment{Resolution: in}.Size()
		if (err == nil) != ok {
			t.Errorf("Size(%q) error %v", in, err)
		}
	}
}

func TestTypedPlaceholders(t *testing.T) {
	src := "id: t-{{n}}\ninstruction: Count to {{n}}.\nlevel: paper\nkind: qa\nparams:\n  n: [3]\n" +
		"checks:\n  - kind: answer\n    accepted: [\"{{n}}\"]\n  - kind: range\n    probe: {answer: true}\n    min: \"{{n}}\"\n" +
		"gold:\n  - kind: answer\n    text: \"{{n}}\"\n"
	tasks, ps := Parse("t.yaml", []byte(src))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	tk := tasks[0]
	// Where the schema wants a string, the number's text; where it wants a number, the number.
	if tk.Gold[0].Text != "3" || tk.Checks[0].Accepted[0] != "3" || tk.Checks[1].Min == nil || *tk.Checks[1].Min != 3 {
		t.Fatalf("gold %q accepted %v min %v", tk.Gold[0].Text, tk.Checks[0].Accepted, tk.Checks[1].Min)
	}
}

func TestSuiteAppFiles(t *testing.T) {
	s, probs := Load(exampleSuite)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	app, ok := s.App("web-form-server")
	if !ok || app.Files["site/robots.txt"] != "User-agent: *\nDisallow: /\n" {
		t.Fatalf("web-form-server = %+v, want its files", app)
	}
	lo, _ := s.App("libreoffice-calc")
	if !strings.Contains(lo.Files[".config/libreoffice/4/user/registrymodifications.xcu"], "ShowTipOfTheDay") {
		t.Fatal("the built-in LibreOffice has no quiet profile")
	}
}

// A role in the tree's spelling loads without a word; one no tree gives
// is a warning that names the nearest known role, and leaves the task
// loaded.
func TestLintWarnsOfUnknownRoles(t *testing.T) {
	path := filepath.Join("testdata", "roles", "roles.yaml")
	s, ps := Load(path)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	if len(s.Tasks) != 1 {
		t.Fatalf("%d tasks loaded, want 1", len(s.Tasks))
	}
	want := []string{
		`:9:15: checks[1].element.role: warning: unknown role "Toggle_Buton": no environment's tree gives it, so nothing matches; did you mean "toggle button"?`,
		`:14:14: gold[1].target.role: warning: unknown role "togle button": no environment's tree gives it, so nothing matches; did you mean "toggle button"?`,
		`:16:14: gold[2].target.role: warning: unknown role "widget": no environment's tree gives it, so nothing matches`,
	}
	if len(s.Warnings) != len(want) {
		t.Fatalf("%d warnings, want %d:\n%v", len(s.Warnings), len(want), s.Warnings)
	}
	for i, w := range want {
		if got := s.Warnings[i].String(); got != path+w {
			t.Errorf("warning %d =\n%s\nwant\n%s", i, got, path+w)
		}
	}
}
