package ooxml

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
)

// TextRun is a run of a text frame's paragraph with its direct font. The
// booleans are absent where the run does not set them (it inherits).
type TextRun struct {
	Text      string  `json:"text"`
	Font      string  `json:"font,omitempty"`
	Size      float64 `json:"size,omitempty"` // points
	Bold      *bool   `json:"bold,omitempty"`
	Italic    *bool   `json:"italic,omitempty"`
	Underline string  `json:"underline,omitempty"` // as written: sng, dbl, none, ...
	Strike    string  `json:"strike,omitempty"`    // as written: sngStrike, noStrike, ...
	Color     string  `json:"color,omitempty"`     // RRGGBB of an explicit RGB colour
}

// TextParagraph is a paragraph of a shape's text.
type TextParagraph struct {
	Text   string    `json:"text"`             // line breaks read as \v
	Align  string    `json:"align,omitempty"`  // as written: l, ctr, r, just, dist
	Level  int       `json:"level"`            // outline level, 0 at the top
	Bullet string    `json:"bullet,omitempty"` // the bullet character, if one is set
	Runs   []TextRun `json:"runs"`
	hasPPr bool
	lvl    *string // the lvl attribute as written
	buClr  string
}

// TableCell is a cell of a table shape.
type TableCell struct {
	Text       string          `json:"text"`
	Paragraphs []TextParagraph `json:"paragraphs"`
}

// Shape is a shape of a slide. Positions and sizes are in EMU (914400 an
// inch), absent where neither the shape nor its layout gives them.
type Shape struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	// Kind is autoshape, textbox, placeholder, freeform, picture, table,
	// chart, graphic (other graphic frames), group or connector.
	Kind        string          `json:"kind"`
	Placeholder string          `json:"placeholder,omitempty"` // its type (title, body, ...) for a placeholder
	Left        *int64          `json:"left"`
	Top         *int64          `json:"top"`
	Width       *int64          `json:"width"`
	Height      *int64          `json:"height"`
	HasText     bool            `json:"has_text"` // a shape that can hold text (not a picture, table or group)
	Text        string          `json:"text"`     // paragraphs one a line
	Paragraphs  []TextParagraph `json:"paragraphs,omitempty"`
	Table       [][]TableCell   `json:"table,omitempty"` // rows of cells
	TableCols   int             `json:"table_cols,omitempty"`
	Shapes      []Shape         `json:"shapes,omitempty"` // a group's
}

// Transition is a slide's transition.
type Transition struct {
	Type     string `json:"type"`               // the effect's element: fade, push, wipe, prism, ...
	Speed    string `json:"speed,omitempty"`    // slow, med, fast
	Duration string `json:"duration,omitempty"` // milliseconds, as written
}

// Slide is a slide of a presentation.
type Slide struct {
	Number     int         `json:"number"` // 1-based
	Shapes     []Shape     `json:"shapes"`
	Text       string      `json:"text"`                 // the text of its shapes (groups included), one a line
	Notes      string      `json:"notes"`                // the speaker notes' text
	Background string      `json:"background,omitempty"` // RRGGBB of a solid background (the master's where the slide sets none)
	Transition *Transition `json:"transition,omitempty"`
}

// Presentation is a pptx file's slides in order.
type Presentation struct {
	Slides []Slide `json:"slides"`
}

