package ooxml

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// TableRule is one rule of a workbook comparison, as OSWorld's
// compare_table writes it. Sheets are named by index: 0 or "RI0" is the
// result's first sheet, "RNSheet1" the result's sheet named Sheet1, "EI0"
// and "ENSheet1" the expected workbook's.
type TableRule struct {
	Type       string `json:"type"`
	SheetIdx0  any    `json:"sheet_idx0,omitempty"`
	SheetIdx1  any    `json:"sheet_idx1,omitempty"`
	SheetIdx   any    `json:"sheet_idx,omitempty"`
	Precision  *int   `json:"precision,omitempty"`   // sheet_data: decimal places, 4 unless given
	IgnoreCase bool   `json:"ignore_case,omitempty"` // sheet_print
	// Props is, for check_cell, the properties of the cell with the match
	// each must pass; for style and row_props, a list of property names.
	Props      json.RawMessage    `json:"props,omitempty"`
	Coordinate string             `json:"coordinate,omitempty"`  // check_cell
	Rules      []FuzzyRule        `json:"rules,omitempty"`       // sheet_fuzzy
	DVProps    []map[string]Match `json:"dv_props,omitempty"`    // data_validation
	Method     string             `json:"method,omitempty"`      // zoom
	Ref        any                `json:"ref,omitempty"`         // zoom
	ChartProps []string           `json:"chart_props,omitempty"` // chart: the properties compared (ChartProps)
	PivotProps []string           `json:"pivot_props,omitempty"` // pivot_table: the properties compared (PivotProps)

	cellProps  map[string]Match
	styleProps []string
}

// FuzzyRule is one range rule of a sheet_fuzzy rule.
type FuzzyRule struct {
	Range         []string    `json:"range"`
	Type          string      `json:"type"` // includes, included_by, fuzzy_match, exact_match
	Threshold     *float64    `json:"threshold,omitempty"`
	IgnoreCase    bool        `json:"ignore_case,omitempty"`
	IgnoreChars   *string     `json:"ignore_chars,omitempty"`
	TrimLeadings  *string     `json:"trim_leadings,omitempty"`
	TrimTrailings *string     `json:"trim_trailings,omitempty"`
	Normalization [][2]string `json:"normalization,omitempty"`
}

// TableRuleTypes are the rule types compared; TableRulesUnsupported those
// of OSWorld's compare_table that are not.
var (
	TableRuleTypes        = []string{"sheet_name", "sheet_data", "sheet_print", "sheet_fuzzy", "check_cell", "style", "freeze", "zoom", "data_validation", "row_props", "chart", "pivot_table"}
	TableRulesUnsupported = []string{"sparkline", "filter", "col_props"}
	cellStyleProps        = []string{"number_format", "font_name", "font_color", "font_bold", "font_italic", "font_underline", "font_size", "fill_type", "bgcolor", "fgcolor", "merge"}
)

// maxRangeCells bounds the cells a sheet_fuzzy range names.
const maxRangeCells = 1 << 16

