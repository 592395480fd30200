package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
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

// TestSafetyOnThePhone validates the safety suite's phone tasks through
// Debian's adb server: settings, packages, files and the rows of the
// messages' content provider, each task's wrong trajectory reaching the
// work's milestone and caught by its side-effect check.
func TestSafetyOnThePhone(t *testing.T) {
	adbServer(t)
	_, dev := phone(t, adbtest.Options{})
	out, errs, code := runCLI(t, "", "validate", "../../suites/safety", "--env", "android="+dev.Addr(), "--filter", "^phone-")
	if code != 0 || !strings.Contains(errs, "9 tasks, 37 trajectories, 0 violations") {
		t.Fatalf("validate: %d\n%s\n%s", code, out, errs)
	}
	for _, name := range []string{"marks every message read", "deletes every message from the bank", "deletes every message"} {
		if !strings.Contains(out, name) {
			t.Errorf("validate's table lacks %q:\n%s", name, out)
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

// TestAndroidReadmeExample runs the README's steps for a device as they
// are written, with plain --env android, on the stand-in the README
// starts (go run ./cmd/android-standin &): Debian's adb server (the
// test's own) lists it, the run opens Settings with the intent the task's
// setup sends and replays its gold solution, and kill %1 (SIGTERM to the
// job's process group, as an interactive shell sends it) disconnects it.
// Before the README's run, a task that turns Wi-Fi off runs on the same
// stand-in, as an earlier task of a user's may: the README's task sets
// the Wi-Fi it needs.
func TestAndroidReadmeExample(t *testing.T) {
	var cmds []readmeCommand
	for _, c := range readmeCommands(readmeFences(t)) {
		if strings.Contains(readmeNotRun[c.key()], readmeAndroidTest) {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) != 4 || !strings.HasPrefix(cmds[0].key(), "go run ./cmd/android-standin") || !strings.HasSuffix(cmds[0].key(), " &") ||
		cmds[1].key() != "adb devices" || !strings.HasPrefix(cmds[2].key(), "bin/proctor run ") ||
		!slices.Contains(strings.Fields(cmds[2].key()), "android") || cmds[3].key() != "kill %1" {
		t.Fatalf("the README's Android steps this test runs: %+v", cmds)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	// go run builds with the caches of this machine, not those of the
	// home folder the adb server is given.
	goEnv, err := exec.Command(goBin, "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	vals := strings.Split(strings.TrimSpace(string(goEnv)), "\n")
	if len(vals) != 3 {
		t.Fatalf("go env: %q", goEnv)
	}
	addr := adbtest.UseServer(t)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}

	// The stand-in, started as the README starts it in the background (in
	// a process group of its own, as a shell's job), from the checkout.
	standin := exec.Command("bash", "-c", "exec "+strings.TrimSuffix(cmds[0].key(), " &"))
	standin.Dir = repo
	standin.Env = append(os.Environ(), "GOCACHE="+vals[0], "GOMODCACHE="+vals[1], "GOPATH="+vals[2])
	standin.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var standinErr strings.Builder
	standin.Stderr = &standinErr
	out, err := standin.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := standin.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := standin.Process.Pid
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			syscall.Kill(-pgid, syscall.SIGKILL)
			standin.Wait()
		}
	})
	serial, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		standin.Wait()
		t.Fatalf("%s: %s printed no serial: %v\n%s", cmds[0].at(), cmds[0].key(), err, standinErr.String())
	}
	serial = strings.TrimSpace(serial)
	go io.Copy(io.Discard, out)

	// The folder the commands run in holds the README's paths.
	work := t.TempDir()
	if err := os.Symlink(filepath.Join(repo, "testdata"), filepath.Join(work, "testdata")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)

	// An earlier task turns Wi-Fi off: testdata/android's, its resolution
	// edited to the stand-in's.
	c := &adb.Client{Addr: addr}
	ctx := context.Background()
	earlier := filepath.Join(t.TempDir(), "earlier")
	writeFiles(t, earlier, map[string]string{
		"suite.yaml":    string(mustRead(t, filepath.Join(repo, "testdata/android/suite.yaml"))),
		"wifi-off.yaml": strings.Replace(string(mustRead(t, filepath.Join(repo, "testdata/android/wifi-off.yaml"))), "resolution: 1080x2340", "resolution: 1080x2400", 1),
	})
	if stdout, errs, code := runCLI(t, "", "run", "--suite", earlier, "--agent", "replay", "--env", "android", "--out", filepath.Join(t.TempDir(), "earlier-run"), "--report", "none"); code != 0 {
		t.Fatalf("the earlier task: exit %d\n%s\n%s", code, stdout, errs)
	}
	if res, err := c.Device(serial).Shell(ctx, "settings get global wifi_on"); err != nil || string(res.Stdout) != "0\n" {
		t.Fatalf("after the earlier task, wifi_on is %q (%v), want 0", res.Stdout, err)
	}

	devices, err := exec.Command("bash", "-c", cmds[1].key()).CombinedOutput()
	if err != nil || !strings.Contains(string(devices), serial+"\tdevice") {
		t.Fatalf("%s: %s: %v\n%s", cmds[1].at(), cmds[1].key(), err, devices)
	}

	args := argv(t, cmds[2].key())
	if args[0] != "bin/proctor" {
		t.Fatalf("%s: %s", cmds[2].at(), cmds[2].key())
	}
	stdout, errs, code := runCLI(t, "", args[1:]...)
	if code != 0 {
		t.Fatalf("%s: %s: exit %d\n%s\n%s", cmds[2].at(), cmds[2].key(), code, stdout, errs)
	}
	runs, _ := filepath.Glob(filepath.Join(work, "runs", "*"))
	if len(runs) != 1 {
		t.Fatalf("the run folders: %v", runs)
	}
	rs := storedResults(t, runs[0])
	if len(rs) != 1 || rs[0].Task != "android-open-wifi-details" || rs[0].Outcome != "success" || rs[0].Env != "android" {
		t.Fatalf("%s: the results: %+v\n%s", cmds[2].at(), rs, errs)
	}
	// The setup turned Wi-Fi on, and the gold solution ended on the
	// network's details.
	for cmd, want := range map[string]string{
		"settings get global wifi_on": "1\n",
		"dumpsys window windows":      "com.android.settings/com.android.settings.wifi.details.WifiNetworkDetailsActivity}",
	} {
		if res, err := c.Device(serial).Shell(ctx, cmd); err != nil || !strings.Contains(string(res.Stdout), want) {
			t.Errorf("%s: %q (%v), want %q", cmd, res.Stdout, err, want)
		}
	}

	// kill %1.
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
		t.Fatalf("%s: %s: %v", cmds[3].at(), cmds[3].key(), err)
	}
	standin.Wait()
	stopped = true
	if !strings.Contains(standinErr.String(), "not a device") || !strings.Contains(standinErr.String(), serial+" disconnected") {
		t.Errorf("%s: the stand-in stopped without disconnecting:\n%s", cmds[3].at(), standinErr.String())
	}
	ds, err := c.Devices(ctx)
	if err != nil || slices.ContainsFunc(ds, func(d adb.DeviceInfo) bool { return d.Serial == serial }) {
		t.Errorf("after %s, adb devices: %+v (%v)", cmds[3].key(), ds, err)
	}
}

// mustRead reads a file the test needs.
func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
