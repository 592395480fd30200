package adb_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/internal/adb"
	"github.com/proctor-eval/proctor/internal/adb/adbtest"
)

func TestUnauthorized(t *testing.T) {
	c := startServer(t)
	sd := adbtest.Start(t, adbtest.Options{Unauthorized: true, Shell: script})
	ctx := ctxT(t, 15*time.Second)
	err := c.Connect(ctx, sd.Addr())
	t.Logf("Connect: %v", err)
	if !errors.Is(err, adb.ErrUnauthorized) {
		t.Errorf("Connect = %v, want ErrUnauthorized", err)
	}
	// The server may still be trying its keys: wait for the state to settle.
	var devs []adb.DeviceInfo
	for ctx.Err() == nil {
		devs, err = c.Devices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(devs) == 1 && devs[0].State == "unauthorized" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(devs) != 1 || devs[0].Serial != sd.Addr() || devs[0].State != "unauthorized" {
		t.Fatalf("Devices = %+v, want %s unauthorized", devs, sd.Addr())
	}
	d := c.Device(sd.Addr())
	if s, err := d.State(ctx); err != nil || s != "unauthorized" {
		t.Errorf("State = %q, %v; want unauthorized", s, err)
	}
	_, err = d.Shell(ctx, "echo hello")
	if !errors.Is(err, adb.ErrUnauthorized) {
		t.Fatalf("Shell = %v, want ErrUnauthorized", err)
	}
	if !strings.Contains(err.Error(), sd.Addr()) || !strings.Contains(err.Error(), "confirmation dialog") {
		t.Errorf("error %q does not name the device and say what to do", err)
	}
	t.Logf("Shell: %v", err)
	if _, err := d.ExecOut(ctx, "screencap -p"); !errors.Is(err, adb.ErrUnauthorized) {
		t.Errorf("ExecOut = %v, want ErrUnauthorized", err)
	}
	if _, err := d.Pull(ctx, "/sdcard/x"); !errors.Is(err, adb.ErrUnauthorized) {
		t.Errorf("Pull = %v, want ErrUnauthorized", err)
	}
}

// blocker is a Handler whose "sleep" command blocks until released. Tests
// call t.Cleanup(b.unblock) after starting the stand-in.
type blocker struct {
	entered chan string
	release chan struct{}
	once    sync.Once
}

func newBlocker(t *testing.T) *blocker {
	// Registered after the stand-in's, the unblocking cleanup runs first.
	return &blocker{entered: make(chan string, 10), release: make(chan struct{})}
}

func (b *blocker) unblock() { b.once.Do(func() { close(b.release) }) }

func (b *blocker) shell(cmd string, stdin []byte) ([]byte, []byte, int) {
	if strings.HasPrefix(cmd, "sleep") {
		b.entered <- cmd
		<-b.release
		return []byte("partial"), nil, 0
	}
	return script(cmd, stdin)
}

// midCommand runs f in the background, waits until the device's handler
// runs the command, calls act, and returns f's error and how long f took
// after act.
func midCommand(t *testing.T, b *blocker, f func() error, act func()) (error, time.Duration) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- f() }()
	select {
	case <-b.entered:
	case err := <-errc:
		t.Fatalf("returned before the command ran: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the command never reached the device")
	}
	start := time.Now()
	act()
	select {
	case err := <-errc:
		return err, time.Since(start)
	case <-time.After(10 * time.Second):
		t.Fatal("hangs after the connection went away")
	}
	return nil, 0
}

func TestDropMidCommand(t *testing.T) {
	c := startServer(t)
	b := newBlocker(t)
	sd := adbtest.Start(t, adbtest.Options{Shell: b.shell})
	t.Cleanup(b.unblock)
	d := connect(t, c, sd)

	err, took := midCommand(t, b, func() error {
		_, err := d.Shell(ctxT(t, 20*time.Second), "sleep 100")
		return err
	}, sd.Drop)
	t.Logf("Shell after Drop (%v): %v", took, err)
	if !errors.Is(err, adb.ErrConnClosed) {
		t.Errorf("Shell = %v, want ErrConnClosed", err)
	}

	// The server holds the device offline; Reconnect brings it back.
	ctx := ctxT(t, 20*time.Second)
	if s, err := d.State(ctx); err != nil || s != "offline" {
		t.Errorf("State after Drop = %q, %v; want offline", s, err)
	}
	if _, err := d.Shell(ctx, "echo hello"); !errors.Is(err, adb.ErrOffline) {
		t.Errorf("Shell after Drop = %v, want ErrOffline", err)
	}
	if err := c.Reconnect(ctx, sd.Addr()); err != nil {
		t.Fatal(err)
	}
	if err := d.WaitFor(ctx, "device"); err != nil {
		t.Fatal(err)
	}
	if r, err := d.Shell(ctx, "echo hello"); err != nil || string(r.Stdout) != "hello\n" {
		t.Fatalf("Shell after reconnect = %q, %v", r.Stdout, err)
	}

	err, took = midCommand(t, b, func() error {
		_, err := d.ExecOut(ctxT(t, 20*time.Second), "sleep 100")
		return err
	}, sd.Drop)
	t.Logf("ExecOut after Drop (%v): %v", took, err)
	if !errors.Is(err, adb.ErrConnClosed) {
		t.Errorf("ExecOut = %v, want ErrConnClosed", err)
	}
}

