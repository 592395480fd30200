package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/proctor-eval/proctor/internal/imagecmp"
	"github.com/proctor-eval/proctor/internal/ooxml"
	"github.com/proctor-eval/proctor/observe"
)

// DocumentEqual: an office document of the environment compares with one
// shipped with the suite as the desktop benchmarks' metrics compare them:
// xlsx workbooks by compare_table's rules, docx documents as
// compare_docx_files and pptx presentations as compare_pptx_files do,
// with their options by their names (package ooxml); and images as
// OSWorld's image metrics compare them, the metric named in the options
// (package imagecmp).
const DocumentEqual Kind = "document_equal"

func init() {
	register(DocumentEqual, kindDef{
		fields:   []string{"file", "asset", "mode", "options", "min_score"},
		compile:  compileDocumentEqual,
		evaluate: evalDocumentEqual,
	})
}

// docCompare is a document_equal check's format and parsed options.
type docCompare struct {
	format string
	rules  []ooxml.TableRule
	docx   ooxml.DocOptions
	pptx   ooxml.SlideOptions
	image  imagecmp.Options
}

// decodeOptions reads a check's options into v, refusing unknown names.
func decodeOptions(opts map[string]any, v any) error {
	b, err := json.Marshal(opts)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func compileDocumentEqual(c *Check) error {
	s := c.Spec
	if s.File == "" {
		return ferr("file", "a document_equal check needs the file to compare")
	}
	dc := &docCompare{format: s.Mode}
	if dc.format == "" {
		dc.format = strings.TrimPrefix(strings.ToLower(path.Ext(s.File)), ".")
	}
	if s.MinScore != nil && dc.format != "docx" && dc.format != "image" {
		return ferr("min_score", "applies to docx comparisons, whose fuzzy options score 0..1, and to scored image metrics")
	}
	switch dc.format {
	case "xlsx":
		var o struct {
			Rules []ooxml.TableRule `json:"rules"`
		}
		if err := decodeOptions(s.Options, &o); err != nil {
			return ferr("options", "%v", err)
		}
		if len(o.Rules) == 0 {
			return ferr("options", "an xlsx comparison needs rules (sheet_data, check_cell, ...)")
		}
		for i := range o.Rules {
			if err := o.Rules[i].Prepare(s.Asset != ""); err != nil {
				return ferr("options", "rules[%d]: %v", i, err)
			}
		}
		dc.rules = o.Rules
	case "docx":
		if err := decodeOptions(s.Options, &dc.docx); err != nil {
			return ferr("options", "%v", err)
		}
	case "pptx":
		if err := decodeOptions(s.Options, &dc.pptx); err != nil {
			return ferr("options", "%v", err)
		}
		if u := dc.pptx.Unsupported(); u != nil {
			return ferr("options", "%s is not supported", strings.Join(u, ", "))
		}
	case "image":
		if err := decodeOptions(s.Options, &dc.image); err != nil {
			return ferr("options", "%v", err)
		}
		if err := dc.image.Validate(); err != nil {
			return ferr("options", "%v", err)
		}
		if s.MinScore != nil && !imagecmp.Scored(dc.image.Metric) {
			return ferr("min_score", "applies to a scored image metric (compare_images), not to %s, which passes or fails", dc.image.Metric)
		}
	default:
		return ferr("mode", "must be xlsx, docx, pptx or image (or the file's extension one of the first three), not %q", dc.format)
	}
	if s.Asset == "" && dc.format != "xlsx" {
		return ferr("asset", "a document_equal check of %s needs the expected asset", dc.format)
	}
	c.doc = dc
	return nil
}

func evalDocumentEqual(ctx context.Context, c *Check, in input) (bool, string, error) {
	s, ev, dc := c.Spec, in.ev, c.doc
	got, err := ev.ReadFile(ctx, s.File)
	if errors.Is(err, observe.ErrNotFound) {
		return failf("file %s does not exist", s.File)
	}
	if err != nil {
		return false, "", infraError{err}
	}
	var want []byte
	if s.Asset != "" {
		if want, err = ev.Asset(s.Asset); err != nil {
			return false, "", infraError{fmt.Errorf("asset %s: %w", s.Asset, err)}
		}
	}
	badAsset := func(err error) (bool, string, error) {
		return false, "", infraError{fmt.Errorf("asset %s: %w", s.Asset, err)}
	}
	switch dc.format {
	case "xlsx":
		r, err := ooxml.ReadWorkbook(got)
		if err != nil {
			return failf("file %s: %v", s.File, err)
		}
		var e *ooxml.Workbook
		if want != nil {
			if e, err = ooxml.ReadWorkbook(want); err != nil {
				return badAsset(err)
			}
		}
		ok, why := ooxml.CompareTables(r, e, dc.rules)
		return ok, why, nil
	case "docx":
		r, err := ooxml.ReadDocument(got)
		if err != nil {
			return failf("file %s: %v", s.File, err)
		}
		e, err := ooxml.ReadDocument(want)
		if err != nil {
			return badAsset(err)
		}
		score, why := ooxml.CompareDocuments(r, e, dc.docx)
		need := 1.0
		if s.MinScore != nil {
			need = *s.MinScore
		}
		if score >= need {
			return pass("%s (score %.4f, at least %.4f)", why, score, need)
		}
		return failf("%s (score %.4f, under %.4f)", why, score, need)
	case "image":
		r, err := imagecmp.Decode(got)
		if err != nil {
			return failf("file %s: %v", s.File, err)
		}
		e, err := imagecmp.Decode(want)
		if err != nil {
			return badAsset(err)
		}
		score, why, err := imagecmp.Compare(r, e, dc.image)
		if err != nil {
			return false, "", err
		}
		need := 1.0
		if s.MinScore != nil {
			need = *s.MinScore
		}
		if score >= need {
			return pass("%s: %s (score %.4f, at least %.4f)", dc.image.Metric, why, score, need)
		}
		return failf("%s: %s (score %.4f, under %.4f)", dc.image.Metric, why, score, need)
	default:
		r, err := ooxml.ReadPresentation(got)
		if err != nil {
			return failf("file %s: %v", s.File, err)
		}
		e, err := ooxml.ReadPresentation(want)
		if err != nil {
			return badAsset(err)
		}
		ok, why := ooxml.ComparePresentations(r, e, dc.pptx)
		return ok, why, nil
	}
}