// XML shapes of the parts read.
type (
	xNv struct {
		CNvPr struct {
			ID   int    `xml:"id,attr"`
			Name string `xml:"name,attr"`
		} `xml:"cNvPr"`
		CNvSpPr struct {
			TxBox string `xml:"txBox,attr"`
		} `xml:"cNvSpPr"`
		NvPr struct {
			Ph *struct {
				Type string `xml:"type,attr"`
				Idx  string `xml:"idx,attr"`
			} `xml:"ph"`
		} `xml:"nvPr"`
	}
	xXfrm struct {
		Off *struct {
			X int64 `xml:"x,attr"`
			Y int64 `xml:"y,attr"`
		} `xml:"off"`
		Ext *struct {
			Cx int64 `xml:"cx,attr"`
			Cy int64 `xml:"cy,attr"`
		} `xml:"ext"`
	}
	xSpPr struct {
		Xfrm     *xXfrm    `xml:"xfrm"`
		PrstGeom *struct{} `xml:"prstGeom"`
		CustGeom *struct{} `xml:"custGeom"`
	}
	xRPr struct {
		B      *string `xml:"b,attr"`
		I      *string `xml:"i,attr"`
		U      string  `xml:"u,attr"`
		Strike string  `xml:"strike,attr"`
		Sz     string  `xml:"sz,attr"`
		Latin  *struct {
			Typeface string `xml:"typeface,attr"`
		} `xml:"latin"`
		SolidFill *xSolid `xml:"solidFill"`
	}
	xSolid struct {
		SrgbClr *struct {
			Val string `xml:"val,attr"`
		} `xml:"srgbClr"`
	}
	xPItem struct {
		XMLName xml.Name
		RPr     *xRPr   `xml:"rPr"`
		T       *string `xml:"t"`
	}
	xP struct {
		PPr *struct {
			Algn   string  `xml:"algn,attr"`
			Lvl    *string `xml:"lvl,attr"`
			BuChar *struct {
				Char string `xml:"char,attr"`
			} `xml:"buChar"`
			BuClr *xSolid `xml:"buClr"`
		} `xml:"pPr"`
		Items []xPItem `xml:",any"`
	}
	xTxBody struct {
		Ps []xP `xml:"p"`
	}
	xShape struct {
		XMLName xml.Name
		NvSp    *xNv     `xml:"nvSpPr"`
		NvPic   *xNv     `xml:"nvPicPr"`
		NvGF    *xNv     `xml:"nvGraphicFramePr"`
		NvGrp   *xNv     `xml:"nvGrpSpPr"`
		NvCxn   *xNv     `xml:"nvCxnSpPr"`
		SpPr    *xSpPr   `xml:"spPr"`
		GrpSpPr *xSpPr   `xml:"grpSpPr"`
		Xfrm    *xXfrm   `xml:"xfrm"`
		TxBody  *xTxBody `xml:"txBody"`
		Graphic *struct {
			Data struct {
				URI string `xml:"uri,attr"`
				Tbl *struct {
					Cols []struct{} `xml:"tblGrid>gridCol"`
					Rows []struct {
						Cells []struct {
							TxBody *xTxBody `xml:"txBody"`
						} `xml:"tc"`
					} `xml:"tr"`
				} `xml:"tbl"`
			} `xml:"graphicData"`
		} `xml:"graphic"`
		Children []xShape `xml:",any"`
	}
	xTransition struct {
		Spd     string `xml:"spd,attr"`
		Dur     string `xml:"dur,attr"`
		Effects []struct {
			XMLName xml.Name
		} `xml:",any"`
	}
	xSlide struct {
		CSld struct {
			Bg *struct {
				BgPr *struct {
					SolidFill *xSolid   `xml:"solidFill"`
					NoFill    *struct{} `xml:"noFill"`
				} `xml:"bgPr"`
			} `xml:"bg"`
			SpTree xShape `xml:"spTree"`
		} `xml:"cSld"`
		Transition *xTransition `xml:"transition"`
		Alt        []struct {
			Choice *struct {
				Transition *xTransition `xml:"transition"`
			} `xml:"Choice"`
			Fallback *struct {
				Transition *xTransition `xml:"transition"`
			} `xml:"Fallback"`
		} `xml:"AlternateContent"`
	}
)

// shapeElems are the elements of a shape tree that are shapes.
var shapeElems = map[string]bool{"sp": true, "pic": true, "graphicFrame": true, "grpSp": true, "cxnSp": true}

