package env

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/internal/fastpng"
	"github.com/proctor-eval/proctor/observe"
	xdraw "golang.org/x/image/draw"
)

// MaxShotScale bounds ShotOptions.Scale.
const MaxShotScale = 4

// FinishShot turns a captured screen, with its set-of-mark boxes already
// drawn, into a Shot as o asks: the pointer drawn at ptr (when o.Cursor
// and ptr is known), scaled by o.Scale, encoded as PNG or JPEG. Every
// environment that captures a framebuffer finishes its screenshots here.
func FinishShot(img *image.RGBA, o ShotOptions, ptr *image.Point, marks []observe.Mark, tree *observe.Tree) (Shot, error) {
	if o.Cursor && ptr != nil {
		drawCursor(img, ptr.X, ptr.Y)
	}
	var out image.Image = img
	if o.Scale > 0 && o.Scale != 1 {
		w, h := int(float64(img.Rect.Dx())*o.Scale), int(float64(img.Rect.Dy())*o.Scale)
		if w < 1 || h < 1 || o.Scale > MaxShotScale {
			return Shot{}, fmt.Errorf("%w: scale %g is out of range (above 0, at most %d, leaving a pixel)", ErrBadAction, o.Scale, MaxShotScale)
		}
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		xdraw.ApproxBiLinear.Scale(dst, dst.Rect, img, img.Rect, xdraw.Src, nil)
		out = dst
	}
	data, format, err := Encode(out, o.JPEG)
	if err != nil {
		return Shot{}, err
	}
	b := out.Bounds()
	return Shot{Data: data, Format: format, Size: action.Size{W: b.Dx(), H: b.Dy()}, Marks: marks, Tree: tree}, nil
}

// Encode writes img as PNG (an RGBA image with the parallel encoder of
// package fastpng), or as JPEG when quality is 1..100.
func Encode(img image.Image, quality int) ([]byte, string, error) {
	var buf bytes.Buffer
	if quality > 0 {
		if quality > 100 {
			return nil, "", fmt.Errorf("JPEG quality %d is above 100", quality)
		}
		err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality})
		return buf.Bytes(), "jpeg", err
	}
	if rgba, ok := img.(*image.RGBA); ok {
		err := fastpng.Encode(&buf, rgba, fastpng.Options{Filter: fastpng.Up})
		return buf.Bytes(), "png", err
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	err := enc.Encode(&buf, img)
	return buf.Bytes(), "png", err
}

// drawCursor draws a small arrow with its tip at (x, y).
func drawCursor(img *image.RGBA, x, y int) {
	for dy := 0; dy < 16; dy++ {
		for dx := 0; dx <= dy/2+dy/4 && dx < 10; dx++ {
			c := [4]uint8{255, 255, 255, 255}
			if dx == 0 || dx == dy/2+dy/4 || dy == 15 {
				c = [4]uint8{0, 0, 0, 255}
			}
			if px, py := x+dx, y+dy; image.Pt(px, py).In(img.Rect) {
				i := img.PixOffset(px, py)
				copy(img.Pix[i:i+4], c[:])
			}
		}
	}
}
