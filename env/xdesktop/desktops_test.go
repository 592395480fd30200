package xdesktop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/envtest"
	"github.com/proctor-eval/proctor/internal/tail"
	"github.com/proctor-eval/proctor/task"
)

// needSession skips a test where this machine lacks a session's packages.
func needSession(t testing.TB, name string) {
	t.Helper()
	need(t)
	if why := sessionMissing(name); why != "" {
		t.Skip(why)
	}
}

// startIn starts a desktop in a session, closed with the test.
func startIn(t testing.TB, session string) *Desktop {
	t.Helper()
	needSession(t, session)
	d, err := Start(context.Background(), Config{Session: session, Width: 1280, Height: 800})
	if err != nil {
		t.Fatal(err)
	}
	started = append(started, d.s.id)
	t.Cleanup(func() { d.Close() })
	return d
}

// TestSessionConformance runs the conformance suite on the XFCE and GNOME
// sessions.
func TestSessionConformance(t *testing.T) {
	for _, s := range []string{task.SessionXFCE, task.SessionGNOME} {
		t.Run(s, func(t *testing.T) {
			need(t, "yad", "xclip")
			d := startIn(t, s)
			envtest.Run(t, d)
			if got := d.Session(); got != s {
				t.Errorf("after the suite the desktop runs %q, want %q", got, s)
			}
		})
	}
}

// sh runs a command on the desktop and returns its output, failing the
// test on a non-zero exit.
func sh(t *testing.T, d *Desktop, cmd string) string {
	t.Helper()
	res, err := d.Run(context.Background(), cmd, 30*time.Second)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%s: exit %d, %v: %s", cmd, res.ExitCode, err, res.Stderr)
	}
	return strings.TrimSpace(res.Stdout)
}

