// Package envtest is the conformance suite of the env.Env contract: every
// environment implementation runs it in its own tests, so the desktop, the
// guest client and later backends behave alike.
package envtest

import (
	"bytes"
	"context"
	"errors"
	"image"
	_ "image/jpeg" // decoded by the screenshot test
	_ "image/png"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// Fixture is what the suite needs of a kind of environment beyond the
// Env interface: a dialog to answer, and a way to put text on the
// clipboard.
type Fixture struct {
	// Dialog is a setup that shows a dialog, in a window whose title holds
	// "Conformance", with the text "Proceed" and the push buttons "Yes"
	// and "Later".
	Dialog env.Setup
	// Pressed reads which of the dialog's buttons was pressed, "" while
	// none was.
	Pressed func(ctx context.Context, e env.Env) (string, error)
	// Copy puts text on the clipboard by the environment's own means (its
	// actions, say), for an environment with a clipboard. Nil: a shell
	// command with xclip, where the environment offers commands; the
	// clipboard test is skipped where it offers neither.
	Copy func(ctx context.Context, e env.Env, text string) error
}

// Desktop is the fixture of X11 desktops: a yad dialog that writes the
// code of the button pressed to ~/rc.
var Desktop = Fixture{
	Dialog: env.Setup{Steps: []task.Step{
		{Run: &task.Run{Command: `yad --title=Conformance --text=Proceed --button=Yes:0 --button=Later:5; echo $? > ~/rc`, Background: true}},
		{WaitWindow: &task.WaitWindow{Title: "Conformance", Timeout: duration.Duration(30 * time.Second)}},
		{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Role: "push button", Name: "Later"}}},
	}},
	Pressed: func(ctx context.Context, e env.Env) (string, error) {
		b, err := e.ReadFile(ctx, "~/rc")
		if errors.Is(err, observe.ErrNotFound) {
			return "", nil
		}
		switch strings.TrimSpace(string(b)) {
		case "0":
			return "Yes", err
		case "5":
			return "Later", err
		}
		return "", err
	},
}

// callWait bounds each call of the suite on the environment.
const callWait = 5 * time.Minute

// Run runs the suite on the desktop e, which it resets as it goes. It
// needs yad (a GTK 3 dialog tool) and xclip on the desktop.
func Run(t *testing.T, e env.Env) { RunWith(t, e, Desktop) }

