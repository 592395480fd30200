package ooxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// Limits on a workbook.
const (
	MaxRows  = 1 << 20
	MaxCols  = 1 << 14
	maxCells = 1 << 20
)

// Cell is one cell of a workbook with content (a value or a formula).
type Cell struct {
	// Type is number, string, bool, error or date (an ISO date written as
	// such; a date is usually a number with a date format).
	Type    string `json:"type"`
	Value   any    `json:"value"`             // float64 for numbers, bool, else the text; nil for a formula without a cached value
	Text    string `json:"text"`              // what the cell displays, its number format applied
	Formula string `json:"formula,omitempty"` // without the leading =, e.g. SUM(B2:B6)
	Style
}

// Style is the formatting of a cell that the comparisons read.
type Style struct {
	NumberFormat string  `json:"number_format,omitempty"` // General, 0.00, ...
	Font         string  `json:"font,omitempty"`
	Size         float64 `json:"size,omitempty"` // points
	Bold         bool    `json:"bold,omitempty"`
	Italic       bool    `json:"italic,omitempty"`
	Underline    string  `json:"underline,omitempty"` // single, double, ...
	Strike       bool    `json:"strike,omitempty"`
	Color        string  `json:"color,omitempty"`      // the font's aRGB (FFFF0000), theme:N or indexed:N
	Fill         string  `json:"fill,omitempty"`       // the pattern (solid, ...) or gradient
	FillColor    string  `json:"fill_color,omitempty"` // the fill's foreground aRGB, theme:N or indexed:N
}

// Pane is a sheet's split or frozen panes.
type Pane struct {
	State       string `json:"state"` // frozen, frozenSplit, split
	Cols        int    `json:"cols"`  // columns left of the split (xSplit)
	Rows        int    `json:"rows"`  // rows above it (ySplit)
	TopLeftCell string `json:"top_left_cell,omitempty"`
}

// Validation is a data validation of a sheet.
type Validation struct {
	Ranges           string `json:"ranges"` // A2:A9 C2:C9
	Type             string `json:"type"`   // list, whole, decimal, ...
	Operator         string `json:"operator,omitempty"`
	Formula1         string `json:"formula1,omitempty"`
	Formula2         string `json:"formula2,omitempty"`
	AllowBlank       bool   `json:"allow_blank"`
	ShowDropDown     bool   `json:"show_drop_down"` // as written: true hides the in-cell list
	ShowInputMessage bool   `json:"show_input_message"`
	ShowErrorMessage bool   `json:"show_error_message"`
	Error            string `json:"error,omitempty"`
	ErrorTitle       string `json:"error_title,omitempty"`
	ErrorStyle       string `json:"error_style,omitempty"`
	Prompt           string `json:"prompt,omitempty"`
	PromptTitle      string `json:"prompt_title,omitempty"`
}

// CondFormat is a conditional formatting rule and the ranges it covers.
type CondFormat struct {
	Ranges   string   `json:"ranges"`
	Type     string   `json:"type"` // cellIs, expression, ...
	Operator string   `json:"operator,omitempty"`
	Formulas []string `json:"formulas,omitempty"`
	Style    *Style   `json:"style,omitempty"` // the differential style it applies
}

// Sheet is one sheet of a workbook.
type Sheet struct {
	Name        string          `json:"name"`
	Cells       map[string]Cell `json:"cells"`
	Rows        int             `json:"rows"` // rows up to the last with content
	Cols        int             `json:"cols"` // columns up to the last with content
	Merged      []string        `json:"merged,omitempty"`
	Pane        *Pane           `json:"pane,omitempty"`
	Zoom        float64         `json:"zoom"` // percent
	HiddenRows  []int           `json:"hidden_rows,omitempty"`
	Validations []Validation    `json:"validations,omitempty"`
	CondFormats []CondFormat    `json:"conditional_formats,omitempty"`

	// styled is the style of every cell written in the sheet, content or
	// not, and boxRows and boxCols the rows and columns they and the merged
	// ranges span from A1.
	styled           map[string]Style
	boxRows, boxCols int
	hidden           map[int]bool
	base             Style // the style of a cell not written: the first format
	// sharedRefs are the cells of shared formulas written once for all.
	sharedRefs []string
	// charts and pivots are the sheet's charts and pivot tables, and
	// partsErr why they could not be read.
	charts   []Chart
	pivots   []Pivot
	partsErr error
}

// Cell returns the cell at ref ("B7"); an empty cell reads as the zero Cell.
func (s *Sheet) Cell(ref string) Cell { return s.Cells[strings.ToUpper(ref)] }

