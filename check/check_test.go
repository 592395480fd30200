package check

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/observe"

	"github.com/xuri/excelize/v2"
)

func fptr(f float64) *float64 { return &f }
func iptr(i int) *int         { return &i }
func sptr(s string) *string   { return &s }

func pngBytes(t testing.TB, w, h int, paint func(x, y int) color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, paint(x, y))
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// evidence builds the recorded evidence the table below probes.
func evidence(t testing.TB) *Recorded {
	dir := t.TempDir()
	white := func(x, y int) color.Color { return color.White }
	if err := os.WriteFile(filepath.Join(dir, "gold.png"), pngBytes(t, 10, 10, white), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"expected.json", "expected.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "gold.xlsx"), xlsxBytes(t, 42), 0o644); err != nil {
		t.Fatal(err)
	}
	clip := "copied text"
	ods, err := os.ReadFile("testdata/fruit.ods")
	if err != nil {
		t.Fatal(err)
	}
	odt, err := os.ReadFile("testdata/report.odt")
	if err != nil {
		t.Fatal(err)
	}
	return &Recorded{
		AssetDir: dir,
		Files: map[string][]byte{
			"/root/notes.txt":   []byte("hello world\n"),
			"/root/list.txt":    []byte("beta\nalpha\n"),
			"/root/report.json": []byte(`{"rows":[1,2,3],"title":"Report"}`),
			"/root/near.png": pngBytes(t, 10, 10, func(x, y int) color.Color {
				return map[bool]color.Color{true: color.Black, false: color.White}[x == 0 && y == 0]
			}),
			"/root/gold-copy.png": pngBytes(t, 10, 10, white),
			"/root/far.png":       pngBytes(t, 10, 10, func(x, y int) color.Color { return map[bool]color.Color{true: color.Black, false: color.White}[x < 5] }),
			"/root/state.json":    []byte(`{"cells":{"A1":5,"A2":7},"sheet":"Sheet1"}`),
			"/root/value.txt":     []byte(" 3.14159 \n"),
			"/root/expected.txt":  []byte("alpha\r\nbeta\r\n"),
			"/root/fruit.ods":     ods,
			"/root/report.odt":    odt,
			"/root/broken.ods":    []byte("this is not a spreadsheet"),
			"/root/books.xlsx":    xlsxBytes(t, 42),
			"/root/edited.xlsx":   xlsxBytes(t, 43),
			"/root/line.png": pngBytes(t, 100, 100, func(x, y int) color.Color {
				return map[bool]color.Color{true: color.Black, false: color.White}[y >= 50 && y < 55]
			}),
		},
		Commands: map[string]observe.CommandResult{
			"cat /root/notes.txt": {Stdout: "hello world\n"},
			"false":               {ExitCode: 1, Stderr: "boom"},
			"echo 42":             {Stdout: "42\n"},
		},
		Nodes: []observe.Element{
			{App: "gnome-calculator", Role: "label", Name: "result", Text: "12"},
			{App: "mousepad", Role: "push button", Name: "Save"},
		},
		WindowList: []string{"notes.txt - Mousepad", "Calculator"},
		Clip:       &clip,
		Steps: Trajectory{Steps: []Step{
			{Action: action.Action{Kind: action.Click}, Element: "menu item File"},
			{Action: action.Action{Kind: action.Click}, Element: "menu item Save As…"},
			{Action: action.Action{Kind: action.Type, Text: "report"}},
			{Action: action.Action{Kind: action.Click}, Element: "push button Save"},
			{Action: action.Action{Kind: action.Answer, Text: "  The Answer is 12.  "}},
		}},
	}
}

// sheetData is document_equal's options comparing the first sheets' values.
var sheetData = map[string]any{"rules": []any{map[string]any{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}}}

