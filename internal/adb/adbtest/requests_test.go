package adbtest_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/internal/adb"
	"github.com/proctor-eval/proctor/internal/adb/adbtest"
)

// The stand-in records what the host asked of it, through Debian's adb
// server: the services opened and each sync request with its path.
func TestRequestsAreRecorded(t *testing.T) {
	addr := adbtest.UseServer(t)
	sd := adbtest.Start(t, adbtest.Options{Shell: func(cmd string, _ []byte) ([]byte, []byte, int) {
		return []byte(cmd + "\n"), nil, 0
	}})
	c := &adb.Client{Addr: addr}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Connect(ctx, sd.Addr()); err != nil {
		t.Fatal(err)
	}
	d := c.Device(sd.Addr())
	if err := d.WaitFor(ctx, "device"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Shell(ctx, "input tap 1 2"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecOut(ctx, "screencap -p"); err != nil {
		t.Fatal(err)
	}
	if err := d.Push(ctx, bytes.NewReader([]byte("x")), "/sdcard/a.txt", 0o644, time.Now()); err != nil {
		t.Fatal(err)
	}
	if b, err := d.Pull(ctx, "/sdcard/a.txt"); err != nil || string(b) != "x" {
		t.Fatalf("pull: %q, %v", b, err)
	}
	got := sd.Requests()
	for _, want := range []string{"shell,v2,raw:input tap 1 2", "exec:screencap -p", "sync:", "sync SEND /sdcard/a.txt,33188", "sync RECV /sdcard/a.txt"} {
		if !slices.Contains(got, want) {
			t.Errorf("no request %q among %q", want, got)
		}
	}
	// In the order asked.
	i := slices.Index(got, "shell,v2,raw:input tap 1 2")
	j := slices.Index(got, "exec:screencap -p")
	if i < 0 || j < i {
		t.Errorf("order: %q", got)
	}
}
