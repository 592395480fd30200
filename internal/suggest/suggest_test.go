package suggest

import "testing"

func TestNearest(t *testing.T) {
	known := []string{"instruction", "max_steps", "milestones", "name", "push button", "toggle button"}
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"instructon", "instruction", true},
		{"max_step", "max_steps", true},
		{"MILESTONE", "milestones", true},
		{"togle button", "toggle button", true},
		{"nmae", "name", true},
		{"instruction", "", false}, // known
		{"zebra", "", false},       // nothing near
		{"nx", "", false},          // too short to guess at
	} {
		got, ok := Nearest(tc.name, known)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if got := DidYouMean("max-steps", known); got != `; did you mean "max_steps"?` {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("zebra", known); got != "" {
		t.Errorf("DidYouMean(zebra) = %q, want none", got)
	}
}
