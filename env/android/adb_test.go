package android_test

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env/android"
	"github.com/proctor-eval/proctor/env/android/phonetest"
	"github.com/proctor-eval/proctor/env/envtest"
	"github.com/proctor-eval/proctor/internal/adb"
	"github.com/proctor-eval/proctor/internal/adb/adbtest"
)

// TestConformanceOverADB runs the conformance suite on the scripted phone
// served by a device stand-in through Debian's adb server: the path a real
// device takes.
func TestConformanceOverADB(t *testing.T) {
	bin, err := exec.LookPath("adb")
	if err != nil {
		t.Skip("adb is not installed (scripts/test.sh installs it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TMPDIR", t.TempDir())
	t.Cleanup(func() {
		c := exec.Command(bin, "-P", port, "kill-server")
		c.WaitDelay = 2 * time.Second
		c.Run()
	})
	ph := phonetest.New(t, 1080, 2340)
	conformance(ph)
	dev := adbtest.Start(t, adbtest.Options{Shell: ph.Handle, FS: ph})
	c := &adb.Client{Addr: "127.0.0.1:" + port}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Connect(ctx, dev.Addr()); err != nil {
		t.Fatal(err)
	}
	if err := c.Device(dev.Addr()).WaitFor(ctx, "device"); err != nil {
		t.Fatal(err)
	}
	envtest.RunWith(t, android.New(android.Over(c, dev.Addr()), dev.Addr()), fixture)
}
