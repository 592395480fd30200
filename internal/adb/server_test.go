package adb_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/internal/adb"
	"github.com/proctor-eval/proctor/internal/adb/adbtest"
)

// adbBin is the adb binary, or the test is skipped.
func adbBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("adb")
	if err != nil {
		t.Skip("no adb binary on PATH (apt-get install adb)")
	}
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// adbEnv is an environment for an adb server of the test's own: HOME (and
// so the keys) and TMPDIR (the server's log) in a temporary directory.
func adbEnv(t *testing.T) []string {
	dir := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "TMPDIR", "ANDROID_ADB_SERVER_PORT", "ADB_VENDOR_KEYS", "ANDROID_SERIAL", "ADB_TRACE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+dir, "TMPDIR="+dir)
}

// startServer starts a real adb server on a free port with its own HOME,
// killed when the test ends, and returns a Client of it.
func startServer(t *testing.T) *adb.Client {
	t.Helper()
	bin := adbBin(t)
	port := strconv.Itoa(freePort(t))
	env := adbEnv(t)
	cmd := exec.Command(bin, "-P", port, "start-server")
	cmd.Env = env
	cmd.WaitDelay = 2 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		t.Fatalf("adb start-server: %v: %s", err, out)
	}
	addr := "127.0.0.1:" + port
	t.Cleanup(func() { killServer(t, bin, port, env) })
	return &adb.Client{Addr: addr, NoStart: true}
}

// killServer stops the server on port and waits until it no longer
// answers.
func killServer(t *testing.T, bin, port string, env []string) {
	cmd := exec.Command(bin, "-P", port, "kill-server")
	cmd.Env = env
	cmd.WaitDelay = 2 * time.Second
	cmd.Run()
	for range 50 {
		nc, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 100*time.Millisecond)
		if err != nil {
			return
		}
		nc.Close()
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("adb server on port %s still answers after kill-server", port)
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// connect connects the stand-in and waits until the server has it online.
func connect(t *testing.T, c *adb.Client, sd *adbtest.Device) *adb.Device {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	if err := c.Connect(ctx, sd.Addr()); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	d := c.Device(sd.Addr())
	if err := d.WaitFor(ctx, "device"); err != nil {
		t.Fatalf("WaitFor device: %v", err)
	}
	return d
}

// png is a PNG-like blob: the signature has \r\n, \x1a and \n; zeros and
// lone \n, \r and \r\n follow.
var png = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0, '\r', '\n', 0xff, '\n', '\r', 0, 0x1a}, 40000)...)

func script(cmd string, stdin []byte) (stdout, stderr []byte, exit int) {
	switch {
	case cmd == "echo hello":
		return []byte("hello\n"), nil, 0
	case cmd == "fail":
		return []byte("some output\n"), []byte("an error\n"), 3
	case cmd == "screencap -p":
		return png, nil, 0
	case cmd == "cat":
		return stdin, nil, 0
	case strings.HasPrefix(cmd, "input tap "):
		return nil, nil, 0
	}
	return nil, []byte("/system/bin/sh: " + cmd + ": inaccessible or not found\n"), 127
}

