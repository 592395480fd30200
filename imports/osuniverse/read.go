package osuniverse

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/proctor-eval/proctor/imports"
	"github.com/proctor-eval/proctor/task"
)

// Testcases finds the folder of test cases under src: src/testcases, or
// src itself when it holds group folders of YAML files.
func Testcases(src string) (string, error) {
	for _, d := range []string{filepath.Join(src, "testcases"), src} {
		if m, _ := filepath.Glob(filepath.Join(d, "*", "*.yaml")); len(m) > 0 {
			return d, nil
		}
	}
	return "", fmt.Errorf("%s holds no OSUniverse test cases (testcases/GROUP/NAME.yaml)", src)
}

// Read imports every test case under src whose name (GROUP/NAME)
// matches filter (nil: all), and says what the suite declares: the apps
// and the Debian packages the tasks add. A file that does not parse is a
// task not imported, named by its path.
func Read(src string, filter *regexp.Regexp) ([]*imports.Task, imports.Suite, error) {
	suite := imports.Suite{
		Name:        Peer,
		Description: "OSUniverse's test cases, imported by proctor import from " + src,
		Apps:        Apps,
	}
	dir, err := Testcases(src)
	if err != nil {
		return nil, suite, err
	}
	rev := imports.Revision(src)
	files, err := imports.GroupFiles(dir, ".yaml", ".yml")
	if err != nil {
		return nil, suite, err
	}
	var out []*imports.Task
	var packages []string
	for _, p := range files {
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		group := filepath.Base(filepath.Dir(p))
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(p), ".yaml"), ".yml")
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
		it, pkgs := Import(f, group, name, rel, imports.Hash(b), rev)
		out = append(out, it)
		if it.Mapped() {
			for _, pk := range pkgs {
				if !slices.Contains(packages, pk) {
					packages = append(packages, pk)
				}
			}
		}
	}
	if len(packages) > 0 {
		sort.Strings(packages)
		suite.Setup = &task.Setup{Packages: packages}
	}
	return out, suite, nil
}