// ReadPresentation reads a pptx file.
func ReadPresentation(data []byte) (*Presentation, error) {
	p, err := openPackage(data)
	if err != nil {
		return nil, err
	}
	main, err := mainPart(p, "ppt/presentation.xml")
	if err != nil {
		return nil, err
	}
	b, err := p.read(main)
	if err != nil {
		return nil, err
	}
	var pres struct {
		XMLName xml.Name
		IDs     []struct {
			Attrs []xml.Attr `xml:",any,attr"`
		} `xml:"sldIdLst>sldId"`
	}
	if err := decodeXML(b, &pres); err != nil {
		return nil, fmt.Errorf("%s: %w", main, err)
	}
	if pres.XMLName.Local != "presentation" {
		return nil, fmt.Errorf("%w: %s is not a presentation", ErrNotOOXML, main)
	}
	rels, err := p.rels(main)
	if err != nil {
		return nil, err
	}
	r := &presReader{p: p, parts: map[string]*xSlide{}}
	out := &Presentation{Slides: []Slide{}}
	items := 0
	for _, id := range pres.IDs {
		var rid string
		for _, a := range id.Attrs {
			if a.Name.Local == "id" && strings.Contains(a.Name.Space, "relationships") {
				rid = a.Value
			}
		}
		target, ok := rels[rid]
		if !ok {
			return nil, fmt.Errorf("%s: slide %s has no part", main, rid)
		}
		s, err := r.slide(target.Target, len(out.Slides)+1, &items)
		if err != nil {
			return nil, err
		}
		out.Slides = append(out.Slides, s)
	}
	return out, nil
}

// presReader reads slides, their layouts and masters (each part once).
type presReader struct {
	p     *pkg
	parts map[string]*xSlide
}

