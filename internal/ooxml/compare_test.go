package ooxml

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func rules(t *testing.T, js string) []TableRule {
	t.Helper()
	var rs []TableRule
	must(t, json.Unmarshal([]byte(js), &rs))
	for i := range rs {
		must(t, rs[i].Prepare(true))
	}
	return rs
}

// Each row mirrors OSWorld's compare_table with the rules shown and gives
// the verdict it gives.
func TestCompareTables(t *testing.T) {
	set := func(ref string, v any) func(*excelize.File) {
		return func(f *excelize.File) { must(t, f.SetCellValue("Sheet1", ref, v)) }
	}
	styled := func(ref string, s *excelize.Style) func(*excelize.File) {
		return func(f *excelize.File) {
			id, err := f.NewStyle(s)
			must(t, err)
			must(t, f.SetCellStyle("Sheet1", ref, ref, id))
		}
	}
	red := &excelize.Style{Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FF0000"}}}
	bold := &excelize.Style{Font: &excelize.Font{Bold: true}}
	twoPlaces := &excelize.Style{NumFmt: 2}
	const data = `[{"type":"sheet_data","sheet_idx0":0,"sheet_idx1":"EI0"}]`
	tests := []struct {
		name             string
		result, expected func(*excelize.File)
		rules            string
		pass             bool
		why              string
	}{
		{"sheet_data equal", nil, nil, data, true, ""},
		{"sheet_data one cell changed", set("B3", 7), nil, data, false, "cell B3 is 7.0, expected 2.0"},
		{"sheet_data within 4 places", set("C2", 1.500001), nil, data, true, ""},
		{"sheet_data precision 6", set("C2", 1.500001), nil, `[{"type":"sheet_data","sheet_idx0":0,"sheet_idx1":"EI0","precision":6}]`, false, "cell C2"},
		{"sheet_data text for a number", set("B2", "3"), nil, data, false, "cell B2"},
		{"sheet_data a row added", set("A5", "cap"), nil, data, false, "3 columns by 4 rows, expected 3 by 3"},
		{"sheet_data a formula never calculated", func(f *excelize.File) {
			must(t, f.SetCellValue("Sheet1", "B4", nil))
			must(t, f.SetCellFormula("Sheet1", "B4", "B2+B3"))
		}, nil, data, false, "cell B4 is None, expected 5.0"},
		{"sheet_data style ignored", styled("B2", bold), nil, data, true, ""},
		{"sheet_data by name", nil, nil, `[{"type":"sheet_data","sheet_idx0":"RNSheet1","sheet_idx1":"ENSheet1"}]`, true, ""},
		{"sheet_data no such sheet", nil, nil, `[{"type":"sheet_data","sheet_idx0":"RNTotals","sheet_idx1":"EI0"}]`, false, `no result sheet Totals`},
		{"sheet_name differs", func(f *excelize.File) { must(t, f.SetSheetName("Sheet1", "Data")) }, nil, `[{"type":"sheet_name"}]`, false, "sheets"},
		{"sheet_print number format", styled("C4", twoPlaces), nil, `[{"type":"sheet_print","sheet_idx0":0,"sheet_idx1":"EI0"}]`, false, "displayed rows differ"},
		{"sheet_print same format", styled("C4", twoPlaces), styled("C4", twoPlaces), `[{"type":"sheet_print","sheet_idx0":0,"sheet_idx1":"EI0"}]`, true, ""},
		{"check_cell value approx", nil, nil, `[{"type":"check_cell","sheet_idx":0,"coordinate":"C3","props":{"value":{"method":"approx:0.1","ref":4.3}}}]`, true, ""},
		{"check_cell value eq text", nil, nil, `[{"type":"check_cell","sheet_idx":0,"coordinate":"A2","props":{"value":{"method":"eq","ref":"pen"}}}]`, true, ""},
		{"check_cell bold", styled("B2", bold), nil, `[{"type":"check_cell","sheet_idx":0,"coordinate":"B2","props":{"font_bold":{"method":"eq","ref":true}}}]`, true, ""},
		{"check_cell not bold", nil, nil, `[{"type":"check_cell","sheet_idx":0,"coordinate":"B2","props":{"font_bold":{"method":"eq","ref":true}}}]`, false, "font_bold False"},
		{"check_cell bgcolor", styled("A3", red), nil, `[{"type":"check_cell","sheet_idx":0,"coordinate":"A3","props":{"bgcolor":{"method":"eq","ref":"FFFF0000"}}}]`, true, ""},
		{"check_cell merge", func(f *excelize.File) { must(t, f.MergeCell("Sheet1", "A2", "B2")) }, nil, `[{"type":"check_cell","sheet_idx":0,"coordinate":"B2","props":{"merge":{"method":"eq","ref":true}}}]`, true, ""},
		{"check_cell formula without value", func(f *excelize.File) { must(t, f.SetCellFormula("Sheet1", "D2", "B2*C2")) }, nil, `[{"type":"check_cell","sheet_idx":0,"coordinate":"D2","props":{"value":{"method":"approx:0.1","ref":4.5}}}]`, false, "value None"},
		{"style fill on an empty cell", nil, styled("E6", red), `[{"type":"style","sheet_idx0":0,"sheet_idx1":"EI0","props":["bgcolor"]}]`, false, "span"},
		{"style fill changed", styled("A3", red), nil, `[{"type":"style","sheet_idx0":0,"sheet_idx1":"EI0","props":["bgcolor"]}]`, false, `cell A3: bgcolor is "FFFF0000", expected "00000000"`},
		{"style same fill", styled("A3", red), styled("A3", red), `[{"type":"style","sheet_idx0":0,"sheet_idx1":"EI0","props":["bgcolor","font_bold"]}]`, true, ""},
		{"freeze missing", nil, func(f *excelize.File) {
			must(t, f.SetPanes("Sheet1", &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}))
		}, `[{"type":"freeze","sheet_idx0":0,"sheet_idx1":"EI0"}]`, false, "panes none, expected frozen 0 columns, 1 rows"},
		{"zoom below", nil, nil, `[{"type":"zoom","sheet_idx":0,"method":"lt","ref":260}]`, true, ""},
		{"row hidden", func(f *excelize.File) { must(t, f.SetRowVisible("Sheet1", 3, false)) }, nil, `[{"type":"row_props","sheet_idx0":0,"sheet_idx1":"EI0","props":["hidden"]}]`, false, "hidden rows [3]"},
		{"data validation list", func(f *excelize.File) {
			dv := excelize.NewDataValidation(true)
			dv.Sqref = "D2:D29"
			must(t, dv.SetDropList([]string{"Pass", "Fail", "Held"}))
			must(t, f.AddDataValidation("Sheet1", dv))
		}, nil, `[{"type":"data_validation","sheet_idx":0,"dv_props":[{"ranges":{"method":"spreadsheet_range","ref":["D2:D29","D1:D1048576"]},"type":{"method":"eq","ref":"list"},"formula1":{"method":"str_set_eq","ref":["Pass","Fail","Held"]}}]}]`, true, ""},
		{"data validation missing", nil, nil, `[{"type":"data_validation","sheet_idx":0,"dv_props":[{"type":{"method":"eq","ref":"list"}}]}]`, false, "0 data validations"},
		{"sheet_fuzzy exact with trims", set("A2", " Pen "), set("A2", "pen"), `[{"type":"sheet_fuzzy","sheet_idx0":0,"sheet_idx1":"EI0","rules":[{"range":["A2:A4"],"type":"exact_match","trim_leadings":" ","trim_trailings":" ","ignore_case":true}]}]`, true, ""},
		{"sheet_fuzzy fuzzy under threshold", set("A2", "penguin"), nil, `[{"type":"sheet_fuzzy","sheet_idx0":0,"sheet_idx1":"EI0","rules":[{"range":["A2"],"type":"fuzzy_match","threshold":85}]}]`, false, "fail fuzzy_match"},
		{"sheet_fuzzy includes", set("A2", "blue pen"), nil, `[{"type":"sheet_fuzzy","sheet_idx0":0,"sheet_idx1":"EI0","rules":[{"range":["A2:A4"],"type":"includes"}]}]`, true, ""},
		{"rules stop at the first failure", set("B3", 7), nil, `[{"type":"zoom","sheet_idx":0,"method":"eq","ref":100},{"type":"sheet_data","sheet_idx0":0,"sheet_idx1":"EI0"}]`, false, "rule 2 (sheet_data)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ReadWorkbook(book(t, tc.result))
			must(t, err)
			e, err := ReadWorkbook(book(t, tc.expected))
			must(t, err)
			ok, why := CompareTables(r, e, rules(t, tc.rules))
			if ok != tc.pass || !strings.Contains(why, tc.why) {
				t.Fatalf("CompareTables = %v, %q; want %v with %q", ok, why, tc.pass, tc.why)
			}
		})
	}
}

