package mem_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/mem"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// form is an app with one widget of each kind; Save writes them all.
var form = mem.App{Title: "Form", Widgets: []mem.Widget{
	{Role: mem.RoleLabel, Name: "Fill in the form"},
	{Role: mem.RoleText, Name: "Name"},
	{Role: mem.RoleText, Name: "Notes", Multiline: true},
	{Role: mem.RoleCheckBox, Name: "Subscribe"},
	{Role: mem.RoleComboBox, Name: "Colour", Text: "red", Options: []string{"red", "green", "blue"}},
	{Role: mem.RoleButton, Name: "Save", Default: true, Press: &mem.Effect{Write: "~/form.txt", Content: "${Name}|${Notes}|${Subscribe}|${Colour}"}},
	{Role: mem.RoleButton, Name: "Close", Press: &mem.Effect{Close: true}},
}}

var launchForm = env.Setup{Steps: []task.Step{{Launch: &task.Launch{App: "form"}}}}

func newForm(t *testing.T, opts ...mem.Option) *mem.Env {
	t.Helper()
	e, err := mem.New(append([]mem.Option{mem.WithApp("form", form)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Reset(context.Background(), launchForm); err != nil {
		t.Fatal(err)
	}
	return e
}

func el(role, name string) *action.Target { return &action.Target{Role: role, Name: name} }

func click(t *action.Target) action.Action { return action.Action{Kind: action.Click, Target: t} }

func typ(t *action.Target, text string) action.Action {
	return action.Action{Kind: action.Type, Target: t, Text: text}
}

func keys(kind action.Kind, k ...string) action.Action { return action.Action{Kind: kind, Keys: k} }

var (
	name   = el("text", "Name")
	notes  = el("text", "Notes")
	sub    = el("check box", "Subscribe")
	colour = el("combo box", "Colour")
	save   = el("push button", "Save")
)

func TestDo(t *testing.T) {
	tests := []struct {
		name string
		acts []action.Action
		want string // ~/form.txt after the actions; "" for none
		err  error  // the error wanted, nil for none
		wins int    // windows open after the actions
	}{
		{"type and save", []action.Action{typ(name, "Ada"), click(save)}, "Ada||false|red", nil, 1},
		{"enter presses the default button", []action.Action{typ(name, "Ada\n")}, "Ada||false|red", nil, 1},
		{"enter types a new line in a multi-line field", []action.Action{typ(notes, "a\nb"), click(save)}, "|a\nb|false|red", nil, 1},
		{"a click toggles a check box", []action.Action{click(sub), click(save)}, "||true|red", nil, 1},
		{"a double click toggles it twice", []action.Action{{Kind: action.Click, Target: sub, Count: 2}, click(save)}, "||false|red", nil, 1},
		{"space toggles the focused check box", []action.Action{click(sub), keys(action.Key, "space"), click(save)}, "||false|red", nil, 1},
		{"clear replaces the text", []action.Action{typ(name, "old"), {Kind: action.Type, Target: name, Text: "new", Clear: true}, click(save)}, "new||false|red", nil, 1},
		{"backspace", []action.Action{typ(name, "abc"), keys(action.Key, "BackSpace"), click(save)}, "ab||false|red", nil, 1},
		{"ctrl+a and delete", []action.Action{typ(name, "abc"), keys(action.Hotkey, "ctrl", "a"), keys(action.Key, "delete"), click(save)}, "||false|red", nil, 1},
		{"home and typing", []action.Action{typ(name, "bc"), keys(action.Key, "home"), {Kind: action.Type, Text: "a"}, click(save)}, "abc||false|red", nil, 1},
		{"left and typing", []action.Action{typ(name, "ac"), keys(action.Key, "left"), {Kind: action.Type, Text: "b"}, click(save)}, "abc||false|red", nil, 1},
		{"shift types capitals", []action.Action{click(name), keys(action.Hotkey, "shift", "a"), click(save)}, "A||false|red", nil, 1},
		{"cut and paste", []action.Action{typ(name, "xy"), keys(action.Hotkey, "ctrl", "a"), keys(action.Hotkey, "ctrl", "x"),
			click(notes), keys(action.Hotkey, "ctrl", "v"), click(save)}, "|xy|false|red", nil, 1},
		{"tab moves the focus", []action.Action{click(name), keys(action.Key, "tab"), {Kind: action.Type, Text: "z"}, click(save)}, "|z|false|red", nil, 1},
		{"select an option", []action.Action{{Kind: action.Select, Target: colour, Text: "blue"}, click(save)}, "||false|blue", nil, 1},
		{"down steps through a combo box", []action.Action{click(colour), keys(action.Key, "down"), click(save)}, "||false|green", nil, 1},
		{"select of a missing option", []action.Action{{Kind: action.Select, Target: colour, Text: "pink"}}, "", env.ErrNotFound, 1},
		{"select on a button", []action.Action{{Kind: action.Select, Target: save, Text: "pink"}}, "", env.ErrBadAction, 1},
		{"a button closes the window", []action.Action{click(el("push button", "Close"))}, "", nil, 0},
		{"alt+f4 closes the window", []action.Action{keys(action.Hotkey, "alt", "f4")}, "", nil, 0},
		{"escape closes no plain window", []action.Action{keys(action.Key, "escape")}, "", nil, 1},
		{"scroll_to_text of a text showing", []action.Action{{Kind: action.ScrollToText, Text: "Fill in"}}, "", nil, 1},
		{"scroll_to_text of a text nowhere", []action.Action{{Kind: action.ScrollToText, Text: "nowhere"}}, "", env.ErrNotFound, 1},
		{"a missing element", []action.Action{click(el("push button", "Nowhere"))}, "", env.ErrNotFound, 1},
		{"a code action", []action.Action{{Kind: action.Code, Text: "ls"}}, "", env.ErrBadAction, 1},
		{"navigate", []action.Action{{Kind: action.Navigate, Text: "https://example.org"}}, "", env.ErrBadAction, 1},
		{"a point off the screen", []action.Action{{Kind: action.Click, Point: action.At(5000, 5)}}, "", env.ErrBadAction, 1},
		{"an unknown key", []action.Action{keys(action.Key, "nosuchkey")}, "", env.ErrBadAction, 1},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newForm(t)
			steps, err := e.Do(ctx, tc.acts)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !env.AgentsFault(err) {
					t.Fatalf("Do = %v, want %v (the agent's fault)", err, tc.err)
				}
				return
			}
			if err != nil || len(steps) != len(tc.acts) {
				t.Fatalf("Do = %d steps, %v", len(steps), err)
			}
			if tc.want != "" {
				b, err := e.ReadFile(ctx, "~/form.txt")
				if err != nil || string(b) != tc.want {
					t.Errorf("~/form.txt = %q, %v; want %q", b, err, tc.want)
				}
			}
			if ws, _ := e.Windows(ctx); len(ws) != tc.wins {
				t.Errorf("%d windows open, want %d", len(ws), tc.wins)
			}
		})
	}
}

