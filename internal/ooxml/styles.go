package ooxml

import (
	"fmt"
	"strconv"
	"strings"
)

// styleTable is a workbook's cell formats, resolved.
type styleTable struct {
	xfs  []Style
	dxfs []Style
}

// xf returns the style of a cell's s attribute; an unknown index reads as
// the default style.
func (t *styleTable) xf(s string) Style {
	i, err := strconv.Atoi(s)
	if err == nil && i >= 0 && i < len(t.xfs) {
		return t.xfs[i]
	}
	if len(t.xfs) > 0 {
		return t.xfs[0]
	}
	return Style{NumberFormat: "General"}
}

// builtinFormats are the number formats with fixed ids (ECMA-376 part 1,
// 18.8.30) that the comparisons meet.
var builtinFormats = map[int]string{
	0: "General", 1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00", 9: "0%", 10: "0.00%",
	11: "0.00E+00", 12: "# ?/?", 13: "# ??/??", 14: "mm-dd-yy", 15: "d-mmm-yy", 16: "d-mmm",
	17: "mmm-yy", 18: "h:mm AM/PM", 19: "h:mm:ss AM/PM", 20: "h:mm", 21: "h:mm:ss",
	22: "m/d/yy h:mm", 37: "#,##0 ;(#,##0)", 38: "#,##0 ;[Red](#,##0)", 39: "#,##0.00;(#,##0.00)",
	40: "#,##0.00;[Red](#,##0.00)", 45: "mm:ss", 46: "[h]:mm:ss", 47: "mmss.0", 48: "##0.0E+0", 49: "@",
}

type xColor struct {
	RGB     string `xml:"rgb,attr"`
	Theme   string `xml:"theme,attr"`
	Indexed string `xml:"indexed,attr"`
	Auto    string `xml:"auto,attr"`
}

// String is the colour as aRGB, theme:N, indexed:N or auto.
func (c *xColor) String() string {
	switch {
	case c == nil:
		return ""
	case c.RGB != "":
		return strings.ToUpper(c.RGB)
	case c.Theme != "":
		return "theme:" + c.Theme
	case c.Indexed != "":
		return "indexed:" + c.Indexed
	case c.Auto != "":
		return "auto"
	}
	return ""
}

type xVal struct {
	Val *string `xml:"val,attr"`
}

func (v *xVal) on() bool {
	return v != nil && (v.Val == nil || *v.Val == "1" || *v.Val == "true")
}

type xFont struct {
	B      *xVal   `xml:"b"`
	I      *xVal   `xml:"i"`
	U      *xVal   `xml:"u"`
	Strike *xVal   `xml:"strike"`
	Sz     *xVal   `xml:"sz"`
	Name   *xVal   `xml:"name"`
	Color  *xColor `xml:"color"`
}

type xFill struct {
	Pattern *struct {
		Type    string  `xml:"patternType,attr"`
		FgColor *xColor `xml:"fgColor"`
		BgColor *xColor `xml:"bgColor"`
	} `xml:"patternFill"`
	Gradient *struct{} `xml:"gradientFill"`
}

type xNumFmt struct {
	ID   int    `xml:"numFmtId,attr"`
	Code string `xml:"formatCode,attr"`
}

// readStyles reads a workbook's styles part.
func readStyles(p *pkg, name string) (*styleTable, error) {
	b, err := p.read(name)
	if err != nil || b == nil {
		return &styleTable{}, err
	}
	var doc struct {
		NumFmts []xNumFmt `xml:"numFmts>numFmt"`
		Fonts   []xFont   `xml:"fonts>font"`
		Fills   []xFill   `xml:"fills>fill"`
		Xfs     []struct {
			NumFmt int `xml:"numFmtId,attr"`
			Font   int `xml:"fontId,attr"`
			Fill   int `xml:"fillId,attr"`
		} `xml:"cellXfs>xf"`
		Dxfs []struct {
			Font   *xFont   `xml:"font"`
			Fill   *xFill   `xml:"fill"`
			NumFmt *xNumFmt `xml:"numFmt"`
		} `xml:"dxfs>dxf"`
	}
	if err := decodeXML(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Xfs) > maxCells || len(doc.Dxfs) > maxCells {
		return nil, fmt.Errorf("%s: more than %d formats", name, maxCells)
	}
	codes := map[int]string{}
	for _, n := range doc.NumFmts {
		codes[n.ID] = n.Code
	}
	t := &styleTable{}
	for _, x := range doc.Xfs {
		var s Style
		if c, ok := codes[x.NumFmt]; ok {
			s.NumberFormat = c
		} else if c, ok := builtinFormats[x.NumFmt]; ok {
			s.NumberFormat = c
		} else {
			s.NumberFormat = "General"
		}
		if x.Font >= 0 && x.Font < len(doc.Fonts) {
			font(&s, &doc.Fonts[x.Font])
		}
		if x.Fill >= 0 && x.Fill < len(doc.Fills) {
			fill(&s, &doc.Fills[x.Fill])
		}
		t.xfs = append(t.xfs, s)
	}
	for _, x := range doc.Dxfs {
		var s Style
		if x.NumFmt != nil {
			s.NumberFormat = x.NumFmt.Code
		}
		if x.Font != nil {
			font(&s, x.Font)
		}
		if x.Fill != nil {
			// a differential fill gives its colour as the background
			fill(&s, x.Fill)
			if x.Fill.Pattern != nil {
				s.FillColor = x.Fill.Pattern.BgColor.String()
			}
		}
		t.dxfs = append(t.dxfs, s)
	}
	return t, nil
}

func font(s *Style, f *xFont) {
	s.Bold, s.Italic, s.Strike = f.B.on(), f.I.on(), f.Strike.on()
	if f.U != nil {
		s.Underline = "single"
		if f.U.Val != nil {
			s.Underline = *f.U.Val
		}
		if s.Underline == "none" {
			s.Underline = ""
		}
	}
	if f.Sz != nil && f.Sz.Val != nil {
		s.Size, _ = strconv.ParseFloat(*f.Sz.Val, 64)
	}
	if f.Name != nil && f.Name.Val != nil {
		s.Font = *f.Name.Val
	}
	s.Color = f.Color.String()
}

func fill(s *Style, f *xFill) {
	switch {
	case f.Gradient != nil:
		s.Fill = "gradient"
	case f.Pattern != nil:
		s.Fill = f.Pattern.Type
		s.FillColor = f.Pattern.FgColor.String()
	}
}