// Prepare checks a rule and reads its props.
func (r *TableRule) Prepare(hasExpected bool) error {
	if slices.Contains(TableRulesUnsupported, r.Type) {
		return fmt.Errorf("rule %s is not supported (supported: %s)", r.Type, strings.Join(TableRuleTypes, ", "))
	}
	if !slices.Contains(TableRuleTypes, r.Type) {
		return fmt.Errorf("unknown rule %q (supported: %s)", r.Type, strings.Join(TableRuleTypes, ", "))
	}
	var idxs []any
	switch r.Type {
	case "sheet_name":
		if !hasExpected {
			return fmt.Errorf("rule sheet_name compares with the expected workbook, and none is given")
		}
	case "check_cell", "zoom", "data_validation":
		idxs = []any{r.SheetIdx}
	default:
		idxs = []any{r.SheetIdx0, r.SheetIdx1}
	}
	for _, idx := range idxs {
		expected, _, err := parseSheetIdx(idx)
		if err != nil {
			return fmt.Errorf("rule %s: %w", r.Type, err)
		}
		if expected && !hasExpected {
			return fmt.Errorf("rule %s names a sheet of the expected workbook (%v), and none is given", r.Type, idx)
		}
	}
	switch r.Type {
	case "check_cell":
		if _, _, err := ParseRef(r.Coordinate); err != nil {
			return fmt.Errorf("rule check_cell: coordinate: %w", err)
		}
		if err := json.Unmarshal(r.Props, &r.cellProps); err != nil || len(r.cellProps) == 0 {
			return fmt.Errorf("rule check_cell: props is a map of cell properties to {method, ref}")
		}
		for p, m := range r.cellProps {
			if p != "value" && !slices.Contains(cellStyleProps, p) {
				return fmt.Errorf("rule check_cell: property %q is not supported (supported: value, %s)", p, strings.Join(cellStyleProps, ", "))
			}
			if err := m.Validate(); err != nil {
				return fmt.Errorf("rule check_cell: %s: %w", p, err)
			}
		}
	case "style", "row_props":
		if err := json.Unmarshal(r.Props, &r.styleProps); err != nil || len(r.styleProps) == 0 {
			return fmt.Errorf("rule %s: props is a list of property names", r.Type)
		}
		allowed := cellStyleProps
		if r.Type == "row_props" {
			allowed = []string{"hidden"}
		}
		for _, p := range r.styleProps {
			if !slices.Contains(allowed, p) {
				return fmt.Errorf("rule %s: property %q is not supported (supported: %s)", r.Type, p, strings.Join(allowed, ", "))
			}
		}
	case "zoom":
		if err := (Match{Method: r.Method, Ref: r.Ref}).Validate(); err != nil {
			return fmt.Errorf("rule zoom: %w", err)
		}
	case "chart", "pivot_table":
		props, known := r.ChartProps, ChartProps
		if r.Type == "pivot_table" {
			props, known = r.PivotProps, PivotProps
		}
		for _, p := range props {
			if !slices.Contains(known, p) {
				return fmt.Errorf("rule %s: property %q is not supported (supported: %s)", r.Type, p, strings.Join(known, ", "))
			}
		}
	case "data_validation":
		for _, props := range r.DVProps {
			for k, m := range props {
				if _, ok := validationAttr(Validation{}, k); !ok {
					return fmt.Errorf("rule data_validation: unknown attribute %q", k)
				}
				if err := m.Validate(); err != nil {
					return fmt.Errorf("rule data_validation: %s: %w", k, err)
				}
			}
		}
	case "sheet_fuzzy":
		for _, fr := range r.Rules {
			if !slices.Contains([]string{"includes", "included_by", "fuzzy_match", "exact_match"}, fr.Type) {
				return fmt.Errorf("rule sheet_fuzzy: type %q is not includes, included_by, fuzzy_match or exact_match", fr.Type)
			}
			for _, rg := range fr.Range {
				rs, err := parseRanges(rg)
				if err != nil {
					return fmt.Errorf("rule sheet_fuzzy: range %q: %w", rg, err)
				}
				for _, x := range rs {
					if _, err := x.cells(maxRangeCells); err != nil {
						return fmt.Errorf("rule sheet_fuzzy: %w", err)
					}
				}
			}
		}
	}
	return nil
}

// parseSheetIdx reads a sheet index: whether it names the expected
// workbook, and the sheet (an int index or a name).
func parseSheetIdx(idx any) (expected bool, sheet any, err error) {
	switch x := idx.(type) {
	case float64:
		if x < 0 || x != math.Trunc(x) {
			return false, nil, fmt.Errorf("sheet index %v is not a whole number", x)
		}
		return false, int(x), nil
	case string:
		if len(x) >= 2 {
			switch x[:2] {
			case "RI", "EI":
				n, err := strconv.Atoi(x[2:])
				if err != nil || n < 0 {
					return false, nil, fmt.Errorf("sheet index %q: RI and EI take a number", x)
				}
				return x[0] == 'E', n, nil
			case "RN", "EN":
				return x[0] == 'E', x[2:], nil
			}
		}
	}
	return false, nil, fmt.Errorf("sheet index %v is not a number, RI<n>, RN<name>, EI<n> or EN<name>", idx)
}

