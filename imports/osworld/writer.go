package osworld

import (
	"github.com/proctor-eval/proctor/check"
)

// Writer's metrics of one property read the document as package ooxml
// reads a docx file (a file probe read as docx: its body's paragraphs,
// each with its alignment and its runs' direct formatting), as
// python-docx reads them for OSWorld, written as predicates over that
// JSON; those that first compare the document with the expected one
// (compare_docx_files) add that document_equal check.

// docxPredicate: the result's document (a file of the desktop) makes the
// expression true; with the expected document given, it also equals it.
func docxPredicate(expr string, withExpected bool) metric {
	return func(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
		if len(opts) > 0 {
			return nil, "options"
		}
		p, why := c.vmFile(result)
		if why != "" {
			return nil, why
		}
		p.Read = "docx"
		var out []check.Spec
		if withExpected {
			eq, why := documentEqual("docx")(c, result, expected, nil)
			if why != "" {
				return nil, why
			}
			out = append(out, eq...)
		}
		return append(out, predicate(p, expr)), ""
	}
}

// fontNames: compare_font_names, every run of the body's paragraphs is
// in the expected font (its rFonts, as written).
func fontNames(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	want, why := ruleValue(expected, "font_name")
	if why != "" {
		return nil, why
	}
	s, ok := want.(string)
	if !ok || s == "" {
		return nil, "a font_name that is not a name"
	}
	return docxPredicate(`all(value.paragraphs, all(#.runs, #.font == `+exprString(s)+`))`, false)(c, result, nil, opts)
}

func init() {
	// is_first_line_centered: the first paragraph is centred (its own
	// alignment, as written).
	metrics["is_first_line_centered"] = docxPredicate(`len(value.paragraphs) > 0 && value.paragraphs[0].align == "center"`, false)
	metrics["compare_font_names"] = fontNames
	// check_italic_font_size_14: the document equals the expected one
	// and every italic run is of 14 points.
	metrics["check_italic_font_size_14"] = docxPredicate(`all(value.paragraphs, all(#.runs, !#.italic || #.size == 14))`, true)
	// evaluate_strike_through_last_paragraph: the document equals the
	// expected one and every run of its last paragraph is struck through.
	metrics["evaluate_strike_through_last_paragraph"] = docxPredicate(`len(value.paragraphs) > 0 && all(last(value.paragraphs).runs, #.strike == true)`, true)
}

// lineSpacing: compare_line_spacing, the document equals the expected
// one (compare_docx_files) with as many paragraphs, each of the same line
// spacing: document_equal's line_spacing option.
func lineSpacing(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	return documentEqual("docx")(c, result, expected, map[string]any{"line_spacing": true})
}

func init() { metrics["compare_line_spacing"] = lineSpacing }