// xlsxBytes is a workbook with a sheet Books whose B2 holds n.
func xlsxBytes(t testing.TB, n int) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", "Books"); err != nil {
		t.Fatal(err)
	}
	for ref, v := range map[string]any{"A1": "Title", "B1": "Copies", "A2": "Emma", "B2": n} {
		if err := f.SetCellValue("Books", ref, v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestChecks(t *testing.T) {
	ev := evidence(t)
	ev.Changes = violatingDiff()
	ms := MilestoneScores{
		"open": {ID: "open", Weight: 1, Pass: true},
		"save": {ID: "save", Weight: 3, Pass: false},
	}
	tests := []struct {
		name string
		spec Spec
		pass bool
		why  string // substring of the reason
	}{
		{"exact string", Spec{Kind: Exact, Probe: &Probe{File: "/root/notes.txt"}, Expected: "Hello World"}, true, "equals"},
		{"exact string case", Spec{Kind: Exact, Probe: &Probe{File: "/root/notes.txt"}, Expected: "Hello World", CaseSense: true}, false, "is not"},
		{"exact number", Spec{Kind: Exact, Probe: &Probe{Command: "echo 42"}, Expected: 42}, true, "equals 42"},
		{"exact number wrong", Spec{Kind: Exact, Probe: &Probe{Command: "echo 42"}, Expected: 41}, false, "42 is not 41"},
		{"exact number tolerance", Spec{Kind: Exact, Probe: &Probe{File: "/root/value.txt"}, Expected: 3.14, Tolerance: 0.01}, true, "equals"},
		{"exact json", Spec{Kind: Exact, Probe: &Probe{File: "/root/report.json"}, Expected: map[string]any{"title": "Report", "rows": []any{1, 2, 3}}}, true, "equal"},
		{"exact json wrong", Spec{Kind: Exact, Probe: &Probe{File: "/root/report.json"}, Expected: map[string]any{"title": "Report"}}, false, "is not"},
		{"exact missing file", Spec{Kind: Exact, Probe: &Probe{File: "/root/none"}, Expected: "x"}, false, "nothing to read"},
		{"exact element", Spec{Kind: Exact, Probe: &Probe{Element: &observe.ElementQuery{Role: "label", Name: "result"}}, Expected: 12}, true, "equals"},
		{"exact clipboard", Spec{Kind: Exact, Probe: &Probe{Clipboard: true}, Expected: "copied text"}, true, "equals"},
		{"cell number", Spec{Kind: Exact, Probe: &Probe{File: "/root/fruit.ods", Cell: "C3"}, Expected: 0.75}, true, "equals"},
		{"cell number wrong", Spec{Kind: Exact, Probe: &Probe{File: "/root/fruit.ods", Cell: "fruit.B4"}, Expected: 11}, false, "10 is not 11"},
		{"cell text", Spec{Kind: Exact, Probe: &Probe{File: "/root/fruit.ods", Cell: "A4"}, Expected: "kiwi, gold"}, true, "equals"},
		{"cell empty", Spec{Kind: Exact, Probe: &Probe{File: "/root/fruit.ods", Cell: "Z99"}, Expected: "x"}, false, "is not"},
		{"cell of a broken file", Spec{Kind: Exact, Probe: &Probe{File: "/root/broken.ods", Cell: "A1"}, Expected: "x"}, false, "not an OpenDocument file"},
		{"cell missing file", Spec{Kind: Exact, Probe: &Probe{File: "/root/none.ods", Cell: "A1"}, Expected: "x"}, false, "nothing to read"},
		{"ods predicate", Spec{Kind: Predicate, Probe: &Probe{File: "/root/fruit.ods", Read: "ods"}, Expr: `value.cells.B2.value + value.cells.B3.value == 7 && value.sheets[0].name == "fruit" && value.sheets[0].rows == 4`}, true, "holds"},
		{"ods predicate fails", Spec{Kind: Predicate, Probe: &Probe{File: "/root/fruit.ods", Read: "ods"}, Expr: `"D2" in value.cells && value.cells.D2.formula contains "SUM"`}, false, ""},
		{"odt predicate", Spec{Kind: Predicate, Probe: &Probe{File: "/root/report.odt", Read: "odt"}, Expr: `value.paragraphs[0].heading == 1 && value.paragraphs[2].bold && !value.paragraphs[1].bold && any(value.paragraphs[1].spans, .bold && .text == "12 percent")`}, true, "holds"},
		{"odt text", Spec{Kind: Contains, Probe: &Probe{File: "/root/report.odt", Read: "odt-text"}, Value: "third quarter.\nEverything"}, true, "contains"},
		{"odt text of a spreadsheet", Spec{Kind: Contains, Probe: &Probe{File: "/root/fruit.ods", Read: "odt-text"}, Value: "Apple"}, false, "no text body"},
		{"image predicate", Spec{Kind: Predicate, Probe: &Probe{File: "/root/line.png", Read: "image"}, Expr: `value.width == 100 && value.dark == 0.05 && all(value.dark_at[5], # == 0.5) && value.dark_at[0][0] == 0 && value.colors == 2`}, true, "holds"},
		{"image of text", Spec{Kind: Predicate, Probe: &Probe{File: "/root/notes.txt", Read: "image"}, Expr: `value.width > 0`}, false, "not a PNG"},
		{"lines any order", Spec{Kind: Lines, Probe: &Probe{File: "/root/list.txt"}, Expected: []any{"alpha", "beta"}}, true, "match"},
		{"lines missing", Spec{Kind: Lines, Probe: &Probe{File: "/root/list.txt"}, Expected: "alpha\nbeta\ngamma"}, false, "missing [gamma]"},
		{"answer text", Spec{Kind: AnswerKind, Accepted: []string{"the answer is 12"}}, true, "matches"},
		{"answer numeric", Spec{Kind: AnswerKind, Probe: &Probe{Command: "echo 42"}, Accepted: []string{"41.9"}, Tolerance: 0.2}, true, "matches"},
		{"answer several", Spec{Kind: AnswerKind, Accepted: []string{"eleven", "The answer is 12"}}, true, "matches"},
		{"answer wrong", Spec{Kind: AnswerKind, Accepted: []string{"13"}}, false, "matches none"},
		{"contains", Spec{Kind: Contains, Probe: &Probe{Window: true}, Value: "mousepad"}, true, "contains"},
		{"contains regex", Spec{Kind: Contains, Probe: &Probe{File: "/root/notes.txt"}, Value: `^hello\s+w`, Regex: true}, true, "contains"},
		{"contains fails", Spec{Kind: Contains, Probe: &Probe{File: "/root/notes.txt"}, Value: "bye"}, false, "does not contain"},
		{"not contains", Spec{Kind: NotContains, Probe: &Probe{File: "/root/notes.txt"}, Value: "bye"}, true, "does not contain"},
		{"not contains fails", Spec{Kind: NotContains, Probe: &Probe{File: "/root/notes.txt"}, Value: "hello"}, false, "contains"},
		{"exists file", Spec{Kind: Exists, File: "/root/notes.txt"}, true, "exists"},
		{"exists file missing", Spec{Kind: Exists, File: "/root/gone.txt"}, false, "does not exist"},
		{"exists element", Spec{Kind: Exists, Element: &observe.ElementQuery{Role: "push button", Name: "Save"}}, true, "exists"},
		{"exists window", Spec{Kind: Exists, Window: "calculator"}, true, "exists"},
		{"not exists file", Spec{Kind: NotExists, File: "/root/gone.txt"}, true, "does not exist"},
		{"not exists element fails", Spec{Kind: NotExists, Element: &observe.ElementQuery{Name: "Save"}}, false, "exists"},
		{"not exists window", Spec{Kind: NotExists, Window: "Terminal"}, true, "does not exist"},
		{"range", Spec{Kind: Range, Probe: &Probe{File: "/root/value.txt"}, Min: fptr(3), Max: fptr(3.2)}, true, "lies in"},
		{"range tolerance", Spec{Kind: Range, Probe: &Probe{File: "/root/value.txt"}, Min: fptr(3.15), Tolerance: 0.01}, true, "lies in"},
		{"range outside", Spec{Kind: Range, Probe: &Probe{File: "/root/value.txt"}, Max: fptr(3)}, false, "outside"},
		{"range not a number", Spec{Kind: Range, Probe: &Probe{File: "/root/notes.txt"}, Max: fptr(3)}, false, "not a number"},
		{"infeasible without FAIL", Spec{Kind: Infeasible}, false, "ended with answer"},
		{"file text", Spec{Kind: FileEqual, File: "/root/expected.txt", Asset: "expected.txt"}, true, "same text"},
		{"file text differs", Spec{Kind: FileEqual, File: "/root/list.txt", Asset: "expected.txt"}, false, "line 1"},
		{"file json", Spec{Kind: FileEqual, File: "/root/report.json", Asset: "expected.json", Mode: "json"}, true, "same JSON"},
		{"file image near", Spec{Kind: FileEqual, File: "/root/near.png", Asset: "gold.png", Mode: "image", Tolerance: 0.02}, true, "0.0100 of the pixels"},
		{"file image far", Spec{Kind: FileEqual, File: "/root/far.png", Asset: "gold.png", Mode: "image", Tolerance: 0.02}, false, "0.5000 of the pixels"},
		{"file missing", Spec{Kind: FileEqual, File: "/root/none.txt", Asset: "expected.txt"}, false, "does not exist"},
		{"document equal", Spec{Kind: DocumentEqual, File: "/root/books.xlsx", Asset: "gold.xlsx", Options: sheetData}, true, "all 1 rules hold"},
		{"document differs", Spec{Kind: DocumentEqual, File: "/root/edited.xlsx", Asset: "gold.xlsx", Options: sheetData}, false, "cell B2 is 43.0, expected 42.0"},
		{"document missing", Spec{Kind: DocumentEqual, File: "/root/none.xlsx", Asset: "gold.xlsx", Options: sheetData}, false, "does not exist"},
		{"document image: the same structure", Spec{Kind: DocumentEqual, File: "/root/gold-copy.png", Asset: "gold.png", Mode: "image", Options: map[string]any{"metric": "check_structure_sim"}}, true, "check_structure_sim: SSIM 1.0000"},
		{"document image: half black", Spec{Kind: DocumentEqual, File: "/root/far.png", Asset: "gold.png", Mode: "image", Options: map[string]any{"metric": "compare_images"}, MinScore: fptr(0.9)}, false, "compare_images: SSIM"},
		{"document read", Spec{Kind: Predicate, Probe: &Probe{File: "/root/books.xlsx", Read: "xlsx"}, Expr: `value.cells.B2.value == 42 && value.sheets[0].name == "Books"`}, true, ""},
		{"command exit", Spec{Kind: CommandKind, Command: "false", ExitCode: iptr(1)}, true, "exited 1"},
		{"command exit wrong", Spec{Kind: CommandKind, Command: "false", ExitCode: iptr(0)}, false, "exited 1, want 0"},
		{"command stdout", Spec{Kind: CommandKind, Command: "echo 42", Stdout: sptr("42")}, true, "expected output"},
		{"command regex", Spec{Kind: CommandKind, Command: "cat /root/notes.txt", StdoutRE: `wor.d`}, true, "expected output"},
		{"command regex fails", Spec{Kind: CommandKind, Command: "cat /root/notes.txt", StdoutRE: `^bye`}, false, "does not match"},
		{"predicate", Spec{Kind: Predicate, Probe: &Probe{File: "/root/state.json"}, Expr: `value.cells.A1 + value.cells.A2 == 12 && value.sheet == "Sheet1"`}, true, "holds"},
		{"predicate false", Spec{Kind: Predicate, Probe: &Probe{File: "/root/state.json"}, Expr: `value.cells.A1 > 10`}, false, "is false"},
		{"predicate text", Spec{Kind: Predicate, Probe: &Probe{File: "/root/notes.txt"}, Expr: `text startsWith "hello"`}, true, "holds"},
		{"predicate runtime error", Spec{Kind: Predicate, Probe: &Probe{File: "/root/state.json"}, Expr: `value.cells.A1 / 0 > 1 && value.x.y == 1`}, false, "could not be evaluated"},
		{"process in order", Spec{Kind: Process, Steps: []string{"File", "Save As", "push button Save"}}, true, "3 required steps"},
		{"process out of order", Spec{Kind: Process, Steps: []string{"Save As", "File"}}, false, "step 2"},
		{"process typed", Spec{Kind: Process, Steps: []string{"type \"report\""}}, true, "1 required"},
		{"milestones partial", Spec{Kind: Milestones, Milestones: []string{"open", "save"}, MinScore: fptr(0.25)}, true, "0.25 reaches 0.25"},
		{"milestones all", Spec{Kind: Milestones, Milestones: []string{"open", "save"}}, false, "below 1.00"},
		{"judge command output", Spec{Kind: JudgeKind, Evidence: CommandOutput, Command: "echo 42", Expectation: "the output says 42"}, true, "saw 42"},
		{"judge command output fails", Spec{Kind: JudgeKind, Evidence: CommandOutput, Command: "cat /root/notes.txt", Expectation: "the output says 42"}, false, "no 42"},
		{"any: the second passes", Spec{Kind: AnyOf, Any: []Spec{{Kind: Contains, Probe: &Probe{File: "/root/notes.txt"}, Value: "bye"}, {Kind: Exists, File: "/root/notes.txt"}}}, true, "alternative 2 of 2 passes"},
		{"any: none passes", Spec{Kind: AnyOf, Any: []Spec{{Kind: Exists, File: "/root/gone.txt"}, {Kind: FileEqual, File: "/root/list.txt", Asset: "expected.txt"}}}, false, "no alternative passes: 1. file /root/gone.txt does not exist; 2. file /root/list.txt differs"},
		{"side effects", Spec{Kind: SideEffects}, false, "1 change outside the allowed set: created file ~/x.txt (1 allowed, 1 filtered as noise)"},
	}
	seen := map[Kind]bool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compile(tc.spec)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			r := c.EvaluateWith(context.Background(), ev, ms, says42)
			if r.Pass != tc.pass || !strings.Contains(r.Reason, tc.why) {
				t.Fatalf("Evaluate = pass %v, %q; want pass %v with %q", r.Pass, r.Reason, tc.pass, tc.why)
			}
			if r.Err != "" {
				t.Fatalf("unexpected infrastructure error %s", r.Err)
			}
		})
		seen[tc.spec.Kind] = true
	}
	for _, k := range Kinds {
		if !seen[k] {
			t.Errorf("check kind %s has no case", k)
		}
	}
}

