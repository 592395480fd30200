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
	sky := atspi.Top{Name: "Stellarium 0.22.2", Box: action.Box{X: 0, Y: 0, W: 1280, H: 800}}
	dateTime := atspi.Top{Name: "Date/Time", Box: action.Box{X: 400, Y: 200, W: 300, H: 200}}
	search := atspi.Top{Name: "Find Object", Box: action.Box{X: 420, Y: 220, W: 100, H: 60}}
	for _, tc := range []struct {
		name   string
		tops   []atspi.Top
		win    x11.Window
		want   atspi.Top
		ok     bool
		at     [2]int   // the point, if not 5 pixels into the window
		others []string // titles of the app's other windows
	}{
		{"the exact title", []atspi.Top{main, editor}, x11.Window{Title: "notes.txt - Mousepad", W: 800, H: 600}, editor, true, [2]int{}, nil},
		{"KDE's title adds the app's name", []atspi.Top{main, dialog}, x11.Window{Title: "Choose a script — KAlgebra", X: 600, Y: 300, W: 700, H: 500}, dialog, true, [2]int{}, nil},
		{"a frame with no name, by its box", []atspi.Top{dialog, main}, x11.Window{Title: "KAlgebra", W: 1920, H: 1080}, main, true, [2]int{}, nil},
		{"nothing matches: the first", []atspi.Top{editor, dialog}, x11.Window{Title: "Other", X: 5, W: 10, H: 10}, editor, true, [2]int{}, nil},
		{"a popup by its box", []atspi.Top{main, menu}, x11.Window{Popup: true, X: 100, Y: 40, W: 200, H: 300}, menu, true, [2]int{}, nil},
		{"a popup with no top-level", []atspi.Top{main}, x11.Window{Popup: true, X: 100, Y: 40, W: 200, H: 300}, atspi.Top{}, false, [2]int{}, nil},
		{"a dialog drawn inside the window", []atspi.Top{sky, dateTime}, x11.Window{Title: "Stellarium 0.22.2", W: 1280, H: 800}, dateTime, true, [2]int{450, 250}, nil},
		{"the smallest of two inside", []atspi.Top{sky, dateTime, search}, x11.Window{Title: "Stellarium 0.22.2", W: 1280, H: 800}, search, true, [2]int{450, 250}, nil},
		{"the window beside a dialog inside it", []atspi.Top{sky, dateTime}, x11.Window{Title: "Stellarium 0.22.2", W: 1280, H: 800}, sky, true, [2]int{100, 100}, nil},
		{"a dialog window of its own beneath", []atspi.Top{sky, dateTime}, x11.Window{Title: "Stellarium 0.22.2", W: 1280, H: 800}, sky, true, [2]int{450, 250}, []string{"Date/Time"}},
		{"a KDE dialog window of its own beneath", []atspi.Top{sky, dateTime}, x11.Window{Title: "Stellarium 0.22.2", W: 1280, H: 800}, sky, true, [2]int{450, 250}, []string{"Date/Time — Stellarium"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, y := tc.win.X+5, tc.win.Y+5
			if tc.at != [2]int{} {
				x, y = tc.at[0], tc.at[1]
			}
			got, ok := pickTop(tc.tops, tc.win, x, y, false, func() []string { return tc.others })
			if ok != tc.ok || got.Name != tc.want.Name || got.Box != tc.want.Box {
				t.Fatalf("pickTop = %+v %v, want %+v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
