package receipt

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

func base() store.Receipt {
	return store.Receipt{
		Harness: "v1", SuiteFile: "s1",
		Tasks: []store.TaskReceipt{
			{ID: "a", File: "a.yaml", FileHash: "fa", Hash: "ha", Resolution: "1280x800",
				Assets: []store.AssetReceipt{{Name: "in.txt", Hash: "x1"}}},
			{ID: "b", File: "b.yaml", FileHash: "fb", Hash: "hb", Resolution: "1920x1080"},
		},
		Packages: map[string]string{"xvfb": "21.1", "gimp": "2.10", "chromium": ""},
		Places:   []store.PlaceReceipt{{Name: "mem 1", Types: []string{"mem", "x11"}, Screen: "1280x800"}},
		Machine:  store.Machine{OS: "linux", Arch: "amd64", Kernel: "6.1", Cores: 8, Memory: 16 << 30, Go: "go1.26"},
		Agent:    "openai", PromptHash: "p1",
		Judge: &store.JudgeReceipt{Models: []string{"j"}, PromptHash: "jp1"},
	}
}

func TestDrift(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *store.Receipt)
		want   []string
	}{
		{"none", func(*store.Receipt) {}, nil},
		{"harness", func(r *store.Receipt) { r.Harness = "v2" }, []string{"harness: v1 → v2"}},
		{"suite.yaml", func(r *store.Receipt) { r.SuiteFile = "" }, []string{"suite: suite.yaml is gone (was s1)"}},
		{"task file", func(r *store.Receipt) { r.Tasks[0].FileHash, r.Tasks[0].Hash = "fa2", "ha2" }, []string{"task a: its file a.yaml changed (fa → fa2)"}},
		{"task content", func(r *store.Receipt) { r.Tasks[1].Hash = "hb2" },
			[]string{"task b: its content as loaded changed (hb → hb2), its file did not: suite.yaml or a template"}},
		{"task moved", func(r *store.Receipt) { r.Tasks[1].File = "sub/b.yaml" }, []string{"task b: its file b.yaml is now sub/b.yaml"}},
		{"task screen", func(r *store.Receipt) { r.Tasks[0].FileHash, r.Tasks[0].Resolution = "fa2", "1024x768" },
			[]string{"task a: its file a.yaml changed (fa → fa2)", "task a: screen size 1280x800 → 1024x768"}},
		{"asset changed", func(r *store.Receipt) { r.Tasks[0].Assets[0].Hash = "x2" }, []string{"task a: asset in.txt changed (x1 → x2)"}},
		{"asset gone", func(r *store.Receipt) { r.Tasks[0].Assets[0].Hash = "" }, []string{"task a: asset in.txt is gone (was x1)"}},
		{"asset no longer used", func(r *store.Receipt) { r.Tasks[0].Assets = nil }, []string{"task a: does not use the asset in.txt any more"}},
		{"asset used now", func(r *store.Receipt) { r.Tasks[1].Assets = []store.AssetReceipt{{Name: "n.png", Hash: "y"}} },
			[]string{"task b: uses the asset n.png now, not in the run"}},
		{"task gone", func(r *store.Receipt) { r.Tasks = r.Tasks[:1] }, []string{"task b: not in the suite's selection any more"}},
		{"task new", func(r *store.Receipt) { r.Tasks = append(r.Tasks, store.TaskReceipt{ID: "c"}) }, []string{"task c: selected now, not in the run"}},
		{"package version", func(r *store.Receipt) { r.Packages = map[string]string{"xvfb": "21.2", "gimp": "2.10", "chromium": ""} },
			[]string{"package xvfb: 21.1 → 21.2"}},
		{"package removed and installed", func(r *store.Receipt) { r.Packages = map[string]string{"xvfb": "21.1", "gimp": "", "chromium": "130"} },
			[]string{"package chromium: not installed → 130", "package gimp: 2.10 → not installed"}},
		{"package new", func(r *store.Receipt) { r.Packages["yad"] = "12" }, []string{"package yad: used now (12), not recorded by the run"}},
		{"package not read", func(r *store.Receipt) { r.Packages = nil }, []string{"packages: cannot be read on this machine (the run recorded 3)"}},
		{"place screen", func(r *store.Receipt) { r.Places[0].Screen = "1024x768" }, []string{"environment mem 1: screen size 1280x800 → 1024x768"}},
		{"place any size", func(r *store.Receipt) { r.Places[0].Screen = "" }, []string{"environment mem 1: screen size 1280x800 → each task's"}},
		{"place gone and new", func(r *store.Receipt) { r.Places[0].Name = "local 1" },
			[]string{"environment local 1: in the pool now, not in the run's", "environment mem 1: not in the pool any more"}},
		{"place types", func(r *store.Receipt) { r.Places[0].Types = []string{"mem"} }, []string{"environment mem 1: serves mem, x11 → mem"}},
		{"places not compared", func(r *store.Receipt) { r.Places = nil }, nil},
		{"machine", func(r *store.Receipt) { r.Machine.Cores, r.Machine.Memory, r.Machine.Kernel = 4, 8<<30, "6.2" },
			[]string{"machine: kernel 6.1 → 6.2", "machine: cores 8 → 4", "machine: memory 16.0 GiB → 8.0 GiB"}},
		{"prompts", func(r *store.Receipt) { r.PromptHash, r.Judge.PromptHash = "p2", "jp2" },
			[]string{"agent openai: prompt template changed (p1 → p2)", "judge: prompt changed (jp1 → jp2)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := base()
			tt.change(&cur)
			got := Drift(base(), cur)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Drift =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestParseDpkg(t *testing.T) {
	out := "xvfb\tinstall ok installed\t2:21.1.7-3\n" +
		"gimp\tdeinstall ok config-files\t2.10.34-1\n" +
		"chromium:amd64\tinstall ok installed\t130.0-1\n" +
		"stray\tinstall ok installed\t1\n" +
		"garbage line\n"
	got := parseDpkg(out, []string{"xvfb", "gimp", "chromium", "yad"})
	want := map[string]string{"xvfb": "2:21.1.7-3", "gimp": "", "chromium": "130.0-1", "yad": ""}
	if len(got) != len(want) {
		t.Fatalf("parseDpkg = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestMemTotal(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"MemTotal:       16384 kB\nMemFree: 1 kB\n", 16384 * 1024},
		{"MemFree: 1 kB\n", 0},
		{"MemTotal: lots\n", 0},
	}
	for _, tt := range tests {
		if got := memTotal(tt.in); got != tt.want {
			t.Errorf("memTotal(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestTasks hashes a task's file and the assets it copies and compares
// with, and finds their changes.
func TestTasks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("assets/in.txt", "hello\n")
	write("assets/want/out.txt", "HELLO\n")
	write("assets/unused.txt", "x\n")
	write("t.yaml", `id: t
instruction: Make the file upper case.
level: paper
kind: state
environment: {resolution: 1280x800}
setup:
  - copy: {asset: in.txt, to: ~/in.txt}
checks:
  - kind: file_equal
    file: ~/in.txt
    asset: want/out.txt
gold:
  - kind: done
`)
	load := func() []store.TaskReceipt {
		s, ps := task.Load(dir)
		if len(ps) > 0 {
			t.Fatal(ps)
		}
		return Tasks(s, s.Tasks)
	}
	r := load()
	if len(r) != 1 || r[0].File != "t.yaml" || r[0].Resolution != "1280x800" || len(r[0].Assets) != 2 ||
		r[0].Assets[0].Name != "in.txt" || r[0].Assets[1].Name != "want/out.txt" || r[0].Assets[0].Hash != Hash([]byte("hello\n")) {
		t.Fatalf("Tasks = %+v", r)
	}
	write("assets/unused.txt", "y\n")
	if d := Drift(store.Receipt{Tasks: r}, store.Receipt{Tasks: load()}); len(d) != 0 {
		t.Errorf("an asset no task uses drifts: %v", d)
	}
	write("assets/want/out.txt", "Hello\n")
	d := Drift(store.Receipt{Tasks: r}, store.Receipt{Tasks: load()})
	if len(d) != 1 || !strings.HasPrefix(d[0], "task t: asset want/out.txt changed") {
		t.Errorf("drift after an asset changed: %v", d)
	}
}

// TestPackagesAskOnlyPackageNames: a suite's app spec naming a "package"
// that is an option of dpkg-query's is never passed to it, and is
// recorded as not installed.
func TestPackagesAskOnlyPackageNames(t *testing.T) {
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		t.Skip(err)
	}
	got, err := Packages(context.Background(), []string{"--admindir=/nonexistent", "-l", "dpkg"})
	if err != nil {
		t.Fatal(err)
	}
	if got["--admindir=/nonexistent"] != "" || got["-l"] != "" || got["dpkg"] == "" {
		t.Fatalf("versions %q: want dpkg's only", got)
	}
}
