package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/store"
)

// randomRun runs the random agent on count-lines twice (--repeat 2) on
// in-memory desktops with the extra flags, and returns each repeat's
// actions.
func randomRun(t *testing.T, extra ...string) [2]string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	args := append([]string{"run", "../../testdata/mem", "--env", "mem", "--agent", "random", "--filter", "^count-lines$",
		"--repeat", "2", "--out", dir, "--report", "none"}, extra...)
	if _, errs, code := runCLI(t, "", args...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	st, err := store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out [2]string
	for rep := range 2 {
		turns, err := st.Turns("count-lines", rep)
		if err != nil || len(turns) == 0 {
			t.Fatalf("repeat %d: %d turns (%v)", rep, len(turns), err)
		}
		var raw []string
		for _, tu := range turns {
			raw = append(raw, tu.Raw)
		}
		out[rep] = strings.Join(raw, "; ")
	}
	return out
}

// TestRandomAgentSeeds: the random agent's repeats of a task act
// differently, a run with the same --agent-seed repeats them, and
// another seed acts otherwise.
func TestRandomAgentSeeds(t *testing.T) {
	a := randomRun(t)
	if a[0] == a[1] {
		t.Errorf("both repeats took the same actions: %s", a[0])
	}
	if b := randomRun(t, "--agent-seed", "1"); b != a {
		t.Errorf("the same seed acted otherwise:\n%v\n%v", a, b)
	}
	if c := randomRun(t, "--agent-seed", "2"); c[0] == a[0] || c[1] == a[1] {
		t.Errorf("another seed repeated the actions:\n%v\n%v", a, c)
	}
}
