package xdesktop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// Helper modes of the test binary, run in a child process (see init).
const (
	probeVar = "PROCTOR_TEST_XPROBE" // try the display named by the value without credentials
	ownerVar = "PROCTOR_TEST_XOWNER" // start a desktop (in the session named, if any), report it, and wait to be killed
	nobody   = 65534                 // uid and gid of the unprivileged user
	probeOK  = "accepted without credentials"
)

func init() {
	if disp := os.Getenv(probeVar); disp != "" {
		fmt.Println(probeDisplay(disp))
		os.Exit(0)
	}
	if owner := os.Getenv(ownerVar); owner != "" {
		Watchdog()
		cfg := Config{NoWM: true}
		if owner != "none" {
			cfg = Config{Session: owner, Width: 1024, Height: 768}
		}
		d, err := Start(context.Background(), cfg)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		if owner != "none" {
			// The session bus starts the settings daemons.
			res, err := d.Run(context.Background(), "gsettings set org.gtk.Settings.FileChooser show-hidden true && (! command -v xfconf-query || xfconf-query -c proctor -p /a -n -t int -s 1)", time.Minute)
			if err != nil || res.ExitCode != 0 {
				fmt.Println("error", err, res.Stderr)
				os.Exit(1)
			}
		}
		fmt.Println(d.Display(), d.ID(), d.s.base)
		select {} // until the test kills this process
	}
}

// probeDisplay connects to every socket a client library tries for disp
// (the abstract socket, then the file) and asks for a connection without
// credentials, as a client of another user would; it reports each answer.
func probeDisplay(disp string) string {
	n := strings.TrimPrefix(disp, ":")
	var out []string
	for _, addr := range []string{"@/tmp/.X11-unix/X" + n, "/tmp/.X11-unix/X" + n} {
		c, err := net.DialTimeout("unix", addr, 2*time.Second)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: refused: %v", addr, err))
			continue
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		// Connection setup: little-endian, protocol 11.0, no authorisation.
		_, err = c.Write([]byte{'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0})
		head := make([]byte, 8)
		if err == nil {
			_, err = io.ReadFull(c, head)
		}
		c.Close()
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s: refused: %v", addr, err))
		case head[0] == 1:
			out = append(out, addr+": "+probeOK)
		default:
			out = append(out, fmt.Sprintf("%s: refused: setup status %d", addr, head[0]))
		}
	}
	return strings.Join(out, "; ")
}

// asNobody runs the test binary as the unprivileged user nobody with the
// extra environment, and returns its output.
func asNobody(t *testing.T, extra ...string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("switching to another user needs root")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary lies in a folder only its owner may enter: copy it
	// where nobody can run it.
	dir, err := os.MkdirTemp("", "proctor-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "probe")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + SafePath, "HOME=/nonexistent"}, extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the probe as nobody: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestOtherUsersCannotUseTheDisplay(t *testing.T) {
	need(t)
	d := start(t)
	if got := asNobody(t, probeVar+"="+d.Display()); strings.Contains(got, probeOK) || !strings.Contains(got, "refused") {
		t.Fatalf("another user reached display %s: %s", d.Display(), got)
	}
	// Even this process, which may open the socket, needs the cookie.
	if got := probeDisplay(d.Display()); strings.Contains(got, probeOK) {
		t.Fatalf("a client without the cookie reached display %s: %s", d.Display(), got)
	}
	if st, err := os.Stat(d.XAuthority()); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the authority file %s: %v, %v; want mode 0600", d.XAuthority(), st, err)
	}
	// The desktop's own X clients (Xlib, through XAUTHORITY) still connect.
	for _, c := range []string{"xdpyinfo", "xdotool getmouselocation", "xprop -root"} {
		if _, err := exec.LookPath(strings.Fields(c)[0]); err != nil {
			continue
		}
		res, err := d.Run(ctx(t), c, 20*time.Second)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%s in the desktop: %+v, %v", c, res, err)
		}
		return
	}
	t.Log("no xdpyinfo, xdotool or xprop: the desktop's own clients are covered by the application tests")
}

