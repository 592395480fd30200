// Package imagecmp compares images as the desktop benchmarks' image
// metrics do: the structural similarity index (SSIM, computed as
// scikit-image's structural_similarity with its defaults: a 7×7 uniform
// window, sample covariance, K1 0.01, K2 0.03, the 8-bit data range, the
// mean over the window-sized interior) and OSWorld's GIMP and VLC metrics
// built on it (Compare, by the metric's name).
//
// Written here rather than taken from a library: no maintained Go module
// computes SSIM as scikit-image does (the metrics' thresholds, 0.9 and
// 0.99, are calibrated on its numbers), and the rest is a few means over
// pixels. Images are decoded by the standard library (PNG, JPEG, GIF) and
// golang.org/x/image (BMP, WebP), and resized, where a metric resizes,
// with x/image's Catmull-Rom filter (the metrics' Lanczos differs in the
// last digits).
package imagecmp

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // decoders
	_ "image/jpeg"
	_ "image/png"
	"math"

	_ "golang.org/x/image/bmp"
	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"
)

// MaxPixels bounds an image decoded for a comparison: 16.7 million
// pixels (4096x4096) is over any screenshot or photo the tasks compare,
// and its planes take at most 400 MB. A larger one is refused before it
// is decoded.
const MaxPixels = 1 << 24

// Decode reads an image, refusing one over MaxPixels.
func Decode(b []byte) (image.Image, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("not an image: %v", err)
	}
	if int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, fmt.Errorf("image of %dx%d is over %d pixels", cfg.Width, cfg.Height, MaxPixels)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("not an image: %v", err)
	}
	return img, nil
}

// plane is one channel of an image, row by row, values 0..255.
type plane struct {
	w, h int
	v    []float64
}

// planes are an image's channels of one mode.
type planes []plane

func newPlanes(n, w, h int) planes {
	ps := make(planes, n)
	for i := range ps {
		ps[i] = plane{w: w, h: h, v: make([]float64, w*h)}
	}
	return ps
}

// rgb8 is a pixel's 8-bit red, green, blue and alpha.
func rgb8(c color.Color) (r, g, b, a uint8) {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return n.R, n.G, n.B, n.A
}

// RGB splits an image into red, green and blue planes (alpha dropped, as
// a conversion to RGB drops it).
func rgbPlanes(img image.Image) planes {
	b := img.Bounds()
	ps := newPlanes(3, b.Dx(), b.Dy())
	i := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := rgb8(img.At(x, y))
			ps[0].v[i], ps[1].v[i], ps[2].v[i] = float64(r), float64(g), float64(bl)
			i++
		}
	}
	return ps
}

// luma is ITU-R 601-2 luma in 8 bits, rounded as image libraries
// convert to greyscale ("L").
func luma(r, g, b uint8) float64 {
	return float64((uint32(r)*19595 + uint32(g)*38470 + uint32(b)*7471 + 0x8000) >> 16)
}

// grayPlane is the image's luma.
func grayPlane(img image.Image) planes {
	b := img.Bounds()
	ps := newPlanes(1, b.Dx(), b.Dy())
	i := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := rgb8(img.At(x, y))
			ps[0].v[i] = luma(r, g, bl)
			i++
		}
	}
	return ps
}

// hsvPlanes converts to hue, saturation and value, each 0..255, as
// 8-bit HSV images hold them.
func hsvPlanes(img image.Image) planes {
	b := img.Bounds()
	ps := newPlanes(3, b.Dx(), b.Dy())
	i := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r8, g8, b8, _ := rgb8(img.At(x, y))
			r, g, bl := float64(r8)/255, float64(g8)/255, float64(b8)/255
			mx, mn := math.Max(r, math.Max(g, bl)), math.Min(r, math.Min(g, bl))
			var h, s float64
			if mx > mn {
				s = (mx - mn) / mx
				d := mx - mn
				switch mx {
				case r:
					h = (g - bl) / d
				case g:
					h = 2 + (bl-r)/d
				default:
					h = 4 + (r-g)/d
				}
				h = math.Mod(h/6+1, 1)
			}
			ps[0].v[i] = math.Floor(h * 255)
			ps[1].v[i] = math.Floor(s * 255)
			ps[2].v[i] = math.Floor(mx * 255)
			i++
		}
	}
	return ps
}

