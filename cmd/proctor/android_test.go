package main

import (
	"context"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env/android/phonetest"
	"github.com/proctor-eval/proctor/internal/adb"
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
	if code != 0 || !strings.Contains(errs, "12 tasks, 47 trajectories, 0 violations") {
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
		rs := storedResults(t, dir)
		passed := 0
		for _, r := range rs {
			if r.Outcome == "success" {
				passed++
			}
			if r.Env != "android" {
				t.Errorf("%s ran in %q", r.Task, r.Env)
			}
		}
		want := map[string]int{"replay": 12, "noop": 0}[agent]
		if len(rs) != 12 || passed != want {
			t.Errorf("--agent %s: %d of %d passed, want %d of 12", agent, passed, len(rs), want)
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
	rs := storedResults(t, dir)
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
	rs = storedResults(t, dir)
	if len(rs) != 1 || rs[0].Outcome != "error" {
		t.Fatalf("a device gone mid-episode: %+v\n%s", rs, errs)
	}
	if !strings.Contains(rs[0].Reason, gone.Addr()) {
		t.Errorf("the reason does not name the device %s: %s", gone.Addr(), rs[0].Reason)
	}
}

// plug connects stand-ins to the test's adb server, as a phone plugged in
// or an emulator started shows up in adb devices, and waits until each is
// ready.
func plug(t *testing.T, addr string, devs ...*adbtest.Device) {
	t.Helper()
	c := &adb.Client{Addr: addr}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, d := range devs {
		if err := c.Connect(ctx, d.Addr()); err != nil {
			t.Fatal(err)
		}
		if err := c.Device(d.Addr()).WaitFor(ctx, "device"); err != nil {
			t.Fatal(err)
		}
	}
}

// readmeAndroidTest is the test that runs the README's commands for a
// real device; readmeNotRun names it as the reason for each.
const readmeAndroidTest = "TestAndroidReadmeExample"

// argv splits a README command line as sh does for the words it uses:
// blanks apart, '...' quoted.
func argv(t *testing.T, line string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	in, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				out = append(out, cur.String())
				cur.Reset()
			}
			in = false
		case strings.ContainsRune("\"$`\\|&;<>()*?", r) && !quoted:
			t.Fatalf("%q: the test does not read %q outside single quotes", line, r)
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quoted {
		t.Fatalf("%q: a quote is not closed", line)
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// TestAndroidReadmeExample runs the README's steps for a real emulator or
// phone as they are written, with plain --env android: Debian's adb server
// (the test's own) lists a stand-in of a 1080x2400 phone with Settings,
// connected to it as an emulator would be, and the run opens Settings
// with the intent the task's setup sends and replays its gold solution.
func TestAndroidReadmeExample(t *testing.T) {
	var cmds []readmeCommand
	for _, c := range readmeCommands(readmeFences(t)) {
		if strings.Contains(readmeNotRun[c.key()], readmeAndroidTest) {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) != 2 || cmds[0].key() != "adb devices" || !strings.HasPrefix(cmds[1].key(), "bin/proctor run ") ||
		!slices.Contains(strings.Fields(cmds[1].key()), "android") {
		t.Fatalf("the README's Android steps this test runs: %+v", cmds)
	}
	addr := adbtest.UseServer(t)
	ph := phonetest.New(t, 1080, 2400)
	phonetest.InstallProBench(ph)
	dev := adbtest.Start(t, adbtest.Options{Shell: ph.Handle, FS: ph, Model: "Proctor_Phone"})
	plug(t, addr, dev)

	// The folder the commands run in holds the README's paths.
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.Symlink(filepath.Join(repo, "testdata"), filepath.Join(work, "testdata")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)

	out, err := exec.Command("bash", "-c", cmds[0].key()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), dev.Addr()+"\tdevice") {
		t.Fatalf("%s: %s: %v\n%s", cmds[0].at(), cmds[0].key(), err, out)
	}

	args := argv(t, cmds[1].key())
	if args[0] != "bin/proctor" {
		t.Fatalf("%s: %s", cmds[1].at(), cmds[1].key())
	}
	stdout, errs, code := runCLI(t, "", args[1:]...)
	if code != 0 {
		t.Fatalf("%s: %s: exit %d\n%s\n%s", cmds[1].at(), cmds[1].key(), code, stdout, errs)
	}
	runs, _ := filepath.Glob(filepath.Join(work, "runs", "*"))
	if len(runs) != 1 {
		t.Fatalf("the run folders: %v", runs)
	}
	rs := storedResults(t, runs[0])
	if len(rs) != 1 || rs[0].Task != "android-open-wifi-details" || rs[0].Outcome != "success" || rs[0].Env != "android" {
		t.Fatalf("%s: the results: %+v\n%s", cmds[1].at(), rs, errs)
	}
	// The setup's intent opened Settings, the gold solution swiped and
	// ended on the network's details.
	if len(ph.Started) == 0 || ph.Started[0] != "com.android.settings/.Settings" {
		t.Errorf("started %q", ph.Started)
	}
	if !slices.Contains(ph.Commands, "export HOME=/sdcard; cd /sdcard 2>/dev/null; am start -a android.settings.SETTINGS") {
		t.Errorf("the setup's command was not sent as written: %q", ph.Commands)
	}
	if want := []phonetest.Swipe{{From: image.Pt(540, 1680), To: image.Pt(540, 720), Ms: 500}}; !slices.Equal(ph.Swipes, want) {
		t.Errorf("swipes %+v, want %+v", ph.Swipes, want)
	}
	if a := ph.Current().Activity; a != ".wifi.details.WifiNetworkDetailsActivity" {
		t.Errorf("%s is in front", a)
	}
}

// TestAndroidPool runs a plain --env android with two devices in adb
// devices: both are the pool's, and each runs episodes.
func TestAndroidPool(t *testing.T) {
	addr := adbtest.UseServer(t)
	a, devA := phone(t, adbtest.Options{})
	b, devB := phone(t, adbtest.Options{})
	plug(t, addr, devA, devB)
	dir := filepath.Join(t.TempDir(), "pool")
	out, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/android", "--agent", "replay", "--env", "android",
		"--filter", "^android-(battery-qa|dark-theme|airplane-on|device-name-qa)$", "--out", dir, "--report", "none")
	if code != 0 {
		t.Fatalf("run: %d\n%s\n%s", code, out, errs)
	}
	rs := storedResults(t, dir)
	passed := 0
	for _, r := range rs {
		if r.Outcome == "success" {
			passed++
		}
	}
	if len(rs) != 4 || passed != 4 {
		t.Errorf("%d of %d passed, want 4 of 4: %+v", passed, len(rs), rs)
	}
	for name, ph := range map[string]*phonetest.Phone{devA.Addr(): a, devB.Addr(): b} {
		if !slices.ContainsFunc(ph.Commands, func(c string) bool { return strings.HasPrefix(c, "input tap ") }) {
			t.Errorf("the device %s ran no episode: %q", name, ph.Commands)
		}
	}
}

// storedResults reads the results of the run in dir; a run that cannot be
// read fails the test.
func storedResults(t *testing.T, dir string) []store.Result {
	t.Helper()
	st, err := store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := st.Results()
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return rs
}
