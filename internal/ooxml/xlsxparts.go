package ooxml

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A sheet's charts and pivot tables are read from the parts its
// relationships name (a drawing's charts, pivot table definitions and
// their caches), as openpyxl reads them for OSWorld's compare_table:
// excelize writes charts and pivot tables but reads back neither the
// charts nor the pivot tables' field indices and item selections that
// the comparison needs.

// Chart is what compare_table's chart rule reads of a chart: the first
// chart of its plot area (openpyxl's chart), its series' data and
// category references, title, bar direction and legend.
type Chart struct {
	Type   string   // the chart element: barChart, lineChart, pieChart, ...
	Series []string // each series' value and category references, "val,cat"
	// Title is the first run's text of the title's first paragraph; nil
	// when there is none (an automatic title, or none).
	Title     *string
	Direction *string // barDir: bar or col; nil for other charts
	Legend    *string // the legend's position (r unless written); nil without a legend
}

// Pivot is what compare_table's pivot_table rule reads of a pivot table.
type Pivot struct {
	Name                                       string
	ShowTotal, ShowEmptyRow, ShowEmptyCol, Hdr bool
	Location                                   map[string]string // the location element's attributes
	// Items are each pivot field's items with an index, as (hidden,
	// index): hidden is "true", "false" or "" when not written.
	Items      [][][2]string
	PageFields []int
	ColFields  []int
	RowFields  []int
	DataFields []PivotDataField
	// The cache's source: its type, the sheet and the range's corners.
	SourceType, SourceSheet, SourceRef string
}

// PivotDataField is one data field of a pivot table.
type PivotDataField struct {
	Field      int
	Name       string
	Subtotal   string // sum unless written
	ShowDataAs string // normal unless written
}

// sheetParts reads the charts and pivot tables of the sheet part name.
func sheetParts(p *pkg, name string) ([]Chart, []Pivot, error) {
	rels, err := p.rels(name)
	if err != nil {
		return nil, nil, err
	}
	var charts []Chart
	var pivots []Pivot
	for _, id := range sortedIDs(rels) {
		r := rels[id]
		if r.External == "External" {
			continue
		}
		switch {
		case strings.HasSuffix(r.Type, "/drawing"):
			cs, err := drawingCharts(p, r.Target)
			if err != nil {
				return nil, nil, err
			}
			charts = append(charts, cs...)
		case strings.HasSuffix(r.Type, "/pivotTable"):
			pv, err := readPivot(p, r.Target)
			if err != nil {
				return nil, nil, err
			}
			pivots = append(pivots, pv)
		}
	}
	return charts, pivots, nil
}

// drawingCharts reads the charts a drawing's frames show, in the order
// they are drawn.
func drawingCharts(p *pkg, name string) ([]Chart, error) {
	b, err := p.read(name)
	if err != nil || b == nil {
		return nil, err
	}
	rels, err := p.rels(name)
	if err != nil {
		return nil, err
	}
	var out []Chart
	d := newDecoder(b)
	for {
		tok, err := d.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "chart" {
			continue
		}
		for _, a := range se.Attr {
			if a.Name.Local != "id" || !strings.Contains(a.Name.Space, "relationships") {
				continue
			}
			r, ok := rels[a.Value]
			if !ok || r.External == "External" {
				continue
			}
			cb, err := p.read(r.Target)
			if err != nil {
				return nil, err
			}
			if cb == nil {
				continue
			}
			c, err := readChart(cb)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.Target, err)
			}
			if c != nil {
				out = append(out, *c)
			}
		}
	}
}