// Workbook is the sheets of an xlsx file, in order.
type Workbook struct {
	Sheets []Sheet `json:"sheets"`
}

// Sheet returns the sheet named name, or the first sheet for "".
func (w *Workbook) Sheet(name string) (*Sheet, bool) {
	if name == "" && len(w.Sheets) > 0 {
		return &w.Sheets[0], true
	}
	for i := range w.Sheets {
		if w.Sheets[i].Name == name {
			return &w.Sheets[i], true
		}
	}
	return nil, false
}

// Lookup returns the cell at a reference such as "B7" (first sheet) or
// "Totals!B7".
func (w *Workbook) Lookup(ref string) (Cell, error) {
	name, cell, err := ParseRef(ref)
	if err != nil {
		return Cell{}, err
	}
	sh, ok := w.Sheet(name)
	if !ok {
		return Cell{}, fmt.Errorf("no sheet named %q", name)
	}
	return sh.Cell(cell), nil
}

// ValueString is the cell's value as text: a number in its shortest form,
// else what the cell shows.
func (c Cell) ValueString() string {
	switch v := c.Value.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return c.Text
}

// ParseRef splits "B7", "Totals!B7" or "Totals.B7" into sheet and cell.
func ParseRef(ref string) (sheet, cell string, err error) {
	ref = strings.TrimSpace(ref)
	if i := strings.LastIndexAny(ref, ".!"); i >= 0 {
		sheet, ref = strings.Trim(ref[:i], "'"), ref[i+1:]
	}
	ref = strings.ToUpper(strings.ReplaceAll(ref, "$", ""))
	if _, _, err := splitRef(ref); err != nil {
		return "", "", err
	}
	return sheet, ref, nil
}

// splitRef returns a cell name's zero-based row and column.
func splitRef(ref string) (row, col int, err error) {
	i := 0
	for i < len(ref) && ref[i] >= 'A' && ref[i] <= 'Z' {
		col = col*26 + int(ref[i]-'A'+1)
		i++
	}
	n, err := strconv.Atoi(ref[i:])
	if i == 0 || i > 3 || err != nil || n < 1 || n > MaxRows || col > MaxCols || ref[i] == '+' {
		return 0, 0, fmt.Errorf("%q is not a cell reference such as B7 or Sheet1!B7", ref)
	}
	return n - 1, col - 1, nil
}

// CellName names the cell at zero-based row and column: (6, 1) is B7.
func CellName(row, col int) string {
	var letters []byte
	for c := col + 1; c > 0; c = (c - 1) / 26 {
		letters = append([]byte{byte('A' + (c-1)%26)}, letters...)
	}
	return string(letters) + strconv.Itoa(row+1)
}

