package xdesktop

import (
	"bytes"
	"image"
	"image/png"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/internal/x11"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Where testdata/lateapp draws a character in its window.
const (
	lateScale   = 8
	lateOriginX = 20
	lateOriginY = 20
)

// buildLateApp builds testdata/lateapp, an application that draws each
// typed character 400 ms after the key press.
func buildLateApp(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lateapp")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/lateapp").CombinedOutput(); err != nil {
		t.Fatalf("build testdata/lateapp: %v\n%s", err, out)
	}
	return bin
}

// glyphCells is which cells of basicfont's 7x13 face r sets, as lateapp
// draws them.
func glyphCells(t *testing.T, r rune) (cells [13][7]bool) {
	face := basicfont.Face7x13
	dr, mask, mp, _, ok := face.Glyph(fixed.P(0, face.Ascent), r)
	if !ok {
		t.Fatalf("basicfont has no glyph for %q", r)
	}
	for y := dr.Min.Y; y < dr.Max.Y; y++ {
		for x := dr.Min.X; x < dr.Max.X; x++ {
			p := mp.Add(image.Pt(x-dr.Min.X, y-dr.Min.Y))
			if _, _, _, a := mask.At(p.X, p.Y).RGBA(); a >= 0x8000 {
				cells[y][x] = true
			}
		}
	}
	return cells
}

// drawnCells reads which cells of the window at (wx, wy) a screenshot
// shows black.
func drawnCells(t *testing.T, shot env.Shot, wx, wy int) (cells [13][7]bool) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot.Data))
	if err != nil {
		t.Fatal(err)
	}
	for y := range cells {
		for x := range cells[y] {
			px := wx + lateOriginX + x*lateScale + lateScale/2
			py := wy + lateOriginY + y*lateScale + lateScale/2
			r, g, b, _ := img.At(px, py).RGBA()
			cells[y][x] = r+g+b < 0x8000
		}
	}
	return cells
}

func showCells(c [13][7]bool) string {
	var b strings.Builder
	for _, row := range c {
		for _, on := range row {
			b.WriteByte(".#"[btoi(on)])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSettleShowsLateDrawing types a key into an application that draws
// it 400 ms later, then takes the screenshot the runner would: it shows
// the character. (With PROCTOR_SETTLE=off the screenshot shows the empty
// window.)
func TestSettleShowsLateDrawing(t *testing.T) {
	need(t, "go")
	bin := buildLateApp(t)
	d := start(t)
	if err := d.Launch(bin); err != nil {
		t.Fatal(err)
	}
	if err := d.waitWindow(ctx(t), "Late typing", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := d.focus(ctx(t), "Late typing", time.Minute); err != nil {
		t.Fatal(err)
	}
	ws, err := d.Windows(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var win *env.Window
	for i := range ws {
		if ws[i].Title == "Late typing" {
			win = &ws[i]
		}
	}
	if win == nil {
		t.Fatalf("no window titled Late typing among %+v", ws)
	}
	before, err := d.Screenshot(ctx(t), env.ShotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := drawnCells(t, before, win.Box.X, win.Box.Y); got != ([13][7]bool{}) {
		t.Fatalf("the window shows something before any typing:\n%s", showCells(got))
	}
	steps, err := d.Do(ctx(t), []action.Action{{Kind: action.Key, Keys: []string{"x"}}})
	if err != nil {
		t.Fatal(err)
	}
	shot, err := d.Screenshot(ctx(t), env.ShotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := glyphCells(t, 'x')
	if got := drawnCells(t, shot, win.Box.X, win.Box.Y); got != want {
		t.Fatalf("the screenshot after typing x (waited %s) shows\n%s\nwant\n%s", steps[0].Settle, showCells(got), showCells(want))
	}
	if len(steps) != 1 || steps[0].Settle <= 0 {
		t.Fatalf("steps %+v: the wait is not recorded", steps)
	}
	t.Logf("waited %s", steps[0].Settle)
}

// TestSettleCaretDoesNotHoldSteps: mousepad's caret blinks while the
// steps type into it, yet no step waits to the cap.
func TestSettleCaretDoesNotHoldSteps(t *testing.T) {
	need(t, "mousepad")
	d := start(t)
	launch(t, d, "mousepad", "Mousepad")
	if err := d.focus(ctx(t), "Mousepad", time.Minute); err != nil {
		t.Fatal(err)
	}
	for i, a := range []action.Action{
		{Kind: action.Type, Text: "hello"},
		{Kind: action.Key, Keys: []string{"left"}},
		{Kind: action.Key, Keys: []string{"end"}},
		{Kind: action.Type, Text: " world"},
	} {
		steps, err := d.Do(ctx(t), []action.Action{a})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: waited %s", a, steps[0].Settle)
		if w := steps[0].Settle; w <= 0 || w >= DefaultSettle.Cap {
			t.Errorf("step %d (%s) waited %s: not recorded, or held to the cap %s", i+1, a, w, DefaultSettle.Cap)
		}
	}
}

func TestSetSettle(t *testing.T) {
	need(t)
	d := start(t)
	if err := d.SetSettle(Settle{SettleOptions: x11.SettleOptions{Quiet: time.Second, Cap: time.Millisecond}}); err == nil {
		t.Error("a cap shorter than the quiet period was taken")
	}
	tests := []struct {
		name string
		cfg  Settle
		acts []action.Action
		wait bool // a wait is recorded on the last step
	}{
		{"default", DefaultSettle, []action.Action{{Kind: action.Move, Point: &action.Point{X: 5, Y: 5}}}, true},
		{"on the last step", DefaultSettle, []action.Action{
			{Kind: action.Move, Point: &action.Point{X: 5, Y: 5}}, {Kind: action.Move, Point: &action.Point{X: 9, Y: 9}}}, true},
		{"off", Settle{Off: true}, []action.Action{{Kind: action.Move, Point: &action.Point{X: 5, Y: 5}}}, false},
		{"nothing done", DefaultSettle, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := d.SetSettle(tc.cfg); err != nil {
				t.Fatal(err)
			}
			steps, err := d.Do(ctx(t), tc.acts)
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range steps {
				last := i == len(steps)-1
				if (st.Settle > 0) != (tc.wait && last) {
					t.Errorf("step %d of %d records a wait of %s", i+1, len(steps), st.Settle)
				}
			}
		})
	}
}