// says42 is a judge that passes when a text of the evidence holds 42.
var says42 = &fakeJudge{name: "fake:42", decide: func(req judgment.Request) (judgment.Verdict, error) {
	for _, p := range req.Evidence {
		if strings.Contains(p.Text, "42") {
			return judgment.Verdict{Pass: true, Score: 1, Reason: "saw 42"}, nil
		}
	}
	return judgment.Verdict{Reason: "no 42"}, nil
}}

func TestInfeasiblePassesOnFail(t *testing.T) {
	ev := &Recorded{Steps: Trajectory{Steps: []Step{{Action: action.Action{Kind: action.Fail}}}}}
	c, _ := Compile(Spec{Kind: Infeasible})
	if r := c.Evaluate(context.Background(), ev, nil); !r.Pass {
		t.Fatalf("infeasible with FAIL: %v", r.Reason)
	}
}

func TestUnrecordedProbeIsInfrastructure(t *testing.T) {
	c, _ := Compile(Spec{Kind: CommandKind, Command: "ls", ExitCode: iptr(0)})
	r := c.Evaluate(context.Background(), &Recorded{}, nil)
	if r.Pass || r.Err == "" {
		t.Fatalf("want an infrastructure error, got %+v", r)
	}
}

// TestAnyUndecided: an any check none of whose alternatives passes, one
// of them unable to read its evidence, could not decide; one that passes
// decides whatever the others could read.
func TestAnyUndecided(t *testing.T) {
	unread := Spec{Kind: CommandKind, Command: "ls", ExitCode: iptr(0)}
	answered := Spec{Kind: AnswerKind, Accepted: []string{"12"}}
	ev := &Recorded{Steps: Trajectory{Steps: []Step{{Action: action.Action{Kind: action.Answer, Text: "12"}}}}}
	for _, tc := range []struct {
		name      string
		alts      []Spec
		ev        *Recorded
		pass, err bool
	}{
		{"none passes, one unread", []Spec{answered, unread}, &Recorded{}, false, true},
		{"one passes, one unread", []Spec{unread, answered}, ev, true, false},
	} {
		c, err := Compile(Spec{Kind: AnyOf, Any: tc.alts})
		if err != nil {
			t.Fatal(err)
		}
		r := c.Evaluate(context.Background(), tc.ev, nil)
		if r.Pass != tc.pass || (r.Err != "") != tc.err {
			t.Errorf("%s: got %+v", tc.name, r)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		spec  Spec
		field string
		why   string
	}{
		{Spec{Kind: "fuzzy"}, "kind", "unknown check kind"},
		{Spec{Kind: Exact, Expected: "x"}, "probe", "needs a probe"},
		{Spec{Kind: Exact, Probe: &Probe{Answer: true}}, "expected", "needs an expected"},
		{Spec{Kind: Exact, Probe: &Probe{Answer: true}, Expected: "x", As: "blob"}, "as", "must be string"},
		{Spec{Kind: Exact, Probe: &Probe{Answer: true, Clipboard: true}, Expected: "x"}, "probe", "exactly one"},
		{Spec{Kind: Exact, Probe: &Probe{Answer: true}, Expected: "x", Steps: []string{"a"}}, "steps", "does not apply"},
		{Spec{Kind: Lines, Probe: &Probe{Answer: true}, Expected: 5}, "expected", "list of strings"},
		{Spec{Kind: AnswerKind}, "accepted", "at least one"},
		{Spec{Kind: Contains, Probe: &Probe{Answer: true}}, "value", "needs a value"},
		{Spec{Kind: Contains, Probe: &Probe{Answer: true}, Value: "(", Regex: true}, "value", "bad regular expression"},
		{Spec{Kind: Exists}, "file", "exactly one of file"},
		{Spec{Kind: Exists, File: "a", Window: "b"}, "file", "exactly one of file"},
		{Spec{Kind: Range, Probe: &Probe{Answer: true}}, "min", "needs min"},
		{Spec{Kind: Range, Probe: &Probe{Answer: true}, Min: fptr(2), Max: fptr(1)}, "max", "below min"},
		{Spec{Kind: Range, Probe: &Probe{Answer: true}, Min: fptr(2), Tolerance: -1}, "tolerance", "negative"},
		{Spec{Kind: Infeasible, Value: "x"}, "value", "does not apply"},
		{Spec{Kind: FileEqual, File: "a"}, "asset", "needs the expected asset"},
		{Spec{Kind: FileEqual, File: "a", Asset: "b", Mode: "pdf"}, "mode", "must be text"},
		{Spec{Kind: CommandKind, Command: "ls"}, "exit_code", "needs exit_code"},
		{Spec{Kind: CommandKind, Command: "ls", StdoutRE: "["}, "stdout_regex", "bad regular"},
		{Spec{Kind: Predicate, Probe: &Probe{Answer: true}}, "expr", "needs an expression"},
		{Spec{Kind: Predicate, Probe: &Probe{Answer: true}, Expr: "value +"}, "expr", "unexpected"},
		{Spec{Kind: Predicate, Probe: &Probe{Answer: true}, Expr: `"a"`}, "expr", "bool"},
		{Spec{Kind: Predicate, Probe: &Probe{Answer: true}, Expr: `secret == 1`}, "expr", "unknown name secret"},
		{Spec{Kind: Process}, "steps", "at least one"},
		{Spec{Kind: Milestones}, "milestones", "needs the milestone ids"},
		{Spec{Kind: Milestones, Milestones: []string{"a"}, MinScore: fptr(2)}, "min_score", "0..1"},
	}
	for _, tc := range tests {
		_, err := Compile(tc.spec)
		fe, ok := err.(*FieldError)
		if !ok || fe.Field != tc.field || !strings.Contains(fe.Reason, tc.why) {
			t.Errorf("Compile(%+v) = %v, want field %s with %q", tc.spec, err, tc.field, tc.why)
		}
	}
}

func TestPredicateLimits(t *testing.T) {
	long := strings.Repeat("1 + ", 2000) + "1 > 0"
	if _, err := Compile(Spec{Kind: Predicate, Probe: &Probe{Answer: true}, Expr: long}); err == nil {
		t.Fatal("an expression over the node limit compiled")
	}
	c, err := Compile(Spec{Kind: Predicate, Probe: &Probe{Answer: true}, Expr: `len(map(1..1000000, {# * 2})) > 0`})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Evaluate(context.Background(), &Recorded{Steps: Trajectory{Steps: []Step{{Action: action.Action{Kind: action.Answer, Text: "x"}}}}}, nil)
	if r.Pass || !strings.Contains(r.Reason, "memory budget") {
		t.Fatalf("want the memory budget to stop it, got %+v", r)
	}
}

func TestStringsAcceptsNumbers(t *testing.T) {
	var s Spec
	if err := json.Unmarshal([]byte(`{"kind":"answer","accepted":[42, "forty-two", 3.5, true]}`), &s); err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Accepted, "|") != "42|forty-two|3.5|true" {
		t.Fatalf("accepted %q", s.Accepted)
	}
	if err := json.Unmarshal([]byte(`{"kind":"answer","accepted":[{"a":1}]}`), &s); err == nil {
		t.Fatal("an object was accepted as an answer")
	}
}

// TestExactIgnoresTrailingLineBreaksOnBothSides: an expected value written
// as a YAML block (ending in a line break) matches a probe printed with or
// without one; other spaces still count.
func TestExactIgnoresTrailingLineBreaksOnBothSides(t *testing.T) {
	ev := &Recorded{Files: map[string][]byte{"~/a.txt": []byte("ok\n"), "~/b.txt": []byte("ok"), "~/c.txt": []byte("ok \n")}}
	for _, tc := range []struct {
		file, expected string
		pass           bool
	}{
		{"~/a.txt", "ok\n", true},
		{"~/b.txt", "ok\n", true},
		{"~/a.txt", "ok", true},
		{"~/a.txt", "ok\r\n", true},
		{"~/c.txt", "ok\n", false},
	} {
		c, err := Compile(Spec{Kind: Exact, Probe: &Probe{File: tc.file}, Expected: tc.expected, CaseSense: true})
		if err != nil {
			t.Fatal(err)
		}
		if r := c.Evaluate(context.Background(), ev, nil); r.Pass != tc.pass {
			t.Errorf("%s against %q: pass %v (%s), want %v", tc.file, tc.expected, r.Pass, r.Reason, tc.pass)
		}
	}
}