// ErrSize is an SSIM asked of planes of different sizes or smaller than
// the window.
const ErrSize = Error("images of different sizes, or under 7 pixels a side, have no SSIM")

// Error is a sentinel error of the package.
type Error string

func (e Error) Error() string { return string(e) }

// win is the SSIM window's side.
const win = 7

// SSIM is the mean structural similarity of two images' planes, the
// mean over the planes; both must have as many planes of one size, at
// least 7×7.
func ssim(a, b planes) (float64, error) {
	if len(a) != len(b) || len(a) == 0 {
		return 0, ErrSize
	}
	sum := 0.0
	for i := range a {
		s, err := ssimPlane(a[i], b[i])
		if err != nil {
			return 0, err
		}
		sum += s
	}
	return sum / float64(len(a)), nil
}

func ssimPlane(x, y plane) (float64, error) {
	if x.w != y.w || x.h != y.h || x.w < win || x.h < win {
		return 0, ErrSize
	}
	w, h := x.w, x.h
	// Summed-area tables of x, y, x², y² and xy make every window's sums
	// four lookups.
	sx, sy, sxx, syy, sxy := table(w, h), table(w, h), table(w, h), table(w, h), table(w, h)
	for r := 0; r < h; r++ {
		for c := 0; c < w; c++ {
			a, b := x.v[r*w+c], y.v[r*w+c]
			sx.add(r, c, a)
			sy.add(r, c, b)
			sxx.add(r, c, a*a)
			syy.add(r, c, b*b)
			sxy.add(r, c, a*b)
		}
	}
	const np = win * win
	const covNorm = float64(np) / float64(np-1)
	c1 := math.Pow(0.01*255, 2)
	c2 := math.Pow(0.03*255, 2)
	pad := win / 2
	total, n := 0.0, 0
	for r := pad; r < h-pad; r++ {
		for c := pad; c < w-pad; c++ {
			r0, c0, r1, c1w := r-pad, c-pad, r+pad+1, c+pad+1
			ux := sx.sum(r0, c0, r1, c1w) / np
			uy := sy.sum(r0, c0, r1, c1w) / np
			uxx := sxx.sum(r0, c0, r1, c1w) / np
			uyy := syy.sum(r0, c0, r1, c1w) / np
			uxy := sxy.sum(r0, c0, r1, c1w) / np
			vx := covNorm * (uxx - ux*ux)
			vy := covNorm * (uyy - uy*uy)
			vxy := covNorm * (uxy - ux*uy)
			s := ((2*ux*uy + c1) * (2*vxy + c2)) / ((ux*ux + uy*uy + c1) * (vx + vy + c2))
			total += s
			n++
		}
	}
	return total / float64(n), nil
}

// sat is a summed-area table with a zero row and column before the
// image's.
type sat struct {
	w int
	v []float64
}

func table(w, h int) *sat { return &sat{w: w + 1, v: make([]float64, (w+1)*(h+1))} }

func (t *sat) add(r, c int, v float64) {
	i := (r+1)*t.w + c + 1
	t.v[i] = v + t.v[i-1] + t.v[i-t.w] - t.v[i-t.w-1]
}

// sum over rows r0..r1-1 and columns c0..c1-1.
func (t *sat) sum(r0, c0, r1, c1 int) float64 {
	return t.v[r1*t.w+c1] - t.v[r0*t.w+c1] - t.v[r1*t.w+c0] + t.v[r0*t.w+c0]
}

// resize scales img to w×h.
func resize(img image.Image, w, h int) image.Image {
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(out, out.Bounds(), img, img.Bounds(), draw.Src, nil)
	return out
}

// size is an image's width and height.
func size(img image.Image) (int, int) { return img.Bounds().Dx(), img.Bounds().Dy() }

// mean is the mean of every value of the planes.
func mean(ps planes) float64 {
	s, n := 0.0, 0
	for _, p := range ps {
		for _, v := range p.v {
			s += v
		}
		n += len(p.v)
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// std is the population standard deviation of every value of the planes.
func std(ps planes) float64 {
	m := mean(ps)
	s, n := 0.0, 0
	for _, p := range ps {
		for _, v := range p.v {
			s += (v - m) * (v - m)
		}
		n += len(p.v)
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(s / float64(n))
}
