package scienceboard

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

// TestImport converts each fixture, one class of ScienceBoard's VM tasks
// each, and checks its status, reasons, kind, checks and gold.
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
		checks string // the checks' kinds
		gold   string // the gold's first action's kind
		reason string // in the reasons, when blocked or not imported
	}{
		{"KAlgebra/C-01", imports.Runnable, task.QATask, "answer", "answer", ""},
		{"KAlgebra/A-01", imports.NotImported, "", "", "", "not supported: initialize[1]: tab drives the patched KAlgebra"},
		{"TeXstudio/A-01", imports.Runnable, task.StateTask, "exact,contains,command", "", ""},
		{"TeXstudio/B-01", imports.NotImported, "", "", "", "not supported: evaluate[0]: checks[0].value: bad regular expression"},
		{"Celestia/B-01", imports.Blocked, task.InfeasibleTask, "infeasible", "fail", "app not installable: Celestia is not in Debian 12"},
		{"Lean/A-01", imports.Blocked, task.StateTask, "command", "", "app not installable: VS Code, and Lean 4"},
		{"ChimeraX/A-01", imports.Blocked, task.QATask, "answer", "answer", "live web: initialize[3]: ChimeraX fetches 1abc from the Protein Data Bank"},
		{"GrassGIS/A-01", imports.NotImported, "", "", "", "not supported: initialize[1]: map drives the patched GRASS GIS"},
		{"GrassGIS/broken", imports.NotImported, "", "", "", "tasks/VM/GrassGIS/broken.json: "},
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
			ks = append(ks, string(c.Kind))
		}
		gold := ""
		if len(it.Task.Gold) > 0 {
			gold = string(it.Task.Gold[0].Kind)
		}
		if it.Task.Kind != tc.kind || strings.Join(ks, ",") != tc.checks || gold != tc.gold || (gold == "") != (it.Task.Unproven != "") {
			t.Errorf("%s: kind %s checks %v gold %q unproven %q; want %s %s %q", tc.id, it.Task.Kind, ks, gold, it.Task.Unproven, tc.kind, tc.checks, tc.gold)
		}
		if o := it.Task.Origin; o.Peer != Peer || o.ID != tc.id || o.File != "tasks/VM/"+tc.id+".json" || len(o.SHA256) != 64 {
			t.Errorf("%s: origin %+v", tc.id, o)
		}
	}

	kal := got["KAlgebra/C-01"].Task
	if kal.Gold[0].Text != "55" || kal.Checks[0].Accepted[0] != "55" || len(kal.Setup) != 1 || kal.Setup[0].Launch.App != KAlgebra || len(kal.Setup[0].Launch.Args) != 0 || kal.MaxStepsValue != 8 {
		t.Errorf("KAlgebra/C-01: %+v", kal)
	}
	tex := got["TeXstudio/A-01"].Task
	if c := tex.Checks[0]; c.Probe.File != "~/paper/main.tex" || c.Expected != "\\documentclass{article}\n\\begin{document}\nPublished in 1905.\n\\end{document}\n" {
		t.Errorf("TeXstudio/A-01's file check: %+v", c)
	}
	if c := tex.Checks[2]; !strings.Contains(c.Command, `cp -r "$HOME/paper"/. "$d"`) || !strings.Contains(c.Command, "&& bibtex main >/dev/null &&") || *c.ExitCode != 0 {
		t.Errorf("TeXstudio/A-01's compile check (a .bib is written: bibtex runs): %q", c.Command)
	}
	if st := tex.Setup; len(st) != 4 || st[0].Write.Path != "~/paper/main.tex" || st[2].Run.Command != "rm $HOME/paper/main.pdf || true" || st[3].Launch.Args[0] != "~/paper/main.tex" {
		t.Errorf("TeXstudio/A-01's setup: %+v", st)
	}
	cel := got["Celestia/B-01"].Task
	if len(cel.Setup) != 1 || cel.Setup[0].Launch.App != Celestia || cel.Gold[0].Kind != action.Fail {
		t.Errorf("Celestia/B-01: opt is the harness's and goes: %+v", cel.Setup)
	}
	lean := got["Lean/A-01"].Task
	want := "import Mathlib\n\nopen Set\n\ndef twice (n : Nat) : Nat := 2 * n\n\ntheorem T_1 (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  sorry\n"
	if lean.Setup[0].Write == nil || lean.Setup[0].Write.Path != "~/sci/Sci/Basic.lean" || lean.Setup[0].Write.Content != want {
		t.Errorf("Lean/A-01's file:\n%q\nwant\n%q", lean.Setup[0].Write, want)
	}
	if c := lean.Checks[0].Command; !strings.Contains(c, "grep -qxF -e 'theorem T_1 (p q : Prop) (hp : p) (hq : q) : p ∧ q := by' Sci/Basic.lean") || !strings.Contains(c, "declaration uses 'sorry'") {
		t.Errorf("Lean/A-01's check: %q", c)
	}
	chx := got["ChimeraX/A-01"].Task
	var runs []string
	for _, st := range chx.Setup {
		if st.Run != nil {
			runs = append(runs, st.Run.Command)
		}
	}
	if len(runs) != 4 || runs[2] != "curl -fsS -G --data-urlencode 'command=open 1abc' http://127.0.0.1:60123/run" || chx.Setup[1].Launch.Args[1] != "remotecontrol rest start json true port 60123" {
		t.Errorf("ChimeraX/A-01's setup: %q %+v", runs, chx.Setup[1].Launch)
	}
	if suite.Apps[Celestia].Package != "" || suite.Apps[TeXstudio].Package != "texstudio" || suite.Setup == nil {
		t.Errorf("suite: %+v", suite)
	}
}

// TestSplitQuoted reads a launch's shell line as ScienceBoard's files
// write them.
func TestSplitQuoted(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`texstudio /home/user/a.tex`, []string{"texstudio", "/home/user/a.tex"}, true},
		{`gnome-terminal -- /bin/bash -ic "FLASK_PORT=8000 grass --gui /x"`, []string{"gnome-terminal", "--", "/bin/bash", "-ic", "FLASK_PORT=8000 grass --gui /x"}, true},
		{`a 'b c' "d \"e\""`, []string{"a", "b c", `d "e"`}, true},
		{`a "b`, nil, false},
	}
	for _, tc := range tests {
		got, ok := splitQuoted(tc.in)
		if ok != tc.ok || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("splitQuoted(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
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
	if c.Tasks != 9 || c.Runnable != 2 || c.Blocked != 3 || c.NotImported != 4 || len(s.Tasks) != 5 || c.ByBlocker[imports.AppMissing] != 3 {
		t.Errorf("counts %+v, %d tasks loaded", c, len(s.Tasks))
	}
	table, err := os.ReadFile(filepath.Join(out, imports.TableFile))
	if err != nil || !strings.Contains(string(table), "| B-01 | Celestia | blocked | app not installable: Celestia is not in Debian 12 |") {
		t.Errorf("the table:\n%s", table)
	}
}

func FuzzParse(f *testing.F) {
	m, _ := filepath.Glob("testdata/tasks/VM/*/*.json")
	for _, p := range m {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tf, err := Parse(b)
		if err != nil {
			return
		}
		it := Import(tf, "TeXstudio", "A-01", "tasks/VM/TeXstudio/A-01.json", imports.Hash(b), "")
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
