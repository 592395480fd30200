package xdesktop

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
)

// TestMarksHoldOnlyWhatIsOnScreen switches the window manager to another
// workspace, as an agent can with a key: the calculator's window is no
// longer on the screen, so neither the set-of-mark overlay nor the
// linearised tree may show its buttons, though checks still read them.
func TestMarksHoldOnlyWhatIsOnScreen(t *testing.T) {
	need(t, "kcalc", "xdotool")
	d := start(t)
	launch(t, d, "kcalc", "KCalc")
	waitFor(t, d, "the 9 key", func(tr *observe.Tree) bool { return len(tr.Find("kcalc", "push button", "9", "", false)) > 0 })
	marks := func() int {
		t.Helper()
		shot, err := d.Screenshot(ctx(t), env.ShotOptions{Marks: true})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range shot.Marks {
			if m.Role == "push button" && m.Name == "9" {
				n++
			}
		}
		return n
	}
	if n := marks(); n != 1 {
		t.Fatalf("%d marks for the 9 key before the switch, want 1", n)
	}
	cmd := exec.Command("xdotool", "set_desktop", "1")
	cmd.Env = d.Env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xdotool set_desktop 1: %v\n%s", err, out)
	}
	waitFor(t, d, "the calculator's window off the screen", func(tr *observe.Tree) bool {
		return len(tr.Find("kcalc", "push button", "9", "", false)) > 0 && !showing("push button", "9")(tr)
	})
	if n := marks(); n != 0 {
		t.Errorf("%d marks for the 9 key of a window on another workspace", n)
	}
	tr, err := d.Tree(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if lin := observe.Linearize(tr.Filter(observe.Options{Screen: d.size()}), 0); len(lin) > 0 && containsLine(lin, "9") {
		t.Errorf("the linearised tree shows the calculator's keys:\n%s", lin)
	}
}

func containsLine(lin, name string) bool {
	for _, l := range strings.Split(lin, "\n") {
		if f := strings.Split(l, "\t"); len(f) > 1 && f[1] == name {
			return true
		}
	}
	return false
}