// TestKilledOwnerLeavesNoXFiles kills the process that owns a desktop and
// checks that the watchdog removes the X server's socket with the rest.
func TestKilledOwnerLeavesNoXFiles(t *testing.T) {
	for _, owner := range []string{"none", task.SessionXFCE, task.SessionGNOME} {
		t.Run(owner, func(t *testing.T) {
			if owner == "none" {
				need(t)
			} else {
				needSession(t, owner)
			}
			killOwner(t, owner)
		})
	}
}

// killOwner starts a desktop in another process (ownerVar), kills that
// process, and checks that nothing of the desktop is left.
func killOwner(t *testing.T, owner string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), ownerVar+"="+owner)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] == "error" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the desktop's owner said %q, %v", line, err)
	}
	disp, id, base := f[0], f[1], f[2]
	started = append(started, id)
	sock := "/tmp/.X11-unix/X" + strings.TrimPrefix(disp, ":")
	lock := "/tmp/.X" + strings.TrimPrefix(disp, ":") + "-lock"
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("display %s has no socket: %v", disp, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// The watchdog waits up to staleXWait for a killed server's socket
	// to close; a loaded machine takes seconds to end a GNOME session.
	var left []string
	for end := time.Now().Add(staleXWait + 15*time.Second); time.Now().Before(end); {
		left = nil
		for _, p := range []string{sock, lock, base} {
			if _, err := os.Lstat(p); err == nil {
				left = append(left, p)
			}
		}
		left = append(left, markedProcesses(id)...)
		if len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("left behind by a killed desktop: %v", left)
}

// outside makes a folder outside every desktop's roots holding a secret.
func outside(t *testing.T) (dir, secret string) {
	t.Helper()
	dir = t.TempDir()
	secret = filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, secret
}

func TestWriteThroughLinksIsRefused(t *testing.T) {
	need(t)
	d := start(t)
	c := ctx(t)
	out, _ := outside(t)
	rel, err := filepath.Rel(d.Home(), filepath.Join(out, "rel.txt"))
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"dangling": filepath.Join(out, "new.txt"), // absolute, to a file not there yet
		"relative": rel,                           // ../../..: a relative way out
		"dir":      out,                           // a folder outside
	}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(d.Home(), name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"~/dangling", "~/relative", "~/dir/via-dir.txt", "~/dir/sub/deep.txt"} {
		if err := d.WriteFile(c, p, []byte("x")); !errors.Is(err, env.ErrForbidden) {
			t.Errorf("WriteFile(%q) = %v, want forbidden", p, err)
		}
	}
	// Setup steps: a command makes the link, a later step writes through it.
	assets := map[string][]byte{"a": []byte("asset")}
	apps := map[string]task.AppSpec{"conf": {Command: "true", Files: map[string]string{"out/app.conf": "x"}}}
	linkDir := "ln -s " + out + " ~/out"
	linkFile := func(name string) string { return "ln -s " + filepath.Join(out, name) + " ~/" + name }
	for _, tc := range []struct {
		link string
		step task.Step
	}{
		{linkDir, task.Step{Write: &task.Write{Path: "~/out/written.txt", Content: "x"}}},
		{linkDir, task.Step{Write: &task.Write{Path: "~/out/moded.txt", Content: "x", Mode: "0600"}}},
		{linkDir, task.Step{Copy: &task.Copy{Asset: "a", To: "~/out/copied.txt"}}},
		{linkDir, task.Step{Launch: &task.Launch{App: "conf"}}},
		{linkFile("w.txt"), task.Step{Write: &task.Write{Path: "~/w.txt", Content: "x"}}},
		{linkFile("m.txt"), task.Step{Write: &task.Write{Path: "~/m.txt", Content: "x", Mode: "0666"}}},
		{linkFile("c.txt"), task.Step{Copy: &task.Copy{Asset: "a", To: "~/c.txt"}}},
	} {
		steps := []task.Step{{Run: &task.Run{Command: tc.link}}, tc.step}
		err := d.Reset(c, env.Setup{Steps: steps, Assets: assets, Apps: apps})
		if !errors.Is(err, env.ErrForbidden) {
			t.Errorf("setup `%s` then %s: %v, want forbidden", tc.link, tc.step.Spec().Kind(), err)
		}
	}
	ents, _ := os.ReadDir(out)
	for _, e := range ents {
		if e.Name() != "secret" {
			t.Errorf("%s was written outside the home", filepath.Join(out, e.Name()))
		}
	}
	// Within the home, links and modes still work.
	if err := os.Symlink("real", filepath.Join(d.Home(), "inside")); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile(c, "~/inside", []byte("ok")); err != nil {
		t.Fatalf("a write through a link within the home: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(d.Home(), "real")); err != nil || string(b) != "ok" {
		t.Fatalf("~/real = %q, %v", b, err)
	}
	if err := d.Reset(c, env.Setup{Steps: []task.Step{{Write: &task.Write{Path: "~/bin/run.sh", Content: "#!/bin/sh\n", Mode: "0750"}}}}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(d.Home(), "bin/run.sh")); err != nil || st.Mode().Perm() != 0o750 {
		t.Fatalf("~/bin/run.sh: %v, %v; want mode 0750", st, err)
	}
}

// TestReadRacingLinkSwapNeverLeaks swaps links between a harmless target
// and a secret outside the home while reading through them.
func TestReadRacingLinkSwapNeverLeaks(t *testing.T) {
	need(t)
	d := start(t)
	c := ctx(t)
	out, secret := outside(t)
	home := d.Home()
	if err := os.WriteFile(filepath.Join(home, "harmless"), []byte("harmless"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, "safe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "safe", "secret"), []byte("harmless"), 0o644); err != nil {
		t.Fatal(err)
	}
	// ~/file flips between ~/harmless and the secret; ~/dir between
	// ~/safe and the secret's folder.
	swaps := map[string][2]string{"file": {"harmless", secret}, "dir": {"safe", out}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for name, targets := range swaps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			link, tmp := filepath.Join(home, name), filepath.Join(home, name+".new")
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				os.Remove(tmp)
				if err := os.Symlink(targets[i%2], tmp); err == nil {
					os.Rename(tmp, link) // atomic: the link always exists
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	read := 0
	for i := range 1500 {
		p := "~/file"
		if i%2 == 1 {
			p = "~/dir/secret"
		}
		b, err := d.ReadFile(c, p)
		if strings.Contains(string(b), "SECRET") {
			t.Fatalf("read %d of %s returned the secret outside the home", i, p)
		}
		switch {
		case err == nil:
			read++
		case errors.Is(err, env.ErrForbidden), errors.Is(err, observe.ErrNotFound):
		default:
			t.Fatalf("read %d of %s: %v", i, p, err)
		}
	}
	if read == 0 {
		t.Fatal("no read went through: the race never offered the harmless file")
	}
}

func TestFailedWriteLeavesNoFolders(t *testing.T) {
	need(t)
	d := start(t)
	c := ctx(t)
	// The folders can be made; the file name is too long for the file system.
	p := "~/made1/made2/made3/" + strings.Repeat("n", 300)
	if err := d.WriteFile(c, p, []byte("x")); err == nil {
		t.Fatal("a write with a 300-byte file name succeeded")
	}
	if _, err := os.Lstat(filepath.Join(d.Home(), "made1")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed write left ~/made1 behind: %v", err)
	}
	// Folders that were there before stay.
	if err := os.Mkdir(filepath.Join(d.Home(), "kept"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile(c, "~/kept/new/"+strings.Repeat("n", 300), []byte("x")); err == nil {
		t.Fatal("a write with a 300-byte file name succeeded")
	}
	if ents, err := os.ReadDir(filepath.Join(d.Home(), "kept")); err != nil || len(ents) != 0 {
		t.Fatalf("~/kept holds %v (%v), want it kept and empty", ents, err)
	}
	// Reading a folder says so.
	if _, err := d.ReadFile(c, "~/kept"); !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("ReadFile of a folder: %v, want EISDIR", err)
	}
}

func TestActionsHonourContext(t *testing.T) {
	need(t)
	d := start(t)
	long := []action.Action{
		{Kind: action.Type, Text: strings.Repeat("a", action.MaxText)},
		{Kind: action.Scroll, DY: 100},
		{Kind: action.Key, Keys: strings.Fields(strings.Repeat("a ", 32))},
		{Kind: action.Drag, Point: action.At(10, 10), To: action.At(500, 500), Duration: 30},
		{Kind: action.Wait, Duration: 200},
	}
	// A cancelled context stops an action before any input is sent.
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, a := range long {
		if _, err := d.Do(cancelled, []action.Action{a}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", a.Kind, err)
		}
	}
	// Cancelling during the action ends it.
	for _, a := range []action.Action{long[0], long[3], long[4]} {
		c, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := d.Do(c, []action.Action{a}); done <- err }()
		time.Sleep(100 * time.Millisecond) // typing takes seconds
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s cancelled: %v, want context.Canceled", a.Kind, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s went on for 5s after its context was cancelled", a.Kind)
		}
	}
	// The desktop works afterwards: no key or button is left held.
	if _, err := d.Do(ctx(t), []action.Action{{Kind: action.Click, Point: action.At(20, 20)}}); err != nil {
		t.Fatal(err)
	}
}

func TestActionAmountsAreCapped(t *testing.T) {
	need(t)
	d := start(t)
	c := ctx(t)
	for _, a := range []action.Action{
		{Kind: action.Scroll, DY: 1e9},
		{Kind: action.Scroll, DX: -1e9},
		{Kind: action.Scroll, Pages: 1e9},
		{Kind: action.Type, Text: strings.Repeat("a", 3e6)},
		{Kind: action.Key, Keys: strings.Fields(strings.Repeat("a ", 1e6))},
		{Kind: action.Wait, Duration: 1e9},
		{Kind: action.Wait, Duration: -1},
		{Kind: action.Wait, Duration: math.NaN()},
		{Kind: action.Scroll, DY: math.MinInt},
		{Kind: action.Drag, To: action.At(1, 1), Duration: 3600},
		{Kind: action.Click, Point: action.At(99999, 5)},
		{Kind: action.Click, Point: action.At(-3, 5)},
		{Kind: action.MoveRel, Point: &action.Point{X: 1e6, Y: 0}},
		{Kind: action.DragRel, To: &action.Point{X: 0, Y: -1e5}},
	} {
		done := make(chan error, 1)
		go func() { _, err := d.Do(c, []action.Action{a}); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, env.ErrBadAction) {
				t.Errorf("%.80s: %.200v, want a bad action", a, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%.80s ran for 10s", a)
		}
	}
	_, err := d.Do(c, []action.Action{{Kind: action.Click, Point: action.At(99999, 5)}})
	if err == nil || !strings.Contains(err.Error(), "(99999, 5)") || !strings.Contains(err.Error(), "1920x1080 screen") {
		t.Errorf("an off-screen click: %v, want it to name the point and the screen", err)
	}
	// The desktop still works.
	if _, err := d.Do(c, []action.Action{{Kind: action.Click, Point: action.At(1919, 1079)}, {Kind: action.Scroll, DY: 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Screenshot(c, env.ShotOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestHomeTemplateIsCopied(t *testing.T) {
	need(t)
	tmpl := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tmpl, "docs", "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{"docs/old/a.txt": 0o644, "run.sh": 0o755} {
		if err := os.WriteFile(filepath.Join(tmpl, name), []byte(name), mode); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Start(context.Background(), Config{HomeTemplate: tmpl, NoWM: true})
	if err != nil {
		t.Fatal(err)
	}
	started = append(started, d.s.id)
	t.Cleanup(func() { d.Close() })
	c := ctx(t)
	if err := d.WriteFile(c, "~/docs/old/a.txt", []byte("changed")); err != nil {
		t.Fatal(err)
	}
	if err := d.Reset(c, env.Setup{}); err != nil {
		t.Fatal(err)
	}
	if b, err := d.ReadFile(c, "~/docs/old/a.txt"); err != nil || string(b) != "docs/old/a.txt" {
		t.Fatalf("~/docs/old/a.txt after a reset = %q, %v", b, err)
	}
	if st, err := os.Stat(filepath.Join(d.Home(), "run.sh")); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Fatalf("~/run.sh lost its execute bit: %v, %v", st, err)
	}
}
