package odf

import (
	"os"
	"reflect"
	"testing"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadSpreadsheet(t *testing.T) {
	s, err := ReadSpreadsheet(readFixture(t, "fruit.ods"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref, text, value, typ string
	}{
		{"A1", "Item", "Item", "string"},
		{"B2", "3", "3", "float"},
		{"C3", "0.75", "0.75", "float"},
		{"A4", "Kiwi, gold", "Kiwi, gold", "string"},
		{"fruit.C4", "1.25", "1.25", "float"},
		{"$B$4", "10", "10", "float"},
		{"D9", "", "", ""},
	}
	for _, tc := range tests {
		c, err := s.Lookup(tc.ref)
		if err != nil {
			t.Fatalf("%s: %v", tc.ref, err)
		}
		if c.Text != tc.text || c.ValueString() != tc.value || c.Type != tc.typ {
			t.Errorf("%s = %+v (value %q); want text %q value %q type %q", tc.ref, c, c.ValueString(), tc.text, tc.value, tc.typ)
		}
	}
	sh, _ := s.Sheet("")
	if sh.Rows != 4 || sh.Cols != 3 {
		t.Errorf("sheet is %dx%d, want 4x3", sh.Rows, sh.Cols)
	}
	want := [][]string{{"Item", "Qty", "Price"}, {"Apple", "3", "0.5"}, {"Pear", "4", "0.75"}, {"Kiwi, gold", "10", "1.25"}}
	if got := sh.Grid(); !reflect.DeepEqual(got, want) {
		t.Errorf("grid = %q, want %q", got, want)
	}
	if _, err := s.Lookup("Nope.A1"); err == nil {
		t.Error("a missing sheet was found")
	}
}

func TestFormulasSavedByCalc(t *testing.T) {
	s, err := ReadSpreadsheet(readFixture(t, "formulas.ods"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.Lookup("A3")
	if c.Formula != "of:=[.B2]*[.C2]" || c.ValueString() != "1.5" {
		t.Errorf("A3 = %+v, want the formula of:=[.B2]*[.C2] worth 1.5", c)
	}
	if c, _ := s.Lookup("A2"); c.Text != "Total" || c.Formula != "" {
		t.Errorf("A2 = %+v, want the text Total", c)
	}
}

func TestParseRef(t *testing.T) {
	tests := []struct {
		in, sheet, cell string
		bad             bool
	}{
		{"B7", "", "B7", false},
		{"b7", "", "B7", false},
		{"Totals.B7", "Totals", "B7", false},
		{"Totals!$B$7", "Totals", "B7", false},
		{"AA100", "", "AA100", false},
		{"7B", "", "", true},
		{"B", "", "", true},
		{"B0", "", "", true},
		{"ABCD1", "", "", true},
		{"", "", "", true},
	}
	for _, tc := range tests {
		sheet, cell, err := ParseRef(tc.in)
		if (err != nil) != tc.bad || sheet != tc.sheet || cell != tc.cell {
			t.Errorf("ParseRef(%q) = %q, %q, %v", tc.in, sheet, cell, err)
		}
	}
}

func TestCellName(t *testing.T) {
	for _, tc := range []struct {
		row, col int
		want     string
	}{{0, 0, "A1"}, {6, 1, "B7"}, {0, 25, "Z1"}, {0, 26, "AA1"}, {9, 701, "ZZ10"}, {0, 702, "AAA1"}} {
		if got := CellName(tc.row, tc.col); got != tc.want {
			t.Errorf("CellName(%d, %d) = %q, want %q", tc.row, tc.col, got, tc.want)
		}
	}
}

func TestReadText(t *testing.T) {
	d, err := ReadText(readFixture(t, "report.odt"))
	if err != nil {
		t.Fatal(err)
	}
	type para struct {
		text, style      string
		heading          int
		bold, ital, undl bool
		align            string
	}
	want := []para{
		{"Quarterly report", "Heading 1", 1, true, false, false, ""},
		{"Sales rose by 12 percent in the third quarter.", "Text body", 0, false, false, false, ""},
		{"Everything here is bold.", "Text body", 0, true, false, false, ""},
		{"Centred and underlined", "Text body", 0, false, false, true, "center"},
		{"Details", "Heading 2", 2, true, false, false, ""},
		{"Tabs and two spaces.", "Text body", 0, false, false, false, ""},
		{"cell one", "Table Contents", 0, false, false, false, ""},
		{"cell two", "Table Contents", 0, false, false, false, ""},
		{"", "Text body", 0, false, false, false, ""},
	}
	if len(d.Paragraphs) != len(want) {
		t.Fatalf("%d paragraphs, want %d: %+v", len(d.Paragraphs), len(want), d.Paragraphs)
	}
	for i, p := range d.Paragraphs {
		got := para{p.Text, p.Style, p.Heading, p.Bold, p.Italic, p.Underline, p.Align}
		if got != want[i] {
			t.Errorf("paragraph %d = %+v, want %+v", i, got, want[i])
		}
	}
	spans := d.Paragraphs[1].Spans
	if len(spans) != 5 || spans[1] != (Span{Text: "12 percent", Bold: true}) || spans[3] != (Span{Text: "third", Italic: true}) {
		t.Errorf("spans of paragraph 1 = %+v", spans)
	}
	if d.Text != "Quarterly report\nSales rose by 12 percent in the third quarter.\nEverything here is bold.\nCentred and underlined\nDetails\nTabs and two spaces.\ncell one\ncell two\n" {
		t.Errorf("text = %q", d.Text)
	}
}

func TestNotODF(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("hello"), readFixture(t, "report.odt")} {
		if _, err := ReadSpreadsheet(b); err == nil {
			t.Errorf("ReadSpreadsheet(%.10q) read a spreadsheet", b)
		}
	}
	for _, b := range [][]byte{[]byte("PK"), readFixture(t, "fruit.ods")} {
		if _, err := ReadText(b); err == nil {
			t.Errorf("ReadText(%.10q) read a text document", b)
		}
	}
}
