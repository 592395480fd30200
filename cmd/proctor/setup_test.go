package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/task"
)

// TestSetup runs a suite's set-up: a package that is not installed is
// named (in a dry run), and the script prepares the data folder that
// PROCTOR_SUITE_DATA names, under PROCTOR_DATA.
func TestSetup(t *testing.T) {
	dir := t.TempDir()
	data := t.TempDir()
	t.Setenv("PROCTOR_DATA", data)
	os.WriteFile(filepath.Join(dir, "suite.yaml"), []byte("name: apps\nsetup:\n  packages: [bash, proctor-test-absent]\n  script: prepare.sh\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "prepare.sh"), []byte("set -e\nmkdir -p \"$PROCTOR_SUITE_DATA/app\"\nhead -c 2048 /dev/zero > \"$PROCTOR_SUITE_DATA/app/db.sqlite\"\necho prepared \"$PROCTOR_SUITE\"\n"), 0o644)
	out, errs, code := runCLI(t, "", "setup", dir, "--dry-run")
	want := filepath.Join(data, "apps")
	if code != 0 || out != "apt-get install -y --no-install-recommends proctor-test-absent\nPROCTOR_SUITE_DATA="+want+" bash "+filepath.Join(dir, "prepare.sh")+"\n" {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errs)
	}
	// The packages of the apps its tasks use, built-in or declared, come
	// with them.
	os.WriteFile(filepath.Join(dir, "suite.yaml"), []byte("name: apps\napps:\n  absent-app: {command: proctor-test-app, package: proctor-test-app}\nsetup:\n  packages: [bash]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "one.yaml"), []byte("id: one\ninstruction: Open it.\nlevel: bronze\nkind: state\napp: absent-app\nsetup:\n- launch: {app: thunar}\nchecks:\n- {kind: exists, file: /tmp/x}\ngold:\n- {kind: done}\n"), 0o644)
	out, errs, code = runCLI(t, "", "setup", dir, "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "apt-get install -y --no-install-recommends ") || !strings.Contains(out, " proctor-test-app") ||
		strings.Contains(out, "thunar") == installedHere("thunar") || strings.Contains(out, "bash") {
		t.Fatalf("dry run with apps: exit %d\n%s\n%s", code, out, errs)
	}
	os.Remove(filepath.Join(dir, "one.yaml"))
	// Without the absent package, the set-up runs.
	os.WriteFile(filepath.Join(dir, "suite.yaml"), []byte("name: apps\nsetup:\n  packages: [bash]\n  script: prepare.sh\n"), 0o644)
	out, errs, code = runCLI(t, "", "setup", dir)
	if code != 0 || !strings.Contains(errs, "packages: all 1 installed") || !strings.Contains(errs, "prepared "+dir) ||
		!strings.Contains(errs, "apps set up in") || !strings.Contains(errs, "its data folder "+want+" holds 0.0 MiB") {
		t.Fatalf("setup: exit %d\n%s\n%s", code, out, errs)
	}
	if st, err := os.Stat(filepath.Join(want, "app", "db.sqlite")); err != nil || st.Size() != 2048 {
		t.Fatalf("the script's data: %v", err)
	}
	// A failing script fails the set-up, naming it.
	os.WriteFile(filepath.Join(dir, "prepare.sh"), []byte("echo no disk >&2; exit 4\n"), 0o644)
	_, errs, code = runCLI(t, "", "setup", dir)
	if code == 0 || !strings.Contains(errs, "prepare.sh: exit status 4") || !strings.Contains(errs, "no disk") {
		t.Fatalf("a failing script: exit %d\n%s", code, errs)
	}
}

// TestSessionPackages: setup installs the packages of the desktop
// sessions the suite and its x11 tasks name, once each, besides those
// the suite declares.
func TestSessionPackages(t *testing.T) {
	x11 := func(session string) *task.Task { return &task.Task{Environment: task.Environment{Session: session}} }
	browser := &task.Task{Environment: task.Environment{Type: "browser"}}
	for _, tc := range []struct {
		name  string
		suite task.Suite
		want  []string
	}{
		{"none", task.Suite{Tasks: []*task.Task{x11(""), browser}}, nil},
		{"a task's", task.Suite{Tasks: []*task.Task{x11(""), x11(task.SessionGNOME)}}, task.SessionPackages[task.SessionGNOME]},
		{"the suite's", task.Suite{Session: task.SessionXFCE, Tasks: []*task.Task{browser}}, task.SessionPackages[task.SessionXFCE]},
		{"both, shared ones once", task.Suite{Session: task.SessionGNOME, Tasks: []*task.Task{x11(task.SessionXFCE), x11("")}},
			[]string{"gnome-shell", "dconf-cli", "dconf-gsettings-backend", "xfwm4", "xfce4-panel", "xfdesktop4", "xfconf", "xfce4-settings"}},
		{"declared ones left out", task.Suite{Setup: &task.Setup{Packages: []string{"dconf-cli"}}, Tasks: []*task.Task{x11(task.SessionGNOME)}},
			[]string{"gnome-shell", "dconf-gsettings-backend"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sessionPackages(&tc.suite); !slices.Equal(got, tc.want) {
				t.Errorf("packages %q, want %q", got, tc.want)
			}
		})
	}
}

// installedHere reports whether dpkg knows the package as installed.
func installedHere(pkg string) bool { return installed(context.Background(), pkg) }
