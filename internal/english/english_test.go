package english

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "task", "0 tasks"}, {1, "task", "1 task"}, {2, "task", "2 tasks"},
		{1, "entry", "1 entry"}, {3, "entry", "3 entries"}, {2, "day", "2 days"},
		{2, "match", "2 matches"}, {2, "box", "2 boxes"}, {1, "problem", "1 problem"},
	} {
		if got := Count(tc.n, tc.noun); got != tc.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tc.n, tc.noun, got, tc.want)
		}
	}
}

func TestA(t *testing.T) {
	for word, want := range map[string]string{
		"android": "an android", "x11": "an x11", "exact": "an exact", "browser": "a browser",
		"vnc": "a vnc", "guest": "a guest", "mem": "a mem", "infeasible": "an infeasible",
	} {
		if got := A(word); got != want {
			t.Errorf("A(%q) = %q, want %q", word, got, want)
		}
	}
}
