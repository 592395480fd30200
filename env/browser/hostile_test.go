package browser

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
)

// processesUsing lists the processes whose command line holds arg.
func processesUsing(arg string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || e.Name() == "self" {
			continue
		}
		if bytes.Contains(cmdline, []byte(arg)) {
			out = append(out, e.Name())
		}
	}
	return out
}

// eventually polls cond until it holds or a generous limit passes (a
// bound for a broken build, not a timing assertion).
func eventually(cond func() bool) bool {
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestKilledOwnerLeavesNothing starts a browser in a child process, kills
// that process with SIGKILL (no cleanup of its own runs), and checks that
// no process of the browser and no profile folder is left.
func TestKilledOwnerLeavesNothing(t *testing.T) {
	if os.Getenv("PROCTOR_BROWSER_CHILD") != "" {
		b, err := Start(context.Background(), Config{Dir: os.Getenv("PROCTOR_BROWSER_CHILD")})
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		fmt.Println("BASE", b.base)
		time.Sleep(time.Hour)
		return
	}
	need(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledOwnerLeavesNothing$", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), "PROCTOR_BROWSER_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	var base string
	for sc.Scan() {
		if b, ok := strings.CutPrefix(sc.Text(), "BASE "); ok {
			base = b
			break
		}
		if strings.HasPrefix(sc.Text(), "ERROR") {
			t.Fatal(sc.Text())
		}
	}
	if base == "" {
		t.Fatal("the child printed no browser folder")
	}
	if len(processesUsing(base)) == 0 {
		t.Fatal("no browser process runs with the child's folder")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !eventually(func() bool { return len(processesUsing(base)) == 0 }) {
		t.Errorf("browser processes outlive their owner: %v", processesUsing(base))
	}
	if !eventually(func() bool { _, err := os.Stat(base); return os.IsNotExist(err) }) {
		entries, _ := os.ReadDir(base)
		t.Errorf("the browser's folder %s outlives its owner (%d entries)", base, len(entries))
	}
}
