package task

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
	"github.com/proctor-eval/proctor/check"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is the JSON Schema of a task file.
//
//go:embed schema.json
var Schema []byte

// SchemaURL is the schema's $id.
const SchemaURL = "https://proctor.dev/schema/task.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(SchemaURL)
})

// Problem is one thing wrong in a task file, with its place.
type Problem struct {
	File  string `json:"file"`
	Line  int    `json:"line,omitempty"`
	Col   int    `json:"column,omitempty"`
	Field string `json:"field,omitempty"` // dotted path, e.g. checks[1].expr
	Task  string `json:"task,omitempty"`  // the instance id, for a template's instance
	Msg   string `json:"message"`
	// Warning marks a problem that does not stop the task from loading
	// (Suite.Warnings): something that is likely a mistake.
	Warning bool `json:"warning,omitempty"`
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Col > 0 {
			fmt.Fprintf(&b, ":%d", p.Col)
		}
	}
	b.WriteString(": ")
	if p.Task != "" {
		fmt.Fprintf(&b, "(instance %s) ", p.Task)
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	if p.Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is a list of problems; as an error it prints one a line.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Err is ps as an error, or nil when there are none.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

func yamlProblem(file string, err error) Problem {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		pos := ye.GetToken().Position
		return Problem{File: file, Line: pos.Line, Col: pos.Column, Msg: ye.GetMessage()}
	}
	return Problem{File: file, Msg: err.Error()}
}

// loaded is a task with where its id stands in the file.
type loaded struct {
	*Task
	line, col int
}

// fileCtx locates paths of one file's YAML document.
type fileCtx struct {
	name string
	ast  *ast.File
	// valid, when set, names the valid fields of the object at path for
	// an unknown field's message.
	valid func(path []any) string
}

// locate finds the line and column of the node at path, or of its nearest
// ancestor that exists.
func (f *fileCtx) locate(path []any) (int, int) {
	if f.ast == nil {
		return 0, 0
	}
	if len(path) == 0 {
		return 1, 1
	}
	for n := len(path); n >= 1; n-- {
		b := (&yaml.PathBuilder{}).Root()
		for _, p := range path[:n] {
			switch v := p.(type) {
			case int:
				b = b.Index(uint(v))
			default:
				b = b.Child(fmt.Sprint(v))
			}
		}
		node, err := b.Build().FilterFile(f.ast)
		if err != nil || node == nil || node.GetToken() == nil {
			continue
		}
		tok := node.GetToken()
		if _, isMap := node.(*ast.MappingNode); isMap && n > 0 {
			// A nested mapping's token is its first entry's; point at its key.
			if k, ok := path[n-1].(string); ok {
				if line, col := f.keyIn(path[:n-1], k); line > 0 {
					return line, col
				}
			}
		}
		if n > 0 {
			if _, isKey := path[n-1].(string); isKey {
				// Point at the key rather than its value when they differ.
				if k := keyToken(tok); k != nil {
					tok = k
				}
			}
		}
		return tok.Position.Line, tok.Position.Column
	}
	return 1, 1
}

// keyIn finds the key k in the mapping at path.
func (f *fileCtx) keyIn(path []any, k string) (int, int) {
	b := (&yaml.PathBuilder{}).Root()
	for _, p := range path {
		switch v := p.(type) {
		case int:
			b = b.Index(uint(v))
		default:
			b = b.Child(fmt.Sprint(v))
		}
	}
	node, err := b.Build().FilterFile(f.ast)
	if err != nil {
		return 0, 0
	}
	m, ok := node.(*ast.MappingNode)
	if !ok {
		return 0, 0
	}
	for _, v := range m.Values {
		if v.Key != nil && v.Key.String() == k && v.Key.GetToken() != nil {
			pos := v.Key.GetToken().Position
			return pos.Line, pos.Column
		}
	}
	return 0, 0
}

// keyToken walks back from a mapping value's first token to its key, or
// returns nil when the token is not a mapping value.
func keyToken(t *token.Token) *token.Token {
	p := t.Prev
	for p != nil && p.Type == token.CommentType {
		p = p.Prev
	}
	if p == nil || p.Type != token.MappingValueType || p.Prev == nil {
		return nil
	}
	return p.Prev
}

func (f *fileCtx) problem(path []any, format string, args ...any) Problem {
	line, col := f.locate(path)
	return Problem{File: f.name, Line: line, Col: col, Field: check.FormatPath(path), Msg: fmt.Sprintf(format, args...)}
}