// The chart part's elements that compare_table reads.
type (
	xmlVal struct {
		Val *string `xml:"val,attr"`
	}
	xmlRef struct {
		F *string `xml:"f"`
	}
	xmlData struct {
		NumRef *xmlRef `xml:"numRef"`
		StrRef *xmlRef `xml:"strRef"`
	}
	xmlText struct {
		Rich *struct {
			P []struct {
				R []struct {
					T string `xml:"t"`
				} `xml:"r"`
			} `xml:"p"`
		} `xml:"rich"`
	}
	xmlChart struct {
		XMLName xml.Name
		BarDir  *xmlVal `xml:"barDir"`
		Ser     []struct {
			Cat *xmlData `xml:"cat"`
			Val *xmlData `xml:"val"`
		} `xml:"ser"`
	}
	xmlChartSpace struct {
		Chart struct {
			Title *struct {
				Tx *xmlText `xml:"tx"`
			} `xml:"title"`
			PlotArea struct {
				Any []xmlChart `xml:",any"`
			} `xml:"plotArea"`
			Legend *struct {
				Pos *xmlVal `xml:"legendPos"`
			} `xml:"legend"`
		} `xml:"chart"`
	}
)

// ref is a series' data reference: its number reference's formula, else
// its text reference's, else "".
func (d *xmlData) ref() string {
	switch {
	case d == nil:
		return ""
	case d.NumRef != nil && d.NumRef.F != nil:
		return *d.NumRef.F
	case d.StrRef != nil && d.StrRef.F != nil:
		return *d.StrRef.F
	}
	return ""
}

// readChart reads a chart part; nil when its plot area has no chart.
func readChart(b []byte) (*Chart, error) {
	var cs xmlChartSpace
	if err := decodeXML(b, &cs); err != nil {
		return nil, err
	}
	var first *xmlChart
	for i, c := range cs.Chart.PlotArea.Any {
		if strings.HasSuffix(c.XMLName.Local, "Chart") {
			first = &cs.Chart.PlotArea.Any[i]
			break
		}
	}
	if first == nil {
		return nil, nil
	}
	c := &Chart{Type: first.XMLName.Local}
	for _, s := range first.Ser {
		c.Series = append(c.Series, s.Val.ref()+","+s.Cat.ref())
	}
	if t := cs.Chart.Title; t != nil && t.Tx != nil && t.Tx.Rich != nil && len(t.Tx.Rich.P) > 0 && len(t.Tx.Rich.P[0].R) > 0 {
		s := t.Tx.Rich.P[0].R[0].T
		c.Title = &s
	}
	if first.BarDir != nil {
		dir := "col"
		if first.BarDir.Val != nil {
			dir = *first.BarDir.Val
		}
		c.Direction = &dir
	}
	if l := cs.Chart.Legend; l != nil {
		pos := "r"
		if l.Pos != nil && l.Pos.Val != nil {
			pos = *l.Pos.Val
		}
		c.Legend = &pos
	}
	return c, nil
}

// The pivot table definition's elements that compare_table reads.
type (
	xmlField struct {
		X int `xml:"x,attr"`
	}
	xmlPivotTable struct {
		Name         string  `xml:"name,attr"`
		VisualTotals *string `xml:"visualTotals,attr"`
		ShowEmptyRow *string `xml:"showEmptyRow,attr"`
		ShowEmptyCol *string `xml:"showEmptyCol,attr"`
		ShowHeaders  *string `xml:"showHeaders,attr"`
		Location     *struct {
			Attrs []xml.Attr `xml:",any,attr"`
		} `xml:"location"`
		PivotFields []struct {
			Items []struct {
				X *int    `xml:"x,attr"`
				H *string `xml:"h,attr"`
			} `xml:"items>item"`
		} `xml:"pivotFields>pivotField"`
		RowFields  []xmlField `xml:"rowFields>field"`
		ColFields  []xmlField `xml:"colFields>field"`
		PageFields []struct {
			Fld int `xml:"fld,attr"`
		} `xml:"pageFields>pageField"`
		DataFields []struct {
			Fld        int     `xml:"fld,attr"`
			Name       string  `xml:"name,attr"`
			Subtotal   *string `xml:"subtotal,attr"`
			ShowDataAs *string `xml:"showDataAs,attr"`
		} `xml:"dataFields>dataField"`
	}
	xmlPivotCache struct {
		Source struct {
			Type      string `xml:"type,attr"`
			Worksheet *struct {
				Ref   string `xml:"ref,attr"`
				Sheet string `xml:"sheet,attr"`
			} `xml:"worksheetSource"`
		} `xml:"cacheSource"`
	}
)

