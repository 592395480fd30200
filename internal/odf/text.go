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

// Span is a run of text with one character formatting.
type Span struct {
	Text      string `json:"text"`
	Bold      bool   `json:"bold"`
	Italic    bool   `json:"italic"`
	Underline bool   `json:"underline"`
}

// Paragraph is a paragraph or heading of a text document.
type Paragraph struct {
	Text    string `json:"text"`
	Style   string `json:"style"`   // the named paragraph style ("Heading 1", "Text Body"), past automatic styles
	Heading int    `json:"heading"` // outline level of a heading, 0 for a paragraph
	// Bold, Italic and Underline hold when every non-blank character has
	// the formatting.
	Bold      bool   `json:"bold"`
	Italic    bool   `json:"italic"`
	Underline bool   `json:"underline"`
	Align     string `json:"align,omitempty"` // start, center, end, justify (left and right read as start and end)
	Spans     []Span `json:"spans"`
}

// Document is the paragraphs of an ODT file in reading order (including
// those in tables and lists), with the whole text.
type Document struct {
	Text       string      `json:"text"`
	Paragraphs []Paragraph `json:"paragraphs"`
}

// Lines returns the paragraphs' texts.
func (d *Document) Lines() []string {
	out := make([]string, len(d.Paragraphs))
	for i, p := range d.Paragraphs {
		out[i] = p.Text
	}
	return out
}

// style is a style's formatting; nil fields are inherited.
type style struct {
	display   string
	parent    string
	automatic bool
	bold      *bool
	italic    *bool
	underline *bool
	align     string
}

type styles map[string]*style // by family + ":" + name

func (ss styles) read(b []byte, automatic bool) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	var cur *style
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case is(t, nsStyle, "style"):
				name, _ := attr(t, nsStyle, "name")
				family, _ := attr(t, nsStyle, "family")
				cur = &style{automatic: automatic}
				cur.display, _ = attr(t, nsStyle, "display-name")
				if cur.display == "" {
					cur.display = name
				}
				cur.parent, _ = attr(t, nsStyle, "parent-style-name")
				ss[family+":"+name] = cur
			case cur != nil && is(t, nsStyle, "text-properties"):
				if v, ok := attr(t, nsFO, "font-weight"); ok {
					b := v == "bold" || v >= "600" && v <= "900" && len(v) == 3
					cur.bold = &b
				}
				if v, ok := attr(t, nsFO, "font-style"); ok {
					b := v == "italic" || v == "oblique"
					cur.italic = &b
				}
				if v, ok := attr(t, nsStyle, "text-underline-style"); ok {
					b := v != "none"
					cur.underline = &b
				}
			case cur != nil && is(t, nsStyle, "paragraph-properties"):
				if v, ok := attr(t, nsFO, "text-align"); ok {
					cur.align = map[string]string{"left": "start", "right": "end"}[v]
					if cur.align == "" {
						cur.align = v
					}
				}
			}
		case xml.EndElement:
			if is2(t.Name, nsStyle, "style") {
				cur = nil
			}
		}
	}
}

// format is the effective character formatting.
type format struct{ bold, italic, underline bool }

// resolve applies a style chain (the style, then its parents) over base.
func (ss styles) resolve(family, name string, base format) format {
	var chain []*style
	seen := map[string]bool{}
	for name != "" && !seen[name] && len(chain) < 64 {
		seen[name] = true
		s, ok := ss[family+":"+name]
		if !ok {
			break
		}
		chain = append(chain, s)
		name = s.parent
	}
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		if s.bold != nil {
			base.bold = *s.bold
		}
		if s.italic != nil {
			base.italic = *s.italic
		}
		if s.underline != nil {
			base.underline = *s.underline
		}
	}
	return base
}

// named returns the first named (not automatic) style of the chain, and the
// alignment the chain sets.
func (ss styles) named(family, name string) (display, align string) {
	seen := map[string]bool{}
	for name != "" && !seen[name] {
		seen[name] = true
		s, ok := ss[family+":"+name]
		if !ok {
			return strings.ReplaceAll(name, "_20_", " "), align
		}
		if align == "" {
			align = s.align
		}
		if !s.automatic && display == "" {
			display = s.display
		}
		name = s.parent
	}
	return display, align
}