var printer = message.NewPrinter(language.English)

// placeOf is where a validation error stands. The validator hands a
// propertyNames error its working location without copying it (every
// other error gets a copy), so later siblings may have written over it.
// Its place is rebuilt from the enclosing error's copy (the object's
// parent) and the schema's own path, ".../properties/NAME/propertyNames".
func placeOf(e *jsonschema.ValidationError, parent []string) []string {
	loc := e.InstanceLocation
	if _, ok := e.ErrorKind.(*kind.PropertyNames); !ok || len(loc) == 0 || len(parent) != len(loc)-1 {
		return loc
	}
	m := propertyNamesURL.FindStringSubmatch(e.SchemaURL)
	if m == nil {
		return loc
	}
	return append(slices.Clone(parent), m[1])
}

var propertyNamesURL = regexp.MustCompile(`/properties/([^/]+)/propertyNames$`)

// schemaProblems flattens a validation error into its leaf causes.
func (f *fileCtx) schemaProblems(err error) []Problem {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{File: f.name, Msg: err.Error()}}
	}
	var out []Problem
	var walk func(e *jsonschema.ValidationError, parent []string)
	walk = func(e *jsonschema.ValidationError, parent []string) {
		path := make([]any, 0, len(e.InstanceLocation)+1)
		for i, tok := range placeOf(e, parent) {
			if n, err := strconv.Atoi(tok); err == nil && i > 0 {
				path = append(path, n)
			} else {
				path = append(path, tok)
			}
		}
		if k, ok := e.ErrorKind.(*kind.PropertyNames); ok {
			// Its causes are about the name alone, with no place of their own.
			var why []string
			var leaves func(e *jsonschema.ValidationError)
			leaves = func(e *jsonschema.ValidationError) {
				if len(e.Causes) == 0 {
					why = append(why, e.ErrorKind.LocalizedString(printer))
				}
				for _, c := range e.Causes {
					leaves(c)
				}
			}
			leaves(e)
			out = append(out, f.problem(append(path, k.Property), "%q is not a valid name here: %s", k.Property, strings.Join(why, "; ")))
			return
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c, e.InstanceLocation)
			}
			return
		}
		msg := e.ErrorKind.LocalizedString(printer)
		switch k := e.ErrorKind.(type) {
		case *kind.AdditionalProperties:
			valid := ""
			if f.valid != nil {
				if v := f.valid(path); v != "" {
					valid = " (valid: " + v + ")"
				}
			}
			for _, prop := range k.Properties {
				out = append(out, f.problem(append(path, prop), "unknown field %q%s%s", prop, nearField(e.SchemaURL, prop), valid))
			}
			return
		case *kind.Required:
			msg = "missing required field " + strings.Join(quoteAll(k.Missing), ", ")
		case *kind.MinProperties, *kind.MaxProperties:
			if one := oneOfWhat(path); one != "" {
				msg = one
			}
		}
		out = append(out, f.problem(path, "%s", msg))
	}
	walk(ve, nil)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Quote(x)
	}
	return out
}

// stepKinds are the kinds of a setup step and a step after the agent.
const stepKinds = "launch, run, write, copy, open, wait_window, wait_element, focus, sleep, keys, type, click or close"

// oneOfWhat explains the objects that must hold exactly one key.
func oneOfWhat(path []any) string {
	if len(path) == 0 {
		return ""
	}
	switch last := path[len(path)-1]; {
	case len(path) == 2 && path[0] == "setup":
		return "a setup step has exactly one kind: " + stepKinds
	case len(path) == 2 && path[0] == "after":
		return "a step after the agent has exactly one kind: " + stepKinds
	case last == "probe":
		return "a probe has exactly one of command, file, answer, element, window or clipboard"
	case last == "element" || last == "target":
		return fmt.Sprintf("%s needs at least one field", last)
	}
	return ""
}

// wantsString reports whether the schema rejects the value at path for
// not being a string.
func wantsString(sch *jsonschema.Schema, doc map[string]any, path []any) bool {
	var ve *jsonschema.ValidationError
	if !errors.As(sch.Validate(doc), &ve) {
		return false
	}
	ptr := make([]string, len(path))
	for i, p := range path {
		ptr[i] = fmt.Sprint(p)
	}
	want := strings.Join(ptr, "/")
	found := false
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			if t, ok := e.ErrorKind.(*kind.Type); ok && strings.Join(e.InstanceLocation, "/") == want && slices.Contains(t.Want, "string") {
				found = true
			}
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return found
}