func TestStepsRecordTheElement(t *testing.T) {
	e := newForm(t)
	steps, err := e.Do(context.Background(), []action.Action{typ(name, "x"), {Kind: action.Select, Target: colour, Text: "green"}, click(save)})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"text Name", "combo box Colour", "push button Save"} {
		if steps[i].Element != want || steps[i].At == nil || steps[i].Action.Kind != []action.Kind{action.Type, action.Select, action.Click}[i] {
			t.Errorf("step %d = %+v, want the element %q and where", i, steps[i], want)
		}
	}
}

func TestTargetsByTagAndID(t *testing.T) {
	ctx := context.Background()
	e := newForm(t)
	shot, err := e.Screenshot(ctx, env.ShotOptions{Marks: true})
	if err != nil {
		t.Fatal(err)
	}
	tag := 0
	for _, m := range shot.Marks {
		if m.Role == "check box" && m.Name == "Subscribe" {
			tag = m.Tag
		}
	}
	if tag == 0 || shot.Tree == nil {
		t.Fatalf("no mark for the check box among %+v", shot.Marks)
	}
	var id int64
	for _, n := range shot.Tree.Find("", "push button", "Save", "", false) {
		id = n.ID
	}
	if _, err := e.Do(ctx, []action.Action{click(&action.Target{Tag: tag}), click(&action.Target{ID: id})}); err != nil {
		t.Fatal(err)
	}
	if b, _ := e.ReadFile(ctx, "~/form.txt"); string(b) != "||true|red" {
		t.Errorf("~/form.txt = %q after clicks by tag and id", b)
	}
	if _, err := e.Do(ctx, []action.Action{click(&action.Target{Tag: 99})}); !errors.Is(err, env.ErrNotFound) {
		t.Errorf("a tag not marked: %v", err)
	}
	if _, err := e.Do(ctx, []action.Action{click(&action.Target{ID: 9999})}); !errors.Is(err, env.ErrNotFound) {
		t.Errorf("an id of nothing: %v", err)
	}
}

