package task

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// SuiteSchema is the JSON Schema of a suite's suite.yaml.
//
//go:embed suite_schema.json
var SuiteSchema []byte

// SuiteSchemaURL is the suite schema's $id.
const SuiteSchemaURL = "https://proctor.dev/schema/suite.json"

var compiledSuite = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SuiteSchema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SuiteSchemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(SuiteSchemaURL)
})

// fieldNames lists the JSON names of a struct type's fields, in order.
func fieldNames(v any) []string {
	t := reflect.TypeOf(v)
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// appFields are the fields of an app entry in suite.yaml.
var appFields = fieldNames(AppSpec{})

// suiteFields names the valid fields where suite.yaml has an unknown one.
func suiteFields(path []any) string {
	switch {
	case len(path) == 0:
		return strings.Join(fieldNames(Suite{}), ", ")
	case len(path) == 2 && path[0] == "apps":
		return strings.Join(appFields, ", ")
	}
	return ""
}

// parseSuiteFile validates suite.yaml against SuiteSchema and fills the
// suite's name, description and apps. An app entry with problems is
// reported once, where it stands, and left out of Apps; tasks that name
// it are told to look there (see lint).
func (s *Suite) parseSuiteFile(name string, src []byte) Problems {
	// Checked against the limits before the decoder expands it.
	tree, p := parseYAML(name, src)
	if p != nil {
		return Problems{*p}
	}
	if len(tree.Docs) > 1 {
		return Problems{{File: name, Line: 1, Msg: SuiteFile + " holds one document; remove the other"}}
	}
	f := &fileCtx{name: name, ast: tree, valid: suiteFields}
	js, err := yaml.YAMLToJSON(src)
	if err != nil {
		return Problems{yamlProblem(name, err)}
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return Problems{{File: name, Line: 1, Msg: "not a YAML mapping: " + err.Error()}}
	}
	if doc == nil {
		return nil // an empty suite.yaml
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return Problems{{File: name, Line: 1, Msg: SuiteFile + " must be a mapping with name, description and apps"}}
	}
	sch, err := compiledSuite()
	if err != nil {
		return Problems{{File: name, Msg: "the suite schema does not compile: " + err.Error()}}
	}
	var probs Problems
	bad := map[string]bool{}
	if err := sch.Validate(obj); err != nil {
		probs = f.schemaProblems(err)
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			badApps(ve, nil, bad)
		}
	}
	if v, ok := obj["name"].(string); ok {
		s.Name = v
	}
	if v, ok := obj["description"].(string); ok {
		s.Description = v
	}
	if v, ok := obj["network"].(string); ok {
		s.Network = v
	}
	if v, ok := obj["session"].(string); ok && slices.Contains(Sessions, v) {
		s.Session = v
	}
	if v, ok := obj["allow"].([]any); ok {
		for _, o := range v {
			if o, ok := o.(string); ok && OriginProblem(o) == "" {
				s.Allow = append(s.Allow, o)
			}
		}
	}
	if v, ok := obj["personas"].([]any); ok {
		for _, p := range v {
			if p, ok := p.(string); ok {
				s.Personas = append(s.Personas, p)
			}
		}
	}
	probs = append(probs, s.parseServices(f, obj["services"])...)
	probs = append(probs, s.parseSetup(f, obj["setup"])...)
	probs = append(probs, s.parseChanges(f, obj["changes"])...)
	apps, _ := obj["apps"].(map[string]any)
	for app, raw := range apps {
		if bad[app] {
			continue
		}
		var spec AppSpec
		b, err := json.Marshal(raw)
		if err == nil {
			d := json.NewDecoder(bytes.NewReader(b))
			d.DisallowUnknownFields()
			err = d.Decode(&spec)
		}
		if err != nil {
			// The schema should have caught it; say so where the app stands.
			probs = append(probs, f.problem([]any{"apps", app}, "%v", err))
			bad[app] = true
			continue
		}
		if s.Apps == nil {
			s.Apps = map[string]AppSpec{}
		}
		s.Apps[app] = spec
	}
	for app := range bad {
		if s.badApps == nil {
			s.badApps = map[string]int{}
		}
		s.badApps[app] = appLine(f, app)
	}
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
	return probs
}

// badApps marks the apps whose entries the validation error is about.
func badApps(e *jsonschema.ValidationError, parent []string, bad map[string]bool) {
	loc := placeOf(e, parent)
	if len(loc) >= 2 && loc[0] == "apps" {
		bad[loc[1]] = true
		return
	}
	if k, ok := e.ErrorKind.(*kind.PropertyNames); ok && len(loc) == 1 && loc[0] == "apps" {
		bad[k.Property] = true
		return
	}
	for _, c := range e.Causes {
		badApps(c, e.InstanceLocation, bad)
	}
}

