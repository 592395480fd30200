package store

import (
	"testing"
	"time"
)

// TestJudgeControls checks that a judge's controls are kept by judge,
// and that saving them again replaces that judge's only.
func TestJudgeControls(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if cs, err := st.JudgeControls(); err != nil || len(cs) != 0 {
		t.Fatalf("a new run's controls: %v, %v", cs, err)
	}
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	a := []JudgeControl{{Control: "t [gold] c", Evidence: "final_screenshot", Want: true, Got: true, At: at},
		{Control: "t [noop] c", Evidence: "final_screenshot", Want: false, Got: true, At: at}}
	if err := st.SaveJudgeControls("judge-a", a); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveJudgeControls("judge-b", a[:1]); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveJudgeControls("judge-a", a[1:]); err != nil {
		t.Fatal(err)
	}
	cs, err := st.JudgeControls()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		judge, control string
		right          bool
	}{
		{"judge-a", "t [noop] c", false},
		{"judge-b", "t [gold] c", true},
	}
	if len(cs) != len(tests) {
		t.Fatalf("got %d controls, want %d: %+v", len(cs), len(tests), cs)
	}
	for i, tc := range tests {
		if c := cs[i]; c.Judge != tc.judge || c.Control != tc.control || c.Right() != tc.right || !c.At.Equal(at) {
			t.Errorf("control %d = %+v, want %s %s right=%v", i, c, tc.judge, tc.control, tc.right)
		}
	}
	if (JudgeControl{Want: true, Got: true, Err: "down"}).Right() {
		t.Error("a control without a verdict is right")
	}
}
