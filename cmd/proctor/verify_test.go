package main

import (
	"context"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/store"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files")

// receiptSuite is a suite for the in-memory desktop whose tasks use
// assets: one copies one in and compares the file with another.
var receiptSuite = map[string]string{
	"suite.yaml": "name: receipts\ndescription: Tasks whose receipts the tests check.\n",
	"copy-notes.yaml": `id: copy-notes
instruction: Open ~/notes.txt in the editor and save it unchanged.
app: mousepad
level: paper
kind: state
setup:
  - copy: {asset: notes.txt, to: ~/notes.txt}
  - launch: {app: mousepad, args: [~/notes.txt], wait_window: notes.txt}
checks:
  - kind: file_equal
    file: ~/notes.txt
    asset: expected/notes.txt
gold:
  - kind: done
`,
	"count-lines.yaml": `id: count-lines
instruction: How many lines does ~/data.txt have? Answer with the number.
app: bash
level: paper
kind: qa
setup:
  - write: {path: ~/data.txt, content: "one\ntwo\nthree\n"}
checks:
  - kind: answer
    accepted: ["3"]
gold:
  - kind: answer
    text: "3"
`,
	"assets/notes.txt":          "buy milk\n",
	"assets/expected/notes.txt": "buy milk\n",
}

// writeSuite writes files into dir.
func writeSuite(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixedFacts makes the receipts' machine and package versions those of
// a fixed machine until the test ends; packages maps a package to its
// version for the stand-in of dpkg-query.
func fixedFacts(t *testing.T, packages map[string]string) {
	t.Helper()
	oldP, oldM, oldV := packagesOf, thisMachine, version
	t.Cleanup(func() { packagesOf, thisMachine, version = oldP, oldM, oldV })
	version = "v1.0.0-test"
	thisMachine = func() store.Machine {
		return store.Machine{OS: "linux", Arch: "amd64", Kernel: "6.1.0-test", Cores: 8, Memory: 16 << 30, Go: "go1.26-test"}
	}
	packagesOf = func(_ context.Context, names []string) (map[string]string, error) {
		out := map[string]string{}
		for _, n := range names {
			out[n] = packages[n]
		}
		return out, nil
	}
}

var debian = map[string]string{"xvfb": "2:21.1.7-3+deb12u13", "chromium": "130.0.6723.116-1~deb12u1", "mousepad": "0.5.10-2", "xterm": "379-1"}

// TestVerify makes a run, then changes its suite or environment one way
// at a time and checks that verify names each drift, and only it.
func TestVerify(t *testing.T) {
	fixedFacts(t, debian)
	suite := filepath.Join(t.TempDir(), "suite")
	writeSuite(t, suite, receiptSuite)
	runDir := filepath.Join(t.TempDir(), "run")
	_, errs, code := runCLI(t, "", "run", suite, "--env", "mem=1920x1080", "--agent", "noop", "--out", runDir, "--report", "none")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	out, errs, code := runCLI(t, "", "verify", runDir)
	if code != 0 || !strings.Contains(out, runDir+" matches its receipt: 2 tasks, 4 packages, 1 environment and the machine are as they were") {
		t.Fatalf("verify of an unchanged run: exit %d\n%s%s", code, out, errs)
	}

	tests := []struct {
		name     string
		files    map[string]string // written over a copy of the suite
		packages map[string]string // over debian
		harness  string
		args     []string
		want     []string
	}{
		{name: "task file", files: map[string]string{"count-lines.yaml": strings.Replace(receiptSuite["count-lines.yaml"], "with the number", "in digits", 1)},
			want: []string{"task count-lines: its file count-lines.yaml changed"}},
		{name: "asset", files: map[string]string{"assets/expected/notes.txt": "buy bread\n"},
			want: []string{"task copy-notes: asset expected/notes.txt changed"}},
		{name: "screen size of the environment", args: []string{"--env", "mem=1280x800"},
			want: []string{"environment mem 1: screen size 1920x1080 → 1280x800"}},
		{name: "screen size of a task", files: map[string]string{"count-lines.yaml": receiptSuite["count-lines.yaml"] + "environment: {resolution: 1280x800}\n"},
			want: []string{"task count-lines: its file count-lines.yaml changed", "task count-lines: screen size 1920x1080 → 1280x800"}},
		{name: "package", packages: map[string]string{"mousepad": "0.6.1-1"},
			want: []string{"package mousepad: 0.5.10-2 → 0.6.1-1"}},
		{name: "harness", harness: "v1.1.0", want: []string{"harness: v1.0.0-test → v1.1.0"}},
		{name: "task gone", files: map[string]string{"count-lines.yaml": strings.Replace(receiptSuite["count-lines.yaml"], "id: count-lines", "id: count-words", 1)},
			want: []string{"task count-words: selected now, not in the run", "task count-lines: not in the suite's selection any more"}},
		{name: "all at once", files: map[string]string{"assets/notes.txt": "buy eggs\n", "copy-notes.yaml": receiptSuite["copy-notes.yaml"] + "tags: [files]\n"},
			args: []string{"--env", "mem=1024x768"},
			want: []string{"task copy-notes: its file copy-notes.yaml changed", "task copy-notes: asset notes.txt changed",
				"environment mem 1: screen size 1920x1080 → 1024x768"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "suite")
			if err := os.CopyFS(dir, os.DirFS(suite)); err != nil {
				t.Fatal(err)
			}
			writeSuite(t, dir, tt.files)
			pk := maps.Clone(debian)
			maps.Copy(pk, tt.packages)
			fixedFacts(t, pk)
			if tt.harness != "" {
				version = tt.harness
			}
			out, errs, code := runCLI(t, "", append([]string{"verify", runDir, "--suite", dir}, tt.args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
			}
			var got []string
			for line := range strings.Lines(out) {
				if l, ok := strings.CutPrefix(line, "  "); ok {
					got = append(got, strings.TrimSpace(l))
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("drift:\n%s\nwant %d lines:\n  %s", out, len(tt.want), strings.Join(tt.want, "\n  "))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("drift line %d = %q, want it to begin %q", i+1, got[i], w)
				}
			}
			if head := strings.SplitN(out, "\n", 2)[0]; head != runDir+": "+plural(len(tt.want), "drift")+" from its receipt:" {
				t.Errorf("first line %q", head)
			}
		})
	}

	t.Run("resume notes the drift", func(t *testing.T) {
		fixedFacts(t, map[string]string{"xvfb": "2:21.1.8-1", "chromium": debian["chromium"], "mousepad": debian["mousepad"], "xterm": debian["xterm"]})
		_, errs, code := runCLI(t, "", "run", "--resume", runDir, "--report", "none")
		if code != 0 || !strings.Contains(errs, "drift since the run began: package xvfb: 2:21.1.7-3+deb12u13 → 2:21.1.8-1") {
			t.Fatalf("resume: exit %d\n%s", code, errs)
		}
		out, _, _ := runCLI(t, "", "report", "--receipt", runDir)
		if !regexp.MustCompile(`(?m)^  [0-9-]+ [0-9:]+ UTC, harness v1.0.0-test, with drift:\n    package xvfb: 2:21.1.7-3\+deb12u13 → 2:21.1.8-1$`).MatchString(out) {
			t.Errorf("the receipt does not tell the resumption:\n%s", out)
		}
	})

	t.Run("no receipt", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "old")
		st, err := store.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetRun(store.Run{ID: "old", Agent: "noop", Config: []byte(`{"suite":"x"}`)}); err != nil {
			t.Fatal(err)
		}
		st.Close()
		_, errs, code := runCLI(t, "", "verify", dir)
		if code != 1 || !strings.Contains(errs, "no receipt recorded in this run (runs made before receipts were kept have none)") {
			t.Errorf("verify of a run without receipt: exit %d, %s", code, errs)
		}
	})
}

