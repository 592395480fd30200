package osworld

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/proctor-eval/proctor/imports"
)

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
	rev := imports.Revision(src)
	files, err := imports.GroupFiles(dir, ".json")
	if err != nil {
		return nil, err
	}
	var out []*imports.Task
	for _, p := range files {
		rel, _ := filepath.Rel(src, p)
		group := filepath.Base(filepath.Dir(p))
		id := strings.TrimSuffix(filepath.Base(p), ".json")
		if filter != nil && !filter.MatchString(id) {
			continue
		}
		b, err := imports.ReadTaskFile(p)
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