func TestTableRuleErrors(t *testing.T) {
	for js, want := range map[string]string{
		`{"type":"sparkline","sheet_idx0":0,"sheet_idx1":"EI0"}`:                                      "rule sparkline is not supported",
		`{"type":"sheet_data","sheet_idx0":"XX0","sheet_idx1":"EI0"}`:                                 "not a number, RI<n>",
		`{"type":"check_cell","sheet_idx":0,"coordinate":"B2","props":{"hyperlink":{"method":"eq"}}}`: `property "hyperlink" is not supported`,
		`{"type":"check_cell","sheet_idx":0,"coordinate":"B2","props":{"value":{"method":"near"}}}`:   `unknown method "near"`,
	} {
		var r TableRule
		must(t, json.Unmarshal([]byte(js), &r))
		if err := r.Prepare(true); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Prepare(%s) = %v, want %q", js, err, want)
		}
	}
}

// Each row mirrors OSWorld's compare_docx_files with the options shown.
func TestCompareDocuments(t *testing.T) {
	f := false
	base := []para{{"Dear ", "reader,"}, {"The plan is ready."}, {"Regards"}}
	tests := []struct {
		name   string
		result []para
		o      DocOptions
		score  float64
	}{
		{"equal", base, DocOptions{}, 1},
		{"a run made bold (text only is compared)", []para{{"*Dear ", "reader,"}, {"The plan is ready."}, {"Regards"}}, DocOptions{}, 1},
		{"a paragraph added", append(append([]para{}, base...), para{"PS"}), DocOptions{}, 0},
		{"a paragraph added, paragraph by paragraph", append(append([]para{}, base...), para{"PS"}), DocOptions{IgnoreBlanks: &f}, 0},
		{"extra spaces, blanks ignored", []para{{"Dear  ", " reader,"}, {"The plan is ready."}, {"Regards"}}, DocOptions{}, 1},
		{"extra spaces, blanks kept", []para{{"Dear  ", " reader,"}, {"The plan is ready."}, {"Regards"}}, DocOptions{IgnoreBlanks: &f}, 0},
		{"case ignored", []para{{"DEAR reader,"}, {"The plan is ready."}, {"Regards"}}, DocOptions{IgnoreCase: true}, 1},
		{"case kept", []para{{"DEAR reader,"}, {"The plan is ready."}, {"Regards"}}, DocOptions{}, 0},
		{"order ignored", []para{{"Regards"}, {"Dear reader,"}, {"The plan is ready."}}, DocOptions{IgnoreOrder: true}, 1},
		{"empty lines deleted", []para{{"Dear reader,"}, {""}, {"The plan is ready."}, {"Regards"}}, DocOptions{IgnoreBlanks: &f, DeleteEmptyLines: true}, 1},
		{"empty lines kept", []para{{"Dear reader,"}, {""}, {"The plan is ready."}, {"Regards"}}, DocOptions{IgnoreBlanks: &f}, 0},
		// "Dear reader, The plan is ready. Regards" (39) against the same
		// with "Regard" (38): 2*38/77.
		{"fuzzy", []para{{"Dear reader,"}, {"The plan is ready."}, {"Regard"}}, DocOptions{FuzzyMatch: true}, 76.0 / 77},
		{"content only", []para{{"Dear reader,"}, {"The plan is ready."}, {"Regard"}}, DocOptions{ContentOnly: true}, 76.0 / 77},
	}
	e, err := ReadDocument(docxOf(t, base...))
	must(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ReadDocument(docxOf(t, tc.result...))
			must(t, err)
			if got, why := CompareDocuments(r, e, tc.o); got < tc.score-1e-9 || got > tc.score+1e-9 {
				t.Fatalf("CompareDocuments = %v (%s), want %v", got, why, tc.score)
			}
		})
	}
}