func TestDeviceGone(t *testing.T) {
	c := startServer(t)
	b := newBlocker(t)
	sd := adbtest.Start(t, adbtest.Options{Shell: b.shell})
	t.Cleanup(b.unblock)
	d := connect(t, c, sd)
	ctx := ctxT(t, 20*time.Second)
	if _, err := d.Shell(ctx, "input tap 10 10"); err != nil {
		t.Fatal(err)
	}
	err, took := midCommand(t, b, func() error {
		_, err := d.Shell(ctx, "sleep 100")
		return err
	}, func() {
		// Close waits for handlers: let this one go once the
		// connections are gone.
		go sd.Close()
		for i := 0; i < 200 && sd.Conns() > 0; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		b.unblock()
	})
	t.Logf("Shell when the device went away (%v): %v", took, err)
	if !errors.Is(err, adb.ErrConnClosed) {
		t.Errorf("Shell = %v, want ErrConnClosed", err)
	}
	// Later commands fail at once with a sentinel.
	for _, f := range []func() error{
		func() error { _, err := d.Shell(ctxT(t, 5*time.Second), "echo hello"); return err },
		func() error { _, err := d.ExecOut(ctxT(t, 5*time.Second), "screencap -p"); return err },
		func() error { _, err := d.Pull(ctxT(t, 5*time.Second), "/sdcard/x"); return err },
	} {
		err := f()
		t.Logf("afterwards: %v", err)
		if !errors.Is(err, adb.ErrNoDevice) && !errors.Is(err, adb.ErrOffline) {
			t.Errorf("got %v, want ErrNoDevice or ErrOffline", err)
		}
	}
}

func TestContextCancel(t *testing.T) {
	c := startServer(t)
	b := newBlocker(t)
	sd := adbtest.Start(t, adbtest.Options{Shell: b.shell})
	t.Cleanup(b.unblock)
	d := connect(t, c, sd)
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := d.Shell(ctx, "sleep 100")
	took := time.Since(start)
	t.Logf("Shell with a 300ms deadline (%v): %v", took, err)
	if !errors.Is(err, context.DeadlineExceeded) || took > 8*time.Second {
		t.Errorf("Shell = %v after %v, want DeadlineExceeded soon", err, took)
	}
	b.unblock()
	// The device is still fine.
	if r, err := d.Shell(ctxT(t, 10*time.Second), "echo hello"); err != nil || string(r.Stdout) != "hello\n" {
		t.Errorf("Shell afterwards = %q, %v", r.Stdout, err)
	}
}

func TestShellWithoutV2(t *testing.T) {
	c := startServer(t)
	sd := adbtest.Start(t, adbtest.Options{Features: []string{"cmd"}, Shell: script})
	d := connect(t, c, sd)
	ctx := ctxT(t, 10*time.Second)
	r, err := d.Shell(ctx, "fail")
	if err != nil || string(r.Stdout) != "some output\nan error\n" || r.ExitCode != 3 {
		t.Errorf("Shell(fail) = %q %q %d, %v", r.Stdout, r.Stderr, r.ExitCode, err)
	}
	r, err = d.Shell(ctx, "echo hello")
	if err != nil || string(r.Stdout) != "hello\n" || r.ExitCode != 0 {
		t.Errorf("Shell(echo hello) = %q %q %d, %v", r.Stdout, r.Stderr, r.ExitCode, err)
	}
	// Without stat_v2, Stat uses STAT.
	sd.SetFile("/data/local/tmp/f", []byte("abc"))
	if fi, err := d.Stat(ctx, "/data/local/tmp/f"); err != nil || fi.Size != 3 || fi.Mode != 0o644 {
		t.Errorf("Stat = %+v, %v", fi, err)
	}
	if _, err := d.Stat(ctx, "/data/local/tmp/g"); !errors.Is(err, adb.ErrFileNotFound) {
		t.Errorf("Stat(missing) = %v, want ErrFileNotFound", err)
	}
}

func TestServerNotReachable(t *testing.T) {
	port := freePort(t)
	c := &adb.Client{Addr: "127.0.0.1:" + itoa(port), NoStart: true}
	_, err := c.Version(ctxT(t, 5*time.Second))
	if !errors.Is(err, adb.ErrServerUnreachable) {
		t.Errorf("Version = %v, want ErrServerUnreachable", err)
	}
	t.Logf("%v", err)
}

// TestClientStartsServer lets the Client start the server itself.
func TestClientStartsServer(t *testing.T) {
	bin := adbBin(t)
	port := itoa(freePort(t))
	env := adbEnv(t)
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == "HOME" || k == "TMPDIR" {
			t.Setenv(k, v)
		}
	}
	t.Cleanup(func() { killServer(t, bin, port, env) })
	c := &adb.Client{Addr: "127.0.0.1:" + port, ADB: bin}
	v, err := c.Version(ctxT(t, 20*time.Second))
	if err != nil || v == 0 {
		t.Fatalf("Version = %d, %v", v, err)
	}
}