// ReadWorkbook reads an xlsx file.
func ReadWorkbook(data []byte) (*Workbook, error) {
	p, err := openPackage(data)
	if err != nil {
		return nil, err
	}
	main, err := mainPart(p, "xl/workbook.xml")
	if err != nil {
		return nil, err
	}
	b, err := p.read(main)
	if err != nil {
		return nil, err
	}
	var wb struct {
		XMLName xml.Name
		Sheets  []struct {
			Name  string     `xml:"name,attr"`
			Attrs []xml.Attr `xml:",any,attr"`
		} `xml:"sheets>sheet"`
	}
	if err := decodeXML(b, &wb); err != nil {
		return nil, fmt.Errorf("%s: %w", main, err)
	}
	if wb.XMLName.Local != "workbook" || len(wb.Sheets) == 0 {
		return nil, fmt.Errorf("%w: %s has no sheets", ErrNotOOXML, main)
	}
	rels, err := p.rels(main)
	if err != nil {
		return nil, err
	}
	st := &styleTable{}
	var shared []string
	for _, id := range sortedIDs(rels) {
		r := rels[id]
		switch {
		case strings.HasSuffix(r.Type, "/styles"):
			if st, err = readStyles(p, r.Target); err != nil {
				return nil, err
			}
		case strings.HasSuffix(r.Type, "/sharedStrings"):
			if shared, err = readShared(p, r.Target); err != nil {
				return nil, err
			}
		}
	}
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{
		UnzipSizeLimit: MaxUnzipped, UnzipXMLSizeLimit: MaxUnzipped,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotOOXML, err)
	}
	defer f.Close()
	out := &Workbook{}
	kept := 0
	for _, s := range wb.Sheets {
		var rid string
		for _, a := range s.Attrs {
			if a.Name.Local == "id" && strings.Contains(a.Name.Space, "relationships") {
				rid = a.Value
			}
		}
		r, ok := rels[rid]
		if !ok {
			return nil, fmt.Errorf("%s: sheet %q has no part", main, s.Name)
		}
		sb, err := p.read(r.Target)
		if err != nil {
			return nil, err
		}
		sh, err := readSheet(sb, s.Name, shared, st, &kept)
		if err != nil {
			return nil, fmt.Errorf("%s (sheet %q): %w", r.Target, s.Name, err)
		}
		sh.charts, sh.pivots, sh.partsErr = sheetParts(p, r.Target)
		for ref, c := range sh.Cells {
			if v, err := f.GetCellValue(s.Name, ref); err == nil {
				c.Text = v
			}
			sh.Cells[ref] = c
		}
		for _, ref := range sh.sharedRefs {
			c := sh.Cells[ref]
			c.Formula, _ = f.GetCellFormula(s.Name, ref)
			c.Formula = strings.TrimPrefix(c.Formula, "=")
			sh.Cells[ref] = c
		}
		if dvs, err := f.GetDataValidations(s.Name); err == nil {
			for _, dv := range dvs {
				sh.Validations = append(sh.Validations, Validation{
					Ranges: dv.Sqref, Type: dv.Type, Operator: dv.Operator,
					Formula1: dv.Formula1, Formula2: dv.Formula2, AllowBlank: dv.AllowBlank,
					ShowDropDown: dv.ShowDropDown, ShowInputMessage: dv.ShowInputMessage,
					ShowErrorMessage: dv.ShowErrorMessage, Error: deref(dv.Error),
					ErrorTitle: deref(dv.ErrorTitle), ErrorStyle: deref(dv.ErrorStyle),
					Prompt: deref(dv.Prompt), PromptTitle: deref(dv.PromptTitle),
				})
			}
		}
		out.Sheets = append(out.Sheets, *sh)
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// readShared reads the shared strings: each item's text, rich runs joined,
// phonetic runs left out.
func readShared(p *pkg, name string) ([]string, error) {
	b, err := p.read(name)
	if err != nil || b == nil {
		return nil, err
	}
	d := newDecoder(b)
	var out []string
	var cur strings.Builder
	inT, inPh := false, false
	for {
		tok, err := d.next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				cur.Reset()
			case "t":
				inT = true
			case "rPh":
				inPh = true
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "si":
				if len(out) >= maxCells {
					return nil, fmt.Errorf("%s: more than %d strings", name, maxCells)
				}
				out = append(out, cur.String())
			case "t":
				inT = false
			case "rPh":
				inPh = false
			}
		case xml.CharData:
			if inT && !inPh && cur.Len() < 1<<20 {
				cur.Write(t)
			}
		}
	}
}