// RunWith runs the suite on the environment e with the fixture of its
// kind. The tests of a capability run where e declares it (Info.Caps);
// where it does not, the suite checks that its use is refused.
func RunWith(t *testing.T, e env.Env, fx Fixture) {
	// Each call is bounded by callWait: a reset that starts a GNOME
	// session waits up to 3 min for gnome-shell on its own, and a loaded
	// machine takes over 90 s.
	ctx := func(t *testing.T) context.Context {
		c, cancel := context.WithTimeout(context.Background(), callWait)
		t.Cleanup(cancel)
		return c
	}
	info, err := e.Info(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	has := info.Has
	t.Run("Info", func(t *testing.T) {
		i, err := e.Info(ctx(t))
		if err != nil || i.Screen.W <= 0 || i.Screen.H <= 0 || i.Kind == "" {
			t.Fatalf("Info = %+v, %v", i, err)
		}
	})
	t.Run("Screenshot", func(t *testing.T) {
		i, _ := e.Info(ctx(t))
		s, err := e.Screenshot(ctx(t), env.ShotOptions{})
		if err != nil {
			t.Fatal(err)
		}
		img, format, err := image.Decode(bytes.NewReader(s.Data))
		if err != nil || format != "png" || img.Bounds().Dx() != i.Screen.W || img.Bounds().Dy() != i.Screen.H {
			t.Fatalf("screenshot: %s %v %v", format, img.Bounds(), err)
		}
	})
	t.Run("ResetRunsSetup", func(t *testing.T) {
		if !has(task.CapFiles) {
			t.Skip("no files to set up")
		}
		steps := []task.Step{
			{Write: &task.Write{Path: "~/a/written.txt", Content: "written"}},
			{Copy: &task.Copy{Asset: "data.csv", To: "~/copied.csv"}},
		}
		want := map[string]string{"~/a/written.txt": "written", "~/copied.csv": "x,y\n1,2\n"}
		if has(task.CapCommands) {
			steps = append(steps, task.Step{Run: &task.Run{Command: "echo ran > ~/ran.txt"}})
			want["~/ran.txt"] = "ran\n"
		} else {
			steps = append(steps, task.Step{Write: &task.Write{Path: "~/ran.txt", Content: "ran\n"}})
		}
		err := e.Reset(ctx(t), env.Setup{Steps: steps, Assets: map[string][]byte{"data.csv": []byte("x,y\n1,2\n")}})
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range want {
			b, err := e.ReadFile(ctx(t), p)
			if err != nil || string(b) != want {
				t.Errorf("%s = %q, %v; want %q", p, b, err, want)
			}
		}
		if err := e.Reset(ctx(t), env.Setup{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.ReadFile(ctx(t), "~/ran.txt"); !errors.Is(err, observe.ErrNotFound) {
			t.Errorf("after a reset, a file of the last task: %v", err)
		}
	})
	t.Run("SetupErrorsNameTheStep", func(t *testing.T) {
		if !has(task.CapCommands) {
			err := e.Reset(ctx(t), env.Setup{Steps: []task.Step{
				{Sleep: ptr(duration.Duration(time.Millisecond))},
				{Copy: &task.Copy{Asset: "absent.csv", To: "~/x.csv"}},
			}})
			if err == nil || !strings.Contains(err.Error(), "setup[1] copy") || !strings.Contains(err.Error(), "absent.csv") {
				t.Fatalf("Reset = %v, want an error naming setup[1] and the asset", err)
			}
			return
		}
		err := e.Reset(ctx(t), env.Setup{Steps: []task.Step{
			{Write: &task.Write{Path: "~/ok.txt", Content: "x"}},
			{Run: &task.Run{Command: "exit 7"}},
		}})
		if err == nil || !strings.Contains(err.Error(), "setup[1] run") || !strings.Contains(err.Error(), "exited 7") {
			t.Fatalf("Reset = %v, want an error naming setup[1] and the exit status", err)
		}
	})
	t.Run("Run", func(t *testing.T) {
		if !has(task.CapCommands) {
			if _, err := e.Run(ctx(t), "true", 10*time.Second); !errors.Is(err, env.ErrBadAction) {
				t.Fatalf("Run without commands = %v, want a refusal (env.ErrBadAction)", err)
			}
			return
		}
		res, err := e.Run(ctx(t), "printf out; printf err >&2; exit 4", 10*time.Second)
		if err != nil || res.Stdout != "out" || res.Stderr != "err" || res.ExitCode != 4 {
			t.Fatalf("Run = %+v, %v", res, err)
		}
	})
	t.Run("Files", func(t *testing.T) {
		if !has(task.CapFiles) {
			t.Skip("no files")
		}
		if err := e.WriteFile(ctx(t), "~/f/x.bin", []byte{0, 1, 2}); err != nil {
			t.Fatal(err)
		}
		if b, err := e.ReadFile(ctx(t), "~/f/x.bin"); err != nil || !bytes.Equal(b, []byte{0, 1, 2}) {
			t.Fatalf("ReadFile = %v, %v", b, err)
		}
		if _, err := e.ReadFile(ctx(t), "~/missing"); !errors.Is(err, observe.ErrNotFound) {
			t.Fatalf("missing file: %v", err)
		}
		for _, p := range []string{"/etc/passwd", "~/../../etc/shadow"} {
			if _, err := e.ReadFile(ctx(t), p); !errors.Is(err, env.ErrForbidden) {
				t.Errorf("ReadFile(%q) = %v, want forbidden", p, err)
			}
		}
	})
	t.Run("ClickDialogButton", func(t *testing.T) {
		if !has(task.CapTree) {
			t.Skip("no tree to find the button in")
		}
		if err := e.Reset(ctx(t), fx.Dialog); err != nil {
			t.Fatal(err)
		}
		if has(task.CapWindows) {
			ws, err := e.Windows(ctx(t))
			if err != nil || len(ws) == 0 || !strings.Contains(ws[0].Title, "Conformance") {
				t.Fatalf("Windows = %+v, %v", ws, err)
			}
		}
		els, err := e.Elements(ctx(t), observe.ElementQuery{Role: "push button", Name: "Later"})
		if err != nil || len(els) != 1 {
			t.Fatalf("Elements = %+v, %v", els, err)
		}
		steps, err := e.Do(ctx(t), []action.Action{{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "Later"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != 1 || steps[0].Element != "push button Later" {
			t.Fatalf("steps %+v: want the click recorded on push button Later", steps)
		}
		var pressed string
		for range 50 {
			if pressed, err = fx.Pressed(ctx(t), e); err == nil && pressed == "Later" {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("the dialog says %q (%v) was pressed, not Later", pressed, err)
	})
	t.Run("Clipboard", func(t *testing.T) {
		if !has(task.CapClipboard) {
			if _, err := e.Clipboard(ctx(t)); !errors.Is(err, env.ErrBadAction) {
				t.Fatalf("Clipboard without the capability = %v, want a refusal (env.ErrBadAction)", err)
			}
			return
		}
		copyText := fx.Copy
		if copyText == nil {
			if !has(task.CapCommands) {
				t.Skip("no way to put text on the clipboard: the fixture gives no Copy and there are no commands")
			}
			copyText = func(ctx context.Context, e env.Env, text string) error {
				_, err := e.Run(ctx, "printf '"+text+"' | xclip -selection clipboard", 10*time.Second)
				return err
			}
		}
		if err := copyText(ctx(t), e, "copied ✓"); err != nil {
			t.Fatal(err)
		}
		var got string
		for range 20 {
			var err error
			if got, err = e.Clipboard(ctx(t)); err != nil {
				t.Fatal(err)
			}
			if got == "copied ✓" {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("clipboard %q, want %q", got, "copied ✓")
	})
	t.Run("MissingElement", func(t *testing.T) {
		if !has(task.CapTree) {
			t.Skip("no elements")
		}
		if err := e.Reset(ctx(t), env.Setup{}); err != nil {
			t.Fatal(err)
		}
		_, err := e.Do(ctx(t), []action.Action{{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "Nowhere"}}})
		if !errors.Is(err, env.ErrNotFound) {
			t.Fatalf("click on a missing element: %v", err)
		}
	})
}

func ptr[T any](v T) *T { return &v }
