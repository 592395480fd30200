package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionTasksValidate validates a suite whose tasks run in the XFCE
// and GNOME sessions: each gold solution sets a setting in a terminal
// (xfconf, GSettings) that the check then reads in another process; the
// start state, which every reset restores, has the default.
func TestSessionTasksValidate(t *testing.T) {
	needDesktop(t)
	for _, b := range []string{"xterm", "xfwm4", "xfce4-panel", "xfdesktop", "xfconf-query", "gnome-shell", "dconf"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed (proctor setup testdata/sessions)", b)
		}
	}
	out, errs, code := runCLI(t, "", "validate", "../../testdata/sessions", "--out", filepath.Join(t.TempDir(), "v"))
	if code != 0 || !strings.Contains(out+errs, "2 tasks, 6 trajectories, 0 violations") {
		t.Fatalf("validate exited %d:\n%s\n%s", code, out, errs)
	}
}