// TestSessionSettings: a setting one process writes (GSettings in dconf,
// and xfconf in XFCE) is read by another process of the same desktop,
// from the desktop's own settings folder; a reset starts from the
// restored home folder without it; and nothing of the settings (their
// daemons, their folders) outlives the desktop.
func TestSessionSettings(t *testing.T) {
	gs := []string{"gsettings set org.gtk.Settings.FileChooser show-hidden true",
		"gsettings get org.gtk.Settings.FileChooser show-hidden", "true", "false"}
	xf := []string{"xfconf-query -c proctor -p /probe -n -t string -s written",
		"xfconf-query -c proctor -p /probe", "written", ""}
	for _, tc := range []struct {
		session string
		probes  [][]string // set, get, the value set, the value at start ("": unset)
		file    string     // where the settings are kept, under the home folder
	}{
		{task.SessionXFCE, [][]string{gs, xf}, ".config/xfce4/xfconf/xfce-perchannel-xml/proctor.xml"},
		{task.SessionGNOME, [][]string{gs}, ".config/dconf/user"},
	} {
		t.Run(tc.session, func(t *testing.T) {
			needSession(t, tc.session)
			d, err := Start(context.Background(), Config{Session: tc.session, Width: 1024, Height: 768})
			if err != nil {
				t.Fatal(err)
			}
			started = append(started, d.s.id)
			defer d.Close()
			if tc.session == task.SessionGNOME {
				// The banners kept off while the shell starts are on again,
				// as GNOME's default has them.
				if got := sh(t, d, "gsettings get org.gnome.desktop.notifications show-banners; dconf read "+showBanners); got != "true" {
					t.Fatalf("show-banners at the start: %q, want true from the default", got)
				}
			}
			for _, p := range tc.probes {
				sh(t, d, p[0])
				if got := sh(t, d, p[1]); got != p[2] {
					t.Fatalf("%s read %q in another process, want %q", p[1], got, p[2])
				}
			}
			if got := sh(t, d, "dconf read /org/gtk/settings/file-chooser/show-hidden"); got != "true" {
				t.Fatalf("dconf holds %q, want true", got)
			}
			// xfconfd writes its files a moment after a change.
			if err := d.poll(context.Background(), 20*time.Second, tc.file, func() (bool, error) {
				_, err := os.Stat(filepath.Join(d.Home(), tc.file))
				return err == nil, nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := d.Reset(context.Background(), env.Setup{}); err != nil {
				t.Fatal(err)
			}
			for _, p := range tc.probes {
				res, err := d.Run(context.Background(), p[1], 30*time.Second)
				if err != nil || strings.TrimSpace(res.Stdout) != p[3] {
					t.Fatalf("after a reset %s read %q (%v), want %q", p[1], res.Stdout, err, p[3])
				}
			}
			id, base := d.s.id, d.s.base
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if left := markedProcesses(id); len(left) > 0 {
				t.Fatalf("processes left behind: %v", left)
			}
			if _, err := os.Stat(base); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the desktop's folder remains: %v", err)
			}
		})
	}
}

// TestResetSwitchesSession: a reset brings up the session its setup
// names, and the desktop's own again when the next names none.
func TestResetSwitchesSession(t *testing.T) {
	needSession(t, task.SessionXFCE)
	d := start(t)
	for _, tc := range []struct {
		asked, want, wm string
	}{
		{task.SessionXFCE, task.SessionXFCE, "Xfwm4"},
		{"", task.SessionOpenbox, "Openbox"},
		{task.SessionOpenbox, task.SessionOpenbox, "Openbox"},
	} {
		if err := d.Reset(context.Background(), env.Setup{Session: tc.asked}); err != nil {
			t.Fatal(err)
		}
		wm, ok, err := d.x.WindowManager()
		if got := d.Session(); got != tc.want || !ok || err != nil || !strings.Contains(wm, tc.wm) {
			t.Fatalf("asked %q: session %q with window manager %q (%v, %v), want %q with %s", tc.asked, got, wm, ok, err, tc.want, tc.wm)
		}
		if tc.want == task.SessionXFCE {
			// The panel is on the screen, but no application window.
			if err := d.poll(context.Background(), 20*time.Second, "XFCE's panel", func() (bool, error) {
				w, ok, err := d.x.WindowAt(1, 1)
				return ok && w.Title == "xfce4-panel", err
			}); err != nil {
				t.Fatal(err)
			}
			ws, err := d.Windows(context.Background())
			for _, w := range ws {
				if w.Title == "xfce4-panel" || w.Title == "Desktop" || err != nil {
					t.Fatalf("the windows %+v (%v) hold the session's own", ws, err)
				}
			}
		}
		backend := sh(t, d, "echo $GSETTINGS_BACKEND")
		if want := map[string]string{task.SessionXFCE: "dconf", task.SessionOpenbox: "memory"}[tc.want]; backend != want {
			t.Fatalf("the %s session's commands have GSETTINGS_BACKEND=%s, want %s", tc.want, backend, want)
		}
	}
	if err := d.Reset(context.Background(), env.Setup{Session: "kde"}); err == nil || !strings.Contains(err.Error(), `unknown desktop session "kde"`) {
		t.Fatalf("an unknown session: %v", err)
	}
}

// TestSessionStartedAgain: a GNOME Shell that has not said it started by
// the first wait is ended and started again, and the session then works;
// one that never says it fails the start, naming both attempts.
func TestSessionStartedAgain(t *testing.T) {
	needSession(t, task.SessionGNOME)
	defer func(first, all time.Duration, line func(string, int) string) {
		sessionFirstWait, sessionStartWait, startedLine = first, all, line
	}(sessionFirstWait, sessionStartWait, startedLine)
	tests := []struct {
		name  string
		never map[int]bool // the attempts that wait for a line never said
		ok    bool
	}{
		{"the second start", map[int]bool{1: true}, true},
		{"neither start", map[int]bool{1: true, 2: true}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sessionFirstWait, sessionStartWait = 3*time.Second, 3*time.Minute
			if !tc.ok {
				sessionStartWait = 10 * time.Second
			}
			startedLine = func(line string, attempt int) string {
				if tc.never[attempt] {
					return "a line GNOME Shell never says"
				}
				return line
			}
			log := tail.New(1 << 20)
			d, err := Start(context.Background(), Config{Session: task.SessionGNOME, Width: 1280, Height: 800, Log: log})
			if err == nil {
				started = append(started, d.s.id)
				defer d.Close()
			}
			if !tc.ok {
				if err == nil || !strings.Contains(err.Error(), `"a line GNOME Shell never says" in 3s`) || !strings.Contains(err.Error(), "and again once started again") {
					t.Fatalf("Start: %v; want both attempts named", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log.String(), "the session is started again") {
				t.Errorf("the log does not say the session was started again:\n%s", log.String())
			}
			if got := d.Session(); got != task.SessionGNOME {
				t.Errorf("the session is %q", got)
			}
			if err := d.Reset(context.Background(), env.Setup{}); err != nil {
				t.Fatalf("a reset of the session started again: %v", err)
			}
		})
	}
}
