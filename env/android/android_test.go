package android_test

import (
	"context"
	"errors"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/android"
	"github.com/proctor-eval/proctor/env/android/phonetest"
	"github.com/proctor-eval/proctor/env/envtest"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// conformance installs the conformance suite's dialog: an app whose
// activity is titled Conformance, asking "Proceed" with the buttons Yes
// and Later; a tap writes the button's name to ~/pressed.
func conformance(ph *phonetest.Phone) {
	press := func(name string) func(*phonetest.Phone) {
		return func(ph *phonetest.Phone) { ph.SetFile("/sdcard/pressed", name) }
	}
	ph.Install(phonetest.App{Package: "org.proctor.conformance", Start: func(*phonetest.Phone) *phonetest.Screen {
		return &phonetest.Screen{Package: "org.proctor.conformance", Activity: ".ConformanceDialog", Color: color.RGBA{240, 240, 240, 255},
			Nodes: []*phonetest.Node{
				{Class: "android.widget.TextView", Text: "Proceed", Box: image.Rect(100, 300, 980, 400)},
				{Class: "android.widget.Button", Text: "Yes", ID: "android:id/button1", Clickable: true, Box: image.Rect(600, 500, 900, 620), Tap: press("Yes")},
				{Class: "android.widget.Button", Text: "Later", ID: "android:id/button2", Clickable: true, Box: image.Rect(200, 500, 500, 620), Tap: press("Later")},
			}}
	}})
}

var fixture = envtest.Fixture{
	Dialog: env.Setup{Steps: []task.Step{{Launch: &task.Launch{App: "org.proctor.conformance", WaitWindow: "Conformance"}}}},
	Pressed: func(ctx context.Context, e env.Env) (string, error) {
		b, err := e.ReadFile(ctx, "~/pressed")
		if errors.Is(err, observe.ErrNotFound) {
			return "", nil
		}
		return string(b), err
	},
}

func TestConformance(t *testing.T) {
	ph := phonetest.New(t, 1080, 2340)
	conformance(ph)
	envtest.RunWith(t, android.New(ph, "phone-1"), fixture)
}

// The label of a button is its text: uiautomator gives buttons their
// caption as text, and targets name them so.
func TestActionsBecomeInput(t *testing.T) {
	ph := phonetest.New(t, 1080, 2340)
	conformance(ph)
	e := android.New(ph, "phone-1")
	ctx := context.Background()
	if err := e.Reset(ctx, fixture.Dialog); err != nil {
		t.Fatal(err)
	}
	steps, err := e.Do(ctx, []action.Action{
		{Kind: action.Click, Point: &action.Point{X: 750, Y: 560}},
		{Kind: action.Type, Text: "hello world"},
		{Kind: action.Key, Keys: []string{"enter"}},
		{Kind: action.Back},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 || steps[0].Element != "push button Yes" || steps[0].At == nil || *steps[0].At != [2]int{750, 560} {
		t.Fatalf("steps %+v", steps)
	}
	if len(ph.Typed) != 1 || ph.Typed[0] != "hello world" || strings.Join(ph.Keys, ",") != "KEYCODE_HOME,KEYCODE_ENTER,KEYCODE_BACK" {
		t.Errorf("typed %q, keys %q", ph.Typed, ph.Keys)
	}
	if ph.Current().Package != "com.android.launcher3" {
		t.Errorf("after back, %s is in front", ph.Current().Package)
	}
	// A point off the screen is the agent's mistake.
	_, err = e.Do(ctx, []action.Action{{Kind: action.Click, Point: &action.Point{X: 5000, Y: 10}}})
	if !env.AgentsFault(err) {
		t.Errorf("a click off the screen: %v", err)
	}
	// So is an action a phone does not have.
	if _, err := e.Do(ctx, []action.Action{{Kind: action.TabSwitch, Tab: "1"}}); !errors.Is(err, env.ErrBadAction) {
		t.Errorf("tab_switch: %v", err)
	}
}

// A device that went away is an infrastructure fault, not the agent's.
func TestDeviceGoneIsNotTheAgentsFault(t *testing.T) {
	ph := phonetest.New(t, 1080, 2340)
	e := android.New(ph, "phone-1")
	ph.Fail = errors.New("device 'phone-1' not found")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := e.Do(ctx, []action.Action{{Kind: action.Click, Point: &action.Point{X: 5, Y: 5}}})
	if err == nil || env.AgentsFault(err) {
		t.Fatalf("a click on a gone device: %v", err)
	}
	if _, err := e.Screenshot(ctx, env.ShotOptions{}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("screenshot of a gone device: %v", err)
	}
}

func TestCommands(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"com.android.settings", "monkey -p 'com.android.settings' -c android.intent.category.LAUNCHER 1"},
		{"android-app://com.example.notes", "monkey -p 'com.example.notes' -c android.intent.category.LAUNCHER 1"},
		{"com.android.settings/.wifi.WifiSettings", "am start -W -n 'com.android.settings/.wifi.WifiSettings'"},
		{"https://example.org/a?b=c", "am start -W -a android.intent.action.VIEW -d 'https://example.org/a?b=c'"},
	} {
		if got := android.OpenCommand(tc.in); got != tc.want {
			t.Errorf("OpenCommand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"hello world", "input text 'hello%sworld'"},
		{"it's", `input text 'it'\''s'`},
		{"café", "am broadcast -a ADB_INPUT_B64 --es msg Y2Fmw6k="},
		{"two\nlines", "am broadcast -a ADB_INPUT_B64 --es msg dHdvCmxpbmVz"},
	} {
		if got := android.TypeCommand(tc.in); got != tc.want {
			t.Errorf("TypeCommand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"enter", "KEYCODE_ENTER"}, {"Back", "KEYCODE_BACK"}, {"a", "KEYCODE_A"}, {"7", "KEYCODE_7"},
		{"KEYCODE_CAMERA", "KEYCODE_CAMERA"}, {"f13", ""}, {"KEYCODE_$(reboot)", ""},
	} {
		got, err := android.Keycode(tc.in)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("Keycode(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		w, h int
	}{
		{"Physical size: 1080x2340\n", 1080, 2340},
		{"Physical size: 1440x3120\nOverride size: 1080x2340\n", 1080, 2340},
		{"error: no devices", 0, 0},
	} {
		w, h, err := android.ParseWMSize(tc.in)
		if w != tc.w || h != tc.h || (tc.w == 0) != (err != nil) {
			t.Errorf("ParseWMSize(%q) = %d, %d, %v", tc.in, w, h, err)
		}
	}
}

// Lint and the environment agree on what a device offers.
func TestCapsMatchTheTaskFormat(t *testing.T) {
	if got := task.TypeCapabilities[android.Kind]; !slices.Equal(got, android.Caps) {
		t.Errorf("task.TypeCapabilities[%q] = %v, android.Caps = %v", android.Kind, got, android.Caps)
	}
}

// Where the window hierarchy cannot be read, a tap is described by what it
// changed on the screen (ProBench's screenshot comparison), marked so.
func TestTapWithoutTreeIsComparedOnScreens(t *testing.T) {
	ph := phonetest.New(t, 1080, 2340)
	phonetest.InstallProBench(ph)
	e := android.New(ph, "phone-1")
	ctx := context.Background()
	if err := e.Reset(ctx, env.Setup{Steps: []task.Step{{Launch: &task.Launch{App: phonetest.SettingsApp}}}}); err != nil {
		t.Fatal(err)
	}
	ph.NoTree = true
	android.CompareSettle = 0
	steps, err := e.Do(ctx, []action.Action{{Kind: action.Click, Point: &action.Point{X: 540, Y: 600}}})
	if err != nil {
		t.Fatal(err)
	}
	el := steps[0].Element
	if !strings.HasPrefix(el, "(screenshot comparison; no window hierarchy) the tap at (540, 600) changed ") || !strings.Contains(el, "% of the screen, within ") {
		t.Errorf("the tap's record: %q", el)
	}
	if ph.Current().Activity != ".display.DisplaySettings" {
		t.Errorf("the tap did not open Display: %s", ph.Current().Activity)
	}
}

// An app's private data is read as the app (run-as); a package that is
// not there, or a file it does not have, says so.
func TestReadAppData(t *testing.T) {
	ph := phonetest.New(t, 1080, 2340)
	phonetest.InstallProBench(ph)
	e := android.New(ph, "phone-1")
	ctx := context.Background()
	if err := os.MkdirAll(filepath.Join(ph.AppData(phonetest.NotesApp), "databases"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ph.AppData(phonetest.NotesApp), "databases", "notes.db"), []byte("SQLite format 3\x00..."), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := e.ReadFile(ctx, "/data/data/org.proctor.notes/databases/notes.db")
	if err != nil || !strings.HasPrefix(string(b), "SQLite format 3\x00") {
		t.Fatalf("%q, %v", b, err)
	}
	if _, err := e.ReadFile(ctx, "/data/data/org.proctor.notes/databases/gone.db"); !errors.Is(err, observe.ErrNotFound) {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := e.ReadFile(ctx, "/data/data/com.example.private/files/x"); !errors.Is(err, env.ErrForbidden) || !strings.Contains(err.Error(), "run-as") {
		t.Errorf("an app run-as cannot read: %v", err)
	}
}
