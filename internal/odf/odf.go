// Package odf reads OpenDocument files (ODS spreadsheets and ODT text
// documents) as the evaluators need them: cell values, texts and formulas;
// paragraphs with their style and character formatting. It reads the
// package's XML only, without an office suite.
package odf

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/internal/zippart"
)

// The namespaces of the elements read.
const (
	nsOffice = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
	nsTable  = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
	nsText   = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
	nsStyle  = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
	nsFO     = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
)

// maxPart bounds the size of one XML part read from a package.
const maxPart = 64 << 20

// ErrNotODF is returned for data that is not an OpenDocument package.
var ErrNotODF = errors.New("not an OpenDocument file")

// part reads a named member of the package; missing members read as nil.
func part(data []byte, name string) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotODF, err)
	}
	for _, f := range zr.File {
		if f.Name != name {
			continue
		}
		return zippart.Read(f, maxPart)
	}
	return nil, nil
}

// content reads content.xml, which every document has.
func content(data []byte) ([]byte, error) {
	b, err := part(data, "content.xml")
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("%w: no content.xml", ErrNotODF)
	}
	return b, nil
}

func attr(e xml.StartElement, space, local string) (string, bool) {
	for _, a := range e.Attr {
		if a.Name.Space == space && a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

func is(e xml.StartElement, space, local string) bool {
	return e.Name.Space == space && e.Name.Local == local
}

// textOf reads the text content of the element just started, down to its
// end: text:s stands for spaces, text:tab for a tab, text:line-break for a
// newline, and nested paragraphs are separated by newlines. Notes and
// annotations are skipped.
func textOf(d *xml.Decoder) (string, error) {
	var b strings.Builder
	depth := 1
	paras := 0
	for depth > 0 {
		tok, err := d.Token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case is(t, nsText, "s"):
				n := 1
				if c, ok := attr(t, nsText, "c"); ok {
					fmt.Sscan(c, &n)
				}
				b.WriteString(strings.Repeat(" ", min(max(n, 1), 1000)))
			case is(t, nsText, "tab"):
				b.WriteByte('\t')
			case is(t, nsText, "line-break"):
				b.WriteByte('\n')
			case is(t, nsText, "p"), is(t, nsText, "h"):
				if paras > 0 {
					b.WriteByte('\n')
				}
				paras++
			case is(t, nsText, "note"), is(t, nsOffice, "annotation"):
				if err := d.Skip(); err != nil {
					return "", err
				}
				depth--
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			b.Write(t)
		}
	}
	return b.String(), nil
}
