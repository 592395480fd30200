package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env/xdesktop"
	"github.com/proctor-eval/proctor/guest"
)

// When the test binary runs with PROCTOR_TEST_MAIN set, it is proctor.
func init() {
	if args := os.Getenv("PROCTOR_TEST_MAIN"); args != "" {
		os.Args = append([]string{"proctor"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
}

// TestGuestCrashLeavesNothing starts `proctor guest --local`, has it launch
// an application and a background command, kills it with SIGKILL, and
// checks that none of the desktop's processes survive it.
func TestGuestCrashLeavesNothing(t *testing.T) {
	for _, b := range []string{"Xvfb", "dbus-daemon", "openbox", "yad"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=guest --local --listen 127.0.0.1:0 --token tok --verbose")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addr := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, after, ok := strings.Cut(sc.Text(), "serving on "); ok {
			addr = after
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if addr == "" {
		t.Fatal("the daemon did not say where it serves")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := guest.Dial(ctx, addr, "tok")
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := filepath.Base(filepath.Dir(info.Home))
	if _, err := c.Run(ctx, "(yad --text=crash &) ; (setsid sleep 400 &)", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := len(xdesktop.Processes(id)); n < 4 {
		t.Fatalf("expected the desktop's processes to run, found %d", n)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	var left []int
	for range 50 {
		if left = xdesktop.Processes(id); len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Daemonised processes outlive a SIGKILLed parent; whatever is left is
	// named here so that it can be fixed.
	if len(left) > 0 {
		for _, pid := range left {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("left running after the daemon died: %d %q", pid, bytes.ReplaceAll(comm, []byte{0}, []byte{' '}))
		}
	}

}