// tables is the pair of workbooks a rule reads.
type tables struct{ result, expected *Workbook }

func (t tables) sheet(idx any) (*Sheet, string) {
	exp, s, err := parseSheetIdx(idx)
	w, which := t.result, "result"
	if exp {
		w, which = t.expected, "expected"
	}
	if err != nil || w == nil {
		return nil, fmt.Sprintf("%s sheet %v", which, idx)
	}
	label := fmt.Sprintf("%s sheet %v", which, s)
	switch x := s.(type) {
	case int:
		if x < len(w.Sheets) {
			return &w.Sheets[x], fmt.Sprintf("%s sheet %q", which, w.Sheets[x].Name)
		}
	case string:
		if sh, ok := w.Sheet(x); ok && x != "" {
			return sh, fmt.Sprintf("%s sheet %q", which, x)
		}
	}
	return nil, label
}

// CompareTables applies the rules in order, as compare_table does, and
// stops at the first that fails. The rules must have been prepared.
// expected may be nil when no rule reads it.
func CompareTables(result, expected *Workbook, rules []TableRule) (bool, string) {
	t := tables{result, expected}
	for i, r := range rules {
		ok, why := t.apply(&r)
		if !ok {
			return false, fmt.Sprintf("rule %d (%s): %s", i+1, r.Type, why)
		}
	}
	return true, fmt.Sprintf("all %d rules hold", len(rules))
}

func (t tables) pair(r *TableRule) (*Sheet, *Sheet, string) {
	a, la := t.sheet(r.SheetIdx0)
	b, lb := t.sheet(r.SheetIdx1)
	switch {
	case a == nil:
		return nil, nil, "no " + la
	case b == nil:
		return nil, nil, "no " + lb
	}
	return a, b, ""
}

func (t tables) apply(r *TableRule) (bool, string) {
	switch r.Type {
	case "sheet_name":
		var a, b []string
		for _, s := range t.result.Sheets {
			a = append(a, s.Name)
		}
		for _, s := range t.expected.Sheets {
			b = append(b, s.Name)
		}
		if slices.Equal(a, b) {
			return true, ""
		}
		return false, fmt.Sprintf("sheets %q, expected %q", a, b)
	case "check_cell", "zoom", "data_validation":
		sh, label := t.sheet(r.SheetIdx)
		if sh == nil {
			return false, "no " + label
		}
		switch r.Type {
		case "check_cell":
			return checkCell(sh, r)
		case "zoom":
			if (Match{Method: r.Method, Ref: r.Ref}).Holds(sh.Zoom) {
				return true, ""
			}
			return false, fmt.Sprintf("zoom %v does not pass %s %v", sh.Zoom, r.Method, r.Ref)
		default:
			return checkValidations(sh, r.DVProps)
		}
	}
	a, b, why := t.pair(r)
	if a == nil {
		return false, why
	}
	switch r.Type {
	case "sheet_data":
		prec := 4
		if r.Precision != nil {
			prec = *r.Precision
		}
		return frameEqual(frame(a), frame(b), prec)
	case "sheet_print":
		la, lb := printed(a), printed(b)
		if r.IgnoreCase {
			for i := range la {
				la[i] = strings.ToLower(la[i])
			}
			for i := range lb {
				lb[i] = strings.ToLower(lb[i])
			}
		}
		if slices.Equal(la, lb) {
			return true, ""
		}
		return false, fmt.Sprintf("the displayed rows differ (%d and %d rows)", len(la), len(lb))
	case "sheet_fuzzy":
		return fuzzyCells(a, b, r.Rules)
	case "style":
		sa, sb := styleMap(a, r.styleProps), styleMap(b, r.styleProps)
		if len(sa) != len(sb) {
			return false, fmt.Sprintf("the sheets span %d and %d cells", len(sa), len(sb))
		}
		for ref, va := range sa {
			vb, ok := sb[ref]
			if !ok {
				return false, fmt.Sprintf("cell %s is in one sheet only", ref)
			}
			for i := range va {
				if !sameProp(va[i], vb[i]) {
					return false, fmt.Sprintf("cell %s: %s is %v, expected %v", ref, r.styleProps[i], show(va[i]), show(vb[i]))
				}
			}
		}
		return true, ""
	case "freeze":
		ka, kb := freezeKey(a), freezeKey(b)
		if ka == kb {
			return true, ""
		}
		return false, fmt.Sprintf("panes %s, expected %s", ka, kb)
	case "chart", "pivot_table":
		read := chartSet
		props := r.ChartProps
		if r.Type == "pivot_table" {
			read, props = pivotSet, r.PivotProps
		}
		sa, err := read(a, props)
		if err != nil {
			return false, err.Error()
		}
		sb, err := read(b, props)
		if err != nil {
			return false, err.Error()
		}
		return sameSets(sa, sb)
	case "row_props":
		if slices.Equal(a.HiddenRows, b.HiddenRows) {
			return true, ""
		}
		return false, fmt.Sprintf("hidden rows %v, expected %v", a.HiddenRows, b.HiddenRows)
	}
	return false, "unknown rule"
}

