package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // expected screenshots may be JPEG
	_ "image/png"
	"reflect"
	"strings"

	"github.com/proctor-eval/proctor/observe"
)

// FileEqual: a file of the environment equals an asset shipped with the
// suite, as text, as JSON, or as an image with a share of differing pixels
// up to tolerance.
const FileEqual Kind = "file_equal"

func init() {
	register(FileEqual, kindDef{
		fields:   []string{"file", "asset", "mode", "tolerance"},
		compile:  compileFileEqual,
		evaluate: evalFileEqual,
	})
}

func compileFileEqual(c *Check) error {
	s := c.Spec
	if s.File == "" {
		return ferr("file", "a file_equal check needs the file to compare")
	}
	if s.Asset == "" {
		return ferr("asset", "a file_equal check needs the expected asset")
	}
	switch s.Mode {
	case "", "text", "json", "image":
	default:
		return ferr("mode", "must be text, json or image, not %q", s.Mode)
	}
	if s.Tolerance > 1 {
		return ferr("tolerance", "is the share of differing pixels, 0..1")
	}
	return nil
}

func evalFileEqual(ctx context.Context, c *Check, in input) (bool, string, error) {
	s, ev := c.Spec, in.ev
	got, err := ev.ReadFile(ctx, s.File)
	if errors.Is(err, observe.ErrNotFound) {
		return failf("file %s does not exist", s.File)
	}
	if err != nil {
		return false, "", infraError{err}
	}
	want, err := ev.Asset(s.Asset)
	if err != nil {
		return false, "", infraError{fmt.Errorf("asset %s: %w", s.Asset, err)}
	}
	switch s.Mode {
	case "json":
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			return failf("file %s is not JSON: %v", s.File, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			return false, "", infraError{fmt.Errorf("asset %s is not JSON: %w", s.Asset, err)}
		}
		if reflect.DeepEqual(g, w) {
			return pass("file %s holds the same JSON as %s", s.File, s.Asset)
		}
		return failf("file %s holds different JSON from %s", s.File, s.Asset)
	case "image":
		share, err := imageDiff(got, want)
		if err != nil {
			return failf("file %s: %v", s.File, err)
		}
		if share <= s.Tolerance {
			return pass("%.4f of the pixels differ, within %.4f", share, s.Tolerance)
		}
		return failf("%.4f of the pixels differ, more than %.4f", share, s.Tolerance)
	default:
		norm := func(b []byte) string {
			return strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
		}
		if norm(got) == norm(want) {
			return pass("file %s has the same text as %s", s.File, s.Asset)
		}
		return failf("file %s differs from %s at line %d", s.File, s.Asset, firstDiffLine(norm(got), norm(want)))
	}
}

func firstDiffLine(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		if i >= len(al) || i >= len(bl) || al[i] != bl[i] {
			return i + 1
		}
	}
	return 0
}

// PixelTolerance is how far apart (0..255 per channel) two pixels may be
// and still count as equal: it absorbs compression noise.
const PixelTolerance = 8

// imageDiff returns the share of pixels that differ between two images.
func imageDiff(a, b []byte) (float64, error) {
	ia, _, err := image.Decode(bytes.NewReader(a))
	if err != nil {
		return 0, fmt.Errorf("not an image: %v", err)
	}
	ib, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return 0, fmt.Errorf("expected image cannot be decoded: %v", err)
	}
	ra, rb := ia.Bounds(), ib.Bounds()
	if ra.Dx() != rb.Dx() || ra.Dy() != rb.Dy() {
		return 1, nil
	}
	diff := 0
	for y := 0; y < ra.Dy(); y++ {
		for x := 0; x < ra.Dx(); x++ {
			r1, g1, b1, a1 := ia.At(ra.Min.X+x, ra.Min.Y+y).RGBA()
			r2, g2, b2, a2 := ib.At(rb.Min.X+x, rb.Min.Y+y).RGBA()
			if far(r1, r2) || far(g1, g2) || far(b1, b2) || far(a1, a2) {
				diff++
			}
		}
	}
	return float64(diff) / float64(ra.Dx()*ra.Dy()), nil
}

func far(a, b uint32) bool {
	d := int(a>>8) - int(b>>8)
	return d > PixelTolerance || d < -PixelTolerance
}