// xmlBool reads an optional xsd:boolean attribute.
func xmlBool(s *string, def bool) bool {
	if s == nil {
		return def
	}
	return *s == "1" || *s == "true"
}

// readPivot reads a pivot table definition and its cache's source.
func readPivot(p *pkg, name string) (Pivot, error) {
	b, err := p.read(name)
	if err != nil || b == nil {
		return Pivot{}, err
	}
	var pt xmlPivotTable
	if err := decodeXML(b, &pt); err != nil {
		return Pivot{}, fmt.Errorf("%s: %w", name, err)
	}
	pv := Pivot{Name: pt.Name, ShowTotal: xmlBool(pt.VisualTotals, true), ShowEmptyRow: xmlBool(pt.ShowEmptyRow, false),
		ShowEmptyCol: xmlBool(pt.ShowEmptyCol, false), Hdr: xmlBool(pt.ShowHeaders, true)}
	if pt.Location != nil {
		pv.Location = map[string]string{}
		for _, a := range pt.Location.Attrs {
			pv.Location[a.Name.Local] = a.Value
		}
	}
	for _, f := range pt.PivotFields {
		var items [][2]string
		for _, it := range f.Items {
			if it.X == nil {
				continue
			}
			h := ""
			if it.H != nil {
				h = strconv.FormatBool(xmlBool(it.H, false))
			}
			items = append(items, [2]string{h, strconv.Itoa(*it.X)})
		}
		pv.Items = append(pv.Items, items)
	}
	for _, f := range pt.PageFields {
		pv.PageFields = append(pv.PageFields, f.Fld)
	}
	for _, f := range pt.ColFields {
		pv.ColFields = append(pv.ColFields, f.X)
	}
	for _, f := range pt.RowFields {
		pv.RowFields = append(pv.RowFields, f.X)
	}
	for _, f := range pt.DataFields {
		df := PivotDataField{Field: f.Fld, Name: f.Name, Subtotal: "sum", ShowDataAs: "normal"}
		if f.Subtotal != nil {
			df.Subtotal = *f.Subtotal
		}
		if f.ShowDataAs != nil {
			df.ShowDataAs = *f.ShowDataAs
		}
		pv.DataFields = append(pv.DataFields, df)
	}
	rels, err := p.rels(name)
	if err != nil {
		return Pivot{}, err
	}
	for _, id := range sortedIDs(rels) {
		r := rels[id]
		if !strings.HasSuffix(r.Type, "/pivotCacheDefinition") || r.External == "External" {
			continue
		}
		cb, err := p.read(r.Target)
		if err != nil {
			return Pivot{}, err
		}
		var pc xmlPivotCache
		if err := decodeXML(cb, &pc); err != nil {
			return Pivot{}, fmt.Errorf("%s: %w", r.Target, err)
		}
		pv.SourceType = pc.Source.Type
		if ws := pc.Source.Worksheet; ws != nil {
			pv.SourceSheet, pv.SourceRef = ws.Sheet, ws.Ref
		}
		break
	}
	return pv, nil
}

// ChartProps and PivotProps are the properties the chart and pivot_table
// rules compare.
var (
	ChartProps = []string{"type", "title", "direction", "legend"}
	PivotProps = []string{"name", "show_total", "show_empty_row", "show_empty_col", "show_headers", "location",
		"selection", "ordered", "filter", "col_fields", "row_fields", "data_fields", "data_fields_name"}
)

// chartSet is load_charts: each chart's asked properties by its series
// (a later chart with the same series replaces an earlier one).
func chartSet(s *Sheet, props []string) (map[string]string, error) {
	if s.partsErr != nil {
		return nil, s.partsErr
	}
	out := map[string]string{}
	for _, c := range s.charts {
		info := map[string]any{}
		for _, p := range props {
			switch p {
			case "type":
				info[p] = c.Type
			case "title":
				info[p] = c.Title
			case "direction":
				info[p] = c.Direction
			case "legend":
				info[p] = c.Legend
			}
		}
		out[strings.Join(c.Series, ";")] = canon(info)
	}
	return out, nil
}