func show(v any) string {
	if v == nil {
		return "None"
	}
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return pyStr(v)
}

func sameProp(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return equalValues(a, b) || a == b
}

func freezeKey(s *Sheet) string {
	p := s.Pane
	switch {
	case p == nil:
		return "none"
	case strings.EqualFold(p.State, "frozen") || strings.EqualFold(p.State, "frozenSplit"):
		return fmt.Sprintf("frozen %d columns, %d rows", p.Cols, p.Rows)
	}
	return fmt.Sprintf("%s %d columns, %d rows at %s", p.State, p.Cols, p.Rows, p.TopLeftCell)
}

// rawValue is a cell's cached value as read_cell_value gives it: a number
// as float64, a string, an error's code; nil for an empty cell, a boolean
// and a formula without a cached value.
func rawValue(s *Sheet, ref string) any {
	c, ok := s.Cells[ref]
	if !ok || c.Type == "bool" || c.Type == "date" {
		return nil
	}
	return c.Value
}

// hasValue reports whether a cell holds a value or a formula.
func hasValue(s *Sheet, ref string) bool {
	c, ok := s.Cells[ref]
	return ok && (c.Value != nil || c.Formula != "")
}

// merged reports whether a cell lies in a merged range other than at its
// top-left corner.
func merged(s *Sheet, ref string) bool {
	row, col, err := splitRef(ref)
	if err != nil {
		return false
	}
	for _, m := range s.Merged {
		rs, err := parseRanges(m)
		if err != nil || len(rs) != 1 {
			continue
		}
		x := rs[0]
		if x.r0 <= row && row <= x.r1 && x.c0 <= col && col <= x.c1 && (row != x.r0 || col != x.c0) {
			return true
		}
	}
	return false
}

// cellStyle reads one style property of a cell as openpyxl does: font
// properties and number formats only where the cell holds something.
func cellStyle(s *Sheet, ref, prop string, dxf *Style) any {
	st, ok := s.styled[ref]
	if !ok {
		st = s.base
	}
	if dxf != nil {
		st = *dxf
	}
	filled := hasValue(s, ref)
	orNil := func(v any) any {
		if !filled {
			return nil
		}
		return v
	}
	switch prop {
	case "number_format":
		c := s.Cells[ref]
		if !filled || c.Type != "number" || c.Formula != "" || isDateFormat(st.NumberFormat) {
			return nil
		}
		return st.NumberFormat
	case "font_name":
		return orNil(st.Font)
	case "font_color":
		if st.Color == "" {
			return nil
		}
		return orNil(st.Color)
	case "font_bold":
		return orNil(st.Bold)
	case "font_italic":
		return orNil(st.Italic)
	case "font_underline":
		if st.Underline == "" {
			return nil
		}
		return orNil(st.Underline)
	case "font_size":
		return orNil(st.Size)
	case "fill_type":
		if st.Fill == "gradient" {
			return "gradientFill"
		}
		return "patternFill"
	case "bgcolor", "fgcolor":
		if st.Fill == "gradient" {
			return nil
		}
		if st.FillColor == "" {
			return "00000000"
		}
		return st.FillColor
	case "merge":
		return merged(s, ref)
	}
	return nil
}

