package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/store"
)

// fixtureRun records a run whose tasks had the outcomes given, one
// letter a repeat: s success, f failure, e error.
func fixtureRun(t *testing.T, dir string, outcomes map[string]string) {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetRun(store.Run{ID: filepath.Base(dir), Agent: "noop", Config: []byte(`{"suite":"../../testdata/mem"}`)}); err != nil {
		t.Fatal(err)
	}
	word := map[byte]string{'s': "success", 'f': "failure", 'e': "error"}
	for task, os := range outcomes {
		for i := range len(os) {
			if err := st.SaveResult(store.Result{Task: task, Repeat: i, Outcome: word[os[i]]}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestTasksSelect(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	fixtureRun(t, a, map[string]string{"count-lines": "sss", "editor-save": "fff", "impossible-printer": "sfs"})
	fixtureRun(t, b, map[string]string{"count-lines": "fff", "editor-save": "fff", "impossible-printer": "sss"})
	filter := filepath.Join(dir, "hard.filter")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"stable", []string{"--stable", a}, 0,
			"# proctor tasks select: 2 of 3 tasks, stable in every run\n# runs: " + a + "\ncount-lines\neditor-save\n",
			"2 of 3 tasks kept (stable in every run): 1 flaky, 3 scored alike by every run\n"},
		{"discriminating", []string{"--discriminating", a, b}, 0,
			"# proctor tasks select: 2 of 3 tasks, discriminating between runs\n# runs: " + a + ", " + b + "\ncount-lines\nimpossible-printer\n",
			"2 of 3 tasks kept (discriminating between runs): 1 flaky, 1 scored alike by every run\n"},
		{"both, to a file", []string{"--stable", "--discriminating", a, b, "--out", filter}, 0, "",
			"1 of 3 tasks kept (stable in every run and discriminating between runs): 1 flaky, 1 scored alike by every run\nrun them with: proctor run SUITE --filter @" + filter + "\n"},
		{"no cut", []string{a}, 1, "", "say which tasks to keep: --stable, --discriminating, or both"},
		{"one run to compare", []string{"--discriminating", a}, 1, "", "--discriminating compares runs: give two runs or more"},
		{"nothing kept", []string{"--discriminating", a, a}, 1, "# proctor tasks select: 0 of 3 tasks, discriminating between runs\n# runs: " + a + ", " + a + "\n",
			"0 of 3 tasks kept (discriminating between runs): 1 flaky, 3 scored alike by every run\nno task kept: the filter file selects nothing"},
		{"not a run", []string{"--stable", dir}, 1, "", "no run there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", append([]string{"tasks", "select"}, tt.args...)...)
			if code != tt.code || out != tt.stdout || !strings.Contains(errs, tt.stderr) {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant it to hold:\n%s", code, tt.code, out, tt.stdout, errs, tt.stderr)
			}
		})
	}
	b2, err := os.ReadFile(filter)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b2), "\ncount-lines\n") {
		t.Fatalf("filter file:\n%s", b2)
	}
	// The runner takes the file, and a resume keeps its selection.
	runDir := filepath.Join(dir, "cut")
	_, errs, code := runCLI(t, "", "run", "../../testdata/mem", "--env", "mem", "--agent", "noop", "--filter", "@"+filter, "--out", runDir, "--report", "none")
	if code != 0 || !strings.Contains(errs, "1 task x 1") {
		t.Fatalf("run --filter @FILE: exit %d\n%s", code, errs)
	}
	st, err := store.OpenRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := st.Results()
	r, _ := st.Receipt()
	st.Close()
	if len(rs) != 1 || rs[0].Task != "count-lines" || r.Filter != "^(?:count-lines)$" {
		t.Errorf("results %+v, receipt's filter %q", rs, r.Filter)
	}
	if _, errs, code := runCLI(t, "", "run", "--resume", runDir, "--filter", "@"+filter, "--report", "none"); code != 0 {
		t.Errorf("resume with the same @FILE: exit %d\n%s", code, errs)
	}
}

func TestFilterPattern(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		filter, want, err string
	}{
		{"^calc-", "^calc-", ""},
		{"", "", ""},
		{"@" + write("ids", "# a cut\n\na-1\n  b.c  \n"), `^(?:a-1|b\.c)$`, ""},
		{"@" + write("empty", "# nothing\n\n"), "", "the file lists no task id"},
		{"@" + write("spaces", "a b\n"), "", `"a b" is not a task id`},
		{"@" + filepath.Join(dir, "missing"), "", "no such file"},
	}
	for _, tt := range tests {
		got, err := filterPattern(tt.filter)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("filterPattern(%q) error %v, want %q", tt.filter, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("filterPattern(%q) = %q, %v; want %q", tt.filter, got, err, tt.want)
		}
	}
}
