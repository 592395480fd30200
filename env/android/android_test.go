package android_test

import (
	"context"
	"database/sql"
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
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/android"
	"github.com/proctor-eval/proctor/env/android/phonetest"
	"github.com/proctor-eval/proctor/env/envtest"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"

	_ "modernc.org/sqlite"
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
	// Long presses, swipes and scrolls are input swipe: a long press
	// holds in place (800 ms for a right click, the click's duration
	// else), a swipe moves from its point to its To, a scroll moves the
	// finger a tenth of the screen per notch against the direction.
	if _, err := e.Do(ctx, []action.Action{
		{Kind: action.Click, Point: &action.Point{X: 300, Y: 560}, Button: action.Right},
		{Kind: action.Click, Point: &action.Point{X: 310, Y: 570}, Duration: 1.5},
		{Kind: action.Swipe, Point: &action.Point{X: 540, Y: 1800}, To: &action.Point{X: 540, Y: 600}, Duration: 0.4},
		{Kind: action.Drag, Point: &action.Point{X: 100, Y: 100}, To: &action.Point{X: 900, Y: 100}},
		{Kind: action.Scroll, DY: 3},
		{Kind: action.Scroll, DY: -2, Point: &action.Point{X: 200, Y: 1000}},
	}); err != nil {
		t.Fatal(err)
	}
	wantSwipes := []phonetest.Swipe{
		{From: image.Pt(300, 560), To: image.Pt(300, 560), Ms: 800},
		{From: image.Pt(310, 570), To: image.Pt(310, 570), Ms: 1500},
		{From: image.Pt(540, 1800), To: image.Pt(540, 600), Ms: 400},
		{From: image.Pt(100, 100), To: image.Pt(900, 100), Ms: 300},
		{From: image.Pt(540, 1170), To: image.Pt(540, 1170-3*234), Ms: 300},
		{From: image.Pt(200, 1000), To: image.Pt(200, 1000+2*234), Ms: 300},
	}
	if !slices.Equal(ph.Swipes, wantSwipes) {
		t.Errorf("swipes\n%+v\nwant\n%+v", ph.Swipes, wantSwipes)
	}
	if !ph.Swipes[0].LongPress() || !ph.Swipes[1].LongPress() || ph.Swipes[2].LongPress() {
		t.Errorf("long presses: %+v", ph.Swipes)
	}
	if len(ph.Taps) != 1 {
		t.Errorf("a long press is no tap: taps %v", ph.Taps)
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

// Reset force-stops and clears the apps the last setup launched and those
// the next one launches, each once, before it goes home.
func TestResetStopsAndClearsTheApps(t *testing.T) {
	ph := phonetest.New(t, 1080, 2340)
	phonetest.InstallProBench(ph)
	e := android.New(ph, "phone-1")
	ctx := context.Background()
	launch := func(app string) env.Setup {
		return env.Setup{Steps: []task.Step{{Launch: &task.Launch{App: app}}}}
	}
	if err := e.Reset(ctx, launch(phonetest.NotesApp)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ph.Stopped, []string{phonetest.NotesApp}) || !slices.Equal(ph.Cleared, []string{phonetest.NotesApp}) {
		t.Errorf("first reset: stopped %q, cleared %q", ph.Stopped, ph.Cleared)
	}
	// The episode leaves a note in the app's private data.
	db := filepath.Join(ph.AppData(phonetest.NotesApp), "databases", "notes.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, []byte("SQLite format 3\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	ph.Stopped, ph.Cleared = nil, nil
	if err := e.Reset(ctx, launch(phonetest.SettingsApp)); err != nil {
		t.Fatal(err)
	}
	want := []string{phonetest.NotesApp, phonetest.SettingsApp}
	if !slices.Equal(ph.Stopped, want) || !slices.Equal(ph.Cleared, want) {
		t.Errorf("second reset: stopped %q, cleared %q; want %q for both", ph.Stopped, ph.Cleared, want)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the Notes app's data outlived pm clear: %v", err)
	}
	// Home is pressed after the apps are cleared and before the setup
	// launches its app.
	var order []string
	for _, c := range ph.Commands {
		switch {
		case strings.Contains(c, "pm clear"):
			order = append(order, "clear")
		case c == "input keyevent KEYCODE_HOME":
			order = append(order, "home")
		case strings.HasPrefix(c, "monkey -p"):
			order = append(order, "launch")
		}
	}
	if got := strings.Join(order, ","); got != "clear,home,launch,clear,clear,home,launch" {
		t.Errorf("the order of the resets' commands: %s", got)
	}
}

// A launch step that names an activity (PACKAGE/.Activity) starts that
// activity, which is then in front; one the app does not have fails the
// step.
func TestLaunchActivity(t *testing.T) {
	ph := phonetest.New(t, 1080, 2340)
	phonetest.InstallProBench(ph)
	e := android.New(ph, "phone-1")
	ctx := context.Background()
	err := e.Reset(ctx, env.Setup{Steps: []task.Step{{Launch: &task.Launch{App: "com.android.settings/.wifi.WifiSettings",
		WaitWindow: "com.android.settings/com.android.settings.wifi.WifiSettings"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if cur := ph.Current(); cur.Package != phonetest.SettingsApp || cur.Activity != ".wifi.WifiSettings" {
		t.Errorf("%s/%s is in front", cur.Package, cur.Activity)
	}
	if !slices.Equal(ph.Started, []string{"com.android.settings/.wifi.WifiSettings"}) {
		t.Errorf("started %q", ph.Started)
	}
	if !slices.Contains(ph.Commands, "am start -W -n 'com.android.settings/.wifi.WifiSettings'") {
		t.Errorf("commands %q", ph.Commands)
	}
	// An app of the suite whose command is an activity.
	s := env.Setup{Apps: map[string]task.AppSpec{"display": {Command: "com.android.settings/.display.DisplaySettings"}},
		Steps: []task.Step{{Launch: &task.Launch{App: "display", WaitWindow: ".display.DisplaySettings"}}}}
	if err := e.Reset(ctx, s); err != nil {
		t.Fatal(err)
	}
	if a := ph.Current().Activity; a != ".display.DisplaySettings" {
		t.Errorf("%s is in front", a)
	}
	err = e.Reset(ctx, env.Setup{Steps: []task.Step{{Launch: &task.Launch{App: "com.android.settings/.NoSuchActivity"}}}})
	if err == nil || !strings.Contains(err.Error(), "setup[0] launch") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("an activity the app does not have: %v", err)
	}
}

// An APK among the suite's assets is installed by a copy step and a run
// step with pm install; the package is then listed and starts.
func TestInstallAPKFromAssets(t *testing.T) {
	ph := phonetest.New(t, 1080, 2340)
	e := android.New(ph, "phone-1")
	ctx := context.Background()
	const pkg = "org.proctor.hello"
	s := env.Setup{
		Assets: map[string][]byte{"hello.apk": phonetest.APK(pkg, "Hello")},
		Steps: []task.Step{
			{Copy: &task.Copy{Asset: "hello.apk", To: "/data/local/tmp/hello.apk"}},
			{Run: &task.Run{Command: "pm install -r /data/local/tmp/hello.apk"}},
			{Launch: &task.Launch{App: pkg, WaitWindow: pkg + "/"}},
		},
	}
	res, err := ph.Shell(ctx, "pm list packages "+pkg)
	if err != nil || res.Stdout != "" {
		t.Fatalf("before: %q, %v", res.Stdout, err)
	}
	if err := e.Reset(ctx, s); err != nil {
		t.Fatal(err)
	}
	res, err = e.Run(ctx, "pm list packages", 0)
	if err != nil || !strings.Contains(res.Stdout, "package:"+pkg+"\n") {
		t.Errorf("pm list packages: %q, %v", res.Stdout, err)
	}
	els, err := e.Elements(ctx, observe.ElementQuery{Name: "Hello"})
	if err != nil || len(els) != 1 {
		t.Errorf("the installed app's screen: %v, %v", els, err)
	}
	// Without -r, installing it again fails as Android does; a file
	// that is no APK is refused.
	res, _ = e.Run(ctx, "pm install /data/local/tmp/hello.apk", 0)
	if res.ExitCode == 0 || !strings.Contains(res.Stdout, "INSTALL_FAILED_ALREADY_EXISTS") {
		t.Errorf("installed twice: %+v", res)
	}
	if err := e.WriteFile(ctx, "/data/local/tmp/bad.apk", []byte("not a zip")); err != nil {
		t.Fatal(err)
	}
	s.Steps[1].Run.Command = "pm install -r /data/local/tmp/bad.apk"
	s.Steps = s.Steps[1:2]
	if err := e.Reset(ctx, s); err == nil || !strings.Contains(err.Error(), "INSTALL_PARSE_FAILED_NOT_APK") {
		t.Errorf("a file that is no APK: %v", err)
	}
}

// On a rooted device, an app that run-as refuses (a release build) has
// its database read as root; without root it cannot be read, and the
// error says why.
func TestReadAppDataAsRoot(t *testing.T) {
	ph := phonetest.New(t, 1080, 2340)
	ph.Install(phonetest.App{Package: "org.proctor.vault", Release: true, Start: func(*phonetest.Phone) *phonetest.Screen {
		return &phonetest.Screen{Package: "org.proctor.vault", Activity: ".Main"}
	}})
	dir := filepath.Join(ph.AppData("org.proctor.vault"), "databases")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "vault.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE secrets (name TEXT, value TEXT); INSERT INTO secrets VALUES ('pin', '4321')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e := android.New(ph, "phone-1")
	ctx := context.Background()
	const path = "/data/data/org.proctor.vault/databases/vault.db"

	_, err = e.ReadFile(ctx, path)
	if !errors.Is(err, env.ErrForbidden) || !strings.Contains(err.Error(), "package not debuggable") || !strings.Contains(err.Error(), "su: inaccessible or not found") {
		t.Errorf("without root: %v", err)
	}
	ph.Rooted = true
	b, err := e.ReadFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ph.Commands, "su 0 cat '"+path+"'") {
		t.Errorf("not read as root: %q", ph.Commands)
	}
	// The file probe `read: sqlite` queries what was read, as a check of
	// a task does.
	c, err := check.Compile(check.Spec{Kind: check.Exact, As: "json", Expected: []any{map[string]any{"value": "4321"}},
		Probe: &check.Probe{File: path, Read: "sqlite", Query: "SELECT value FROM secrets WHERE name = 'pin'"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Evaluate(ctx, &check.Recorded{Files: map[string][]byte{path: b}}, nil); !r.Pass {
		t.Errorf("the database read as root: %+v", r)
	}
	if _, err := e.ReadFile(ctx, "/data/data/org.proctor.vault/databases/gone.db"); !errors.Is(err, observe.ErrNotFound) {
		t.Errorf("a missing file, as root: %v", err)
	}
}