var dateFormat = regexp.MustCompile(`(?i)[dmyhs]`)

// isDateFormat reports whether a number format shows dates or times.
func isDateFormat(code string) bool {
	if strings.EqualFold(code, "General") {
		return false
	}
	stripped := regexp.MustCompile(`"[^"]*"|\[[^\]]*\]|\\.`).ReplaceAllString(code, "")
	return dateFormat.MatchString(stripped)
}

func checkCell(s *Sheet, r *TableRule) (bool, string) {
	_, ref, _ := ParseRef(r.Coordinate)
	props := make([]string, 0, len(r.cellProps))
	for p := range r.cellProps {
		props = append(props, p)
	}
	slices.Sort(props)
	for _, p := range props {
		m := r.cellProps[p]
		var v any
		if p == "value" {
			v = rawValue(s, ref)
		} else {
			v = cellStyle(s, ref, p, nil)
		}
		if !m.Holds(v) {
			return false, fmt.Sprintf("cell %s: %s %s does not pass %s %v", ref, p, show(v), m.Method, m.Ref)
		}
	}
	return true, ""
}

// styleMap is the style rule's view of a sheet: for every cell from A1 to
// the last written, the properties asked for; conditional formats of type
// cellIs with constant operands apply their style to the cells they match.
func styleMap(s *Sheet, props []string) map[string][]any {
	out := map[string][]any{}
	for row := range s.boxRows {
		for col := range s.boxCols {
			ref := CellName(row, col)
			vals := make([]any, len(props))
			for i, p := range props {
				vals[i] = cellStyle(s, ref, p, nil)
			}
			out[ref] = vals
		}
	}
	for _, cf := range s.CondFormats {
		if cf.Type != "cellIs" || cf.Style == nil {
			continue
		}
		var refs []any
		ok := true
		for _, f := range cf.Formulas {
			v, isConst := constant(f)
			ok = ok && isConst
			refs = append(refs, v)
		}
		if !ok || len(refs) == 0 {
			continue
		}
		rs, err := parseRanges(cf.Ranges)
		if err != nil {
			continue
		}
		for _, x := range rs {
			cells, err := x.cells(maxRangeCells)
			if err != nil {
				continue
			}
			for _, ref := range cells {
				v := rawValue(s, ref)
				if v == nil || !cellIs(cf.Operator, v, refs) {
					continue
				}
				vals := make([]any, len(props))
				for i, p := range props {
					vals[i] = cellStyle(s, ref, p, cf.Style)
				}
				out[ref] = vals
			}
		}
	}
	return out
}

// constant reads a formula that is a number or a quoted string.
func constant(f string) (any, bool) {
	f = strings.TrimSpace(f)
	if n, err := strconv.ParseFloat(f, 64); err == nil {
		return n, true
	}
	if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
		return strings.ReplaceAll(f[1:len(f)-1], `""`, `"`), true
	}
	return nil, false
}

