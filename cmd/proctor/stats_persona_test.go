package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestTasksStatsPersonas: tasks stats counts the tasks of each persona in
// a suite whose tasks name one, and prints no persona table for a suite
// whose tasks name none.
func TestTasksStatsPersonas(t *testing.T) {
	out, errs, code := runCLI(t, "", "tasks", "stats", "../../suites/enterprise")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	_, table, ok := strings.Cut(out, "\nby persona\n")
	if !ok {
		t.Fatalf("no persona table:\n%s", out)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := strings.Split(table, "\n")
	if len(rows) != 3 {
		t.Fatalf("persona rows %q, want crm-admin, sales-rep, service-agent", rows)
	}
	for i, p := range []string{"crm-admin", "sales-rep", "service-agent"} {
		if !regexp.MustCompile(`^  ` + p + `\s+[1-9][0-9]*\s+[0-9.]+%`).MatchString(rows[i]) {
			t.Errorf("row %d is %q, want %s with its count and share", i, rows[i], p)
		}
	}
	out, _, code = runCLI(t, "", "tasks", "stats", "../../testdata/runner")
	if code != 0 || strings.Contains(out, "by persona") {
		t.Errorf("a suite without personas: exit %d\n%s", code, out)
	}
}
