package mem

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

// Roles of the widgets, as AT-SPI names them on a desktop.
const (
	RoleButton   = "push button"
	RoleText     = "text"
	RoleCheckBox = "check box"
	RoleLabel    = "label"
	RoleComboBox = "combo box"
)

// App is an application of the in-memory desktop: a launch step that
// names it opens one window of it.
type App struct {
	Title string // the window's title
	// Dialog makes the window a modal dialog, centred on the screen: role
	// "dialog", and escape closes it.
	Dialog  bool
	Widgets []Widget // laid out from the top, consecutive push buttons side by side
}

// Widget is one element of an App's window.
type Widget struct {
	Role string // one of the Role constants
	Name string // the accessibility name (a label's text)
	// Text is a text field's or combo box's value.
	Text      string
	Checked   bool     // a check box's state
	Options   []string // a combo box's choices (select picks one; up and down step through them)
	Multiline bool     // a text field where enter types a new line
	// Default marks the push button that enter in a single-line text
	// field presses.
	Default bool
	Press   *Effect // what pressing a push button does
}

// Effect is what pressing a push button does.
type Effect struct {
	// Write is a file written (a path as WriteFile takes it), with Content
	// in which ${NAME} is the value of the window's widget named NAME: a
	// text field's or combo box's text, "true" or "false" for a check box.
	Write   string
	Content string
	Close   bool // the window closes
}

// validate reports a widget the in-memory desktop cannot show.
func (a App) validate(name string) error {
	for i, w := range a.Widgets {
		switch w.Role {
		case RoleButton, RoleText, RoleCheckBox, RoleLabel, RoleComboBox:
		default:
			return fmt.Errorf("app %q: widget %d: unknown role %q", name, i, w.Role)
		}
		if w.Press != nil && w.Role != RoleButton {
			return fmt.Errorf("app %q: widget %d: only a push button has a press effect", name, i)
		}
	}
	return nil
}

// editor is the window that stands for a desktop application the
// in-memory desktop does not model: a text area, and, for a file, a Save
// button that writes the text back.
func editor(title, file, content string) App {
	a := App{Title: title, Widgets: []Widget{{Role: RoleText, Name: "Text", Text: content, Multiline: true}}}
	if file != "" {
		a.Widgets = append(a.Widgets, Widget{Role: RoleButton, Name: "Save", Press: &Effect{Write: file, Content: "${Text}"}})
	}
	return a
}

// window is an open window.
type window struct {
	id      uint32
	app     string // the application's name
	pid     int
	title   string
	dialog  bool
	box     action.Box
	widgets []*widget
	focus   *widget // the widget with the keyboard focus, or nil
}

// widget is a widget of an open window.
type widget struct {
	Widget
	id    int64
	box   action.Box
	caret int  // in runes, in a text field
	all   bool // the whole text is selected
}

// Layout of windows, in pixels.
const (
	titleBar = 24
	pad      = 12
	rowH     = 28
	gap      = 10
	buttonW  = 96
	winW     = 480
	multiRow = 5 // rows of a multi-line text field
)

// layout opens app as a window: its size from its widgets, its place
// cascading from the top-left (a dialog in the middle of the screen).
func (e *Env) layout(name string, a App) *window {
	e.nextWin++
	w := &window{id: uint32(e.nextWin), app: name, pid: 1000 + e.nextWin, title: a.Title, dialog: a.Dialog}
	ww := min(winW, e.size.W)
	y := titleBar + pad
	for i := 0; i < len(a.Widgets); {
		x := pad
		spec := a.Widgets[i]
		if spec.Role == RoleButton {
			// A run of push buttons shares a row.
			for ; i < len(a.Widgets) && a.Widgets[i].Role == RoleButton; i++ {
				w.widgets = append(w.widgets, e.newWidget(a.Widgets[i], action.Box{X: x, Y: y, W: buttonW, H: rowH}))
				x += buttonW + gap
			}
			y += rowH + gap
			continue
		}
		h := rowH
		if spec.Role == RoleText && spec.Multiline {
			h = rowH * multiRow
		}
		w.widgets = append(w.widgets, e.newWidget(spec, action.Box{X: x, Y: y, W: ww - 2*pad, H: h}))
		y += h + gap
		i++
	}
	wh := min(y+pad-gap, e.size.H)
	k := e.opened % 8
	e.opened++
	wx, wy := 40+32*k, 40+32*k
	if a.Dialog {
		wx, wy = (e.size.W-ww)/2, (e.size.H-wh)/2
	}
	wx, wy = max(0, min(wx, e.size.W-ww)), max(0, min(wy, e.size.H-wh))
	w.box = action.Box{X: wx, Y: wy, W: ww, H: wh}
	for _, c := range w.widgets {
		c.box.X += wx
		c.box.Y += wy
	}
	return w
}

