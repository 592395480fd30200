package scienceboard

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/proctor-eval/proctor/imports"
	"github.com/proctor-eval/proctor/task"
)

// VMTasks finds the folder of VM task files under src: src/tasks/VM,
// src/VM, or src itself when it holds app folders of JSON files.
func VMTasks(src string) (string, error) {
	for _, d := range []string{filepath.Join(src, "tasks", "VM"), filepath.Join(src, "VM"), src} {
		if m, _ := filepath.Glob(filepath.Join(d, "*", "*.json")); len(m) > 0 {
			return d, nil
		}
	}
	return "", fmt.Errorf("%s holds no ScienceBoard VM task files (tasks/VM/APP/ID.json)", src)
}

// Read imports every VM task file under src whose name (APP/ID) matches
// filter (nil: all), and says what the suite declares. A file that does
// not parse is a task not imported, named by its path.
func Read(src string, filter *regexp.Regexp) ([]*imports.Task, imports.Suite, error) {
	suite := imports.Suite{
		Name:        Peer,
		Description: "ScienceBoard's VM tasks, imported by proctor import from " + src + ". Celestia, ChimeraX and VS Code with Lean 4 are declared for the tasks that launch them, but Debian has none of them: those tasks are blocked.",
		Apps:        Apps,
		Setup:       &task.Setup{Packages: Packages},
	}
	dir, err := VMTasks(src)
	if err != nil {
		return nil, suite, err
	}
	rev := imports.Revision(src)
	files, err := imports.GroupFiles(dir, ".json")
	if err != nil {
		return nil, suite, err
	}
	var out []*imports.Task
	for _, p := range files {
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		group := filepath.Base(filepath.Dir(p))
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		if filter != nil && !filter.MatchString(group+"/"+name) {
			continue
		}
		b, err := imports.ReadTaskFile(p)
		var f *File
		if err == nil {
			f, err = Parse(b)
		}
		if err != nil {
			it := &imports.Task{ID: name, Group: group}
			it.Block(imports.NotSupported, "%s: %v", rel, err)
			out = append(out, it)
			continue
		}
		out = append(out, Import(f, group, name, rel, imports.Hash(b), rev))
	}
	return out, suite, nil
}