// Each row mirrors OSWorld's compare_pptx_files with the options shown;
// the transition rows use examine_transition, which the peer lacks (its
// check_transition reads one slide's transition).
func TestComparePresentations(t *testing.T) {
	f, tr := false, true
	base := []slide{{boxes: []box{{x: 500000, y: 400000, text: "Quarterly review", align: "ctr"}, {x: 500000, y: 1500000, text: "Sales grew"}}, transition: "fade"}}
	edit := func(fn func(s *slide)) []slide {
		s := base[0]
		s.boxes = append([]box{}, s.boxes...)
		fn(&s)
		return []slide{s}
	}
	tests := []struct {
		name   string
		result []slide
		o      SlideOptions
		pass   bool
		why    string
	}{
		{"equal", base, SlideOptions{}, true, ""},
		{"a shape moved", edit(func(s *slide) { s.boxes[1].y = 2500000 }), SlideOptions{}, false, "shape 2 (Box 2): position or size"},
		{"a shape moved, shapes not examined", edit(func(s *slide) { s.boxes[1].y = 2500000 }), SlideOptions{ExamineShape: &f}, true, ""},
		{"a shape moved within tolerance", edit(func(s *slide) { s.boxes[1].y = 1500000 + 5000 }), SlideOptions{}, true, ""},
		// The peer compares the whole slide's bulleted paragraphs at the
		// first pair of runs, so a changed text fails there first.
		{"text changed", edit(func(s *slide) { s.boxes[1].text = "Sales fell" }), SlideOptions{}, false, "bullets differ"},
		{"text changed, bullets not examined", edit(func(s *slide) { s.boxes[1].text = "Sales fell" }), SlideOptions{ExamineBullets: &f}, false, `text "Sales fell", expected "Sales grew"`},
		{"a run made bold", edit(func(s *slide) { s.boxes[1].bold = true }), SlideOptions{}, false, "bold true, expected false"},
		{"a run made bold, bold not examined", edit(func(s *slide) { s.boxes[1].bold = true }), SlideOptions{ExamineFontBold: &f}, true, ""},
		{"alignment changed", edit(func(s *slide) { s.boxes[0].align = "" }), SlideOptions{}, false, "aligned l, expected ctr"},
		{"alignment changed, not examined", edit(func(s *slide) { s.boxes[0].align = "" }), SlideOptions{ExamineAlignment: &f}, true, ""},
		{"explicit left equals unset", edit(func(s *slide) { s.boxes[1].align = "l" }), SlideOptions{}, true, ""},
		{"a shape missing", edit(func(s *slide) { s.boxes = s.boxes[:1] }), SlideOptions{}, false, "1 shapes, expected 2"},
		{"a slide added", append(append([]slide{}, base...), base[0]), SlideOptions{}, false, "2 slides, expected 1"},
		{"transition missing (peer ignores it)", edit(func(s *slide) { s.transition = "" }), SlideOptions{}, true, ""},
		{"transition missing, examined", edit(func(s *slide) { s.transition = "" }), SlideOptions{ExamineTransition: &tr}, false, "transition none, expected fade"},
		{"transition changed, examined", edit(func(s *slide) { s.transition = "push" }), SlideOptions{ExamineTransition: &tr}, false, "transition push, expected fade"},
	}
	e, err := ReadPresentation(pptxOf(t, base...))
	must(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ReadPresentation(pptxOf(t, tc.result...))
			must(t, err)
			ok, why := ComparePresentations(r, e, tc.o)
			if ok != tc.pass || !strings.Contains(why, tc.why) {
				t.Fatalf("ComparePresentations = %v, %q; want %v with %q", ok, why, tc.pass, tc.why)
			}
		})
	}
}

