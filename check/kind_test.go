package check

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// kindConstants parses the package's source for the constants of type
// Kind, so that a kind declared but never registered (or left out of
// Kinds) fails a test instead of being "unknown" at lint time.
func kindConstants(t *testing.T) map[Kind]string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	out := map[Kind]string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Kind" {
					continue
				}
				for i, n := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: kind %s is not a string literal", name, n.Name)
					}
					v, _ := strconv.Unquote(lit.Value)
					out[Kind(v)] = n.Name + " in " + name
				}
			}
		}
	}
	return out
}

// checkSchema is the part of task/schema.json that describes a check.
type checkSchema struct {
	Defs struct {
		Check struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		} `json:"check"`
	} `json:"$defs"`
}

func readCheckSchema(t *testing.T) checkSchema {
	t.Helper()
	b, err := os.ReadFile("../task/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s checkSchema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// specTags are the task-file names of Spec's fields, in struct order.
func specTags() []string {
	var out []string
	rt := reflect.TypeFor[Spec]()
	for i := range rt.NumField() {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		out = append(out, tag)
	}
	return out
}

// TestKindRegistry keeps the kind constants, the registry, Kinds and
// task/schema.json in step: adding a kind touches all four.
func TestKindRegistry(t *testing.T) {
	consts := kindConstants(t)
	for k, where := range consts {
		if _, ok := kinds[k]; !ok {
			t.Errorf("kind %s (%s) has no registered definition", k, where)
		}
	}
	for k := range kinds {
		if _, ok := consts[k]; !ok {
			t.Errorf("registered kind %q has no Kind constant", k)
		}
		if !slices.Contains(Kinds, k) {
			t.Errorf("registered kind %q is missing from Kinds", k)
		}
	}
	if len(Kinds) != len(kinds) {
		t.Errorf("Kinds lists %d kinds, %d are registered (a duplicate?)", len(Kinds), len(kinds))
	}

	schema := readCheckSchema(t)
	enum := schema.Defs.Check.Properties["kind"].Enum
	for k := range kinds {
		if !slices.Contains(enum, string(k)) {
			t.Errorf("kind %q is missing from the check kinds of task/schema.json", k)
		}
	}
	for _, k := range enum {
		if _, ok := kinds[Kind(k)]; !ok {
			t.Errorf("task/schema.json lists check kind %q, which is not registered", k)
		}
	}

	tags := specTags()
	used := map[string]bool{}
	for k, def := range kinds {
		if def.evaluate == nil {
			t.Errorf("kind %s has no evaluate", k)
		}
		for i, f := range def.fields {
			if f == "kind" || f == "name" || !slices.Contains(tags, f) {
				t.Errorf("kind %s lists field %q, which is not an optional Spec field", k, f)
			}
			if _, ok := schema.Defs.Check.Properties[f]; !ok {
				t.Errorf("kind %s lists field %q, which task/schema.json does not allow in a check", k, f)
			}
			if slices.Contains(def.fields[:i], f) {
				t.Errorf("kind %s lists field %q twice", k, f)
			}
			used[f] = true
		}
		if def.probe != probeFound && !slices.Contains(def.fields, "probe") {
			t.Errorf("kind %s says how to read a probe it does not take", k)
		}
	}
	for _, f := range tags {
		if f != "kind" && f != "name" && !used[f] {
			t.Errorf("Spec field %q applies to no kind", f)
		}
		if _, ok := schema.Defs.Check.Properties[f]; !ok {
			t.Errorf("Spec field %q is missing from the check of task/schema.json", f)
		}
	}
	for f := range schema.Defs.Check.Properties {
		if !slices.Contains(tags, f) {
			t.Errorf("task/schema.json allows check field %q, which Spec does not have", f)
		}
	}
}

// TestSetFieldsCoversSpec sets each Spec field in turn: setFields must
// name it, or Compile would let it through on any kind.
func TestSetFieldsCoversSpec(t *testing.T) {
	rt := reflect.TypeFor[Spec]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "kind" || tag == "name" {
			continue
		}
		var s Spec
		v := reflect.ValueOf(&s).Elem().Field(i)
		switch v.Kind() {
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		case reflect.Slice:
			v.Set(reflect.MakeSlice(f.Type, 0, 0))
		case reflect.Interface:
			v.Set(reflect.ValueOf("x"))
		case reflect.Map:
			v.Set(reflect.MakeMap(f.Type))
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Float64:
			v.SetFloat(1)
		case reflect.Int64, reflect.Int:
			v.SetInt(1)
		default:
			t.Fatalf("Spec.%s: a %s field; teach this test to set it", f.Name, v.Kind())
		}
		if got := s.setFields(); !slices.Equal(got, []string{tag}) {
			t.Errorf("with only Spec.%s set, setFields = %q, want [%s]", f.Name, got, tag)
		}
	}
}

// TestCompileMessages pins the exact texts lint prints (task/ and cmd/
// tests compare them byte for byte).
func TestCompileMessages(t *testing.T) {
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: "fuzzy"}, `kind: unknown check kind "fuzzy" (known: [exact lines answer contains not_contains exists not_exists range infeasible file_equal document_equal command predicate process milestones judge side_effects any])`},
		{Spec{Kind: Range, Probe: &Probe{Answer: true}, Expected: 1, Min: fptr(1)}, "expected: does not apply to a range check"},
		{Spec{Kind: Infeasible, Probe: &Probe{Answer: true}, Value: "x"}, "probe: does not apply to an infeasible check"},
		{Spec{Kind: Range, Min: fptr(1)}, "probe: a range check needs a probe"},
		{Spec{Kind: NotExists}, "file: an not_exists check needs exactly one of file, element, window, probe"},
		{Spec{Kind: NotContains, Probe: &Probe{Answer: true}}, "value: a not_contains check needs a value"},
		{Spec{Kind: FileEqual, File: "a", Asset: "b", Tolerance: -1}, "tolerance: must not be negative"},
		{Spec{Kind: FileEqual, File: "a", Asset: "b", Tolerance: 2}, "tolerance: is the share of differing pixels, 0..1"},
		{Spec{Kind: Exact, Probe: &Probe{Answer: true}, Expected: "x", As: "number"}, "expected: x is not a number"},
		{Spec{Kind: Process, Steps: []string{"a", " "}}, "steps: step 2 is empty"},
		{Spec{Kind: CommandKind}, "command: a command check needs a command"},
		{Spec{Kind: Exact, Probe: &Probe{File: "a", Read: "pdf"}, Expected: "x"}, `probe: read must be one of ods, odt, odt-text, xlsx, docx, docx-text, pptx, image, sqlite, not "pdf"`},
	}
	for _, tc := range tests {
		_, err := Compile(tc.spec)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Compile(%+v) = %v, want %s", tc.spec, err, tc.want)
		}
	}
}

// TestAnyNamesTheAlternativeAtFault: a fault inside an any check's
// alternative is named by its place, as lint prints it.
func TestAnyNamesTheAlternativeAtFault(t *testing.T) {
	exists := Spec{Kind: Exists, File: "a"}
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: AnyOf, Any: []Spec{exists, {Kind: Predicate, Probe: &Probe{File: "a"}}}}, "checks[0].any[1].expr: a predicate check needs an expression"},
		{Spec{Kind: AnyOf, Any: []Spec{exists, {Kind: JudgeKind, Evidence: CommandOutput, Command: "true", Expectation: "x"}}}, "checks[0].any[1].kind: a judge check cannot be an alternative (its verdict is the model's)"},
		{Spec{Kind: AnyOf, Any: []Spec{exists, {Kind: AnyOf, Any: []Spec{exists, exists}}}}, "checks[0].any[1].kind: an any check cannot hold another (list every alternative in one)"},
		{Spec{Kind: AnyOf, Any: []Spec{exists}}, "checks[0].any: an any check needs at least two alternatives"},
	}
	for _, tc := range tests {
		_, err := CompileAll([]Spec{tc.spec}, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("CompileAll(%+v) = %v, want %s", tc.spec, err, tc.want)
		}
	}
}
