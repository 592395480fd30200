package main

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env/android/phonetest"
	"github.com/proctor-eval/proctor/internal/adb/adbtest"
	"github.com/proctor-eval/proctor/store"
)

// adbServer points Proctor at an adb server of the test's own.
func adbServer(t *testing.T) { adbtest.UseServer(t) }

// phone is the scripted phone with the ProBench-style apps, served over
// ADB by a device stand-in; it returns the address to connect to.
func phone(t *testing.T, opts adbtest.Options) (*phonetest.Phone, *adbtest.Device) {
	ph := phonetest.New(t, 1080, 2340)
	phonetest.InstallProBench(ph)
	if opts.Shell == nil {
		opts.Shell = ph.Handle
	}
	opts.FS, opts.Model = ph, "Proctor_Phone"
	return ph, adbtest.Start(t, opts)
}

// TestAndroidOverADB runs the ProBench-style task set end to end through
// Debian's adb server and a device stand-in that speaks ADB: validate
// proves every task (gold succeeds; doing nothing, giving up, and the
// wrong trajectories do not; a repeated tap is stopped early and a wander
// is cut at 15 steps), and proctor run records replay and noop runs.
func TestAndroidOverADB(t *testing.T) {
	adbServer(t)
	_, dev := phone(t, adbtest.Options{})
	target := "android=" + dev.Addr()
	out, errs, code := runCLI(t, "", "validate", "../../testdata/android", "--env", target, "--out", filepath.Join(t.TempDir(), "v"))
	if code != 0 || !strings.Contains(errs, " 0 violations") {
		t.Fatalf("validate: %d\n%s\n%s", code, out, errs)
	}
	for _, w := range [][2]string{{"taps the same place until it is stopped", "early_stopped"}, {"scrolls past the budget", "uncompleted"}} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			found = found || strings.Contains(line, w[0]) && strings.Contains(line, w[1]) && strings.Contains(line, " ok ")
		}
		if !found {
			t.Errorf("validate's table has no line with %q, %q and ok:\n%s", w[0], w[1], out)
		}
	}
	for _, agent := range []string{"replay", "noop"} {
		dir := filepath.Join(t.TempDir(), agent)
		out, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/android", "--agent", agent, "--env", target, "--out", dir, "--report", "none")
		if code != 0 {
			t.Fatalf("run --agent %s: %d\n%s\n%s", agent, code, out, errs)
		}
		st, err := store.OpenRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := st.Results()
		st.Close()
		passed := 0
		for _, r := range rs {
			if r.Outcome == "success" {
				passed++
			}
			if r.Env != "android" {
				t.Errorf("%s ran in %q", r.Task, r.Env)
			}
		}
		want := map[string]int{"replay": 11, "noop": 0}[agent]
		if len(rs) != 11 || passed != want {
			t.Errorf("--agent %s: %d of %d passed, want %d of 11", agent, passed, len(rs), want)
		}
	}
}

// Faults of the device are the infrastructure's, never the agent's: an
// unauthorized device stops the run before it starts with what to do; a
// connection that drops is connected again and the episode run again; a
// device that goes away mid-episode leaves the episode an error.
func TestAndroidFaults(t *testing.T) {
	adbServer(t)
	_, locked := phone(t, adbtest.Options{Unauthorized: true})
	_, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/android", "--agent", "replay", "--env", "android="+locked.Addr(),
		"--filter", "battery", "--out", filepath.Join(t.TempDir(), "locked"))
	if code == 0 || !strings.Contains(errs, "unauthorized") {
		t.Errorf("an unauthorized device: %d\n%s", code, errs)
	}

	// The connection drops at the first tap; the episode runs again.
	var taps atomic.Int32
	var dev *adbtest.Device
	ph := phonetest.New(t, 1080, 2340)
	phonetest.InstallProBench(ph)
	dev = adbtest.Start(t, adbtest.Options{FS: ph, Shell: func(cmd string, stdin []byte) ([]byte, []byte, int) {
		if strings.HasPrefix(cmd, "input tap") && taps.Add(1) == 1 {
			go dev.Drop()
			time.Sleep(500 * time.Millisecond)
		}
		return ph.Handle(cmd, stdin)
	}})
	dir := filepath.Join(t.TempDir(), "dropped")
	out, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/android", "--agent", "replay", "--env", "android="+dev.Addr(),
		"--filter", "^android-battery-qa$", "--out", dir, "--report", "none")
	if code != 0 {
		t.Fatalf("dropped: %d\n%s\n%s", code, out, errs)
	}
	st, _ := store.OpenRun(dir)
	rs, _ := st.Results()
	st.Close()
	if len(rs) != 1 || rs[0].Outcome != "success" || rs[0].Attempts < 2 {
		t.Errorf("after a dropped connection: %+v", rs)
	}

	// The device goes away at the first tap and does not come back.
	var gone *adbtest.Device
	ph2 := phonetest.New(t, 1080, 2340)
	phonetest.InstallProBench(ph2)
	gone = adbtest.Start(t, adbtest.Options{FS: ph2, Shell: func(cmd string, stdin []byte) ([]byte, []byte, int) {
		if strings.HasPrefix(cmd, "input tap") {
			go gone.Close()
			time.Sleep(500 * time.Millisecond)
		}
		return ph2.Handle(cmd, stdin)
	}})
	dir = filepath.Join(t.TempDir(), "gone")
	_, errs, _ = runCLI(t, "", "run", "--suite", "../../testdata/android", "--agent", "replay", "--env", "android="+gone.Addr(),
		"--filter", "^android-battery-qa$", "--out", dir, "--report", "none")
	st, err := store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ = st.Results()
	st.Close()
	if len(rs) != 1 || rs[0].Outcome != "error" {
		t.Fatalf("a device gone mid-episode: %+v\n%s", rs, errs)
	}
	t.Logf("gone: %s", rs[0].Reason)
}
