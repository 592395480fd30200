package osworld

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/proctor-eval/proctor/imports"
)

// MaxFile bounds a task file's size.
const MaxFile = 1 << 20

// Examples finds the folder of task files under src: src itself when it
// holds domain folders of JSON files, else src/examples or
// src/evaluation_examples/examples.
func Examples(src string) (string, error) {
	for _, d := range []string{filepath.Join(src, "evaluation_examples", "examples"), filepath.Join(src, "examples"), src} {
		if m, _ := filepath.Glob(filepath.Join(d, "*", "*.json")); len(m) > 0 {
			return d, nil
		}
	}
	return "", fmt.Errorf("%s holds no OSWorld task files (evaluation_examples/examples/DOMAIN/ID.json)", src)
}

// Read imports every task file under src whose id matches filter (nil:
// all). A file that does not parse is a task not imported, named by its
// path.
func Read(src string, filter *regexp.Regexp) ([]*imports.Task, error) {
	dir, err := Examples(src)
	if err != nil {
		return nil, err
	}
	rev := revision(src)
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".json") && filepath.Dir(filepath.Dir(p)) == dir {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*imports.Task
	for _, p := range files {
		rel, _ := filepath.Rel(src, p)
		group := filepath.Base(filepath.Dir(p))
		id := strings.TrimSuffix(filepath.Base(p), ".json")
		if filter != nil && !filter.MatchString(id) {
			continue
		}
		b, err := readBounded(p)
		var f *File
		if err == nil {
			f, err = Parse(b)
		}
		if err != nil {
			it := &imports.Task{ID: id, Group: group}
			it.Block(imports.NotSupported, "%s: %v", filepath.ToSlash(rel), err)
			out = append(out, it)
			continue
		}
		out = append(out, Import(f, group, filepath.ToSlash(rel), imports.Hash(b), rev))
	}
	return out, nil
}

func readBounded(p string) ([]byte, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxFile {
		return nil, fmt.Errorf("larger than %d bytes", MaxFile)
	}
	return os.ReadFile(p)
}

// revision is the git commit of the checkout src is in, or "".
func revision(src string) string {
	out, err := exec.Command("git", "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
