package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/internal/odf"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/query"

	"github.com/expr-lang/expr/vm"
)

// Strings is a list of strings that also takes numbers and booleans, as
// people write accepted answers: [42, "forty-two"].
type Strings []string

// UnmarshalJSON reads strings, numbers and booleans as text.
func (s *Strings) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(Strings, 0, len(raw))
	for _, r := range raw {
		var v any
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return err
		}
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case json.Number, bool:
			out = append(out, fmt.Sprint(x))
		default:
			return fmt.Errorf("accepted answers are strings or numbers, not %s", r)
		}
	}
	*s = out
	return nil
}

// Probe says where a check's value comes from. Exactly one field is set.
type Probe struct {
	Command   string                `json:"command,omitempty" yaml:"command,omitempty"`     // stdout of a shell command
	File      string                `json:"file,omitempty" yaml:"file,omitempty"`           // a file's content
	Answer    bool                  `json:"answer,omitempty" yaml:"answer,omitempty"`       // the agent's answer
	Element   *observe.ElementQuery `json:"element,omitempty" yaml:"element,omitempty"`     // text (else name) of the first matching element
	Window    bool                  `json:"window,omitempty" yaml:"window,omitempty"`       // the window titles, one a line
	Clipboard bool                  `json:"clipboard,omitempty" yaml:"clipboard,omitempty"` // the clipboard's text
	Page      *observe.PageQuery    `json:"page,omitempty" yaml:"page,omitempty"`           // a browser's page: URL, text, selector, JavaScript, cookie, storage
	SQL       *query.SQL            `json:"sql,omitempty" yaml:"sql,omitempty"`             // rows of a read-only query of a service's SQLite database, as JSON
	HTTP      *query.HTTP           `json:"http,omitempty" yaml:"http,omitempty"`           // the body of an HTTP API's answer (a service's or the loopback's)
	XMLRPC    *query.XMLRPC         `json:"xmlrpc,omitempty" yaml:"xmlrpc,omitempty"`       // an XML-RPC call's result as JSON (a service's or the loopback's)

	// Read decodes a file probe: ods, odt, xlsx, docx and pptx give the
	// document as JSON (see packages odf and ooxml), odt-text and
	// docx-text its paragraphs one a line, image the picture's size and
	// colour statistics as JSON.
	Read string `json:"read,omitempty" yaml:"read,omitempty"`
	// Cell reads one cell ("B7", "Totals.B7") of a file probe's ODS
	// spreadsheet: a number's value, else the text it shows.
	Cell string `json:"cell,omitempty" yaml:"cell,omitempty"`
	// Query is the read-only SQL a file probe read as sqlite runs on the
	// database; its value is the rows as a JSON array of objects, found
	// when there is a row.
	Query string `json:"query,omitempty" yaml:"query,omitempty"`
}

// The decoders of a file probe.
var probeReads = []string{"ods", "odt", "odt-text", "xlsx", "docx", "docx-text", "pptx", "image", "sqlite"}

// Service is the probe's service query, if it is one.
func (p Probe) Service() (query.Service, bool) {
	if p.SQL == nil && p.HTTP == nil && p.XMLRPC == nil {
		return query.Service{}, false
	}
	return query.Service{SQL: p.SQL, HTTP: p.HTTP, XMLRPC: p.XMLRPC}, true
}

