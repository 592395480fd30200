package odf

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits on what a spreadsheet may expand to: repeated rows and columns
// are counted, but only cells with content are kept.
const (
	MaxRows  = 1 << 20
	MaxCols  = 1 << 14
	maxCells = 1 << 20
)

// Cell is one spreadsheet cell with content.
type Cell struct {
	Type    string `json:"type"`              // float, percentage, currency, date, time, boolean, string
	Value   any    `json:"value"`             // float64 for numbers, bool, else the text or the date string
	Text    string `json:"text"`              // what the cell displays
	Formula string `json:"formula,omitempty"` // e.g. of:=SUM([.B2:.B6])
}

// Sheet is one table of a spreadsheet: its cells with content by
// reference ("B7").
type Sheet struct {
	Name  string          `json:"name"`
	Cells map[string]Cell `json:"cells"`
	Rows  int             `json:"rows"` // rows up to the last with content
	Cols  int             `json:"cols"` // columns up to the last with content
}

// Cell returns the cell at ref ("B7"); an empty cell reads as the zero Cell.
func (s Sheet) Cell(ref string) Cell { return s.Cells[strings.ToUpper(ref)] }

// Grid returns the sheet's displayed texts, row by row.
func (s Sheet) Grid() [][]string {
	out := make([][]string, s.Rows)
	for r := range out {
		out[r] = make([]string, s.Cols)
		for c := range out[r] {
			out[r][c] = s.Cells[CellName(r, c)].Text
		}
	}
	return out
}

// CellName names the cell at zero-based row and column: (6, 1) is B7.
func CellName(row, col int) string {
	var letters []byte
	for c := col + 1; c > 0; c = (c - 1) / 26 {
		letters = append([]byte{byte('A' + (c-1)%26)}, letters...)
	}
	return string(letters) + strconv.Itoa(row+1)
}

// ParseRef splits a reference such as "B7" or "Totals.B7" (or "Totals!B7")
// into the sheet name (empty when not given) and the cell name.
func ParseRef(ref string) (sheet, cell string, err error) {
	ref = strings.TrimSpace(ref)
	if i := strings.LastIndexAny(ref, ".!"); i >= 0 {
		sheet, ref = ref[:i], ref[i+1:]
	}
	ref = strings.ToUpper(strings.ReplaceAll(ref, "$", ""))
	i := 0
	for i < len(ref) && ref[i] >= 'A' && ref[i] <= 'Z' {
		i++
	}
	if i == 0 || i > 3 || i == len(ref) {
		return "", "", fmt.Errorf("%q is not a cell reference such as B7 or Sheet1.B7", ref)
	}
	n, err := strconv.Atoi(ref[i:])
	if err != nil || n < 1 || n > MaxRows {
		return "", "", fmt.Errorf("%q is not a cell reference such as B7 or Sheet1.B7", ref)
	}
	return sheet, ref, nil
}

// Spreadsheet is the tables of an ODS file, in order.
type Spreadsheet struct {
	Sheets []Sheet `json:"sheets"`
}

// Sheet returns the sheet named name, or the first sheet for "".
func (s *Spreadsheet) Sheet(name string) (Sheet, bool) {
	if name == "" && len(s.Sheets) > 0 {
		return s.Sheets[0], true
	}
	for _, sh := range s.Sheets {
		if strings.EqualFold(sh.Name, name) {
			return sh, true
		}
	}
	return Sheet{}, false
}

// Lookup returns the cell at a reference such as "B7" (first sheet) or
// "Totals.B7".
func (s *Spreadsheet) Lookup(ref string) (Cell, error) {
	name, cell, err := ParseRef(ref)
	if err != nil {
		return Cell{}, err
	}
	sh, ok := s.Sheet(name)
	if !ok {
		return Cell{}, fmt.Errorf("no sheet named %q", name)
	}
	return sh.Cell(cell), nil
}

