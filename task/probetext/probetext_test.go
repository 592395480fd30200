package probetext

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/observe"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want check.Probe
		errs []string // parts of the error, when it is refused
	}{
		{name: "file without braces", src: "file: ~/out.txt", want: check.Probe{File: "~/out.txt"}},
		{name: "file with braces", src: "{file: ~/sales.ods, cell: B7}", want: check.Probe{File: "~/sales.ods", Cell: "B7"}},
		{name: "read", src: "file: ~/canvas.png, read: image", want: check.Probe{File: "~/canvas.png", Read: "image"}},
		{name: "JSON", src: `{"file": "~/a b.txt", "read": "odt-text"}`, want: check.Probe{File: "~/a b.txt", Read: "odt-text"}},
		{name: "element", src: "element: {app: mousepad, role: text}", want: check.Probe{Element: &observe.ElementQuery{App: "mousepad", Role: "text"}}},
		{name: "command", src: "command: 'ls -1 ~ | wc -l'", want: check.Probe{Command: "ls -1 ~ | wc -l"}},
		{name: "block YAML", src: "file: ~/report.odt\nread: odt\n", want: check.Probe{File: "~/report.odt", Read: "odt"}},
		{name: "window", src: "window: true", want: check.Probe{Window: true}},
		{name: "clipboard", src: " clipboard: true ", want: check.Probe{Clipboard: true}},
		{name: "answer", src: "answer: true", want: check.Probe{Answer: true}},

		{name: "unknown read", src: "file: ~/x, read: text", errs: []string{"probe.read: value must be one of 'ods', 'odt', 'odt-text', 'xlsx', 'docx', 'docx-text', 'pptx', 'image', 'sqlite' (column 12)"}},
		{name: "unknown field", src: "file: ~/x, colour: red", errs: []string{`probe.colour: unknown field "colour" (column 12)`}},
		{name: "bad cell", src: "file: ~/s.ods, cell: 7B", errs: []string{"probe.cell:", "(column 16)"}},
		{name: "two sources", src: "file: ~/x, window: true", errs: []string{"probe: "}},
		{name: "cell without file", src: "command: ls, cell: B7", errs: []string{"probe: ", "cell"}},
		{name: "block, second line", src: "file: ~/x\nread: odx", errs: []string{"probe.read: ", "(line 2, column 1)"}},
		{name: "not a mapping", src: "{file: ~/x", errs: []string{"probe: ", "(column 1)"}},
		{name: "empty", src: "  ", errs: []string{"the probe is empty"}},
		{name: "a check, not a probe", src: "kind: exact", errs: []string{`probe.kind: unknown field "kind"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.src)
			if tc.errs != nil {
				if err == nil {
					t.Fatalf("Parse(%q) = %+v, want an error", tc.src, p)
				}
				for _, w := range tc.errs {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("the error lacks %q:\n%v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*p, tc.want) {
				t.Fatalf("Parse(%q) = %+v, want %+v", tc.src, *p, tc.want)
			}
		})
	}
}

// FuzzParse: whatever the command line holds, Parse answers a
// probe or an error, and a probe it accepts, written back as JSON, parses
// to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"file: ~/x", "{file: ~/s.ods, cell: B7}", `{"command": "ls"}`, "element: {role: text}",
		"file: ~/x\nread: odt", "}{", "file: x}, expected: 3, z: {", "read: image", "&a [*a]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Parse(src)
		if err != nil {
			return
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Parse(string(b))
		if err != nil {
			t.Fatalf("%q parsed to %s, which does not parse: %v", src, b, err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("%q parsed to %+v, and back to %+v", src, p, q)
		}
	})
}

func TestIndentJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"width":2,"mean":[1.5,2,3],"grid":[[1,2],[3,4]],"name":"<b>&"}`,
			"{\n  \"width\": 2,\n  \"mean\": [1.5, 2, 3],\n  \"grid\": [\n    [1, 2],\n    [3, 4]\n  ],\n  \"name\": \"<b>&\"\n}\n"},
		{`{"z":1,"a":{"b":[]}}`, "{\n  \"z\": 1,\n  \"a\": {\n    \"b\": []\n  }\n}\n"},
		{`{"paragraphs":[{"text":"x","bold":true},{"text":null}],"empty":{}}`,
			"{\n  \"paragraphs\": [\n    {\n      \"text\": \"x\",\n      \"bold\": true\n    },\n    {\n      \"text\": null\n    }\n  ],\n  \"empty\": {}\n}\n"},
		{`12345678901234567890`, "12345678901234567890\n"},
	}
	for _, tc := range tests {
		got, err := IndentJSON(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("IndentJSON(%s) =\n%s\nwant\n%s", tc.in, got, tc.want)
		}
	}
	if _, err := IndentJSON(`{"a":`); err == nil {
		t.Error("broken JSON was laid out")
	}
}

// FuzzIndentJSON: the layout changes only spaces.
func FuzzIndentJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,[3]],"b":{"c":"\u003c"}}`, `[]`, `"x"`, `{"":null}`, `[[],[{}]]`, `1e400`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		out, err := IndentJSON(s)
		if err != nil {
			return // more than one value
		}
		var a, b bytes.Buffer
		if err := json.Compact(&a, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if err := json.Compact(&b, []byte(out)); err != nil {
			t.Fatalf("%q laid out as %q, which is not JSON: %v", s, out, err)
		}
		var x, y any
		json.Unmarshal(a.Bytes(), &x)
		json.Unmarshal(b.Bytes(), &y)
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("%q laid out as %q", s, out)
		}
	})
}