// pivotSet is load_pivot_tables: each pivot table's asked properties by
// its source, the source's columns narrowed to the fields that have
// items.
func pivotSet(s *Sheet, props []string) (map[string]string, error) {
	if s.partsErr != nil {
		return nil, s.partsErr
	}
	has := func(p string) bool { return slices.Contains(props, p) }
	out := map[string]string{}
	for _, pv := range s.pivots {
		left := 0
		for left < len(pv.Items) && len(pv.Items[left]) == 0 {
			left++
		}
		right := len(pv.Items)
		for right > left && len(pv.Items[right-1]) == 0 {
			right--
		}
		sel := pv.Items[left:right]
		rightBias := len(pv.Items) - right
		if left == len(pv.Items) {
			rightBias = 0
		}
		from, to, ok := strings.Cut(pv.SourceRef, ":")
		if !ok {
			return nil, fmt.Errorf("pivot table %q: its source %q is not a range", pv.Name, pv.SourceRef)
		}
		r1, c1, err1 := splitRef(strings.ToUpper(strings.ReplaceAll(from, "$", "")))
		r2, c2, err2 := splitRef(strings.ToUpper(strings.ReplaceAll(to, "$", "")))
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("pivot table %q: its source %q is not a range", pv.Name, pv.SourceRef)
		}
		source := fmt.Sprintf("%s;(%d, %d):(%d, %d);%s", pv.SourceType, r1+1, c1+1+left, r2+1, c2+1-rightBias, pv.SourceSheet)
		info := map[string]any{}
		if has("name") {
			info["name"] = pv.Name
		}
		if has("show_total") {
			info["show_total"] = pv.ShowTotal
		}
		if has("show_empty_row") {
			info["show_empty_row"] = pv.ShowEmptyRow
		}
		if has("show_empty_col") {
			info["show_empty_col"] = pv.ShowEmptyCol
		}
		if has("show_headers") {
			info["show_headers"] = pv.Hdr
		}
		if has("location") {
			info["location"] = pv.Location
		}
		if has("filter") || has("selection") {
			var rows [][][2]string
			for _, items := range sel {
				r := slices.Clone(items)
				if !has("ordered") {
					// a set: its members once, in any order
					sort.Slice(r, func(i, j int) bool { return r[i][0]+"\x00"+r[i][1] < r[j][0]+"\x00"+r[j][1] })
					r = slices.Compact(r)
				}
				rows = append(rows, r)
			}
			info["selection"] = rows
		}
		if has("filter") {
			f := slices.Clone(pv.PageFields)
			slices.Sort(f)
			info["filter_fields"] = slices.Compact(f)
		}
		shift := func(xs []int) []int {
			out := make([]int, len(xs))
			for i, x := range xs {
				out[i] = x - left
			}
			return out
		}
		if has("col_fields") {
			info["col_fields"] = shift(pv.ColFields)
		}
		if has("row_fields") {
			info["row_fields"] = shift(pv.RowFields)
		}
		if has("data_fields") {
			var dfs []string
			for _, f := range pv.DataFields {
				name := ""
				if has("data_fields_name") {
					name = f.Name
				}
				dfs = append(dfs, fmt.Sprintf("%d;%s;%s;%s", f.Field-left, name, f.Subtotal, f.ShowDataAs))
			}
			info["data_fields"] = dfs
		}
		out[source] = canon(info)
	}
	return out, nil
}

// canon is a property map as one comparable text.
func canon(m map[string]any) string {
	b, _ := json.Marshal(m) // maps' keys sorted
	return string(b)
}

// sameSets compares two load_charts or load_pivot_tables results.
func sameSets(a, b map[string]string) (bool, string) {
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			return false, fmt.Sprintf("%q is in the first sheet only", k)
		}
		if va != vb {
			return false, fmt.Sprintf("%q: %s, expected %s", k, va, vb)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			return false, fmt.Sprintf("%q is in the second sheet only", k)
		}
	}
	return true, ""
}