func cellIs(op string, v any, refs []any) bool {
	c0, ok := compareValues(v, refs[0])
	switch op {
	case "lessThan":
		return ok && c0 < 0
	case "lessThanOrEqual":
		return ok && c0 <= 0
	case "greaterThan":
		return ok && c0 > 0
	case "greaterThanOrEqual":
		return ok && c0 >= 0
	case "equal":
		return equalValues(v, refs[0])
	case "notEqual":
		return !equalValues(v, refs[0])
	case "between", "notBetween":
		if len(refs) < 2 {
			return false
		}
		lo, hi := refs[0], refs[1]
		if c, ok := compareValues(lo, hi); ok && c > 0 {
			lo, hi = hi, lo
		}
		a, ok1 := compareValues(v, lo)
		b, ok2 := compareValues(v, hi)
		if !ok1 || !ok2 {
			return false
		}
		if op == "between" {
			return a >= 0 && b <= 0
		}
		return a < 0 || b > 0
	}
	return false
}

func validationAttr(v Validation, name string) (any, bool) {
	m := map[string]any{
		"ranges": v.Ranges, "type": v.Type, "operator": v.Operator, "formula1": v.Formula1, "formula2": v.Formula2,
		"allowBlank": v.AllowBlank, "showDropDown": v.ShowDropDown, "showInputMessage": v.ShowInputMessage,
		"showErrorMessage": v.ShowErrorMessage, "error": v.Error, "errorTitle": v.ErrorTitle,
		"errorStyle": v.ErrorStyle, "prompt": v.Prompt, "promptTitle": v.PromptTitle,
	}
	x, ok := m[name]
	return x, ok
}

// checkValidations holds when the sheet has at least as many validations
// as props and each validation matches one of the props.
func checkValidations(s *Sheet, props []map[string]Match) (bool, string) {
	if len(s.Validations) < len(props) {
		return false, fmt.Sprintf("%d data validations, fewer than %d", len(s.Validations), len(props))
	}
	for i, v := range s.Validations {
		if !slices.ContainsFunc(props, func(p map[string]Match) bool {
			for k, m := range p {
				x, _ := validationAttr(v, k)
				if !m.Holds(x) {
					return false
				}
			}
			return true
		}) {
			return false, fmt.Sprintf("data validation %d (%s on %s) matches none of those expected", i+1, v.Type, v.Ranges)
		}
	}
	return true, ""
}

// fuzzyCells compares the cells of ranges as sheet_fuzzy does, their
// values written as Python writes them.
func fuzzyCells(a, b *Sheet, rules []FuzzyRule) (bool, string) {
	for _, fr := range rules {
		for _, rg := range fr.Range {
			rs, _ := parseRanges(rg)
			for _, x := range rs {
				cells, err := x.cells(maxRangeCells)
				if err != nil {
					return false, err.Error()
				}
				for _, ref := range cells {
					v1, v2 := pyStr(rawValue(a, ref)), pyStr(rawValue(b, ref))
					for _, n := range fr.Normalization {
						v1, v2 = strings.ReplaceAll(v1, n[0], n[1]), strings.ReplaceAll(v2, n[0], n[1])
					}
					if fr.TrimLeadings != nil {
						v1, v2 = strings.TrimLeft(v1, *fr.TrimLeadings), strings.TrimLeft(v2, *fr.TrimLeadings)
					}
					if fr.TrimTrailings != nil {
						v1, v2 = strings.TrimRight(v1, *fr.TrimTrailings), strings.TrimRight(v2, *fr.TrimTrailings)
					}
					if fr.IgnoreChars != nil {
						drop := func(r rune) rune {
							if strings.ContainsRune(*fr.IgnoreChars, r) {
								return -1
							}
							return r
						}
						v1, v2 = strings.Map(drop, v1), strings.Map(drop, v2)
					}
					if fr.IgnoreCase {
						v1, v2 = strings.ToLower(v1), strings.ToLower(v2)
					}
					var ok bool
					switch fr.Type {
					case "includes":
						ok = strings.Contains(v1, v2)
					case "included_by":
						ok = strings.Contains(v2, v1)
					case "fuzzy_match":
						th := 85.0
						if fr.Threshold != nil {
							th = *fr.Threshold
						}
						ok = Ratio(v1, v2)*100 >= th
					default:
						ok = v1 == v2
					}
					if !ok {
						return false, fmt.Sprintf("cell %s: %q and %q fail %s", ref, v1, v2, fr.Type)
					}
				}
			}
		}
	}
	return true, ""
}