// readSheet reads a worksheet part: its cells with their cached values and
// formulas, styles, merged ranges, panes, zoom, hidden rows and
// conditional formats.
func readSheet(b []byte, name string, shared []string, st *styleTable, kept *int) (*Sheet, error) {
	sh := &Sheet{Name: name, Cells: map[string]Cell{}, Zoom: 100, styled: map[string]Style{}, hidden: map[int]bool{}, base: st.xf("0")}
	d := newDecoder(b)
	var (
		ref, typ, style string
		v, is, f        strings.Builder
		hasV, hasF      bool
		sharedF         bool
		in              string // the text element being read: v, t (of is), f
		row             int
		cf              *CondFormat
		cfRanges        string
	)
	for {
		tok, err := d.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				if n, err := strconv.Atoi(attrOr(t, "r", "")); err == nil {
					row = n
				} else {
					row++
				}
				if toggleAttr(t, "hidden") && row >= 1 && row <= MaxRows {
					sh.hidden[row] = true
				}
			case "c":
				ref, typ, style = strings.ToUpper(attrOr(t, "r", "")), attrOr(t, "t", "n"), attrOr(t, "s", "0")
				v.Reset()
				is.Reset()
				f.Reset()
				hasV, hasF, sharedF = false, false, false
			case "v":
				in, hasV = "v", true
			case "t":
				in = "t"
			case "rPh":
				if err := d.skip(); err != nil {
					return nil, err
				}
			case "f":
				in, hasF = "f", true
				sharedF = attrOr(t, "t", "") == "shared"
			case "mergeCell":
				if len(sh.Merged) < maxCells {
					sh.Merged = append(sh.Merged, strings.ToUpper(attrOr(t, "ref", "")))
				}
			case "sheetView":
				if z, err := strconv.ParseFloat(attrOr(t, "zoomScale", ""), 64); err == nil && z > 0 && sh.Pane == nil {
					sh.Zoom = z
				}
			case "pane":
				if sh.Pane == nil {
					xs, _ := strconv.ParseFloat(attrOr(t, "xSplit", "0"), 64)
					ys, _ := strconv.ParseFloat(attrOr(t, "ySplit", "0"), 64)
					sh.Pane = &Pane{State: attrOr(t, "state", "split"), Cols: int(xs), Rows: int(ys), TopLeftCell: attrOr(t, "topLeftCell", "")}
				}
			case "conditionalFormatting":
				cfRanges = attrOr(t, "sqref", "")
			case "cfRule":
				if len(sh.CondFormats) >= maxItems {
					return nil, fmt.Errorf("more than %d conditional formats", maxItems)
				}
				cf = &CondFormat{Ranges: cfRanges, Type: attrOr(t, "type", ""), Operator: attrOr(t, "operator", "")}
				if id, err := strconv.Atoi(attrOr(t, "dxfId", "")); err == nil && id >= 0 && id < len(st.dxfs) {
					s := st.dxfs[id]
					cf.Style = &s
				}
			case "formula":
				if cf != nil {
					in = "formula"
					f.Reset()
				}
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "v", "t", "f":
				in = ""
			case "formula":
				if cf != nil {
					cf.Formulas = append(cf.Formulas, f.String())
				}
				in = ""
			case "cfRule":
				if cf != nil {
					sh.CondFormats = append(sh.CondFormats, *cf)
				}
				cf = nil
			case "c":
				r, c, err := splitRef(ref)
				if err != nil {
					return nil, fmt.Errorf("cell %q: %w", ref, err)
				}
				if *kept++; *kept > maxCells {
					return nil, fmt.Errorf("more than %d cells", maxCells)
				}
				sh.boxRows, sh.boxCols = max(sh.boxRows, r+1), max(sh.boxCols, c+1)
				cs := st.xf(style)
				sh.styled[ref] = cs
				cell, ok := cellValue(typ, v.String(), is.String(), hasV, shared)
				if hasF {
					ok = true
					cell.Formula = f.String()
					if sharedF && cell.Formula == "" {
						sh.sharedRefs = append(sh.sharedRefs, ref)
					}
				}
				if ok {
					cell.Style = cs
					sh.Cells[ref] = cell
					sh.Rows, sh.Cols = max(sh.Rows, r+1), max(sh.Cols, c+1)
				}
			}
		case xml.CharData:
			var w *strings.Builder
			switch in {
			case "v":
				w = &v
			case "t":
				w = &is
			case "f", "formula":
				w = &f
			}
			if w != nil && w.Len() < 1<<20 {
				w.Write(t)
			}
		}
	}
	for _, m := range sh.Merged {
		_, end, _ := strings.Cut(m, ":")
		if r, c, err := splitRef(end); err == nil {
			sh.boxRows, sh.boxCols = max(sh.boxRows, r+1), max(sh.boxCols, c+1)
		}
	}
	for r := range sh.hidden {
		sh.HiddenRows = append(sh.HiddenRows, r)
	}
	sortInts(sh.HiddenRows)
	return sh, nil
}

func toggleAttr(e xml.StartElement, name string) bool {
	v, ok := attr(e, name)
	return ok && (v == "1" || v == "true")
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// cellValue reads a cell's cached value by its type; ok is false for a
// cell without one.
func cellValue(typ, v, inline string, hasV bool, shared []string) (Cell, bool) {
	switch typ {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if !hasV || err != nil || i < 0 || i >= len(shared) {
			return Cell{Type: "string"}, false
		}
		return Cell{Type: "string", Value: shared[i]}, true
	case "inlineStr":
		return Cell{Type: "string", Value: inline}, true
	case "str":
		if v == "" {
			return Cell{Type: "string"}, false
		}
		return Cell{Type: "string", Value: v}, hasV
	case "b":
		return Cell{Type: "bool", Value: strings.TrimSpace(v) == "1"}, hasV
	case "e":
		return Cell{Type: "error", Value: v}, hasV
	case "d":
		return Cell{Type: "date", Value: v}, hasV
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if !hasV || err != nil {
		return Cell{Type: "number"}, false
	}
	return Cell{Type: "number", Value: n}, true
}