func TestRatio(t *testing.T) {
	long := strings.Repeat("abcdefghij", 30)
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"", "", 1}, {"abc", "", 0}, {"abc", "abc", 1}, {"kitten", "sitting", 2 * 4.0 / 13},
		{long, long[1:], 2 * 299.0 / 599}, {long + "x", "x" + long, 2 * 300.0 / 602},
	} {
		if got := Ratio(tc.a, tc.b); got < tc.want-1e-12 || got > tc.want+1e-12 {
			t.Errorf("Ratio(%.10q, %.10q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestFixturesOpenInLibreOffice converts the docx and xlsx fixtures with
// LibreOffice, so that they are documents an office suite reads; a
// workbook with a formula LibreOffice calculated then compares equal by
// value with one that holds the value.
func TestFixturesOpenInLibreOffice(t *testing.T) {
	soffice, err := exec.LookPath("soffice")
	if err != nil {
		t.Skip("soffice is not installed")
	}
	if testing.Short() {
		t.Skip("converting with LibreOffice takes seconds")
	}
	dir := t.TempDir()
	files := map[string][]byte{
		"letter.docx": docxOf(t, para{"Dear ", "*reader"}, para{"Regards"}),
		"sum.xlsx":    book(t, func(f *excelize.File) { must(t, f.SetCellFormula("Sheet1", "B5", "SUM(B2:B4)")) }),
	}
	for name, b := range files {
		must(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	out := filepath.Join(dir, "out")
	for _, c := range [][]string{{"txt:Text", "letter.docx"}, {"xlsx", "sum.xlsx"}} {
		cmd := exec.Command(soffice, "-env:UserInstallation=file://"+filepath.Join(dir, "profile"), "--headless", "--convert-to", c[0], "--outdir", out, filepath.Join(dir, c[1]))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("soffice %s: %v\n%s", c[1], err, b)
		}
	}
	txt, err := os.ReadFile(filepath.Join(out, "letter.txt"))
	must(t, err)
	if got := strings.TrimSpace(strings.TrimPrefix(string(txt), "\ufeff")); got != "Dear reader\nRegards" {
		t.Errorf("LibreOffice reads the docx as %q", got)
	}
	calc, err := os.ReadFile(filepath.Join(out, "sum.xlsx"))
	must(t, err)
	r, err := ReadWorkbook(calc)
	must(t, err)
	e, err := ReadWorkbook(book(t, func(f *excelize.File) { must(t, f.SetCellValue("Sheet1", "B5", 10)) }))
	must(t, err)
	if c := r.Sheets[0].Cell("B5"); c.Formula != "SUM(B2:B4)" || c.Value != 10.0 {
		t.Errorf("B5 as LibreOffice saved it: %+v", c)
	}
	if ok, why := CompareTables(r, e, rules(t, `[{"type":"sheet_data","sheet_idx0":0,"sheet_idx1":"EI0"}]`)); !ok {
		t.Errorf("the calculated formula does not compare equal with the value: %s", why)
	}
}
