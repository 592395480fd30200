package task

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the task loader: it must return tasks
// or problems, never panic, and every problem must name the file.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../testdata/example/*.yaml")
	more, _ := filepath.Glob("testdata/broken/*.yaml")
	for _, p := range append(files, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	// Files that expand or nest past the limits, and bad characters.
	for _, b := range yamlBombs() {
		f.Add([]byte(b.src))
	}
	f.Add([]byte(head + "note: \"a\x00b\"\n"))
	f.Add([]byte("id: x\x01\n"))
	f.Add([]byte(head + "note: \xff\xfe\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		tasks, ps := Parse("fuzz.yaml", src)
		for _, p := range ps {
			if p.File != "fuzz.yaml" {
				t.Fatalf("problem without the file: %+v", p)
			}
		}
		for _, tk := range tasks {
			if tk.ID == "" || len(tk.Checks) == 0 {
				t.Fatalf("a task without id or checks loaded: %+v", tk)
			}
		}
	})
}