// ReadText reads the paragraphs of an ODT file.
func ReadText(data []byte) (*Document, error) {
	b, err := content(data)
	if err != nil {
		return nil, err
	}
	sb, err := part(data, "styles.xml")
	if err != nil {
		return nil, err
	}
	return textXML(b, sb)
}

// textXML reads the paragraphs of an ODT content.xml, with the named styles
// of styles.xml (nil when the package has none).
func textXML(b, sb []byte) (*Document, error) {
	ss := styles{}
	if sb != nil {
		if err := ss.read(sb, false); err != nil {
			return nil, fmt.Errorf("styles.xml: %w", err)
		}
	}
	if err := ss.read(b, true); err != nil {
		return nil, fmt.Errorf("content.xml: %w", err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	doc := &Document{}
	inBody, sawBody := false, false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("content.xml: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case is(t, nsOffice, "text"):
				inBody, sawBody = true, true
			case inBody && (is(t, nsText, "p") || is(t, nsText, "h")):
				p, err := readParagraph(d, t, ss)
				if err != nil {
					return nil, fmt.Errorf("content.xml: paragraph %d: %w", len(doc.Paragraphs)+1, err)
				}
				doc.Paragraphs = append(doc.Paragraphs, p)
			}
		case xml.EndElement:
			if is2(t.Name, nsOffice, "text") {
				inBody = false
			}
		}
	}
	if !sawBody {
		return nil, fmt.Errorf("%w: no text body in content.xml", ErrNotODF)
	}
	doc.Text = strings.Join(doc.Lines(), "\n")
	return doc, nil
}

// readParagraph reads a text:p or text:h just started, to its end.
func readParagraph(d *xml.Decoder, e xml.StartElement, ss styles) (Paragraph, error) {
	var p Paragraph
	if is(e, nsText, "h") {
		p.Heading = 1
		if v, ok := attr(e, nsText, "outline-level"); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= 10 {
				p.Heading = n
			}
		}
	}
	sname, _ := attr(e, nsText, "style-name")
	p.Style, p.Align = ss.named("paragraph", sname)
	if n, ok := strings.CutPrefix(p.Style, "Heading "); ok && p.Heading == 0 {
		if lvl, err := strconv.Atoi(n); err == nil && lvl > 0 && lvl <= 10 {
			p.Heading = lvl // a paragraph in a heading style is a heading to the reader
		}
	}
	base := ss.resolve("paragraph", sname, format{})
	stack := []format{base}
	var spans []Span
	add := func(s string) {
		f := stack[len(stack)-1]
		if n := len(spans); n > 0 && spans[n-1].Bold == f.bold && spans[n-1].Italic == f.italic && spans[n-1].Underline == f.underline {
			spans[n-1].Text += s
			return
		}
		spans = append(spans, Span{Text: s, Bold: f.bold, Italic: f.italic, Underline: f.underline})
	}
	depth := 1
	for depth > 0 {
		tok, err := d.Token()
		if err != nil {
			return p, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			top := stack[len(stack)-1]
			switch {
			case is(t, nsText, "span"):
				name, _ := attr(t, nsText, "style-name")
				top = ss.resolve("text", name, top)
			case is(t, nsText, "s"):
				n := 1
				if c, ok := attr(t, nsText, "c"); ok {
					fmt.Sscan(c, &n)
				}
				add(strings.Repeat(" ", min(max(n, 1), 1000)))
			case is(t, nsText, "tab"):
				add("\t")
			case is(t, nsText, "line-break"):
				add("\n")
			case is(t, nsText, "note"), is(t, nsOffice, "annotation"), is(t, nsText, "p"), is(t, nsText, "h"):
				if err := d.Skip(); err != nil {
					return p, err
				}
				depth--
				continue
			}
			stack = append(stack, top)
		case xml.EndElement:
			depth--
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			add(string(t))
		}
	}
	p.Spans = spans
	var text strings.Builder
	p.Bold, p.Italic, p.Underline = true, true, true
	visible := false
	for _, s := range spans {
		text.WriteString(s.Text)
		if strings.TrimSpace(s.Text) == "" {
			continue
		}
		visible = true
		p.Bold = p.Bold && s.Bold
		p.Italic = p.Italic && s.Italic
		p.Underline = p.Underline && s.Underline
	}
	if !visible {
		p.Bold, p.Italic, p.Underline = false, false, false
	}
	p.Text = text.String()
	if p.Spans == nil {
		p.Spans = []Span{}
	}
	return p, nil
}
