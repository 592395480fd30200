package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // decoders for read: image
	_ "image/png"

	_ "golang.org/x/image/bmp"

	"github.com/proctor-eval/proctor/internal/odf"
	"github.com/proctor-eval/proctor/internal/ooxml"
)

// unreadable is a file probe's file that exists but does not decode: the
// agent's work is wrong, not the environment.
type unreadable struct{ err error }

func (u unreadable) Error() string { return u.err.Error() }

// decodeFile turns a file's bytes into a probe value as Probe.Read or
// Probe.Cell asks.
func decodeFile(b []byte, read, cell string) (string, error) {
	if cell != "" {
		s, err := odf.ReadSpreadsheet(b)
		if err != nil {
			return "", err
		}
		c, err := s.Lookup(cell)
		if err != nil {
			return "", err
		}
		return c.ValueString(), nil
	}
	var v any
	switch read {
	case "ods":
		s, err := odf.ReadSpreadsheet(b)
		if err != nil {
			return "", err
		}
		sh, _ := s.Sheet("")
		v = struct {
			*odf.Spreadsheet
			Cells map[string]odf.Cell `json:"cells"` // the first sheet's
		}{s, sh.Cells}
	case "odt":
		d, err := odf.ReadText(b)
		if err != nil {
			return "", err
		}
		v = d
	case "odt-text":
		d, err := odf.ReadText(b)
		if err != nil {
			return "", err
		}
		return d.Text, nil
	case "xlsx":
		w, err := ooxml.ReadWorkbook(b)
		if err != nil {
			return "", err
		}
		sh, _ := w.Sheet("")
		v = struct {
			*ooxml.Workbook
			Cells map[string]ooxml.Cell `json:"cells"` // the first sheet's
		}{w, sh.Cells}
	case "docx", "docx-text":
		d, err := ooxml.ReadDocument(b)
		if err != nil {
			return "", err
		}
		if read == "docx-text" {
			return d.Text, nil
		}
		v = d
	case "pptx":
		p, err := ooxml.ReadPresentation(b)
		if err != nil {
			return "", err
		}
		v = p
	case "image":
		st, err := ImageStats(b)
		if err != nil {
			return "", err
		}
		v = st
	default:
		return "", fmt.Errorf("unknown read %q", read)
	}
	out, err := json.Marshal(v)
	return string(out), err
}

// GridSize is the number of rows and columns of Stats.Grid.
const GridSize = 10

// Stats describes a picture for predicates: size, mean colour, the share
// of dark pixels (luminance under 96 of 255) and of distinct colours, and
// the mean luminance and dark share of each cell of a 10x10 grid
// (grid[row][col], row 0 at the top).
type Stats struct {
	Width  int                         `json:"width"`
	Height int                         `json:"height"`
	Mean   [3]float64                  `json:"mean"` // red, green, blue, 0..255
	Dark   float64                     `json:"dark"` // 0..1
	Colors int                         `json:"colors"`
	Grid   [GridSize][GridSize]float64 `json:"grid"` // mean luminance 0..255
	DarkAt [GridSize][GridSize]float64 `json:"dark_at"`
}

// maxPixels bounds the pictures ImageStats decodes.
const maxPixels = 64 << 20

// ImageStats decodes a PNG, JPEG or BMP picture and measures it.
func ImageStats(b []byte) (Stats, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return Stats{}, fmt.Errorf("not a PNG, JPEG or BMP picture: %v", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxPixels {
		return Stats{}, fmt.Errorf("picture of %dx%d pixels: empty or too large", cfg.Width, cfg.Height)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return Stats{}, fmt.Errorf("picture does not decode: %v", err)
	}
	r := img.Bounds()
	st := Stats{Width: r.Dx(), Height: r.Dy()}
	var sum [3]float64
	var dark int
	var cellLum, cellDark, cellN [GridSize][GridSize]float64
	colors := map[uint32]bool{}
	const maxColors = 1 << 16
	for y := r.Min.Y; y < r.Max.Y; y++ {
		gy := (y - r.Min.Y) * GridSize / st.Height
		for x := r.Min.X; x < r.Max.X; x++ {
			gx := (x - r.Min.X) * GridSize / st.Width
			cr, cg, cb, _ := img.At(x, y).RGBA()
			R, G, B := float64(cr>>8), float64(cg>>8), float64(cb>>8)
			sum[0] += R
			sum[1] += G
			sum[2] += B
			lum := 0.299*R + 0.587*G + 0.114*B
			cellLum[gy][gx] += lum
			cellN[gy][gx]++
			if lum < 96 {
				dark++
				cellDark[gy][gx]++
			}
			if len(colors) < maxColors {
				colors[cr>>8<<16|cg>>8<<8|cb>>8] = true
			}
		}
	}
	n := float64(st.Width * st.Height)
	for i := range sum {
		st.Mean[i] = round2(sum[i] / n)
	}
	st.Dark = round4(float64(dark) / n)
	st.Colors = len(colors)
	for y := range GridSize {
		for x := range GridSize {
			if cellN[y][x] > 0 {
				st.Grid[y][x] = round2(cellLum[y][x] / cellN[y][x])
				st.DarkAt[y][x] = round4(cellDark[y][x] / cellN[y][x])
			}
		}
	}
	return st, nil
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }
func round4(f float64) float64 { return float64(int64(f*10000+0.5)) / 10000 }

// ReadProbe reads a probe's value from the evidence exactly as a check
// does. found is false where there is nothing to read: a missing file or
// element, a command that exited non-zero (val holds its output), no
// answer. A file that is there but does not decode as the probe asks
// gives an error for which Undecodable is true; any other error is
// evidence that could not be read.
func ReadProbe(ctx context.Context, p Probe, ev Evidence) (val string, found bool, err error) {
	c := &Check{Spec: Spec{Probe: &p}}
	return c.probe(ctx, ev)
}

// Undecodable reports whether a ReadProbe error is a file that does not
// decode as the probe asks (the agent's work is wrong, not the
// environment).
func Undecodable(err error) bool {
	var u unreadable
	return errors.As(err, &u)
}