func (p Probe) validate() error {
	n := 0
	for _, set := range []bool{p.Command != "", p.File != "", p.Answer, p.Element != nil, p.Window, p.Clipboard, p.Page != nil, p.SQL != nil, p.HTTP != nil, p.XMLRPC != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("probe needs exactly one of command, file, answer, element, window, clipboard, page, sql, http, xmlrpc")
	}
	if q, ok := p.Service(); ok {
		if err := q.Validate(); err != nil {
			return err
		}
	}
	if p.Page != nil {
		if err := p.Page.Validate(); err != nil {
			return err
		}
	}
	if (p.Read != "" || p.Cell != "") && p.File == "" {
		return fmt.Errorf("read and cell apply to a file probe only")
	}
	if p.Read != "" && p.Cell != "" {
		return fmt.Errorf("give read or cell, not both (a cell is read from an ODS file)")
	}
	if (p.Read == "sqlite") != (p.Query != "") {
		return fmt.Errorf("a file probe read as sqlite takes a query, and only it does")
	}
	if p.Query != "" && !query.ReadsOnly(p.Query) {
		return fmt.Errorf("the query must read (SELECT, WITH, VALUES), not %q", shorten(p.Query, 40))
	}
	if p.Read != "" && !slices.Contains(probeReads, p.Read) {
		return fmt.Errorf("read must be one of %s, not %q", strings.Join(probeReads, ", "), p.Read)
	}
	if p.Cell != "" {
		if _, _, err := odf.ParseRef(p.Cell); err != nil {
			return err
		}
	}
	return nil
}

func (p Probe) String() string {
	switch {
	case p.Command != "":
		return "output of `" + p.Command + "`"
	case p.File != "" && p.Cell != "":
		return "cell " + p.Cell + " of " + p.File
	case p.File != "" && p.Query != "":
		return "`" + shorten(p.Query, 60) + "` on " + p.File
	case p.File != "" && p.Read != "":
		return p.File + " read as " + p.Read
	case p.File != "":
		return "file " + p.File
	case p.Answer:
		return "the answer"
	case p.Element != nil:
		return "element " + p.Element.Describe()
	case p.Window:
		return "window titles"
	case p.Page != nil:
		return p.Page.Describe()
	case p.SQL != nil || p.HTTP != nil || p.XMLRPC != nil:
		q, _ := p.Service()
		return q.Describe()
	default:
		return "clipboard"
	}
}

// Spec is one check as written in a task file. Which fields apply depends on
// Kind; Compile rejects a spec with missing or stray fields.
type Spec struct {
	Kind Kind   `json:"kind" yaml:"kind"`
	Name string `json:"name,omitempty" yaml:"name,omitempty"` // label in reports

	Probe    *Probe `json:"probe,omitempty" yaml:"probe,omitempty"`
	Expected any    `json:"expected,omitempty" yaml:"expected,omitempty"` // exact, lines
	As       string `json:"as,omitempty" yaml:"as,omitempty"`             // exact: string, number or json

	Accepted   Strings               `json:"accepted,omitempty" yaml:"accepted,omitempty"` // answer
	Tolerance  float64               `json:"tolerance,omitempty" yaml:"tolerance,omitempty"`
	CaseSense  bool                  `json:"case_sensitive,omitempty" yaml:"case_sensitive,omitempty"`
	Value      string                `json:"value,omitempty" yaml:"value,omitempty"` // contains, not_contains
	Regex      bool                  `json:"regex,omitempty" yaml:"regex,omitempty"`
	Min        *float64              `json:"min,omitempty" yaml:"min,omitempty"` // range
	Max        *float64              `json:"max,omitempty" yaml:"max,omitempty"`
	File       string                `json:"file,omitempty" yaml:"file,omitempty"` // exists, not_exists, file_equal
	Element    *observe.ElementQuery `json:"element,omitempty" yaml:"element,omitempty"`
	Window     string                `json:"window,omitempty" yaml:"window,omitempty"`
	Asset      string                `json:"asset,omitempty" yaml:"asset,omitempty"`     // file_equal
	Mode       string                `json:"mode,omitempty" yaml:"mode,omitempty"`       // file_equal: text, json, image; document_equal: xlsx, docx, pptx
	Options    map[string]any        `json:"options,omitempty" yaml:"options,omitempty"` // document_equal: the comparison's options
	Command    string                `json:"command,omitempty" yaml:"command,omitempty"`
	Timeout    duration.Duration     `json:"timeout,omitempty" yaml:"timeout,omitempty"`
	ExitCode   *int                  `json:"exit_code,omitempty" yaml:"exit_code,omitempty"`
	Stdout     *string               `json:"stdout,omitempty" yaml:"stdout,omitempty"`
	StdoutRE   string                `json:"stdout_regex,omitempty" yaml:"stdout_regex,omitempty"`
	Expr       string                `json:"expr,omitempty" yaml:"expr,omitempty"`   // predicate
	Steps      []string              `json:"steps,omitempty" yaml:"steps,omitempty"` // process
	Milestones []string              `json:"milestones,omitempty" yaml:"milestones,omitempty"`
	MinScore   *float64              `json:"min_score,omitempty" yaml:"min_score,omitempty"`

	// judge
	Evidence    string      `json:"evidence,omitempty" yaml:"evidence,omitempty"`       // what the judge sees (JudgeEvidence)
	Expectation string      `json:"expectation,omitempty" yaml:"expectation,omitempty"` // what must hold, in words
	Criteria    []Criterion `json:"criteria,omitempty" yaml:"criteria,omitempty"`       // weighted parts, for partial credit
	Images      int         `json:"images,omitempty" yaml:"images,omitempty"`           // expected_flow, process: screens at most

	Any []Spec `json:"any,omitempty" yaml:"any,omitempty"` // any: the alternatives
}