// loadFile loads one task or template file.
func (s *Suite) loadFile(name string) ([]loaded, Problems) {
	src, err := readLimited(name)
	if err != nil {
		return nil, Problems{{File: name, Msg: err.Error()}}
	}
	return s.parse(name, src)
}

func (s *Suite) parse(name string, src []byte) ([]loaded, Problems) {
	f := &fileCtx{name: name}
	tree, p := parseYAML(name, src)
	if p != nil {
		return nil, Problems{*p}
	}
	f.ast = tree
	if len(f.ast.Docs) > 1 {
		return nil, Problems{{File: name, Line: 1, Msg: "a task file holds one task or one template; split the documents into files"}}
	}
	js, err := yaml.YAMLToJSON(src)
	if err != nil {
		return nil, Problems{yamlProblem(name, err)}
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, Problems{{File: name, Line: 1, Msg: "not a YAML mapping: " + err.Error()}}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, Problems{{File: name, Line: 1, Msg: "a task file must be a mapping with id, instruction, level, kind and checks"}}
	}
	instances, probs := expand(f, obj)
	if len(probs) > 0 {
		return nil, probs
	}
	var out []loaded
	for _, in := range instances {
		t, ps := s.instance(f, in)
		probs = append(probs, ps...)
		if t != nil {
			line, col := f.locate([]any{"id"})
			out = append(out, loaded{Task: t, line: line, col: col})
		}
	}
	return out, probs
}

// instance validates one filled document and decodes it into a Task.
func (s *Suite) instance(f *fileCtx, in instanceDoc) (*Task, Problems) {
	sch, err := compiled()
	if err != nil {
		return nil, Problems{{File: f.name, Msg: "the task schema does not compile: " + err.Error()}}
	}
	tag := func(ps []Problem) Problems {
		if in.values != nil {
			for i := range ps {
				ps[i].Task = in.id
			}
		}
		return ps
	}
	err = sch.Validate(in.doc)
	if err != nil && len(in.typed) > 0 {
		// Where the schema wants a string, a typed placeholder gives its text.
		changed := false
		for _, path := range in.typed {
			if wantsString(sch, in.doc, path) {
				changed = stringAt(in.doc, path) || changed
			}
		}
		if changed {
			err = sch.Validate(in.doc)
		}
	}
	if err != nil {
		return nil, tag(f.schemaProblems(err))
	}
	b, err := json.Marshal(in.doc)
	if err != nil {
		return nil, Problems{{File: f.name, Msg: err.Error()}}
	}
	var t Task
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, tag([]Problem{{File: f.name, Line: 1, Msg: err.Error()}})
	}
	t.File, t.Values = f.name, in.values
	if in.values != nil {
		t.Template = in.template
	}
	t.Params, t.Combine = nil, ""
	s.Warnings = append(s.Warnings, tag(roleWarnings(f, in.doc))...)
	dbErrs, dbWarns := s.sqlProblems(f, &t)
	s.Warnings = append(s.Warnings, tag(dbWarns)...)
	errs := dbErrs
	for _, p := range s.lint(f, &t) {
		if p.Warning {
			s.Warnings = append(s.Warnings, tag(Problems{p})...)
		} else {
			errs = append(errs, p)
		}
	}
	if len(errs) > 0 {
		return nil, tag(errs)
	}
	return &t, nil
}

// textFinder is an ast.Visitor that finds the first scalar whose text
// holds sub.
type textFinder struct {
	sub string
	tok *token.Token
}

func (v *textFinder) Visit(n ast.Node) ast.Visitor {
	if v.tok != nil {
		return nil
	}
	if tok := n.GetToken(); tok != nil && strings.Contains(tok.Value, v.sub) {
		switch n.(type) {
		case *ast.StringNode, *ast.LiteralNode:
			v.tok = tok
			return nil
		}
	}
	return v
}

// locateText finds the line and column of the first scalar of the file
// whose text holds sub, or 1:1.
func (f *fileCtx) locateText(sub string) (int, int) {
	if f.ast == nil {
		return 0, 0
	}
	v := &textFinder{sub: sub}
	for _, d := range f.ast.Docs {
		if d.Body != nil && v.tok == nil {
			ast.Walk(v, d.Body)
		}
	}
	if v.tok == nil {
		return 1, 1
	}
	return v.tok.Position.Line, v.tok.Position.Column
}