func (r *presReader) part(name string) (*xSlide, error) {
	if s, ok := r.parts[name]; ok {
		return s, nil
	}
	b, err := r.p.read(name)
	if err != nil {
		return nil, err
	}
	s := &xSlide{}
	if b != nil {
		if err := decodeXML(b, s); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	r.parts[name] = s
	return s, nil
}

// related returns the first part related to name by a relationship type
// ending in kind, "" if none.
func (r *presReader) related(name, kind string) (string, error) {
	rels, err := r.p.rels(name)
	if err != nil {
		return "", err
	}
	for _, id := range sortedIDs(rels) {
		if strings.HasSuffix(rels[id].Type, "/"+kind) {
			return rels[id].Target, nil
		}
	}
	return "", nil
}

func (r *presReader) slide(name string, number int, items *int) (Slide, error) {
	xs, err := r.part(name)
	if err != nil {
		return Slide{}, err
	}
	if len(r.parts) > MaxEntries {
		return Slide{}, fmt.Errorf("more than %d parts", MaxEntries)
	}
	s := Slide{Number: number, Shapes: []Shape{}}
	layoutName, err := r.related(name, "slideLayout")
	if err != nil {
		return s, err
	}
	var layout, master *xSlide
	if layoutName != "" {
		if layout, err = r.part(layoutName); err != nil {
			return s, err
		}
		masterName, err := r.related(layoutName, "slideMaster")
		if err != nil {
			return s, err
		}
		if masterName != "" {
			if master, err = r.part(masterName); err != nil {
				return s, err
			}
		}
	}
	inh := inheritance{layout: layout, master: master}
	for _, x := range xs.CSld.SpTree.Children {
		if !shapeElems[x.XMLName.Local] {
			continue
		}
		sh, err := readShape(x, inh, items)
		if err != nil {
			return s, err
		}
		s.Shapes = append(s.Shapes, sh)
	}
	var lines []string
	var walk func([]Shape)
	walk = func(shs []Shape) {
		for _, sh := range shs {
			if sh.HasText {
				lines = append(lines, sh.Text)
			}
			walk(sh.Shapes)
		}
	}
	walk(s.Shapes)
	s.Text = strings.Join(lines, "\n")
	s.Background = background(xs)
	if s.Background == "" && !ownBackground(xs) && master != nil {
		s.Background = background(master)
	}
	tr := xs.Transition
	for _, alt := range xs.Alt {
		switch {
		case alt.Choice != nil && alt.Choice.Transition != nil:
			tr = alt.Choice.Transition
		case alt.Fallback != nil && alt.Fallback.Transition != nil:
			tr = alt.Fallback.Transition
		}
	}
	if tr != nil {
		s.Transition = &Transition{Speed: tr.Spd, Duration: tr.Dur}
		for _, e := range tr.Effects {
			if e.XMLName.Local != "sndAc" && e.XMLName.Local != "extLst" {
				s.Transition.Type = e.XMLName.Local
				break
			}
		}
	}
	notesName, err := r.related(name, "notesSlide")
	if err != nil {
		return s, err
	}
	if notesName != "" {
		ns, err := r.part(notesName)
		if err != nil {
			return s, err
		}
		for _, x := range ns.CSld.SpTree.Children {
			if nv := x.nv(); nv != nil && nv.NvPr.Ph != nil && nv.NvPr.Ph.Type == "body" {
				sh, err := readShape(x, inheritance{}, items)
				if err != nil {
					return s, err
				}
				s.Notes = sh.Text
				break
			}
		}
	}
	return s, nil
}

// background is a slide's solid RGB background, "" if it has none.
func background(x *xSlide) string {
	if bg := x.CSld.Bg; bg != nil && bg.BgPr != nil && bg.BgPr.SolidFill != nil && bg.BgPr.SolidFill.SrgbClr != nil {
		return strings.ToUpper(bg.BgPr.SolidFill.SrgbClr.Val)
	}
	return ""
}

// ownBackground reports whether a slide sets a fill of its own other than
// none (a gradient, a picture), so that the master's does not show.
func ownBackground(x *xSlide) bool {
	bg := x.CSld.Bg
	return bg != nil && bg.BgPr != nil && bg.BgPr.NoFill == nil
}

func (x *xShape) nv() *xNv {
	for _, nv := range []*xNv{x.NvSp, x.NvPic, x.NvGF, x.NvGrp, x.NvCxn} {
		if nv != nil {
			return nv
		}
	}
	return nil
}

func (x *xShape) xfrm() *xXfrm {
	switch {
	case x.SpPr != nil && x.SpPr.Xfrm != nil:
		return x.SpPr.Xfrm
	case x.GrpSpPr != nil && x.GrpSpPr.Xfrm != nil:
		return x.GrpSpPr.Xfrm
	}
	return x.Xfrm
}

// inheritance is where a placeholder's position comes from when the slide
// does not set it: the layout's placeholder of the same index, else the
// master's of the same type.
type inheritance struct{ layout, master *xSlide }

// masterType maps a placeholder type to the master's placeholder it
// inherits from.
func masterType(t string) string {
	switch t {
	case "title", "ctrTitle":
		return "title"
	case "dt", "ftr", "sldNum":
		return t
	}
	return "body"
}

func phOf(x *xShape) (typ, idx string, ok bool) {
	nv := x.nv()
	if nv == nil || nv.NvPr.Ph == nil {
		return "", "", false
	}
	typ, idx = nv.NvPr.Ph.Type, nv.NvPr.Ph.Idx
	if typ == "" {
		typ = "obj"
	}
	if idx == "" {
		idx = "0"
	}
	return typ, idx, true
}

func findPh(tree *xSlide, match func(typ, idx string) bool) *xShape {
	if tree == nil {
		return nil
	}
	for i := range tree.CSld.SpTree.Children {
		x := &tree.CSld.SpTree.Children[i]
		if typ, idx, ok := phOf(x); ok && match(typ, idx) {
			return x
		}
	}
	return nil
}

// position fills a shape's position and size from its own transform, else
// from the placeholder it inherits from.
func (inh inheritance) position(x *xShape, sh *Shape) {
	chain := []*xShape{x}
	if typ, idx, ok := phOf(x); ok {
		lp := findPh(inh.layout, func(_, i string) bool { return i == idx })
		if lp != nil {
			chain = append(chain, lp)
			typ, _, _ = phOf(lp)
		}
		if mp := findPh(inh.master, func(t, _ string) bool { return masterType(t) == masterType(typ) }); mp != nil {
			chain = append(chain, mp)
		}
	}
	for _, c := range chain {
		xf := c.xfrm()
		if xf == nil {
			continue
		}
		if xf.Off != nil && sh.Left == nil {
			sh.Left, sh.Top = ptr(xf.Off.X), ptr(xf.Off.Y)
		}
		if xf.Ext != nil && sh.Width == nil {
			sh.Width, sh.Height = ptr(xf.Ext.Cx), ptr(xf.Ext.Cy)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func readShape(x xShape, inh inheritance, items *int) (Shape, error) {
	if err := count(items); err != nil {
		return Shape{}, err
	}
	var sh Shape
	if nv := x.nv(); nv != nil {
		sh.ID, sh.Name = nv.CNvPr.ID, nv.CNvPr.Name
	}
	typ, _, isPh := phOf(&x)
	switch x.XMLName.Local {
	case "sp":
		sh.HasText = true
		switch {
		case isPh:
			sh.Kind = "placeholder"
		case x.SpPr != nil && x.SpPr.CustGeom != nil:
			sh.Kind = "freeform"
		case x.NvSp != nil && x.NvSp.CNvSpPr.TxBox == "1" || x.NvSp != nil && x.NvSp.CNvSpPr.TxBox == "true":
			sh.Kind = "textbox"
		default:
			sh.Kind = "autoshape"
		}
	case "pic":
		sh.Kind = "picture"
	case "cxnSp":
		sh.Kind = "connector"
	case "grpSp":
		sh.Kind = "group"
		for _, c := range x.Children {
			if !shapeElems[c.XMLName.Local] {
				continue
			}
			child, err := readShape(c, inheritance{}, items)
			if err != nil {
				return sh, err
			}
			sh.Shapes = append(sh.Shapes, child)
		}
	case "graphicFrame":
		sh.Kind = "graphic"
		if x.Graphic != nil {
			switch d := x.Graphic.Data; {
			case d.Tbl != nil:
				sh.Kind = "table"
				sh.TableCols = len(d.Tbl.Cols)
				for _, row := range d.Tbl.Rows {
					cells := []TableCell{}
					for _, c := range row.Cells {
						if err := count(items); err != nil {
							return sh, err
						}
						ps := paragraphs(c.TxBody)
						cells = append(cells, TableCell{Text: joinText(ps), Paragraphs: ps})
					}
					sh.Table = append(sh.Table, cells)
				}
			case strings.HasSuffix(d.URI, "/chart"):
				sh.Kind = "chart"
			}
		}
	}
	if isPh {
		sh.Placeholder = typ
	}
	inh.position(&x, &sh)
	if sh.HasText {
		sh.Paragraphs = paragraphs(x.TxBody)
		sh.Text = joinText(sh.Paragraphs)
		*items += len(sh.Paragraphs)
	}
	return sh, nil
}

func joinText(ps []TextParagraph) string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Text
	}
	return strings.Join(lines, "\n")
}

// paragraphs reads a text body; a shape without one has a single empty
// paragraph, as an empty text frame does.
func paragraphs(tb *xTxBody) []TextParagraph {
	if tb == nil || len(tb.Ps) == 0 {
		return []TextParagraph{{Runs: []TextRun{}}}
	}
	out := make([]TextParagraph, 0, len(tb.Ps))
	for _, xp := range tb.Ps {
		p := TextParagraph{Runs: []TextRun{}}
		if xp.PPr != nil {
			p.hasPPr = true
			p.Align = xp.PPr.Algn
			p.lvl = xp.PPr.Lvl
			if p.lvl != nil {
				p.Level, _ = strconv.Atoi(*p.lvl)
			}
			if xp.PPr.BuChar != nil {
				p.Bullet = xp.PPr.BuChar.Char
			}
			if xp.PPr.BuClr != nil && xp.PPr.BuClr.SrgbClr != nil {
				p.buClr = xp.PPr.BuClr.SrgbClr.Val
			}
		}
		var text strings.Builder
		for _, it := range xp.Items {
			switch it.XMLName.Local {
			case "r":
				r := TextRun{}
				if it.T != nil {
					r.Text = *it.T
				}
				if rp := it.RPr; rp != nil {
					if rp.Latin != nil {
						r.Font = rp.Latin.Typeface
					}
					if v, err := strconv.Atoi(rp.Sz); err == nil {
						r.Size = float64(v) / 100
					}
					if rp.B != nil {
						r.Bold = ptr(*rp.B == "1" || *rp.B == "true")
					}
					if rp.I != nil {
						r.Italic = ptr(*rp.I == "1" || *rp.I == "true")
					}
					r.Underline, r.Strike = rp.U, rp.Strike
					if rp.SolidFill != nil && rp.SolidFill.SrgbClr != nil {
						r.Color = strings.ToUpper(rp.SolidFill.SrgbClr.Val)
					}
				}
				text.WriteString(r.Text)
				p.Runs = append(p.Runs, r)
			case "br":
				text.WriteByte('\v')
			case "fld":
				if it.T != nil {
					text.WriteString(*it.T)
				}
			}
		}
		p.Text = text.String()
		out = append(out, p)
	}
	return out
}