func TestDevice(t *testing.T) {
	c := startServer(t)
	sd := adbtest.Start(t, adbtest.Options{Model: "Pixel_Stand_In", Product: "stand_in", Device: "standin", Shell: script})
	d := connect(t, c, sd)
	ctx := ctxT(t, 30*time.Second)

	t.Run("Version", func(t *testing.T) {
		v, err := c.Version(ctx)
		if err != nil || v < 31 {
			t.Fatalf("Version = %d, %v", v, err)
		}
	})
	t.Run("Devices", func(t *testing.T) {
		devs, err := c.Devices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(devs) != 1 {
			t.Fatalf("Devices = %+v, want one", devs)
		}
		got := devs[0]
		if got.Serial != sd.Addr() || got.State != "device" || got.Model != "Pixel_Stand_In" || got.Product != "stand_in" || got.Device != "standin" || got.TransportID == 0 {
			t.Errorf("Devices = %+v", got)
		}
	})
	t.Run("State", func(t *testing.T) {
		if s, err := d.State(ctx); err != nil || s != "device" {
			t.Errorf("State = %q, %v", s, err)
		}
	})
	t.Run("Features", func(t *testing.T) {
		f, err := d.Features(ctx)
		if err != nil || !strings.Contains(strings.Join(f, ","), "shell_v2") {
			t.Errorf("Features = %q, %v", f, err)
		}
	})
	t.Run("Shell", func(t *testing.T) {
		r, err := d.Shell(ctx, "echo hello")
		if err != nil || string(r.Stdout) != "hello\n" || len(r.Stderr) != 0 || r.ExitCode != 0 {
			t.Errorf("Shell(echo hello) = %q %q %d, %v", r.Stdout, r.Stderr, r.ExitCode, err)
		}
		r, err = d.Shell(ctx, "fail")
		if err != nil || string(r.Stdout) != "some output\n" || string(r.Stderr) != "an error\n" || r.ExitCode != 3 {
			t.Errorf("Shell(fail) = %q %q %d, %v", r.Stdout, r.Stderr, r.ExitCode, err)
		}
		r, err = d.Shell(ctx, "nosuchcommand")
		if err != nil || r.ExitCode != 127 || !strings.Contains(string(r.Stderr), "not found") {
			t.Errorf("Shell(nosuchcommand) = %q %q %d, %v", r.Stdout, r.Stderr, r.ExitCode, err)
		}
	})
	t.Run("ShellInput", func(t *testing.T) {
		in := bytes.Repeat([]byte("line\x00\r\n"), 30000)
		r, err := d.ShellInput(ctx, "cat", in)
		if err != nil || !bytes.Equal(r.Stdout, in) {
			t.Errorf("ShellInput(cat) = %d bytes, %v", len(r.Stdout), err)
		}
	})
	t.Run("ExecOut", func(t *testing.T) {
		b, err := d.ExecOut(ctx, "screencap -p")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, png) {
			t.Errorf("ExecOut gave %d bytes, not the %d of the PNG byte for byte", len(b), len(png))
		}
	})
	t.Run("PushPullStat", func(t *testing.T) {
		data := append(bytes.Repeat([]byte("0123456789\r\n\x00"), 20000), "end"...)
		mtime := time.Unix(1_700_000_000, 0)
		if err := d.Push(ctx, bytes.NewReader(data), "/sdcard/Download/a.bin", 0o640, mtime); err != nil {
			t.Fatal(err)
		}
		f, ok := sd.File("/sdcard/Download/a.bin")
		if !ok || !bytes.Equal(f.Data, data) || f.Mode != 0o640 || !f.ModTime.Equal(mtime) {
			t.Errorf("device file = %v, %d bytes, mode %v, mtime %v", ok, len(f.Data), f.Mode, f.ModTime)
		}
		got, err := d.Pull(ctx, "/sdcard/Download/a.bin")
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("Pull = %d bytes, %v", len(got), err)
		}
		fi, err := d.Stat(ctx, "/sdcard/Download/a.bin")
		if err != nil || fi.Size != int64(len(data)) || fi.Mode != 0o640 || !fi.ModTime.Equal(mtime) || fi.IsDir() {
			t.Errorf("Stat = %+v, %v", fi, err)
		}
		fi, err = d.Stat(ctx, "/sdcard/Download")
		if err != nil || !fi.IsDir() {
			t.Errorf("Stat(dir) = %+v, %v", fi, err)
		}
		l, err := d.List(ctx, "/sdcard")
		if err != nil || len(l) != 1 || l[0].Name != "Download" || !l[0].IsDir() {
			t.Errorf("List = %+v, %v", l, err)
		}
		sd.SetFile("/sdcard/empty", nil)
		if got, err := d.Pull(ctx, "/sdcard/empty"); err != nil || len(got) != 0 {
			t.Errorf("Pull(empty) = %q, %v", got, err)
		}
	})
	t.Run("Missing", func(t *testing.T) {
		_, err := d.Pull(ctx, "/sdcard/nope.txt")
		if !errors.Is(err, adb.ErrFileNotFound) || !strings.Contains(err.Error(), "/sdcard/nope.txt") {
			t.Errorf("Pull(missing) = %v, want ErrFileNotFound naming the file", err)
		}
		t.Logf("Pull(missing): %v", err)
		_, err = d.Stat(ctx, "/sdcard/nope.txt")
		if !errors.Is(err, adb.ErrFileNotFound) {
			t.Errorf("Stat(missing) = %v, want ErrFileNotFound", err)
		}
	})
	t.Run("NoSuchDevice", func(t *testing.T) {
		_, err := c.Device("127.0.0.1:1").Shell(ctx, "echo hello")
		if !errors.Is(err, adb.ErrNoDevice) {
			t.Errorf("Shell on unknown device = %v, want ErrNoDevice", err)
		}
		_, err = c.Device("127.0.0.1:1").State(ctx)
		if !errors.Is(err, adb.ErrNoDevice) {
			t.Errorf("State of unknown device = %v, want ErrNoDevice", err)
		}
		t.Logf("%v", err)
	})
	t.Run("Disconnect", func(t *testing.T) {
		if err := c.Disconnect(ctx, sd.Addr()); err != nil {
			t.Fatal(err)
		}
		if _, err := d.State(ctx); !errors.Is(err, adb.ErrNoDevice) {
			t.Errorf("State after Disconnect = %v, want ErrNoDevice", err)
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }
