package ooxml

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Run is a stretch of a paragraph's text with one direct formatting.
type Run struct {
	Text      string  `json:"text"`
	Bold      bool    `json:"bold"`
	Italic    bool    `json:"italic"`
	Underline string  `json:"underline,omitempty"` // single, double, ...; empty when none
	Strike    bool    `json:"strike,omitempty"`
	Font      string  `json:"font,omitempty"`
	Size      float64 `json:"size,omitempty"`      // points
	Color     string  `json:"color,omitempty"`     // RRGGBB
	Highlight string  `json:"highlight,omitempty"` // yellow, green, ...
}

// Paragraph is a paragraph of a text document.
type Paragraph struct {
	Text  string `json:"text"`
	Style string `json:"style,omitempty"` // the paragraph style's name ("Heading 1")
	Align string `json:"align,omitempty"` // left, center, right, both, ... as written
	// LineSpacing is the paragraph's own line spacing as python-docx
	// reads it: "auto" rules as a multiple of a line (1.5), other rules
	// (exact, atLeast, none written) as the twips written ("360tw");
	// empty when the paragraph sets none.
	LineSpacing string `json:"line_spacing,omitempty"`
	// Bold, Italic and Underline hold when every run with non-blank text
	// has the formatting.
	Bold      bool  `json:"bold"`
	Italic    bool  `json:"italic"`
	Underline bool  `json:"underline"`
	Runs      []Run `json:"runs"`
}

// Table is a table of a text document: each cell's text (its paragraphs
// one a line), a merged cell's text repeated in every grid cell it covers.
type Table struct {
	Rows [][]string `json:"rows"`
}

// Image is a picture the document holds.
type Image struct {
	Name   string `json:"name"` // the part name, word/media/image1.png
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Document is a docx text document: the paragraphs of its body in order
// (those directly in the body, not in tables), its tables and images, and
// the paragraphs' texts one a line.
type Document struct {
	Text       string      `json:"text"`
	Paragraphs []Paragraph `json:"paragraphs"`
	Tables     []Table     `json:"tables"`
	Images     []Image     `json:"images"`
}

// Lines returns the paragraphs' texts.
func (d *Document) Lines() []string {
	out := make([]string, len(d.Paragraphs))
	for i, p := range d.Paragraphs {
		out[i] = p.Text
	}
	return out
}

// maxImageHash bounds the images whose bytes are hashed.
const maxImageHash = 32 << 20

// ReadDocument reads a docx file.
func ReadDocument(data []byte) (*Document, error) {
	p, err := openPackage(data)
	if err != nil {
		return nil, err
	}
	main, err := mainPart(p, "word/document.xml")
	if err != nil {
		return nil, err
	}
	b, err := p.read(main)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("%w: no %s", ErrNotOOXML, main)
	}
	rels, err := p.rels(main)
	if err != nil {
		return nil, err
	}
	styles := map[string]string{}
	for _, r := range rels {
		if strings.HasSuffix(r.Type, "/styles") {
			sb, err := p.read(r.Target)
			if err != nil {
				return nil, err
			}
			if styles, err = styleNames(sb); err != nil {
				return nil, fmt.Errorf("%s: %w", r.Target, err)
			}
		}
	}
	doc, err := documentXML(b, styles)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", main, err)
	}
	for _, id := range sortedIDs(rels) {
		r := rels[id]
		if !strings.HasSuffix(r.Type, "/image") || r.External == "External" {
			continue
		}
		img := Image{Name: r.Target, Size: p.size(r.Target)}
		if img.Size >= 0 && img.Size <= maxImageHash {
			if f, ok := p.files[r.Target]; ok {
				if rc, err := f.Open(); err == nil {
					h := sha256.New()
					if _, err := io.Copy(h, io.LimitReader(rc, maxImageHash+1)); err == nil {
						img.SHA256 = hex.EncodeToString(h.Sum(nil))
					}
					rc.Close()
				}
			}
		}
		doc.Images = append(doc.Images, img)
	}
	if doc.Images == nil {
		doc.Images = []Image{}
	}
	return doc, nil
}

// sortedIDs orders relationship ids as rId2 before rId10.
func sortedIDs(rels map[string]rel) []string {
	ids := make([]string, 0, len(rels))
	for id := range rels {
		ids = append(ids, id)
	}
	num := func(s string) int {
		n, _ := strconv.Atoi(strings.TrimLeft(s, "rId"))
		return n
	}
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && (num(ids[j]) < num(ids[j-1]) || num(ids[j]) == num(ids[j-1]) && ids[j] < ids[j-1]); j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}

// mainPart finds the package's main document through its root
// relationships, else takes def.
func mainPart(p *pkg, def string) (string, error) {
	rels, err := p.rels("")
	if err != nil {
		return "", err
	}
	for _, r := range rels {
		if strings.HasSuffix(r.Type, "/officeDocument") && p.has(r.Target) {
			return r.Target, nil
		}
	}
	if !p.has(def) {
		return "", fmt.Errorf("%w: no %s", ErrNotOOXML, def)
	}
	return def, nil
}

// styleNames maps the style ids of a styles part to their names.
func styleNames(b []byte) (map[string]string, error) {
	out := map[string]string{}
	if b == nil {
		return out, nil
	}
	var doc struct {
		Styles []struct {
			ID   string `xml:"styleId,attr"`
			Name struct {
				Val string `xml:"val,attr"`
			} `xml:"name"`
		} `xml:"style"`
	}
	if err := decodeXML(b, &doc); err != nil {
		return nil, err
	}
	for _, s := range doc.Styles {
		out[s.ID] = s.Name.Val
	}
	return out, nil
}

// documentXML reads word/document.xml.
func documentXML(b []byte, styles map[string]string) (*Document, error) {
	d := newDecoder(b)
	doc := &Document{Paragraphs: []Paragraph{}, Tables: []Table{}}
	items := 0
	inBody := false
	for {
		tok, err := d.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		t, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case t.Name.Local == "body":
			inBody = true
		case inBody && t.Name.Local == "p" && d.depth == 3:
			p, err := readParagraph(d, styles, &items)
			if err != nil {
				return nil, err
			}
			doc.Paragraphs = append(doc.Paragraphs, p)
		case inBody && t.Name.Local == "tbl":
			tb, err := readTable(d, styles, &items)
			if err != nil {
				return nil, err
			}
			doc.Tables = append(doc.Tables, tb)
		}
	}
	if !inBody {
		return nil, fmt.Errorf("%w: no document body", ErrNotOOXML)
	}
	doc.Text = strings.Join(doc.Lines(), "\n")
	return doc, nil
}

// count adds one to the items kept and fails past maxItems.
func count(items *int) error {
	if *items++; *items > maxItems {
		return fmt.Errorf("more than %d paragraphs, runs, shapes or cells", maxItems)
	}
	return nil
}

// readParagraph reads a w:p just started. Its text is that of its runs and
// of the runs of its hyperlinks; runs elsewhere (fields, content controls,
// tracked changes) are left out.
func readParagraph(d *decoder, styles map[string]string, items *int) (Paragraph, error) {
	var p Paragraph
	p.Runs = []Run{}
	start := d.depth
	for d.depth >= start {
		tok, err := d.next()
		if err != nil {
			return p, err
		}
		t, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if d.depth != start+1 {
			continue
		}
		switch t.Name.Local {
		case "pPr":
			if err := readPPr(d, &p, styles); err != nil {
				return p, err
			}
		case "r":
			if err := p.addRun(d, items); err != nil {
				return p, err
			}
		case "hyperlink":
			link := d.depth
			for d.depth >= link {
				tok, err := d.next()
				if err != nil {
					return p, err
				}
				if t, ok := tok.(xml.StartElement); ok && d.depth == link+1 {
					if t.Name.Local == "r" {
						err = p.addRun(d, items)
					} else {
						err = d.skip()
					}
					if err != nil {
						return p, err
					}
				}
			}
		default:
			if err := d.skip(); err != nil {
				return p, err
			}
		}
	}
	var text strings.Builder
	p.Bold, p.Italic, p.Underline = true, true, true
	any := false
	for _, r := range p.Runs {
		text.WriteString(r.Text)
		if strings.TrimSpace(r.Text) == "" {
			continue
		}
		any = true
		p.Bold = p.Bold && r.Bold
		p.Italic = p.Italic && r.Italic
		p.Underline = p.Underline && r.Underline != ""
	}
	if !any {
		p.Bold, p.Italic, p.Underline = false, false, false
	}
	p.Text = text.String()
	return p, nil
}

func (p *Paragraph) addRun(d *decoder, items *int) error {
	if err := count(items); err != nil {
		return err
	}
	r, err := readRun(d)
	if err != nil {
		return err
	}
	p.Runs = append(p.Runs, r)
	return nil
}

func readPPr(d *decoder, p *Paragraph, styles map[string]string) error {
	start := d.depth
	for d.depth >= start {
		tok, err := d.next()
		if err != nil {
			return err
		}
		t, ok := tok.(xml.StartElement)
		if !ok || d.depth != start+1 {
			continue
		}
		switch t.Name.Local {
		case "pStyle":
			id, _ := attr(t, "val")
			p.Style = id
			if name, ok := styles[id]; ok && name != "" {
				p.Style = name
			}
		case "jc":
			p.Align, _ = attr(t, "val")
		case "spacing":
			p.LineSpacing = lineSpacing(t)
		}
	}
	return nil
}

// lineSpacing reads a w:spacing's line spacing: its line as a multiple of
// 240 twips (a line of 12 points) when its rule is auto, else its twips;
// empty without a line.
func lineSpacing(t xml.StartElement) string {
	line, ok := attr(t, "line")
	if !ok {
		return ""
	}
	n, err := strconv.ParseFloat(line, 64)
	if err != nil {
		return line // a measure with its unit, compared as written
	}
	if rule, _ := attr(t, "lineRule"); rule == "auto" {
		return strconv.FormatFloat(n/240, 'f', -1, 64)
	}
	return strconv.FormatFloat(n, 'f', -1, 64) + "tw"
}

// readRun reads a w:r just started: its text (w:t; tabs, breaks and
// non-breaking hyphens as characters) and direct formatting.
func readRun(d *decoder) (Run, error) {
	var r Run
	var text strings.Builder
	start := d.depth
	inT, inRPr := false, false
	for d.depth >= start {
		tok, err := d.next()
		if err != nil {
			return r, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			rel := d.depth - start
			switch {
			case rel == 1 && t.Name.Local == "rPr":
				inRPr = true
			case inRPr && rel == 2:
				switch t.Name.Local {
				case "b":
					r.Bold = toggle(t)
				case "i":
					r.Italic = toggle(t)
				case "u":
					r.Underline = attrOr(t, "val", "single")
					if r.Underline == "none" {
						r.Underline = ""
					}
				case "strike":
					r.Strike = toggle(t)
				case "rFonts":
					r.Font = attrOr(t, "ascii", attrOr(t, "hAnsi", ""))
				case "sz":
					if v, err := strconv.ParseFloat(attrOr(t, "val", ""), 64); err == nil {
						r.Size = v / 2
					}
				case "color":
					r.Color = strings.ToUpper(attrOr(t, "val", ""))
				case "highlight":
					r.Highlight = attrOr(t, "val", "")
				}
			case rel == 1 && t.Name.Local == "t":
				inT = true
			case rel == 1 && (t.Name.Local == "tab" || t.Name.Local == "ptab"):
				text.WriteByte('\t')
			case rel == 1 && t.Name.Local == "br":
				if attrOr(t, "type", "textWrapping") == "textWrapping" {
					text.WriteByte('\n')
				}
			case rel == 1 && t.Name.Local == "cr":
				text.WriteByte('\n')
			case rel == 1 && t.Name.Local == "noBreakHyphen":
				text.WriteByte('-')
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "rPr":
				inRPr = false
			case "t":
				inT = false
			}
		case xml.CharData:
			if inT && text.Len() < maxPart {
				text.Write(t)
			}
		}
	}
	r.Text = text.String()
	return r, nil
}

// readTable reads a w:tbl just started.
func readTable(d *decoder, styles map[string]string, items *int) (Table, error) {
	tb := Table{Rows: [][]string{}}
	start := d.depth
	var row []string
	var merges []bool // whether each cell of the row continues a vertical merge
	var rowMerges [][]bool
	for d.depth >= start {
		tok, err := d.next()
		if err != nil {
			return tb, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			rel := d.depth - start
			switch {
			case rel == 1 && t.Name.Local == "tr":
				row, merges = []string{}, []bool{}
			case rel == 2 && t.Name.Local == "tc":
				if err := count(items); err != nil {
					return tb, err
				}
				text, span, cont, err := readCell(d, styles, items)
				if err != nil {
					return tb, err
				}
				for range min(max(span, 1), 64) {
					row = append(row, text)
					merges = append(merges, cont)
				}
			case rel >= 1 && t.Name.Local != "tr":
				if err := d.skip(); err != nil {
					return tb, err
				}
			}
		case xml.EndElement:
			if d.depth-start == 0 && t.Name.Local == "tr" {
				tb.Rows = append(tb.Rows, row)
				rowMerges = append(rowMerges, merges)
			}
		}
	}
	for i := 1; i < len(tb.Rows); i++ {
		for j, cont := range rowMerges[i] {
			if cont && j < len(tb.Rows[i-1]) {
				tb.Rows[i][j] = tb.Rows[i-1][j]
			}
		}
	}
	return tb, nil
}

// readCell reads a w:tc just started: its paragraphs' texts one a line,
// its grid span, and whether it continues a vertical merge.
func readCell(d *decoder, styles map[string]string, items *int) (string, int, bool, error) {
	var lines []string
	span, cont := 1, false
	start := d.depth
	for d.depth >= start {
		tok, err := d.next()
		if err != nil {
			return "", 0, false, err
		}
		t, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		rel := d.depth - start
		switch {
		case rel == 1 && t.Name.Local == "p":
			p, err := readParagraph(d, styles, items)
			if err != nil {
				return "", 0, false, err
			}
			lines = append(lines, p.Text)
		case rel == 2 && t.Name.Local == "gridSpan":
			span, _ = strconv.Atoi(attrOr(t, "val", "1"))
		case rel == 2 && t.Name.Local == "vMerge":
			cont = attrOr(t, "val", "continue") == "continue"
		case rel == 1 && t.Name.Local != "tcPr":
			if err := d.skip(); err != nil {
				return "", 0, false, err
			}
		}
	}
	return strings.Join(lines, "\n"), span, cont, nil
}
