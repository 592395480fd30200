package ooxml

import (
	"testing"

	"github.com/xuri/excelize/v2"
)

func FuzzReadWorkbook(f *testing.F) {
	f.Add(book(f, nil))
	f.Add([]byte("PK\x03\x04"))
	// a chart and a pivot table, whose parts the sheet's relationships name
	f.Add(partsBook(f, func(x *excelize.File) {
		if err := x.AddChart("Sheet1", "E2", &excelize.Chart{Type: excelize.Col, Series: []excelize.ChartSeries{{Categories: "Sheet1!$A$2:$A$5", Values: "Sheet1!$C$2:$C$5"}}}); err != nil {
			f.Fatal(err)
		}
		if err := x.AddPivotTable(&excelize.PivotTableOptions{DataRange: "Sheet1!A1:C5", PivotTableRange: "Sheet2!A3:E12",
			Rows: []excelize.PivotTableField{{Data: "Region"}}, Data: []excelize.PivotTableField{{Data: "Sales"}}}); err != nil {
			f.Fatal(err)
		}
	}))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ReadWorkbook(b)
		if err != nil {
			return
		}
		for _, sh := range w.Sheets {
			// what the chart and pivot_table rules read of any sheet
			if _, err := chartSet(&sh, ChartProps); err != nil && sh.partsErr == nil {
				t.Fatalf("charts: %v", err)
			}
			_, _ = pivotSet(&sh, PivotProps)
			if len(sh.Cells) > maxCells || sh.Rows > MaxRows || sh.Cols > MaxCols {
				t.Fatalf("sheet %q kept %d cells in %dx%d", sh.Name, len(sh.Cells), sh.Rows, sh.Cols)
			}
		}
	})
}

func FuzzDocumentXML(f *testing.F) {
	f.Add([]byte(`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:pPr><w:jc w:val="center"/></w:pPr><w:r><w:rPr><w:b/></w:rPr><w:t>a</w:t><w:tab/></w:r><w:hyperlink><w:r><w:t>b</w:t></w:r></w:hyperlink></w:p><w:tbl><w:tr><w:tc><w:tcPr><w:gridSpan w:val="2"/></w:tcPr><w:p><w:r><w:t>c</w:t></w:r></w:p></w:tc></w:tr></w:tbl></w:body></w:document>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := documentXML(b, map[string]string{})
		if err != nil {
			return
		}
		for _, p := range d.Paragraphs {
			joined := ""
			for _, r := range p.Runs {
				joined += r.Text
			}
			if joined != p.Text {
				t.Fatalf("runs %q do not make the text %q", joined, p.Text)
			}
		}
	})
}

func FuzzReadDocument(f *testing.F) {
	f.Add(docxOf(f, para{"Dear ", "*reader"}, para{"Regards"}))
	f.Fuzz(func(t *testing.T, b []byte) { ReadDocument(b) })
}

func FuzzReadPresentation(f *testing.F) {
	f.Add(pptxOf(f, slide{boxes: []box{{x: 1, y: 2, text: "a", bold: true}}, transition: "fade"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadPresentation(b)
		if err != nil {
			return
		}
		for _, s := range p.Slides {
			for _, sh := range s.Shapes {
				if sh.HasText && sh.Text != joinText(sh.Paragraphs) {
					t.Fatalf("shape text %q is not its paragraphs'", sh.Text)
				}
			}
		}
	})
}