// unknownApp explains a task's app that s does not know.
func (s *Suite) unknownApp(name string) string {
	if line, ok := s.badApps[name]; ok {
		return fmt.Sprintf("app %q is declared in %s:%d but has problems (see there)", name, SuiteFile, line)
	}
	return fmt.Sprintf("unknown app %q (known: %s; a suite may declare more in %s)", name, strings.Join(s.AppNames(), ", "), SuiteFile)
}

// appLine is the line of the app's key under apps in suite.yaml.
func appLine(f *fileCtx, app string) int {
	line, _ := f.locate([]any{"apps", app})
	return line
}

// parseServices fills the suite's services; one with problems (the schema
// reports its shape) is left out, and a name given twice or a folder
// outside the suite is reported where it stands.
func (s *Suite) parseServices(f *fileCtx, raw any) Problems {
	list, _ := raw.([]any)
	var probs Problems
	seen := map[string]bool{}
	for i, r := range list {
		var sv Service
		b, err := json.Marshal(r)
		if err == nil {
			d := json.NewDecoder(bytes.NewReader(b))
			d.DisallowUnknownFields()
			err = d.Decode(&sv)
		}
		if err != nil || sv.Name == "" || (sv.Static == "") == (len(sv.Command) == 0) {
			continue // the schema has said what is wrong
		}
		if seen[sv.Name] {
			probs = append(probs, f.problem([]any{"services", i, "name"}, "service %q is declared twice", sv.Name))
			continue
		}
		if sv.IsCommand() {
			if p := sv.commandProblem(); p != "" {
				probs = append(probs, f.problem([]any{"services", i, "command"}, "%s", p))
				continue
			}
			if in, ok := strings.CutPrefix(sv.Data, suiteData); ok {
				if p := s.missing(in, true); !filepath.IsLocal(in) || p != "" {
					probs = append(probs, f.problem([]any{"services", i, "data"}, "the suite has no folder %q%s", in, p))
					continue
				}
			} else if sv.Data != "" && !filepath.IsAbs(sv.Data) && !filepath.IsLocal(sv.Data) {
				probs = append(probs, f.problem([]any{"services", i, "data"}, "%q is neither absolute, nor {{suite}}/PATH, nor a folder inside the suite's data folder", sv.Data))
				continue
			}
			if sv.Data != "" {
				line, col := f.locate([]any{"services", i, "data"})
				sv.declared = fmt.Sprintf("%s:%d:%d: services[%d].data", f.name, line, col, i)
			}
			seen[sv.Name] = true
			s.Services = append(s.Services, sv)
			continue
		}
		if !filepath.IsLocal(sv.Static) {
			probs = append(probs, f.problem([]any{"services", i, "static"}, "%q is not a folder inside the suite", sv.Static))
			continue
		}
		if p := s.missing(sv.Static, true); p != "" {
			probs = append(probs, f.problem([]any{"services", i, "static"}, "the suite has no folder %q%s", sv.Static, p))
			continue
		}
		seen[sv.Name] = true
		s.Services = append(s.Services, sv)
	}
	return probs
}

// parseSetup fills the suite's set-up; a script outside the suite or
// missing is reported where it stands.
func (s *Suite) parseSetup(f *fileCtx, raw any) Problems {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil
	}
	var st Setup
	b, err := json.Marshal(m)
	if err == nil {
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		err = d.Decode(&st)
	}
	if err != nil {
		return nil // the schema has said what is wrong
	}
	if st.Script != "" {
		if !filepath.IsLocal(st.Script) {
			return Problems{f.problem([]any{"setup", "script"}, "%q is not a file inside the suite", st.Script)}
		}
		if p := s.missing(st.Script, false); p != "" {
			return Problems{f.problem([]any{"setup", "script"}, "the suite has no file %q%s", st.Script, p)}
		}
	}
	s.Setup = &st
	return nil
}

// missing says why the suite's folder (dir) or regular file rel is not
// there, naming the path looked for: " (/path/to/suite/rel does not
// exist)"; "" when it is there.
func (s *Suite) missing(rel string, dir bool) string {
	abs := filepath.Join(s.Dir, rel)
	if a, err := filepath.Abs(abs); err == nil {
		abs = a
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf(" (%s does not exist)", abs)
	case err != nil:
		return fmt.Sprintf(" (%v)", err)
	case dir && !fi.IsDir():
		return fmt.Sprintf(" (%s is not a folder)", abs)
	case !dir && !fi.Mode().IsRegular():
		return fmt.Sprintf(" (%s is not a regular file)", abs)
	}
	return ""
}
