package suites

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/proctor-eval/proctor/task"
)

// files reads every regular file of fsys under root, by slash path
// relative to root.
func files(t *testing.T, fsys fs.FS, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		out[strings.TrimPrefix(strings.TrimPrefix(p, root), "/")] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d files, want %d", what, len(got), len(want))
	}
	for p, b := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: %s missing", what, p)
		} else if !bytes.Equal(g, b) {
			t.Errorf("%s: %s differs", what, p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s should not be there", what, p)
		}
	}
}

// TestEmbeddedIsTheFolder proves the binary carries the suite as it is on
// disk, assets included: a pattern that dropped files (a name starting
// with '.' or '_', a new subfolder) would fail here.
func TestEmbeddedIsTheFolder(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"desktop", "enterprise", "safety", "science", "web"}) {
		t.Errorf("Names() = %v", got)
	}
	sameFiles(t, "embedded vs suites/web", files(t, FS, "web"), files(t, os.DirFS("web"), "."))
	sameFiles(t, "embedded vs suites/enterprise", files(t, FS, "enterprise"), files(t, os.DirFS("enterprise"), "."))
	emb := files(t, FS, "desktop")
	sameFiles(t, "embedded vs suites/desktop", emb, files(t, os.DirFS("desktop"), "."))
	for _, p := range []string{"suite.yaml", "assets/names.txt", "assets/gimp/photo.png", "assets/web/order.html"} {
		if _, ok := emb[p]; !ok {
			t.Errorf("the embedded suite lacks %s", p)
		}
	}
}

func TestDirWritesAndReuses(t *testing.T) {
	root := t.TempDir()
	dir, err := dirIn(root, "desktop")
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := contentHash("desktop")
	if want := filepath.Join(root, sum, "desktop"); dir != want {
		t.Errorf("dir %s, want %s", dir, want)
	}
	sameFiles(t, "written suite", files(t, os.DirFS(dir), "."), files(t, FS, "desktop"))
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, _ := d.Info()
		want := fs.FileMode(0o644)
		if d.IsDir() {
			want = 0o755
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, st.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The path-based loader reads it: tasks and their assets.
	s, ps := task.Load(dir)
	if len(ps) > 0 || len(s.Tasks) == 0 {
		t.Fatalf("task.Load(%s): %d tasks, problems %v", dir, len(s.Tasks), ps)
	}
	if _, err := s.ReadAsset("names.txt"); err != nil {
		t.Errorf("asset from the written suite: %v", err)
	}
	// A second call reuses the folder rather than writing it again: a
	// marker left in it survives.
	marker := filepath.Join(dir, "marker")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := dirIn(root, "desktop")
	if err != nil || again != dir {
		t.Fatalf("second call: %s, %v", again, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the second call rewrote the folder: %v", err)
	}
	// Nothing but the suite is left beside it (no temporary folders).
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("beside the suite: %v", entries)
	}
}

func TestDirConcurrent(t *testing.T) {
	root := t.TempDir()
	const n = 8
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dirs[i], errs[i] = dirIn(root, "desktop") })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Fatalf("call %d: %s, %v (first: %s)", i, dirs[i], errs[i], dirs[0])
		}
	}
	sameFiles(t, "suite written concurrently", files(t, os.DirFS(dirs[0]), "."), files(t, FS, "desktop"))
	if entries, _ := os.ReadDir(filepath.Dir(dirs[0])); len(entries) != 1 {
		t.Errorf("temporary folders left beside the suite: %v", entries)
	}
}

func TestDirUnknownSuite(t *testing.T) {
	for _, name := range []string{"nosuch", "", ".", "desktop/assets", "../desktop"} {
		if _, err := dirIn(t.TempDir(), name); err == nil || !strings.Contains(err.Error(), "known: desktop") {
			t.Errorf("dirIn(%q): %v", name, err)
		}
	}
}

// TestDirUsesUserCache checks the exported path on Linux, where
// os.UserCacheDir follows $XDG_CACHE_HOME.
func TestDirUsesUserCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cache folder is set through $XDG_CACHE_HOME on Linux only")
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir, err := Dir("desktop")
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := contentHash("desktop")
	if want := filepath.Join(cache, "proctor", "suites", sum, "desktop"); dir != want {
		t.Errorf("Dir = %s, want %s", dir, want)
	}
}
