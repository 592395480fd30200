package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/task"
)

// TestMain makes the test binary a small application server when
// PROCTOR_TEST_SERVER is set: it keeps records as files of its data
// folder (POST /records adds one, GET /records counts them), answers
// /ready once PROCTOR_TEST_SERVER_DELAY has passed, and exits at once
// where the variable says "exit".
func TestMain(m *testing.M) {
	switch os.Getenv("PROCTOR_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "exit":
		fmt.Fprintln(os.Stderr, "the database is locked")
		os.Exit(3)
	case "sleep": // a daemon of the server's
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	port, data := os.Args[len(os.Args)-2], os.Args[len(os.Args)-1]
	if os.Getenv("PROCTOR_TEST_SERVER") == "daemon" {
		// A daemon in a session of its own, out of the group's reach.
		d := exec.Command(os.Args[0], "-test.run=^$")
		d.Env = append(os.Environ(), "PROCTOR_TEST_SERVER=sleep")
		d.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := d.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.WriteFile(filepath.Join(data, "daemon.pid"), []byte(fmt.Sprint(d.Process.Pid)), 0o644)
	}
	delay, _ := time.ParseDuration(os.Getenv("PROCTOR_TEST_SERVER_DELAY"))
	up := time.Now().Add(delay)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) {
		if time.Now().Before(up) {
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("GET /records", func(w http.ResponseWriter, r *http.Request) {
		es, _ := os.ReadDir(filepath.Join(data, "records"))
		fmt.Fprint(w, len(es))
	})
	mux.HandleFunc("POST /records", func(w http.ResponseWriter, r *http.Request) {
		f, err := os.CreateTemp(filepath.Join(data, "records"), "r")
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		f.Close()
	})
	fmt.Fprintln(os.Stderr, http.ListenAndServe("127.0.0.1:"+port, mux))
	os.Exit(1)
}

// appSuite is a suite whose one command service is the test binary's
// server, with a pristine data folder of two records.
func appSuite(t *testing.T, sv task.Service) *task.Suite {
	t.Helper()
	root := t.TempDir()
	t.Setenv("PROCTOR_DATA", root)
	s := &task.Suite{Name: "apps", Dir: t.TempDir()}
	pristine := filepath.Join(s.DataDir(), "app")
	for _, r := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(pristine, "records"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(pristine, "records", r), nil, 0o644)
	}
	if sv.Name == "" {
		sv.Name = "app"
	}
	if sv.Command == nil {
		sv.Command = []string{os.Args[0], "-test.run=^$", "{{port}}", "{{data}}"}
	}
	if sv.Data == "" {
		sv.Data = "app"
	}
	if sv.Ready == "" {
		sv.Ready = "/ready"
	}
	s.Services = []task.Service{{Name: "site", Static: "site"}, sv}
	return s
}

func records(t *testing.T, in *Instances) string {
	t.Helper()
	_, body, _ := get(t, in.Origins()["app"]+"/records")
	return body
}

func addRecord(t *testing.T, in *Instances) {
	t.Helper()
	res, err := http.Post(in.Origins()["app"]+"/records", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("add a record: %s", res.Status)
	}
}

// TestResetRestoresTheData proves isolation: a record added in one episode
// is gone in the next; the copy lives apart from the pristine folder, and
// Close stops the server and its spare and removes their copies.
func TestResetRestoresTheData(t *testing.T) {
	t.Setenv("PROCTOR_TEST_SERVER", "serve")
	s := appSuite(t, task.Service{})
	in := NewInstances(s)
	if in == nil || len(in.svcs) != 1 {
		t.Fatalf("instances of %+v: %+v", s.Services, in)
	}
	ctx := context.Background()
	if err := in.Reset(ctx, nil); err != nil {
		t.Fatal(err)
	}
	origin := in.Origins()["app"]
	if got := records(t, in); got != "2" {
		t.Fatalf("a fresh instance has %s records, want the pristine 2", got)
	}
	addRecord(t, in)
	if got := records(t, in); got != "3" {
		t.Fatalf("after adding one: %s records", got)
	}
	data, _ := in.Data("app")
	pid := in.run["app"].cmd.Process.Pid
	if err := in.Reset(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := records(t, in); got != "2" {
		t.Fatalf("after the reset: %s records, want 2: the last episode's record leaked", got)
	}
	if o := in.Origins()["app"]; !strings.HasPrefix(o, "http://127.0.0.1:") {
		t.Errorf("origin %q", o)
	}
	in.bg.Wait() // the replaced server is stopped in the background
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the last episode's server (pid %d) still runs", pid)
	}
	es, _ := os.ReadDir(filepath.Join(s.DataDir(), "app", "records"))
	if len(es) != 2 {
		t.Errorf("the pristine folder has %d records, want 2 untouched", len(es))
	}
	if in.Resets != 2 || in.ResetTime <= 0 {
		t.Errorf("resets %d in %s", in.Resets, in.ResetTime)
	}
	newData, _ := in.Data("app")
	sp := in.spare["app"]
	if sp == nil {
		t.Fatal("no spare is starting for the next episode")
	}
	<-sp.done
	if sp.err != nil || sp.inst.dir == in.run["app"].dir {
		t.Fatalf("the spare: %v, dir %s", sp.err, sp.inst.dir)
	}
	spareDir := sp.inst.dir
	in.Close()
	for _, d := range []string{data, newData, spareDir} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("copy %s is still there after Close (%v)", d, err)
		}
	}
	if _, err := http.Get(origin + "/records"); err == nil {
		t.Error("the server still answers after Close")
	}
}