func (e *Env) newWidget(spec Widget, box action.Box) *widget {
	e.nextID++
	spec.Options = append([]string(nil), spec.Options...)
	if spec.Press != nil {
		p := *spec.Press
		spec.Press = &p
	}
	return &widget{Widget: spec, id: e.nextID, box: box, caret: len([]rune(spec.Text))}
}

// focusable reports whether the widget takes the keyboard focus.
func (w *widget) focusable() bool { return w.Role != RoleLabel }

// value is what ${NAME} of an effect stands for.
func (w *widget) value() string {
	if w.Role == RoleCheckBox {
		return strconv.FormatBool(w.Checked)
	}
	return w.Text
}

// expand fills the ${NAME}s of an effect's content from the window.
func (w *window) expand(s string) string {
	return os.Expand(s, func(name string) string {
		for _, c := range w.widgets {
			if c.Name == name {
				return c.value()
			}
		}
		return ""
	})
}

// node is the widget's accessibility node.
func (w *widget) node(focused bool) *observe.Node {
	n := &observe.Node{ID: w.id, Role: w.Role, Name: w.Name, Box: w.box,
		States: []string{"enabled", "sensitive", "visible", "showing"}}
	switch w.Role {
	case RoleText:
		n.Text = w.Text
		n.States = append(n.States, "focusable", "editable")
		if w.Multiline {
			n.States = append(n.States, "multi line")
		} else {
			n.States = append(n.States, "single line")
		}
	case RoleComboBox:
		n.Text = w.Text
		n.States = append(n.States, "focusable", "expandable")
	case RoleCheckBox:
		n.States = append(n.States, "focusable", "checkable")
		if w.Checked {
			n.States = append(n.States, "checked")
		}
	case RoleButton:
		n.States = append(n.States, "focusable")
		if w.Default {
			n.States = append(n.States, "default")
		}
	}
	if focused {
		n.States = append(n.States, "focused")
	}
	return n
}

// treeLocked builds the accessibility tree: an application per window,
// with its window and widgets, in the order the windows opened.
func (e *Env) treeLocked() *observe.Tree {
	t := &observe.Tree{Apps: []*observe.Node{}}
	top := e.top()
	for _, w := range e.byAge() {
		frame := &observe.Node{Role: "frame", Name: w.title, Box: w.box, States: []string{"enabled", "sensitive", "visible", "showing"}}
		if w.dialog {
			frame.Role = "dialog"
			frame.States = append(frame.States, "modal")
		}
		if w == top {
			frame.States = append(frame.States, "active")
		}
		for _, c := range w.widgets {
			frame.Children = append(frame.Children, c.node(w == top && w.focus == c))
		}
		t.Apps = append(t.Apps, &observe.Node{App: w.app, PID: w.pid, Role: "application", Name: w.app,
			States: []string{"enabled", "visible", "showing"}, Children: []*observe.Node{frame}})
	}
	return t
}

// top is the window on top (the active one), or nil.
func (e *Env) top() *window {
	if len(e.wins) == 0 {
		return nil
	}
	return e.wins[len(e.wins)-1]
}

// byAge lists the open windows in the order they opened.
func (e *Env) byAge() []*window {
	out := slices.Clone(e.wins)
	slices.SortFunc(out, func(a, b *window) int { return cmp.Compare(a.id, b.id) })
	return out
}

// hit is the top window at (x, y) and its widget there, if any.
func (e *Env) hit(x, y int) (*window, *widget) {
	for i := len(e.wins) - 1; i >= 0; i-- {
		w := e.wins[i]
		if !w.box.Contains(x, y) {
			continue
		}
		for _, c := range w.widgets {
			if c.box.Contains(x, y) {
				return w, c
			}
		}
		return w, nil
	}
	return nil, nil
}

// raise puts w on top.
func (e *Env) raise(w *window) {
	for i, o := range e.wins {
		if o == w {
			e.wins = append(append(e.wins[:i:i], e.wins[i+1:]...), w)
			return
		}
	}
}

// closeWindow removes w.
func (e *Env) closeWindow(w *window) {
	for i, o := range e.wins {
		if o == w {
			e.wins = append(e.wins[:i:i], e.wins[i+1:]...)
			return
		}
	}
}
