// Package ooxml reads Office Open XML files (xlsx workbooks, docx text
// documents, pptx presentations) as the evaluators need them, and
// compares two of a kind the way the desktop benchmarks' metrics do.
//
// Workbooks are read with github.com/xuri/excelize/v2, which brings the
// number-format engine (what a cell displays), merged ranges, panes, views,
// data validations and conditional formats; cell records and the style
// table are read from the parts directly, because excelize's Style drops
// what the comparisons look at (the "applied" colours as aRGB, styled empty
// cells).
//
// Text documents and presentations are read from their parts with
// archive/zip and encoding/xml. The Go readers of docx and pptx that exist
// do not fit: unidoc/unioffice is sold under a commercial licence,
// baliance/gooxml (its predecessor) and fumiama/go-docx are AGPL, and the
// permissive docx modules (nguyenthenguyen/docx, lukasjarosch/go-docx)
// replace text in templates without exposing runs, tables or images; no
// maintained Go module reads pptx shapes. The parts these comparisons read
// are small and well specified (ECMA-376 part 1), so a bounded reader of
// them is short.
//
// Every reader bounds what hostile input can cost: the number of zip
// entries, their total and per-part uncompressed size, the XML nesting depth
// and the number of elements kept.
package ooxml

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/proctor-eval/proctor/internal/zippart"
)

// Limits on a package.
const (
	// MaxEntries is the most zip entries a package may hold.
	MaxEntries = 10000
	// MaxUnzipped is the most bytes all of a package's entries may hold
	// uncompressed, as their headers declare (reading past a declared size
	// fails in archive/zip).
	MaxUnzipped = 256 << 20
	// maxPart bounds one XML part.
	maxPart = 64 << 20
	// maxDepth bounds the nesting of XML elements.
	maxDepth = 256
	// maxItems bounds the paragraphs, runs, shapes, cells ... kept from a
	// document.
	maxItems = 1 << 20
)

// ErrNotOOXML is returned for data that is not an Office Open XML package
// of the kind asked for.
var ErrNotOOXML = errors.New("not an Office Open XML file")

// pkg is an opened package: its entries by name.
type pkg struct {
	files map[string]*zip.File
}

// openPackage opens a zip package and checks its limits.
func openPackage(data []byte) (*pkg, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotOOXML, err)
	}
	if len(zr.File) > MaxEntries {
		return nil, fmt.Errorf("the package has %d entries, more than %d", len(zr.File), MaxEntries)
	}
	var total uint64
	p := &pkg{files: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if total > MaxUnzipped || f.UncompressedSize64 > MaxUnzipped {
			return nil, fmt.Errorf("the package unzips to more than %d bytes", MaxUnzipped)
		}
		p.files[strings.TrimPrefix(f.Name, "/")] = f
	}
	return p, nil
}

// has reports whether the package has the named part.
func (p *pkg) has(name string) bool { _, ok := p.files[name]; return ok }

// read returns a part's bytes, nil for a missing part.
func (p *pkg) read(name string) ([]byte, error) {
	f, ok := p.files[name]
	if !ok {
		return nil, nil
	}
	return zippart.Read(f, maxPart)
}

// size is a part's declared uncompressed size, -1 for a missing part.
func (p *pkg) size(name string) int64 {
	f, ok := p.files[name]
	if !ok {
		return -1
	}
	return int64(f.UncompressedSize64)
}

// rel is one relationship of a part.
type rel struct {
	ID       string `xml:"Id,attr"`
	Type     string `xml:"Type,attr"`
	Target   string `xml:"Target,attr"`
	External string `xml:"TargetMode,attr"`
}

// rels reads the relationships of the part named name, by id, with their
// targets resolved to part names.
func (p *pkg) rels(name string) (map[string]rel, error) {
	dir, file := path.Split(name)
	b, err := p.read(dir + "_rels/" + file + ".rels")
	if err != nil || b == nil {
		return map[string]rel{}, err
	}
	var doc struct {
		Rels []rel `xml:"Relationship"`
	}
	if err := decodeXML(b, &doc); err != nil {
		return nil, fmt.Errorf("%s relationships: %w", name, err)
	}
	out := make(map[string]rel, len(doc.Rels))
	for _, r := range doc.Rels {
		if r.External != "External" {
			if strings.HasPrefix(r.Target, "/") {
				r.Target = strings.TrimPrefix(r.Target, "/")
			} else {
				r.Target = path.Clean(path.Join(dir, r.Target))
			}
		}
		out[r.ID] = r
	}
	return out, nil
}

// decodeXML unmarshals b into v after checking its nesting depth.
func decodeXML(b []byte, v any) error {
	if err := checkDepth(b); err != nil {
		return err
	}
	return xml.Unmarshal(b, v)
}

// checkDepth fails for XML nested deeper than maxDepth or not well formed.
func checkDepth(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	depth := 0
	for {
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxDepth {
				return fmt.Errorf("XML nested deeper than %d elements", maxDepth)
			}
		case xml.EndElement:
			depth--
		}
	}
}

// decoder walks an XML part token by token, keeping the depth bounded.
type decoder struct {
	*xml.Decoder
	depth int
}

func newDecoder(b []byte) *decoder {
	return &decoder{Decoder: xml.NewDecoder(bytes.NewReader(b))}
}

// next returns the next token; io.EOF at the end.
func (d *decoder) next() (xml.Token, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok.(type) {
	case xml.StartElement:
		if d.depth++; d.depth > maxDepth {
			return nil, fmt.Errorf("XML nested deeper than %d elements", maxDepth)
		}
	case xml.EndElement:
		d.depth--
	}
	return tok, nil
}

// skip skips the rest of the element just started.
func (d *decoder) skip() error {
	start := d.depth
	for d.depth >= start {
		if _, err := d.next(); err != nil {
			return err
		}
	}
	return nil
}

func attr(e xml.StartElement, local string) (string, bool) {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

func attrOr(e xml.StartElement, local, def string) string {
	if v, ok := attr(e, local); ok {
		return v
	}
	return def
}

// toggle reads a boolean property element (w:b, w:i ...): present without
// a val is true, and "0", "false", "off" are false.
func toggle(e xml.StartElement) bool {
	switch v, ok := attr(e, "val"); {
	case !ok:
		return true
	case v == "0", v == "false", v == "off", v == "none":
		return false
	}
	return true
}
