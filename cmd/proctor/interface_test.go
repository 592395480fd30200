package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestResultsCarryInterface: each episode's result, and the JSON report,
// name the task's interface (gui, gui+cli, cli).
func TestResultsCarryInterface(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, errs, code := runCLI(t, "", "run", "../../testdata/mem", "--env", "mem", "--agent", "noop", "--out", dir, "--report", "none"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	out, errs, code := runCLI(t, "", "report", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, errs)
	}
	var reports []struct {
		Results []struct {
			Task      string `json:"task"`
			Interface string `json:"interface"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &reports); err != nil || len(reports) != 1 {
		t.Fatalf("report JSON: %v\n%s", err, out)
	}
	want := map[string]string{"count-lines": "cli", "editor-save": "gui", "impossible-printer": "gui+cli"}
	got := map[string]string{}
	for _, x := range reports[0].Results {
		got[x.Task] = x.Interface
	}
	for task, iface := range want {
		if got[task] != iface {
			t.Errorf("%s: interface %q, want %q (results %v)", task, got[task], iface, got)
		}
	}
}
