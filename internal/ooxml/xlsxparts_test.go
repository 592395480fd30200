package ooxml

import (
	"testing"

	"github.com/xuri/excelize/v2"
)

// partsBook is a workbook of sales data with what change adds (a chart,
// a pivot table), written by excelize.
func partsBook(t testing.TB, change func(*excelize.File)) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	rows := [][]any{{"Region", "Type", "Sales"}, {"East", "Fruit", 3}, {"West", "Fruit", 5}, {"East", "Meat", 2}, {"West", "Meat", 7}}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.NewSheet("Sheet2"); err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(f)
	}
	b, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func chart(t *testing.T, typ excelize.ChartType, title, values string) func(*excelize.File) {
	return func(f *excelize.File) {
		c := &excelize.Chart{Type: typ, Series: []excelize.ChartSeries{{Name: "Sheet1!$C$1", Categories: "Sheet1!$A$2:$A$5", Values: values}}}
		if title != "" {
			c.Title = excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: title}}}
		}
		must(t, f.AddChart("Sheet1", "E2", c))
	}
}

func pivot(t *testing.T, rows, cols, data, filter []string, subtotal string) func(*excelize.File) {
	fields := func(names []string) []excelize.PivotTableField {
		var out []excelize.PivotTableField
		for _, n := range names {
			out = append(out, excelize.PivotTableField{Data: n, Subtotal: subtotal})
		}
		return out
	}
	return func(f *excelize.File) {
		must(t, f.AddPivotTable(&excelize.PivotTableOptions{
			DataRange: "Sheet1!A1:C5", PivotTableRange: "Sheet2!A3:E12",
			Rows: fields(rows), Columns: fields(cols), Data: fields(data), Filter: fields(filter),
			RowGrandTotals: true, ColGrandTotals: true,
		}))
	}
}

// Each row mirrors compare_table's chart and pivot_table rules (openpyxl's
// load_charts and load_pivot_tables compared) and gives the verdict
// OSWorld gives.
func TestChartAndPivotRules(t *testing.T) {
	const charts = `[{"type":"chart","sheet_idx0":0,"sheet_idx1":"EI0","chart_props":["type","title","direction"]}]`
	const pivots = `[{"type":"pivot_table","sheet_idx0":"RNSheet2","sheet_idx1":"ENSheet2","pivot_props":["col_fields","filter","row_fields","data_fields"]}]`
	col := chart(t, excelize.Col, "Sales", "Sheet1!$C$2:$C$5")
	byRegion := pivot(t, []string{"Region"}, []string{"Type"}, []string{"Sales"}, nil, "Sum")
	tests := []struct {
		name             string
		result, expected func(*excelize.File)
		rules            string
		pass             bool
	}{
		{"chart equal", col, col, charts, true},
		{"chart another type", chart(t, excelize.Line, "Sales", "Sheet1!$C$2:$C$5"), col, charts, false},
		{"chart bars, not columns", chart(t, excelize.Bar, "Sales", "Sheet1!$C$2:$C$5"), col, charts, false},
		{"chart another title", chart(t, excelize.Col, "Sale", "Sheet1!$C$2:$C$5"), col, charts, false},
		{"chart without a title", chart(t, excelize.Col, "", "Sheet1!$C$2:$C$5"), col, charts, false},
		{"chart another title, the type alone compared", chart(t, excelize.Col, "Sale", "Sheet1!$C$2:$C$5"), col,
			`[{"type":"chart","sheet_idx0":0,"sheet_idx1":"EI0","chart_props":["type"]}]`, true},
		{"chart of other data", chart(t, excelize.Col, "Sales", "Sheet1!$C$2:$C$4"), col, charts, false},
		{"no chart", nil, col, charts, false},
		{"no chart in either", nil, nil, charts, true},
		{"pivot equal", byRegion, byRegion, pivots, true},
		{"pivot rows and columns swapped", pivot(t, []string{"Type"}, []string{"Region"}, []string{"Sales"}, nil, "Sum"), byRegion, pivots, false},
		{"pivot counting, not summing", pivot(t, []string{"Region"}, []string{"Type"}, []string{"Sales"}, nil, "Count"), byRegion, pivots, false},
		{"pivot with a filter", pivot(t, []string{"Region"}, nil, []string{"Sales"}, []string{"Type"}, "Sum"), pivot(t, []string{"Region"}, nil, []string{"Sales"}, nil, "Sum"), pivots, false},
		{"pivot the same filter", pivot(t, []string{"Region"}, nil, []string{"Sales"}, []string{"Type"}, "Sum"), pivot(t, []string{"Region"}, nil, []string{"Sales"}, []string{"Type"}, "Sum"), pivots, true},
		{"no pivot table", nil, byRegion, pivots, false},
	}
	for _, tc := range tests {
		r, err := ReadWorkbook(partsBook(t, tc.result))
		must(t, err)
		e, err := ReadWorkbook(partsBook(t, tc.expected))
		must(t, err)
		ok, why := CompareTables(r, e, rules(t, tc.rules))
		if ok != tc.pass {
			t.Errorf("%s: %v (%s), want %v", tc.name, ok, why, tc.pass)
		}
	}
}

// The parts read: the chart's type, series, title and direction, and the
// pivot table's fields by index.
func TestReadChartAndPivot(t *testing.T) {
	w, err := ReadWorkbook(partsBook(t, func(f *excelize.File) {
		chart(t, excelize.Bar, "Sales", "Sheet1!$C$2:$C$5")(f)
		pivot(t, []string{"Region"}, []string{"Type"}, []string{"Sales"}, nil, "Sum")(f)
	}))
	must(t, err)
	cs := w.Sheets[0].charts
	if len(cs) != 1 || cs[0].Type != "barChart" || cs[0].Title == nil || *cs[0].Title != "Sales" || cs[0].Direction == nil || *cs[0].Direction != "bar" ||
		len(cs[0].Series) != 1 || cs[0].Series[0] != "Sheet1!$C$2:$C$5,Sheet1!$A$2:$A$5" {
		t.Errorf("charts: %+v", cs)
	}
	ps := w.Sheets[1].pivots
	if len(ps) != 1 || len(ps[0].RowFields) != 1 || ps[0].RowFields[0] != 0 || ps[0].ColFields[0] != 1 || ps[0].DataFields[0].Field != 2 ||
		ps[0].DataFields[0].Subtotal != "sum" || ps[0].SourceRef != "A1:C5" || ps[0].SourceSheet != "Sheet1" {
		t.Errorf("pivots: %+v", ps)
	}
	set, err := pivotSet(&w.Sheets[1], []string{"col_fields", "row_fields", "data_fields"})
	if err != nil || len(set) != 1 {
		t.Fatalf("pivot set %v, %v", set, err)
	}
	for k, v := range set {
		if v != `{"col_fields":[1],"data_fields":["2;;sum;normal"],"row_fields":[0]}` {
			t.Errorf("pivot %s: %s", k, v)
		}
	}
}
