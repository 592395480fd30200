package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A run that the runner's pre-flight refuses says only why: no line
// announces a run that never starts, and no folder is left.
func TestRefusedRunPrintsNoRunLine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	_, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/example", "--agent", "noop", "--env", "mem", "--out", out)
	if code == 0 || !strings.HasPrefix(errs, "pre-flight refused the run:") {
		t.Fatalf("exit %d; stderr does not begin with the refusal:\n%s", code, errs)
	}
	if strings.Contains(errs, "run "+out) {
		t.Errorf("the refused run announced itself:\n%s", errs)
	}
}

// Counts of one thing take the singular.
func TestCountsTakeTheirNumber(t *testing.T) {
	_, errs, code := runCLI(t, "", "tasks", "list", "../../task/testdata/roles")
	if code != 0 || !strings.Contains(errs, "1 task\n") {
		t.Errorf("tasks list of one task: exit %d\n%s", code, errs)
	}
	_, errs, code = runCLI(t, "", "tasks", "expand", "../../task/testdata/roles/roles.yaml")
	if code != 0 || !strings.Contains(errs, "1 instance\n") {
		t.Errorf("tasks expand of one task: exit %d\n%s", code, errs)
	}
	out, _, code := runCLI(t, "", "tasks", "stats", "../../task/testdata/roles")
	if code != 0 || !strings.Contains(out, "1 task instance;") || !strings.Contains(out, "0 wrong trajectories") {
		t.Errorf("tasks stats of one task: exit %d\n%s", code, out)
	}
}
