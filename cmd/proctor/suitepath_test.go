package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSuitePathBuiltIn resolves the built-in suites' paths outside a
// checkout to the suites carried in the binary; any other path, and a
// folder of that name on disk, stay as given.
func TestSuitePathBuiltIn(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	for _, p := range []string{"suites/web", "suites/desktop", "./suites/web/"} {
		dir, err := suitePath(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "suite.yaml")); err != nil || dir == p {
			t.Errorf("%s: %s has no suite.yaml (%v)", p, dir, err)
		}
	}
	if dir, _ := suitePath("suites/nosuch"); dir != "suites/nosuch" {
		t.Errorf("an unknown suite became %s", dir)
	}
	if err := os.MkdirAll("suites/web", 0o755); err != nil {
		t.Fatal(err)
	}
	if dir, _ := suitePath("suites/web"); dir != "suites/web" {
		t.Errorf("a folder on disk became %s", dir)
	}
}