// Label is the check's name, or a description made from its kind.
func (s Spec) Label() string {
	if s.Name != "" {
		return s.Name
	}
	switch {
	case s.Probe != nil:
		return fmt.Sprintf("%s on %s", s.Kind, s.Probe)
	case s.File != "":
		return fmt.Sprintf("%s %s", s.Kind, s.File)
	case s.Command != "":
		return fmt.Sprintf("%s `%s`", s.Kind, s.Command)
	}
	return string(s.Kind)
}

// setFields names the fields s sets, by their task-file names, in the
// struct's order (Compile reports the first stray one). A new Spec field
// needs a line here; TestSetFieldsCoversSpec says so.
func (s Spec) setFields() []string {
	var out []string
	add := func(ok bool, name string) {
		if ok {
			out = append(out, name)
		}
	}
	add(s.Probe != nil, "probe")
	add(s.Expected != nil, "expected")
	add(s.As != "", "as")
	add(s.Accepted != nil, "accepted")
	add(s.Tolerance != 0, "tolerance")
	add(s.CaseSense, "case_sensitive")
	add(s.Value != "", "value")
	add(s.Regex, "regex")
	add(s.Min != nil, "min")
	add(s.Max != nil, "max")
	add(s.File != "", "file")
	add(s.Element != nil, "element")
	add(s.Window != "", "window")
	add(s.Asset != "", "asset")
	add(s.Mode != "", "mode")
	add(s.Options != nil, "options")
	add(s.Command != "", "command")
	add(s.Timeout != 0, "timeout")
	add(s.ExitCode != nil, "exit_code")
	add(s.Stdout != nil, "stdout")
	add(s.StdoutRE != "", "stdout_regex")
	add(s.Expr != "", "expr")
	add(s.Steps != nil, "steps")
	add(s.Milestones != nil, "milestones")
	add(s.MinScore != nil, "min_score")
	add(s.Evidence != "", "evidence")
	add(s.Expectation != "", "expectation")
	add(s.Criteria != nil, "criteria")
	add(s.Images != 0, "images")
	add(s.Any != nil, "any")
	return out
}

// FieldError is a problem with one field of a check spec.
type FieldError struct {
	Field  string // the spec's field, e.g. "expr"
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

func ferr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Check is a compiled spec, ready to evaluate.
type Check struct {
	Spec Spec
	// What a kind's compile prepared, so evaluate does not redo it:
	// contains' value and command's stdout_regex, predicate's program.
	re      *regexp.Regexp
	program *vm.Program
	doc     *docCompare // document_equal's parsed options
	alts    []*Check    // any's alternatives
}
