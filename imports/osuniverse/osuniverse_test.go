package osuniverse

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/imports"
	"github.com/proctor-eval/proctor/task"
)

func byID(tasks []*imports.Task) map[string]*imports.Task {
	out := map[string]*imports.Task{}
	for _, it := range tasks {
		out[it.Group+"/"+it.ID] = it
	}
	return out
}

func reasons(it *imports.Task) string {
	var rs []string
	for _, r := range it.Reasons {
		rs = append(rs, r.String())
	}
	return strings.Join(rs, "\n")
}

// TestImport converts each fixture, one class of OSUniverse's test cases
// each, and checks its status, reasons, kind and checks.
func TestImport(t *testing.T) {
	tasks, suite, err := Read("testdata", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := byID(tasks)
	tests := []struct {
		id     string
		status imports.Status
		kind   task.Kind
		checks string // the checks' kinds (and a judge's evidence)
		reason string // in the reasons, when blocked or not imported
	}{
		{"libreoffice_calc/read_cell", imports.Runnable, task.QATask, "answer", ""},
		{"libreoffice_writer/title", imports.Runnable, task.StateTask, "judge:command_output,judge:returned_result", ""},
		{"desktop/about", imports.Runnable, task.StateTask, "judge:returned_result", ""}, // in an XFCE session
		{"browser/search", imports.Blocked, task.ProcessTask, "judge:expected_flow,judge:final_screenshot", "live web: setup_cmd opens https://www.example.org/"},
		{"terminal/apk", imports.Blocked, task.StateTask, "judge:final_screenshot", "app not installable: the instruction installs with Alpine Linux's apk"},
		{"terminal/listing", imports.Runnable, task.StateTask, "judge:command_output", ""},
		{"terminal/broken", imports.NotImported, "", "", "testcases/terminal/broken.yaml: "},
		{"multiapp/curl", imports.NotImported, "", "", "not supported: setup_cmd: curl -O https://files.example/r.txt"},
		{"games/month", imports.Blocked, task.StateTask, "judge:returned_result", "live web: the instruction goes to https://www.example.com/book"},
	}
	if len(tasks) != len(tests) {
		t.Errorf("read %d tasks, want %d", len(tasks), len(tests))
	}
	for _, tc := range tests {
		it := got[tc.id]
		if it == nil {
			t.Errorf("%s: not read", tc.id)
			continue
		}
		if s := it.Status(); s != tc.status {
			t.Errorf("%s: %s, want %s (%v)", tc.id, s, tc.status, it.Reasons)
		}
		if tc.reason != "" && !strings.Contains(reasons(it), tc.reason) {
			t.Errorf("%s: reasons %q lack %q", tc.id, reasons(it), tc.reason)
		}
		if tc.status == imports.NotImported {
			continue
		}
		var ks []string
		for _, c := range it.Task.Checks {
			k := string(c.Kind)
			if c.Evidence != "" {
				k += ":" + c.Evidence
			}
			ks = append(ks, k)
		}
		if it.Task.Kind != tc.kind || strings.Join(ks, ",") != tc.checks {
			t.Errorf("%s: kind %s checks %v, want %s %s", tc.id, it.Task.Kind, ks, tc.kind, tc.checks)
		}
		if want := map[bool]string{true: task.SessionXFCE}[tc.id == "desktop/about"]; it.Task.Environment.Session != want {
			t.Errorf("%s: session %q, want %q", tc.id, it.Task.Environment.Session, want)
		}
		o := it.Task.Origin
		if o.Peer != Peer || o.ID != tc.id || o.File != "testcases/"+tc.id+".yaml" || len(o.SHA256) != 64 {
			t.Errorf("%s: origin %+v", tc.id, o)
		}
	}

	cell := got["libreoffice_calc/read_cell"].Task
	if len(cell.Gold) != 1 || cell.Gold[0].Kind != action.Answer || cell.Gold[0].Text != "Rent" || cell.Unproven != "" {
		t.Errorf("read_cell: a literal answer is the gold: %+v, unproven %q", cell.Gold, cell.Unproven)
	}
	if len(cell.Setup) != 3 || cell.Setup[0].Copy == nil || cell.Setup[0].Copy.To != "~/Desktop/budget.ods" ||
		cell.Setup[1].Launch == nil || cell.Setup[1].Launch.App != "libreoffice-calc" || cell.Setup[1].Launch.Args[0] != "~/Desktop/budget.ods" || cell.Setup[2].Sleep == nil {
		t.Errorf("read_cell's setup: %+v", cell.Setup)
	}
	if len(cell.Origin.Fetch) != 1 || cell.Origin.Fetch[0].URL != "https://files.example/budget.ods" || cell.Origin.Fetch[0].Asset != "osuniverse/budget.ods" {
		t.Errorf("read_cell's files to fetch: %+v", cell.Origin.Fetch)
	}
	title := got["libreoffice_writer/title"].Task
	if c := title.Checks[0]; c.Command != "cd $HOME/Desktop && pandoc notes.odt -t plain" || !strings.Contains(c.Expectation, "'Field notes'") {
		t.Errorf("title's command_output check: %+v", c)
	}
	if title.Unproven == "" || len(title.Gold) != 0 {
		t.Errorf("title: a task judged by a model has no gold: %+v", title.Gold)
	}
	if got["terminal/listing"].Task.App != Terminal {
		t.Errorf("listing's app: %q", got["terminal/listing"].Task.App)
	}
	month := got["games/month"].Task
	if !strings.Contains(month.Instruction, "for next month's 3rd and the month 2 months from now, its 4th") || strings.Contains(month.Checks[0].Expectation, "[%") {
		t.Errorf("month: placeholders left: %q / %q", month.Instruction, month.Checks[0].Expectation)
	}
	if suite.Setup == nil || strings.Join(suite.Setup.Packages, ",") != "libreoffice,pandoc" {
		t.Errorf("suite's packages: %+v", suite.Setup)
	}
}

// TestLiteral: a returned_result's value is an answer when it is one
// literal, and a judge's expectation otherwise.
func TestLiteral(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Product", "Product", true},
		{"15", "15", true},
		{"'Use Case 4'", "Use Case 4", true},
		{"'Product', 'Color'", "", false},
		{"The name of the first listing is returned.", "", false},
		{"'unbalanced", "", false},
		{"''", "", false},
	}
	for _, tc := range tests {
		got, ok := literal(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("literal(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSuiteLints writes the imported fixtures as a suite: every task
// imported lints clean, and the table counts every task.
func TestSuiteLints(t *testing.T) {
	tasks, suite, err := Read("testdata", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "suite")
	if err := imports.Write(context.Background(), out, suite, tasks, imports.Options{}); err != nil {
		t.Fatal(err)
	}
	s, ps := task.Load(out)
	if len(ps) > 0 {
		t.Fatalf("the imported suite does not lint:\n%v", ps)
	}
	c := imports.Count(tasks)
	if c.Tasks != 9 || c.NotImported != 2 || c.Mapped != 7 || len(s.Tasks) != 7 || c.ByBlocker[imports.NotFetched] != 2 {
		t.Errorf("counts %+v, %d tasks loaded", c, len(s.Tasks))
	}
	table, err := os.ReadFile(filepath.Join(out, imports.TableFile))
	if err != nil || !strings.Contains(string(table), "| curl | multiapp | not imported | not supported: setup_cmd: curl -O https://files.example/r.txt |") {
		t.Errorf("the table:\n%s", table)
	}
	if _, ok := s.App(Terminal); !ok {
		t.Error("suite.yaml does not declare the terminal")
	}
}

func FuzzParse(f *testing.F) {
	m, _ := filepath.Glob("testdata/testcases/*/*.yaml")
	for _, p := range m {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tf, err := Parse(b)
		if err != nil {
			return
		}
		it, _ := Import(tf, "terminal", "x", "testcases/terminal/x.yaml", imports.Hash(b), "")
		if it.Mapped() {
			if it.Task == nil {
				t.Fatal("a mapped task without a task")
			}
			if _, err := check.CompileAll(it.Task.Checks, nil); err != nil {
				t.Fatalf("a mapped task's checks do not compile: %v", err)
			}
		}
	})
}