func TestTree(t *testing.T) {
	ctx := context.Background()
	e := newForm(t)
	if _, err := e.Do(ctx, []action.Action{typ(name, "Ada"), click(sub)}); err != nil {
		t.Fatal(err)
	}
	els, err := e.Elements(ctx, observe.ElementQuery{Role: "text", Name: "Name"})
	if err != nil || len(els) != 1 || els[0].Text != "Ada" || els[0].App != "form" {
		t.Fatalf("Elements = %+v, %v", els, err)
	}
	els, _ = e.Elements(ctx, observe.ElementQuery{Role: "check box"})
	if len(els) != 1 || !slicesHas(els[0].States, "checked") || !slicesHas(els[0].States, "focused") {
		t.Errorf("the check box = %+v, want checked and focused", els)
	}
	tree, _ := e.Tree(ctx)
	nodes := tree.Filter(observe.Options{Screen: action.Size{W: 1280, H: 800}})
	if got := len(observe.Marks(nodes)); got != 6 {
		t.Errorf("%d marks, want the 6 widgets a person can act on:\n%s", got, observe.Linearize(nodes, 0))
	}
}

func slicesHas(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestScreenshot(t *testing.T) {
	ctx := context.Background()
	e := newForm(t, mem.WithSize(action.Size{W: 640, H: 480}))
	a, err := e.Screenshot(ctx, env.ShotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := e.Screenshot(ctx, env.ShotOptions{})
	if !bytes.Equal(a.Data, b.Data) {
		t.Error("two screenshots of the same screen differ")
	}
	img, err := png.Decode(bytes.NewReader(a.Data))
	if err != nil || img.Bounds() != image.Rect(0, 0, 640, 480) || a.Size != (action.Size{W: 640, H: 480}) {
		t.Fatalf("screenshot %v %+v: %v", img.Bounds(), a.Size, err)
	}
	if _, err := e.Do(ctx, []action.Action{click(sub)}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Screenshot(ctx, env.ShotOptions{})
	if bytes.Equal(a.Data, c.Data) {
		t.Error("a checked box does not show on the screen")
	}
	for _, o := range []env.ShotOptions{{Scale: 0.5}, {JPEG: 80}, {Cursor: true, Marks: true}} {
		s, err := e.Screenshot(ctx, o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		img, format, err := image.Decode(bytes.NewReader(s.Data))
		if err != nil || format != s.Format || img.Bounds().Dx() != s.Size.W {
			t.Errorf("%+v: %s %v %v", o, format, img.Bounds(), err)
		}
	}
}

func TestFiles(t *testing.T) {
	ctx := context.Background()
	e, err := mem.New(mem.WithFiles(map[string]string{"~/kept.txt": "kept", "/tmp/t": "t"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.WriteFile(ctx, "~/a/b.txt", []byte("b")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path  string
		write bool
		want  string
		err   error
	}{
		{"~/kept.txt", false, "kept", nil},
		{"/home/user/kept.txt", false, "kept", nil},
		{"/tmp/t", false, "t", nil},
		{"~/a/b.txt", false, "b", nil},
		{"~/a/./b.txt", false, "b", nil},
		{"~/missing", false, "", observe.ErrNotFound},
		{"~/a", false, "", fs.ErrInvalid}, // a folder: matched below by message
		{"/etc/passwd", false, "", env.ErrForbidden},
		{"~/../../etc/shadow", false, "", env.ErrForbidden},
		{"relative.txt", false, "", env.ErrForbidden},
		{"/home/userx/f", true, "", env.ErrForbidden},
		{"~/kept.txt/x", true, "", fs.ErrInvalid},
		{"~/a", true, "", fs.ErrInvalid},
		{"/tmp/new", true, "", nil},
	}
	for _, tc := range tests {
		var err error
		var got []byte
		if tc.write {
			err = e.WriteFile(ctx, tc.path, []byte("w"))
		} else {
			got, err = e.ReadFile(ctx, tc.path)
		}
		switch {
		case tc.err == fs.ErrInvalid:
			var pe *fs.PathError
			if !errors.As(err, &pe) {
				t.Errorf("%s (write %v) = %v, want a path error", tc.path, tc.write, err)
			}
		case tc.err != nil:
			if !errors.Is(err, tc.err) {
				t.Errorf("%s (write %v) = %v, want %v", tc.path, tc.write, err, tc.err)
			}
		case err != nil || !tc.write && string(got) != tc.want:
			t.Errorf("%s (write %v) = %q, %v; want %q", tc.path, tc.write, got, err, tc.want)
		}
	}
	if err := e.Reset(ctx, env.Setup{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ReadFile(ctx, "~/a/b.txt"); !errors.Is(err, observe.ErrNotFound) {
		t.Errorf("a file written survives a reset: %v", err)
	}
	if b, err := e.ReadFile(ctx, "~/kept.txt"); string(b) != "kept" || err != nil {
		t.Errorf("a template file after a reset: %q, %v", b, err)
	}
	if _, err := mem.New(mem.WithFiles(map[string]string{"/etc/x": ""})); !errors.Is(err, env.ErrForbidden) {
		t.Errorf("a template file outside the home: %v", err)
	}
}

func TestReset(t *testing.T) {
	notes := map[string]string{"~/notes.txt": "first line"}
	tests := []struct {
		name   string
		steps  []task.Step
		err    string   // a part of the error; "" for none
		titles []string // the windows' titles after it
	}{
		{"launch of an app of its own", []task.Step{{Launch: &task.Launch{App: "form", WaitWindow: "Form"}}}, "", []string{"Form"}},
		{"launch of a desktop app", []task.Step{{Launch: &task.Launch{App: "gnome-calculator"}}}, "", []string{"Calculator"}},
		{"launch with a file", []task.Step{{Launch: &task.Launch{App: "mousepad", Args: []string{"~/notes.txt"}}}}, "", []string{"notes.txt - Mousepad"}},
		{"open a file", []task.Step{{Open: &task.Open{Path: "~/notes.txt"}}}, "", []string{"notes.txt - Editor"}},
		{"focus", []task.Step{{Launch: &task.Launch{App: "form"}}, {Launch: &task.Launch{App: "xterm"}}, {Focus: &task.Focus{Title: "Form"}}}, "", []string{"Form", "xterm"}},
		{"an unknown app", []task.Step{{Launch: &task.Launch{App: "nosuch"}}}, `setup[0] launch: unknown app "nosuch"`, nil},
		{"a run step", []task.Step{{Run: &task.Run{Command: "true"}}}, "setup[0] run: `true`: action not possible: a run step needs commands", nil},
		{"a URL", []task.Step{{Open: &task.Open{URL: "https://example.org"}}}, "setup[0] open: action not possible: opening https://example.org needs a browser's page", nil},
		{"a missing file", []task.Step{{Open: &task.Open{Path: "~/none"}}}, "setup[0] open: ~/none: not found", nil},
		{"a window never opened", []task.Step{{WaitWindow: &task.WaitWindow{Title: "Nowhere"}}}, `setup[0] wait_window: not found: no window whose title holds "Nowhere"`, nil},
		{"an element not there", []task.Step{{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Name: "Nothing"}}}}, `setup[0] wait_element: not found: no element "Nothing"`, nil},
		{"a bad mode", []task.Step{{Write: &task.Write{Path: "~/x", Content: "x", Mode: "9"}}}, `setup[0] write: mode "9" is not octal`, nil},
		{"two kinds in one step", []task.Step{{Write: &task.Write{Path: "~/x"}, Copy: &task.Copy{Asset: "a", To: "~/a"}}}, "setup[0]: a step needs exactly one kind", nil},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := mem.New(mem.WithApp("form", form), mem.WithFiles(notes))
			if err != nil {
				t.Fatal(err)
			}
			err = e.Reset(ctx, env.Setup{Steps: tc.steps})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Reset = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ws, _ := e.Windows(ctx)
			var titles []string
			for _, w := range ws {
				titles = append(titles, w.Title)
			}
			if strings.Join(titles, ",") != strings.Join(tc.titles, ",") {
				t.Errorf("windows %+v, want %q", ws, tc.titles)
			}
			active := len(ws) - 1 // the newest, but where a focus step raised another
			if tc.name == "focus" {
				active = 0
			}
			for i, w := range ws {
				if w.Active != (i == active) {
					t.Errorf("window %d of %+v: active %v", i, ws, w.Active)
				}
			}
		})
	}
}

func TestEditorSavesItsFile(t *testing.T) {
	ctx := context.Background()
	e, err := mem.New(mem.WithFiles(map[string]string{"~/notes.txt": "one"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Reset(ctx, env.Setup{Steps: []task.Step{{Open: &task.Open{Path: "~/notes.txt", App: "gedit"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Do(ctx, []action.Action{typ(el("text", "Text"), "\ntwo"), click(save)}); err != nil {
		t.Fatal(err)
	}
	if b, err := e.ReadFile(ctx, "~/notes.txt"); string(b) != "one\ntwo" || err != nil {
		t.Errorf("~/notes.txt = %q, %v", b, err)
	}
}

func TestDialog(t *testing.T) {
	ctx := context.Background()
	e, err := mem.New(mem.WithApp("form", form), mem.WithApp("conformance", dialog))
	if err != nil {
		t.Fatal(err)
	}
	// The dialog is modal: its buttons win a role and name target though
	// the form is on top, and escape closes the dialog only once it is.
	if err := e.Reset(ctx, env.Setup{Steps: []task.Step{{Launch: &task.Launch{App: "conformance"}}, {Launch: &task.Launch{App: "form"}}}}); err != nil {
		t.Fatal(err)
	}
	tree, _ := e.Tree(ctx)
	r, err := tree.Resolve(action.Target{Role: "push button", Name: "Yes"}, action.Size{W: 1280, H: 800})
	if err != nil || r.Window == nil || r.Window.Role != "dialog" || !r.Window.Has("modal") {
		t.Fatalf("Resolve = %+v, %v", r, err)
	}
	if _, err := e.Do(ctx, []action.Action{click(el("label", "Proceed")), keys(action.Key, "Escape")}); err != nil {
		t.Fatal(err)
	}
	ws, _ := e.Windows(ctx)
	if len(ws) != 1 || ws[0].Title != "Form" {
		t.Errorf("after escape in the dialog: %+v", ws)
	}
}

func TestRunAndClipboard(t *testing.T) {
	ctx := context.Background()
	e := newForm(t)
	info, err := e.Info(ctx)
	if err != nil || info.Has(task.CapCommands) || !info.Has(task.CapClipboard) || info.Kind != mem.Kind {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	if _, err := e.Run(ctx, "true", time.Second); !errors.Is(err, env.ErrBadAction) {
		t.Errorf("Run = %v", err)
	}
	if _, err := e.Do(ctx, []action.Action{typ(name, "hello"), keys(action.Hotkey, "ctrl", "a"), keys(action.Hotkey, "ctrl", "c")}); err != nil {
		t.Fatal(err)
	}
	if c, err := e.Clipboard(ctx); c != "hello" || err != nil {
		t.Errorf("Clipboard = %q, %v", c, err)
	}
	if err := e.Reset(ctx, env.Setup{}); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.Clipboard(ctx); c != "" {
		t.Errorf("the clipboard after a reset: %q", c)
	}
}

func TestClose(t *testing.T) {
	ctx := context.Background()
	e := newForm(t)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := e.Tree(ctx); !errors.Is(err, env.ErrClosed) || env.AgentsFault(err) {
		t.Errorf("Tree after Close = %v", err)
	}
	if _, err := e.Do(ctx, []action.Action{click(save)}); !errors.Is(err, env.ErrClosed) {
		t.Errorf("Do after Close = %v", err)
	}
}

func TestFaults(t *testing.T) {
	flaky := errors.New("flaky")
	ctx := context.Background()
	t.Run("an error on the second Do", func(t *testing.T) {
		e := newForm(t, mem.WithFault(mem.Fault{Method: "Do", Call: 2, Err: flaky}))
		for i, want := range []error{nil, flaky, nil} {
			if _, err := e.Do(ctx, []action.Action{click(sub)}); !errors.Is(err, want) || err != nil && env.AgentsFault(err) {
				t.Errorf("Do %d = %v, want %v", i+1, err, want)
			}
		}
		if e.Calls("Do") != 3 {
			t.Errorf("Calls(Do) = %d", e.Calls("Do"))
		}
	})
	t.Run("death", func(t *testing.T) {
		e := newForm(t, mem.WithFault(mem.Fault{Method: "Screenshot", Call: 1, Die: true}))
		if _, err := e.Screenshot(ctx, env.ShotOptions{}); !errors.Is(err, env.ErrClosed) {
			t.Errorf("the fatal Screenshot = %v", err)
		}
		if _, err := e.Info(ctx); !errors.Is(err, env.ErrClosed) {
			t.Errorf("Info after the death = %v", err)
		}
	})
	t.Run("a delay ended by the context", func(t *testing.T) {
		e := newForm(t, mem.WithFault(mem.Fault{Method: "Tree", Delay: time.Minute}))
		c, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		if _, err := e.Tree(c); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Tree = %v", err)
		}
	})
	t.Run("any method, counted together", func(t *testing.T) {
		e := newForm(t, mem.WithFault(mem.Fault{Call: 3, Err: flaky})) // Reset was call 1
		if _, err := e.Info(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Windows(ctx); !errors.Is(err, flaky) {
			t.Errorf("call 3 = %v", err)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		for _, f := range []mem.Fault{{Method: "Close", Err: flaky}, {Method: "Do"}, {Method: "Do", Call: -1, Err: flaky}} {
			if _, err := mem.New(mem.WithFault(f)); err == nil {
				t.Errorf("New accepts %+v", f)
			}
		}
	})
	t.Run("a source's starts share the counts", func(t *testing.T) {
		src := mem.Source("mem 1", mem.WithApp("form", form),
			mem.WithFault(mem.Fault{Method: "Start", Call: 1, Err: flaky}, mem.Fault{Method: "Do", Call: 2, Die: true}))
		if _, err := src.Start(ctx, action.Size{}); !errors.Is(err, flaky) {
			t.Fatalf("the first start = %v", err)
		}
		e1, err := src.Start(ctx, action.Size{W: 800, H: 600})
		if err != nil {
			t.Fatal(err)
		}
		if info, _ := e1.Info(ctx); info.Screen != (action.Size{W: 800, H: 600}) {
			t.Errorf("started at %+v, want the size asked for", info.Screen)
		}
		if err := e1.Reset(ctx, launchForm); err != nil {
			t.Fatal(err)
		}
		for i, want := range []error{nil, env.ErrClosed} {
			if _, err := e1.Do(ctx, []action.Action{click(sub)}); !errors.Is(err, want) {
				t.Fatalf("Do %d = %v, want %v", i+1, err, want)
			}
		}
		e2, err := src.Start(ctx, action.Size{})
		if err != nil {
			t.Fatal(err)
		}
		if err := e2.Reset(ctx, launchForm); err != nil {
			t.Fatal(err)
		}
		if _, err := e2.Do(ctx, []action.Action{click(sub)}); err != nil {
			t.Errorf("Do on the environment started after the death: %v", err)
		}
	})
}

func TestSources(t *testing.T) {
	tests := []struct {
		arg      string
		parallel int
		n        int
		size     action.Size
		err      string
	}{
		{"", 0, 1, action.Size{}, ""},
		{"", 3, 3, action.Size{}, ""},
		{"4", 1, 4, action.Size{}, ""},
		{"640x480", 2, 2, action.Size{W: 640, H: 480}, ""},
		{"2:640x480", 1, 2, action.Size{W: 640, H: 480}, ""},
		{"0", 1, 0, action.Size{}, "give the number of environments"},
		{"many", 1, 0, action.Size{}, "give the number of environments"},
		{"2:big", 1, 0, action.Size{}, `screen size "big" is not WIDTHxHEIGHT`},
		{"8x8", 1, 0, action.Size{}, "is not between 16x16"},
	}
	for _, tc := range tests {
		srcs, err := mem.Sources(tc.arg, tc.parallel)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Sources(%q) = %v, want %q", tc.arg, err, tc.err)
			}
			continue
		}
		if err != nil || len(srcs) != tc.n {
			t.Errorf("Sources(%q) = %d places, %v; want %d", tc.arg, len(srcs), err, tc.n)
			continue
		}
		for i, s := range srcs {
			if s.Type != mem.Kind || s.Size != tc.size || s.Name != "mem "+string(rune('1'+i)) {
				t.Errorf("Sources(%q)[%d] = %+v", tc.arg, i, s)
			}
		}
		e, err := srcs[0].Start(context.Background(), action.Size{W: 1000, H: 700})
		if err != nil {
			t.Fatal(err)
		}
		want := tc.size
		if want == (action.Size{}) {
			want = action.Size{W: 1000, H: 700}
		}
		if info, _ := e.Info(context.Background()); info.Screen != want {
			t.Errorf("Sources(%q): a screen of %+v, want %+v", tc.arg, info.Screen, want)
		}
	}
}

// TestConcurrent uses one environment from several goroutines (for the
// race detector: go test -race ./env/mem).
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	e := newForm(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 5 {
				switch i % 4 {
				case 0:
					if i == 0 { // one typist: another's click would take the focus between a click and its keys
						e.Do(ctx, []action.Action{typ(name, "xx"), click(sub)})
					} else {
						e.Tree(ctx)
					}
				case 1:
					e.Screenshot(ctx, env.ShotOptions{Marks: true})
				case 2:
					e.Elements(ctx, observe.ElementQuery{Role: "text"})
					e.Windows(ctx)
				case 3:
					e.WriteFile(ctx, "~/c.txt", []byte("c"))
					e.ReadFile(ctx, "~/c.txt")
				}
			}
		})
	}
	wg.Wait()
	els, err := e.Elements(ctx, observe.ElementQuery{Role: "text", Name: "Name"})
	if err != nil || len(els) != 1 || els[0].Text != strings.Repeat("x", 10) {
		t.Errorf("after 10 typings of x: %+v, %v", els, err)
	}
}