// TestResetRunKeepsTheInstance: a service reset only per run keeps its
// records from one episode to the next.
func TestResetRunKeepsTheInstance(t *testing.T) {
	t.Setenv("PROCTOR_TEST_SERVER", "serve")
	in := NewInstances(appSuite(t, task.Service{Reset: task.ResetRun}))
	defer in.Close()
	ctx := context.Background()
	if err := in.Reset(ctx, nil); err != nil {
		t.Fatal(err)
	}
	addRecord(t, in)
	if err := in.Reset(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := records(t, in); got != "3" {
		t.Fatalf("%s records, want the 3 of the run so far", got)
	}
}

// TestStartErrors: a server that exits, one that never becomes ready and
// a missing data folder each give an error that says what happened.
func TestStartErrors(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		sv         task.Service
		noData     bool
		want       []string
		is         error
	}{
		{name: "exits", mode: "exit", want: []string{"exited (exit status 3) before", "the database is locked"}, is: ErrStart},
		{name: "never ready", mode: "serve", sv: task.Service{StartTimeout: duration.Duration(time.Second), Ready: "/nothere"},
			want: []string{"did not answer within 1s"}, is: ErrStart},
		{name: "no data", mode: "serve", noData: true, want: []string{"run `proctor setup apps` first"}, is: ErrNoData},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PROCTOR_TEST_SERVER", tc.mode)
			if tc.sv.Ready == "/nothere" {
				t.Setenv("PROCTOR_TEST_SERVER_DELAY", "1h")
				tc.sv.Ready = "/ready"
			}
			s := appSuite(t, tc.sv)
			if tc.noData {
				os.RemoveAll(filepath.Join(s.DataDir(), "app"))
			}
			in := NewInstances(s)
			defer in.Close()
			err := in.Reset(context.Background(), nil)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			if len(in.run) != 0 {
				t.Errorf("running after a failed start: %v", in.run)
			}
		})
	}
}

// TestFillLeavesCommandServices: the run-wide fill puts the static
// service's origin in and leaves a command service's placeholder for the
// episode.
func TestFillLeavesCommandServices(t *testing.T) {
	s, err := Start(context.Background(), "testdata/suite", []task.Service{{Name: "site", Static: "site"},
		{Name: "app", Command: []string{"x", "{{port}}"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tk := &task.Task{ID: "t", Instruction: "Open {{services.site}}/a and {{services.app}}/b"}
	out, err := s.Fill([]*task.Task{tk})
	if err != nil {
		t.Fatal(err)
	}
	want := "Open " + s.Origins()["site"] + "/a and {{services.app}}/b"
	if out[0].Instruction != want {
		t.Fatalf("instruction %q, want %q", out[0].Instruction, want)
	}
}

// TestReachable: a browser reaches a static service under both its
// names; a command service's origin is the episode's.
func TestReachable(t *testing.T) {
	s, err := Start(context.Background(), "testdata/suite", []task.Service{{Name: "site", Static: "site"},
		{Name: "app", Command: []string{"x", "{{port}}"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	site := s.Origins()["site"]
	want := []string{site, strings.Replace(site, "127.0.0.1", "localhost", 1)}
	if got := s.Reachable(); !slices.Equal(got, want) {
		t.Fatalf("Reachable = %q, want %q", got, want)
	}
}

// TestResetRunsOnlyWhatTheEpisodeUses: a service the next episode does
// not use is stopped, and started afresh when one uses it again.
func TestResetRunsOnlyWhatTheEpisodeUses(t *testing.T) {
	t.Setenv("PROCTOR_TEST_SERVER", "serve")
	in := NewInstances(appSuite(t, task.Service{}))
	defer in.Close()
	ctx := context.Background()
	if err := in.Reset(ctx, []string{"app"}); err != nil {
		t.Fatal(err)
	}
	origin := in.Origins()["app"]
	if err := in.Reset(ctx, []string{"other"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := in.Origins()["app"]; ok {
		t.Fatal("a service the episode does not use still runs")
	}
	if _, err := http.Get(origin + "/records"); err == nil {
		t.Fatal("its server still answers")
	}
	if err := in.Reset(ctx, []string{"app"}); err != nil {
		t.Fatal(err)
	}
	if got := records(t, in); got != "2" {
		t.Fatalf("started again with %s records, want 2", got)
	}
}

// TestStopReachesDaemons: a process the server starts in a session of its
// own is stopped with it.
func TestStopReachesDaemons(t *testing.T) {
	t.Setenv("PROCTOR_TEST_SERVER", "daemon")
	in := NewInstances(appSuite(t, task.Service{Reset: task.ResetRun}))
	if err := in.Reset(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	data, _ := in.Data("app")
	var pid int
	for range 100 {
		b, _ := os.ReadFile(filepath.Join(data, "daemon.pid"))
		if _, err := fmt.Sscan(string(b), &pid); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 || syscall.Kill(pid, 0) != nil {
		t.Fatalf("the daemon (pid %d) does not run", pid)
	}
	in.Close()
	for range 50 {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || strings.Contains(string(b), ") Z ") {
			return // gone, or a zombie waiting for its parent
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("the daemon (pid %d) outlived its server", pid)
}
