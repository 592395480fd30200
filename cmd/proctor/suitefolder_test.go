package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lineOf is the line and column of the first occurrence of sub in text.
func textLine(t *testing.T, text, sub string) (int, int) {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if c := strings.Index(l, sub); c >= 0 {
			return i + 1, c + 1
		}
	}
	t.Fatalf("%q is not in the text", sub)
	return 0, 0
}

// TestSuiteNamesAMissingFolder: a suite.yaml that names a folder that is
// not there stops the run with an error that names the file, the line, the
// field and the path looked for: a folder of the suite when the suite is
// loaded (testdata/example's suite.yaml, copied with its Android task
// alone, as one may to edit the task for a device), a data folder the
// suite's set-up makes before the run starts.
func TestSuiteNamesAMissingFolder(t *testing.T) {
	t.Run("a folder of the suite", func(t *testing.T) {
		dir := t.TempDir()
		suite := string(mustRead(t, "../../testdata/example/suite.yaml"))
		writeFiles(t, dir, map[string]string{
			"suite.yaml":                suite,
			"android-wifi-process.yaml": string(mustRead(t, "../../testdata/example/android-wifi-process.yaml")),
		})
		line, col := textLine(t, suite, `data: "{{suite}}/helpdesk"`)
		want := fmt.Sprintf(`%s:%d:%d: services[0].data: the suite has no folder "helpdesk" (%s does not exist)`,
			filepath.Join(dir, "suite.yaml"), line, col, filepath.Join(dir, "helpdesk"))
		_, errs, code := runCLI(t, "", "run", "--suite", dir, "--agent", "replay", "--env", "android", "--out", filepath.Join(t.TempDir(), "r"))
		if code == 0 || !strings.Contains(errs, want) {
			t.Errorf("exit %d:\n%s\nwant a line with %s", code, errs, want)
		}
	})
	t.Run("a data folder the set-up makes", func(t *testing.T) {
		dir := t.TempDir()
		suite := string(mustRead(t, "../../testdata/mem/suite.yaml")) + "services:\n  - name: notes\n" +
			"    command: [python3, -m, http.server, --bind, 127.0.0.1, --directory, \"{{data}}\", \"{{port}}\"]\n" +
			"    data: " + filepath.Join(dir, "notes-data") + "\n"
		task := strings.Replace(string(mustRead(t, "../../testdata/mem/count-lines.yaml")),
			"Answer with the number.", "Answer with the number (notes at {{services.notes}}).", 1)
		if !strings.Contains(task, "{{services.notes}}") {
			t.Fatal("the task does not name the service")
		}
		writeFiles(t, dir, map[string]string{"suite.yaml": suite, "count-lines.yaml": task})
		line, col := textLine(t, suite, "data: ")
		want := fmt.Sprintf("service notes: its data folder %s (%s:%d:%d: services[0].data) is missing: run `proctor setup mem` first",
			filepath.Join(dir, "notes-data"), filepath.Join(dir, "suite.yaml"), line, col)
		_, errs, code := runCLI(t, "", "run", "--suite", dir, "--agent", "replay", "--env", "mem", "--out", filepath.Join(t.TempDir(), "r"))
		if code == 0 || !strings.Contains(errs, want) {
			t.Errorf("exit %d:\n%s\nwant a line with %s", code, errs, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "notes-data")); err == nil {
			t.Error("the run made the data folder")
		}
	})
}
