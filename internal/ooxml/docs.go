package ooxml

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// DocOptions are the options of OSWorld's compare_docx_files, by its
// names. IgnoreBlanks is on unless set false.
type DocOptions struct {
	IgnoreBlanks     *bool `json:"ignore_blanks,omitempty"`
	IgnoreCase       bool  `json:"ignore_case,omitempty"`
	IgnoreOrder      bool  `json:"ignore_order,omitempty"`
	ContentOnly      bool  `json:"content_only,omitempty"`
	FuzzyMatch       bool  `json:"fuzzy_match,omitempty"`
	DeleteEmptyLines bool  `json:"delete_empty_lines,omitempty"`
	// LineSpacing also compares the paragraphs' own line spacing, one by
	// one, as OSWorld's compare_line_spacing does after the texts: the
	// same number of paragraphs, each with the same spacing.
	LineSpacing bool `json:"line_spacing,omitempty"`
}

var blanks = regexp.MustCompile(`\s+`)

// CompareDocuments scores two documents' body paragraphs as
// compare_docx_files does: 1 or 0, or a similarity in between with
// content_only or fuzzy_match.
func CompareDocuments(result, expected *Document, o DocOptions) (float64, string) {
	score, why := compareTexts(result, expected, o)
	if !o.LineSpacing || score < 1 {
		return score, why
	}
	pa, pb := result.Paragraphs, expected.Paragraphs
	if len(pa) != len(pb) {
		return 0, fmt.Sprintf("%d paragraphs, expected %d", len(pa), len(pb))
	}
	for i := range pa {
		if pa[i].LineSpacing != pb[i].LineSpacing {
			return 0, fmt.Sprintf("paragraph %d's line spacing is %q, expected %q", i+1, pa[i].LineSpacing, pb[i].LineSpacing)
		}
	}
	return 1, why + ", and their line spacing"
}

// compareTexts is compare_docx_files' score of the texts.
func compareTexts(result, expected *Document, o DocOptions) (float64, string) {
	a, b := result.Lines(), expected.Lines()
	if o.IgnoreOrder {
		slices.Sort(a)
		slices.Sort(b)
	}
	if o.DeleteEmptyLines {
		a = slices.DeleteFunc(a, func(s string) bool { return strings.TrimSpace(s) == "" })
		b = slices.DeleteFunc(b, func(s string) bool { return strings.TrimSpace(s) == "" })
	}
	joined := func(ps []string) string {
		s := strings.TrimSpace(blanks.ReplaceAllString(strings.Join(ps, "\n"), " "))
		if o.IgnoreCase {
			s = strings.ToLower(s)
		}
		return s
	}
	if o.ContentOnly || o.IgnoreBlanks == nil || *o.IgnoreBlanks {
		ta, tb := joined(a), joined(b)
		if o.ContentOnly || o.FuzzyMatch {
			r := Ratio(ta, tb)
			return r, fmt.Sprintf("the texts are %.4f alike", r)
		}
		if ta != tb {
			return 0, fmt.Sprintf("the texts differ at character %d", firstDiff(ta, tb)+1)
		}
		return 1, "the texts are the same, blanks aside"
	}
	if len(a) != len(b) {
		return 0, fmt.Sprintf("%d paragraphs, expected %d", len(a), len(b))
	}
	if o.FuzzyMatch {
		if len(a) == 0 {
			return 1, "no paragraphs"
		}
		var sum float64
		for i := range a {
			pa, pb := a[i], b[i]
			if o.IgnoreCase {
				pa, pb = strings.ToLower(pa), strings.ToLower(pb)
			}
			sum += Ratio(pa, pb)
		}
		r := sum / float64(len(a))
		return r, fmt.Sprintf("the paragraphs are %.4f alike on average", r)
	}
	for i := range a {
		pa, pb := a[i], b[i]
		if o.IgnoreCase {
			pa, pb = strings.ToLower(pa), strings.ToLower(pb)
		}
		if pa != pb {
			return 0, fmt.Sprintf("paragraph %d is %q, expected %q", i+1, shorten(pa), shorten(pb))
		}
	}
	return 1, fmt.Sprintf("the %d paragraphs are the same", len(a))
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func shorten(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