// ReadSpreadsheet reads the tables of an ODS file.
func ReadSpreadsheet(data []byte) (*Spreadsheet, error) {
	b, err := content(data)
	if err != nil {
		return nil, err
	}
	return spreadsheetXML(b)
}

// spreadsheetXML reads the tables of an ODS content.xml.
func spreadsheetXML(b []byte) (*Spreadsheet, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	out := &Spreadsheet{}
	var cur *Sheet
	row, col := 0, 0
	rowRepeat := 1
	kept := 0
	inBody := false
	for {
		tok, err := d.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("content.xml: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case is(t, nsOffice, "spreadsheet"):
				inBody = true
			case inBody && is(t, nsTable, "table"):
				name, _ := attr(t, nsTable, "name")
				out.Sheets = append(out.Sheets, Sheet{Name: name, Cells: map[string]Cell{}})
				cur = &out.Sheets[len(out.Sheets)-1]
				row, col = 0, 0
			case cur != nil && is(t, nsTable, "table-row"):
				col = 0
				rowRepeat = repeat(t, "number-rows-repeated")
			case cur != nil && (is(t, nsTable, "table-cell") || is(t, nsTable, "covered-table-cell")):
				n := repeat(t, "number-columns-repeated")
				c, err := readCell(d, t)
				if err != nil {
					return nil, fmt.Errorf("content.xml: sheet %q row %d: %w", cur.Name, row+1, err)
				}
				if c.Text != "" || c.Formula != "" || c.Type != "" {
					for i := 0; i < n; i++ {
						for r := 0; r < rowRepeat; r++ {
							if row+r >= MaxRows || col+i >= MaxCols {
								return nil, fmt.Errorf("sheet %q is larger than %d rows or %d columns", cur.Name, MaxRows, MaxCols)
							}
							if kept++; kept > maxCells {
								return nil, fmt.Errorf("more than %d cells with content", maxCells)
							}
							cur.Cells[CellName(row+r, col+i)] = c
							cur.Rows = max(cur.Rows, row+r+1)
							cur.Cols = max(cur.Cols, col+i+1)
						}
					}
				}
				col += n
			}
		case xml.EndElement:
			switch {
			case is2(t.Name, nsTable, "table"):
				cur = nil
			case cur != nil && is2(t.Name, nsTable, "table-row"):
				row += rowRepeat
				rowRepeat = 1
			}
		}
	}
	if len(out.Sheets) == 0 {
		return nil, fmt.Errorf("%w: no spreadsheet in content.xml", ErrNotODF)
	}
	return out, nil
}

func is2(n xml.Name, space, local string) bool { return n.Space == space && n.Local == local }

// repeat reads a table:number-*-repeated attribute, at least 1.
func repeat(e xml.StartElement, name string) int {
	v, ok := attr(e, nsTable, name)
	if !ok {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 1
	}
	return min(n, MaxRows)
}

// readCell reads a cell element just started, to its end.
func readCell(d *xml.Decoder, e xml.StartElement) (Cell, error) {
	var c Cell
	c.Type, _ = attr(e, nsOffice, "value-type")
	c.Formula, _ = attr(e, nsTable, "formula")
	text, err := textOf(d)
	if err != nil {
		return c, err
	}
	c.Text = text
	switch c.Type {
	case "float", "percentage", "currency":
		v, _ := attr(e, nsOffice, "value")
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			c.Value = c.Text
		} else {
			c.Value = f
		}
	case "boolean":
		v, _ := attr(e, nsOffice, "boolean-value")
		c.Value = v == "true"
	case "date":
		c.Value, _ = attr(e, nsOffice, "date-value")
	case "time":
		c.Value, _ = attr(e, nsOffice, "time-value")
	default:
		c.Value = c.Text
	}
	return c, nil
}

// ValueString is the cell's value as text: a number in its shortest form
// ("1.5", "1591"), else what the cell shows.
func (c Cell) ValueString() string {
	switch v := c.Value.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case string:
		if c.Type == "date" || c.Type == "time" {
			return v
		}
	}
	return c.Text
}
