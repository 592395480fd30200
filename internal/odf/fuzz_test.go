package odf

import (
	"os"
	"testing"
)

func fixture(f *testing.F, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

func FuzzSpreadsheetXML(f *testing.F) {
	for _, name := range []string{"fruit.ods", "formulas.ods"} {
		b, err := part(fixture(f, name), "content.xml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"><office:body><office:spreadsheet><table:table table:name="S"><table:table-row table:number-rows-repeated="1048576"><table:table-cell office:value-type="float" office:value="1" table:number-columns-repeated="16384"/></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := spreadsheetXML(b)
		if err != nil {
			return
		}
		for _, sh := range s.Sheets {
			if len(sh.Cells) > maxCells || sh.Rows > MaxRows || sh.Cols > MaxCols {
				t.Fatalf("sheet %q kept %d cells in %dx%d", sh.Name, len(sh.Cells), sh.Rows, sh.Cols)
			}
			for ref := range sh.Cells {
				if _, _, err := ParseRef(ref); err != nil {
					t.Fatalf("cell name %q does not parse: %v", ref, err)
				}
			}
		}
	})
}

func FuzzTextXML(f *testing.F) {
	data := fixture(f, "report.odt")
	c, _ := part(data, "content.xml")
	s, _ := part(data, "styles.xml")
	f.Add(c, s)
	f.Add([]byte(`<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text><text:p>a<text:s text:c="5"/>b<text:span><text:span>c</text:span></text:span></text:p></office:text></office:body></office:document-content>`), []byte(nil))
	f.Fuzz(func(t *testing.T, content, styles []byte) {
		d, err := textXML(content, styles)
		if err != nil {
			return
		}
		for _, p := range d.Paragraphs {
			var joined string
			for _, s := range p.Spans {
				joined += s.Text
			}
			if joined != p.Text {
				t.Fatalf("spans %q do not make the text %q", joined, p.Text)
			}
		}
	})
}

func FuzzReadSpreadsheet(f *testing.F) {
	f.Add(fixture(f, "fruit.ods"))
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ReadSpreadsheet(b)
		ReadText(b)
	})
}
