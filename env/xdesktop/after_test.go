package xdesktop

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/task"
)

// TestAfterSteps runs steps after the agent on a real Mousepad: the keys
// save what was typed, a close of a saved window closes it, and a window
// that asks about unsaved changes outlives a close step unless the step
// kills its application.
func TestAfterSteps(t *testing.T) {
	need(t, "mousepad")
	d := start(t)
	open := func() {
		t.Helper()
		if err := d.Reset(ctx(t), env.Setup{Steps: []task.Step{
			{Write: &task.Write{Path: "~/memo.txt", Content: ""}},
			{Launch: &task.Launch{App: "mousepad", Args: []string{"~/memo.txt"}, WaitWindow: "memo.txt", Timeout: duration.Duration(60 * time.Second)}},
		}}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Do(ctx(t), []action.Action{{Kind: action.Type, Text: "Meet at noon"}}); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(k string) task.Step { return task.Step{Keys: &k} }
	closing := func(timeout time.Duration, kill bool) task.Step {
		return task.Step{Close: &task.Close{Title: "memo.txt", Timeout: duration.Duration(timeout), Kill: kill}}
	}
	windows := func() int {
		t.Helper()
		ws, err := d.Windows(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, w := range ws {
			if strings.Contains(w.Title, "memo.txt") {
				n++
			}
		}
		return n
	}

	open()
	if err := d.RunSteps(ctx(t), env.Setup{Steps: []task.Step{keys("ctrl+s"), closing(10*time.Second, false)}}); err != nil {
		t.Fatalf("save and close: %v", err)
	}
	if b, err := d.ReadFile(ctx(t), "~/memo.txt"); err != nil || string(b) != "Meet at noon" {
		t.Fatalf("the file holds %q (%v) after ctrl+s", b, err)
	}
	if n := windows(); n != 0 {
		t.Fatalf("%d memo windows left after the close step", n)
	}

	// Unsaved: Mousepad asks whether to save, and the window stays.
	open()
	err := d.RunSteps(ctx(t), env.Setup{Steps: []task.Step{closing(2*time.Second, false)}})
	if err == nil || !strings.HasPrefix(err.Error(), "after[0] close: ") || !strings.Contains(err.Error(), "to close") {
		t.Fatalf("close of an unsaved window: %v; want the step's timeout", err)
	}
	if n := windows(); n == 0 {
		t.Fatal("the unsaved window closed without its question")
	}
	if err := d.RunSteps(ctx(t), env.Setup{Steps: []task.Step{closing(2*time.Second, true)}}); err != nil {
		t.Fatalf("close with kill: %v", err)
	}
	if n := windows(); n != 0 {
		t.Fatalf("%d memo windows left after a close with kill", n)
	}
}

// TestCloseKillsOnlyTheDesktopsOwn: a close step's kill ends a process
// only when it carries the desktop's marker; a window's _NET_WM_PID is
// the application's word and could name any process of the host.
func TestCloseKillsOnlyTheDesktopsOwn(t *testing.T) {
	d := start(t)
	// A process of the host in a process group of its own, as any other
	// program of the machine.
	outside := exec.Command("sleep", "60")
	outside.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { outside.Process.Kill(); outside.Wait() }()
	if d.ownsApp(outside.Process.Pid) {
		t.Fatal("a process started outside the desktop counts as its application")
	}
	if err := d.Reset(ctx(t), env.Setup{Steps: []task.Step{{Run: &task.Run{Command: "sleep 60", Background: true}}}}); err != nil {
		t.Fatal(err)
	}
	var own []int
	for try := 0; try < 50 && len(own) == 0; try++ {
		time.Sleep(100 * time.Millisecond)
		for _, pid := range Processes(d.ID()) {
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && strings.Contains(string(b), "sleep") {
				own = append(own, pid)
			}
		}
	}
	if len(own) == 0 || !d.ownsApp(own[0]) {
		t.Fatalf("the desktop's own sleep %v does not count as its application", own)
	}
}
