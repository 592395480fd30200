package service

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestReapOrphans: a service process whose owner is gone (here a mark
// with this pid and another start time: a reused pid) is killed and its
// copy removed; one owned by this process, or by a live one, is left.
func TestReapOrphans(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	start := func(owner string) (*exec.Cmd, string, chan struct{}) {
		dir, err := os.MkdirTemp("", "proctor-service-orphan-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		cmd := exec.Command("sleep", "60")
		cmd.Env = append(os.Environ(), "PROCTOR_SERVICE_INSTANCE="+dir, ownerVar+"="+owner)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		return cmd, dir, done
	}
	if !ownerAlive(selfOwner) || ownerAlive(selfOwner+"0") || ownerAlive("1x") {
		t.Fatalf("ownerAlive wrong on %q", selfOwner)
	}
	parent := ownerOf(os.Getppid())
	_, goneDir, gone := start(selfOwner + "0") // this pid, another start time
	_, mineDir, mine := start(selfOwner)
	_, liveDir, live := start(parent)
	if n := reap(); n < 1 {
		t.Fatalf("reap killed %d processes, want the orphan", n)
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the orphan still runs")
	}
	if _, err := os.Stat(goneDir); !os.IsNotExist(err) {
		t.Errorf("the orphan's copy %s is still there (%v)", goneDir, err)
	}
	for name, c := range map[string]chan struct{}{"this process's": mine, "a live owner's": live} {
		select {
		case <-c:
			t.Errorf("%s service was killed", name)
		default:
		}
	}
	for _, d := range []string{mineDir, liveDir} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("a copy of a live owner was removed: %v", err)
		}
	}
}
