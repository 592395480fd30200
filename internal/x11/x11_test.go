package x11

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// xvfb starts a bare X server without access control for the test and
// returns its display.
func xvfb(t *testing.T) string {
	t.Helper()
	return startXvfb(t, "-ac")
}

func startXvfb(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("Xvfb"); err != nil {
		t.Skip("Xvfb is not installed")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("Xvfb", append([]string{"-displayfd", "3", "-screen", "0", "640x480x24", "-nolisten", "tcp"}, args...)...)
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() { s, _ := bufio.NewReader(r).ReadString('\n'); line <- s }()
	select {
	case s := <-line:
		return ":" + strings.TrimSpace(s)
	case <-time.After(15 * time.Second):
		t.Fatal("Xvfb did not start")
	}
	return ""
}

func dial(t *testing.T) *Conn {
	c, err := Dial(xvfb(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPointer(t *testing.T) {
	c := dial(t)
	for _, p := range [][2]int{{0, 0}, {123, 45}, {639, 479}} {
		if err := c.Move(p[0], p[1]); err != nil {
			t.Fatal(err)
		}
		x, y, err := c.Pointer()
		if err != nil || x != p[0] || y != p[1] {
			t.Fatalf("pointer at %d,%d (%v), want %v", x, y, err, p)
		}
	}
	for _, b := range []byte{1, 3, 4} {
		if err := c.Button(b, true); err != nil {
			t.Fatal(err)
		}
		if err := c.Button(b, false); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCaptureSHMMatchesGetImage(t *testing.T) {
	c := dial(t)
	if !c.UsesSHM() {
		t.Skip("no MIT-SHM on this server")
	}
	// Paint something: fill a rectangle on the root window.
	gc, _ := xproto.NewGcontextId(c.x)
	xproto.CreateGC(c.x, gc, xproto.Drawable(c.root), xproto.GcForeground, []uint32{0x00ff8040})
	xproto.PolyFillRectangle(c.x, xproto.Drawable(c.root), gc, []xproto.Rectangle{{X: 10, Y: 20, Width: 30, Height: 40}})
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	a, err := c.Capture()
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.closeSHM()
	c.mu.Unlock()
	b, err := c.Capture()
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Pix) != string(b.Pix) {
		t.Fatal("MIT-SHM and GetImage captures differ")
	}
	if got := a.RGBAAt(20, 30); got.R != 0xff || got.G != 0x80 || got.B != 0x40 {
		t.Fatalf("painted pixel reads %v", got)
	}
}

func TestKeysyms(t *testing.T) {
	tests := []struct {
		name string
		sym  xproto.Keysym
	}{
		{"enter", 0xff0d}, {"ctrl", 0xffe3}, {"f1", 0xffbe}, {"f12", 0xffc9}, {"a", 'a'}, {"é", 0xe9},
		{"€", 0x010020ac}, {"space", 0x20}, {"pagedown", 0xff56},
	}
	for _, tc := range tests {
		if got, err := KeyKeysym(tc.name); err != nil || got != tc.sym {
			t.Errorf("KeyKeysym(%q) = %#x, %v; want %#x", tc.name, got, err, tc.sym)
		}
	}
	if _, err := KeyKeysym("f99"); err == nil {
		t.Error("f99 is not a key")
	}
}

func TestTypingBindsSpareKeycodes(t *testing.T) {
	c := dial(t)
	spares := len(c.keys.spares)
	for _, r := range "aZ€日本" {
		if err := c.TypeRune(r); err != nil {
			t.Fatalf("TypeRune(%q): %v", r, err)
		}
	}
	if got := len(c.keys.bound); got != 3 {
		t.Fatalf("%d keysyms bound to spare keycodes, want 3 (€, 日, 本)", got)
	}
	if len(c.keys.spares) != spares-3 {
		t.Fatalf("spare keycodes %d, want %d", len(c.keys.spares), spares-3)
	}
	// With every spare taken, the oldest binding is reused.
	c.keys.spares = nil
	if err := c.TypeRune('ß'); err != nil {
		t.Fatal(err)
	}
	if _, still := c.keys.bound[RuneKeysym('€')]; still {
		t.Fatal("the oldest binding was not reused")
	}
	if err := c.TypeRune('\x01'); err == nil {
		t.Fatal("a control character was typed")
	}
}

func TestClientPIDs(t *testing.T) {
	if _, err := exec.LookPath("xterm"); err != nil {
		t.Skip("xterm is not installed")
	}
	c := dial(t)
	// A client in its own session with an empty environment: found all
	// the same, by its connection.
	cmd := exec.Command("setsid", "env", "-i", "PATH=/usr/bin:/bin", "SHELL=/bin/sh",
		"xterm", "-display", c.display, "-e", "sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 100 {
		pids, err := c.ClientPIDs()
		if err != nil {
			t.Fatal(err)
		}
		got := map[int]bool{}
		for _, p := range pids {
			got[p] = true
		}
		if !got[os.Getpid()] {
			t.Fatalf("own process %d missing from %v", os.Getpid(), pids)
		}
		// setsid execs env, which execs xterm: the same process id.
		if got[cmd.Process.Pid] {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("xterm (pid %d) never showed among the clients", cmd.Process.Pid)
}

func TestWindowManager(t *testing.T) {
	if _, err := exec.LookPath("openbox"); err != nil {
		t.Skip("openbox is not installed")
	}
	c := dial(t)
	if name, ok, err := c.WindowManager(); err != nil || ok {
		t.Fatalf("a bare X server reports a window manager %q (%v)", name, err)
	}
	wm := exec.Command("openbox", "--sm-disable")
	wm.Env = append(os.Environ(), "DISPLAY="+c.display)
	if err := wm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wm.Process.Kill(); wm.Wait() })
	for range 100 {
		name, ok, err := c.WindowManager()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if name != "Openbox" {
				t.Fatalf("window manager %q, want Openbox", name)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("openbox never advertised itself")
}

// TestDialCookie checks that DialCookie presents its cookie to a server
// that requires one, and that a client without it is refused.
func TestDialCookie(t *testing.T) {
	if _, err := exec.LookPath("Xvfb"); err != nil {
		t.Skip("Xvfb is not installed")
	}
	cookie := []byte("0123456789abcdef")
	// An Xauthority entry: family (FamilyWild), address, display number,
	// name and data, each but the family a 2-byte big-endian length and bytes.
	var auth []byte
	auth = binary.BigEndian.AppendUint16(auth, 0xffff)
	for _, f := range [][]byte{nil, nil, []byte("MIT-MAGIC-COOKIE-1"), cookie} {
		auth = binary.BigEndian.AppendUint16(auth, uint16(len(f)))
		auth = append(auth, f...)
	}
	file := filepath.Join(t.TempDir(), "Xauthority")
	if err := os.WriteFile(file, auth, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XAUTHORITY", filepath.Join(t.TempDir(), "none"))
	display := startXvfb(t, "-auth", file)
	if c, err := Dial(display); err == nil {
		c.Close()
		t.Fatal("a client without the cookie connected")
	}
	if c, err := DialCookie(display, []byte("fedcba9876543210")); err == nil {
		c.Close()
		t.Fatal("a client with the wrong cookie connected")
	}
	c, err := DialCookie(display, cookie)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Move(12, 34); err != nil {
		t.Fatal(err)
	}
	if x, y, err := c.Pointer(); err != nil || x != 12 || y != 34 {
		t.Fatalf("pointer at %d,%d (%v), want 12,34", x, y, err)
	}
	for _, bad := range []string{"host:5", ":x", "", ":70000"} {
		if _, err := DialCookie(bad, cookie); err == nil {
			t.Errorf("DialCookie(%q) succeeded", bad)
		}
	}
}

// Dial connects (in tests, to an Xvfb without access control) to display (":5") with the credentials of $XAUTHORITY, if
// any, and checks that XTEST is available.
func Dial(display string) (*Conn, error) {
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, fmt.Errorf("connect to X display %s: %w", display, err)
	}
	return setup(x, display)
}