// TestReceiptText checks the text of report --receipt against a golden
// file, with what changes from run to run masked: times, the run's
// folders, the hashes of the tasks as loaded (they follow the task
// format's fields) and the Go version of the environments.
func TestReceiptText(t *testing.T) {
	fixedFacts(t, debian)
	suite := filepath.Join(t.TempDir(), "suite")
	writeSuite(t, suite, receiptSuite)
	runDir := filepath.Join(t.TempDir(), "receipt-run")
	_, errs, code := runCLI(t, "", "run", suite, "--env", "mem", "--agent", "random", "--repeat", "2", "--max-cost", "0.25", "--out", runDir, "--report", "none")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	out, errs, code := runCLI(t, "", "report", "--receipt", runDir)
	if code != 0 {
		t.Fatalf("report --receipt: exit %d\n%s", code, errs)
	}
	st, err := store.OpenRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.Receipt()
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r.Finished.Before(r.Started) || r.Started.IsZero() {
		t.Errorf("started %v, finished %v", r.Started, r.Finished)
	}
	repl := []string{suite, "SUITE", r.SuiteHash, "SUITEHASH", runtime.Version(), "GOVERSION"}
	for _, tr := range r.Tasks {
		repl = append(repl, tr.Hash[:12], "CONTENT-HASH")
	}
	out = strings.NewReplacer(repl...).Replace(out)
	out = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`).ReplaceAllString(out, "TIME")
	out = regexp.MustCompile(`\(\d+s\)`).ReplaceAllString(out, "(DURATION)")
	golden := filepath.Join("testdata", "receipt.golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if out != string(want) {
		t.Errorf("report --receipt differs from %s (-update rewrites it):\n%s", golden, out)
	}
	js, _, code := runCLI(t, "", "report", "--receipt", "--format", "json", runDir)
	if code != 0 || !strings.Contains(js, `"seeds": {`) || !strings.Contains(js, `"agent": 1`) {
		t.Errorf("report --receipt --format json: exit %d\n%s", code, js)
	}
	if !slices.ContainsFunc(r.Seen, func(s store.SeenEnv) bool { return s.Place == "mem 1" && s.Screen == "1920x1080" }) {
		t.Errorf("seen environments %+v", r.Seen)
	}
}