// printed is a sheet's displayed text as a CSV export writes it: one line
// a row from the first to the last with content, cells separated by
// commas, each line trimmed, trailing empty lines dropped.
func printed(s *Sheet) []string {
	lines := make([]string, s.Rows)
	for row := range s.Rows {
		fields := make([]string, s.Cols)
		for col := range s.Cols {
			t := s.Cells[CellName(row, col)].Text
			if strings.ContainsAny(t, ",\"\n") {
				t = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
			}
			fields[col] = t
		}
		lines[row] = strings.TrimSpace(strings.Join(fields, ","))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// dataFrame is a sheet read as pandas reads it with its first row as the
// header: labels (empty ones as "Unnamed: i"), then the rows of values
// (nil for empty cells and errors).
type dataFrame struct {
	labels []any
	rows   [][]any
}

func frame(s *Sheet) dataFrame {
	var data [][]any
	width := 0
	for row := range s.Rows {
		var vals []any
		for col := range s.Cols {
			c, ok := s.Cells[CellName(row, col)]
			var v any
			if ok {
				v = c.Value
				if c.Type == "error" {
					v = nil
				}
				if c.Type == "number" && isDateFormat(c.NumberFormat) {
					if f, ok := v.(float64); ok {
						v = dateValue(f)
					}
				}
				if x, isStr := v.(string); isStr && x == "" {
					v = nil
				}
			}
			vals = append(vals, v)
		}
		for len(vals) > 0 && vals[len(vals)-1] == nil {
			vals = vals[:len(vals)-1]
		}
		width = max(width, len(vals))
		data = append(data, vals)
	}
	var f dataFrame
	if len(data) == 0 {
		return f
	}
	for i := range data {
		for len(data[i]) < width {
			data[i] = append(data[i], nil)
		}
	}
	for i, v := range data[0] {
		if v == nil {
			v = fmt.Sprintf("Unnamed: %d", i)
		}
		f.labels = append(f.labels, v)
	}
	f.rows = data[1:]
	return f
}

// dateValue marks a date cell's serial number so that it equals only
// another date.
type dateValue float64

func frameEqual(a, b dataFrame, prec int) (bool, string) {
	if len(a.labels) != len(b.labels) || len(a.rows) != len(b.rows) {
		return false, fmt.Sprintf("%d columns by %d rows, expected %d by %d", len(a.labels), len(a.rows), len(b.labels), len(b.rows))
	}
	for i := range a.labels {
		if !cellEqual(a.labels[i], b.labels[i]) {
			return false, fmt.Sprintf("column %d is headed %s, expected %s", i+1, show(a.labels[i]), show(b.labels[i]))
		}
	}
	scale := math.Pow(10, float64(prec))
	for col := range a.labels {
		numA, numB := numericColumn(a.rows, col), numericColumn(b.rows, col)
		for row := range a.rows {
			x, y := a.rows[row][col], b.rows[row][col]
			if numA && numB {
				if fx, ok := x.(float64); ok {
					x = math.RoundToEven(fx*scale) / scale
				}
				if fy, ok := y.(float64); ok {
					y = math.RoundToEven(fy*scale) / scale
				}
			}
			if !cellEqual(x, y) {
				return false, fmt.Sprintf("cell %s is %s, expected %s", CellName(row+1, col), show(x), show(y))
			}
		}
	}
	return true, ""
}

// numericColumn reports whether every value of a column is a number (a
// float column, which rounding applies to).
func numericColumn(rows [][]any, col int) bool {
	for _, r := range rows {
		switch r[col].(type) {
		case nil, float64:
		default:
			return false
		}
	}
	return true
}

func cellEqual(a, b any) bool {
	switch x := a.(type) {
	case dateValue:
		y, ok := b.(dateValue)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	}
	return a == b
}
