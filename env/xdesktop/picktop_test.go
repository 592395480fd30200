package xdesktop

import (
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/internal/atspi"
	"github.com/proctor-eval/proctor/internal/x11"
)

// TestPickTop: the top-level node of the window under a click, which the
// click's record describes.
func TestPickTop(t *testing.T) {
	main := atspi.Top{Name: "", Box: action.Box{X: 0, Y: 0, W: 1920, H: 1080}}
	dialog := atspi.Top{Name: "Choose a script", Box: action.Box{X: 600, Y: 300, W: 700, H: 500}}
	editor := atspi.Top{Name: "notes.txt - Mousepad", Box: action.Box{X: 0, Y: 0, W: 800, H: 600}}
	menu := atspi.Top{Name: "", Box: action.Box{X: 100, Y: 40, W: 200, H: 300}}
	for _, tc := range []struct {
		name string
		tops []atspi.Top
		win  x11.Window
		want atspi.Top
		ok   bool
	}{
		{"the exact title", []atspi.Top{main, editor}, x11.Window{Title: "notes.txt - Mousepad", W: 800, H: 600}, editor, true},
		{"KDE's title adds the app's name", []atspi.Top{main, dialog}, x11.Window{Title: "Choose a script — KAlgebra", X: 600, Y: 300, W: 700, H: 500}, dialog, true},
		{"a frame with no name, by its box", []atspi.Top{dialog, main}, x11.Window{Title: "KAlgebra", W: 1920, H: 1080}, main, true},
		{"nothing matches: the first", []atspi.Top{editor, dialog}, x11.Window{Title: "Other", X: 5, W: 10, H: 10}, editor, true},
		{"a popup by its box", []atspi.Top{main, menu}, x11.Window{Popup: true, X: 100, Y: 40, W: 200, H: 300}, menu, true},
		{"a popup with no top-level", []atspi.Top{main}, x11.Window{Popup: true, X: 100, Y: 40, W: 200, H: 300}, atspi.Top{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := pickTop(tc.tops, tc.win, tc.win.X+5, tc.win.Y+5, false)
			if ok != tc.ok || got.Name != tc.want.Name || got.Box != tc.want.Box {
				t.Fatalf("pickTop = %+v %v, want %+v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
