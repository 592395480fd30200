package android_test

import (
	"context"
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
	addr := adbtest.UseServer(t)
	ph := phonetest.New(t, 1080, 2340)
	conformance(ph)
	dev := adbtest.Start(t, adbtest.Options{Shell: ph.Handle, FS: ph})
	c := &adb.Client{Addr: addr}
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
