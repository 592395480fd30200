package fastpng

import (
	"bytes"
	"hash/adler32"
	"image"
	"image/color"
	"image/png"
	"math/rand"
	"testing"
)

// screenLike makes an opaque image with flat areas, text-like noise and
// gradients.
func screenLike(w, h int, seed int64) *image.RGBA {
	r := rand.New(rand.NewSource(seed))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{240, 240, 240, 255}
			switch {
			case y%40 < 12 && x%9 < 5 && r.Intn(3) == 0:
				c = color.RGBA{20, 20, 20, 255}
			case x > w/2:
				c = color.RGBA{uint8(x), uint8(y), uint8(x + y), 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		w, h  int
		o     Options
		shift image.Point
	}{
		{64, 48, Options{}, image.Point{}},
		{64, 48, Options{Filter: Up, Bands: 5}, image.Point{}},
		{131, 77, Options{Filter: Sub, Bands: 3}, image.Point{}},
		{200, 3, Options{Filter: Up, Bands: 8}, image.Point{}},
		{1, 1, Options{Filter: Up}, image.Point{}},
		{50, 40, Options{Filter: Up, Bands: 4}, image.Point{X: 7, Y: 9}},
	} {
		src := screenLike(tc.w+tc.shift.X, tc.h+tc.shift.Y, int64(tc.w))
		img := src.SubImage(image.Rect(tc.shift.X, tc.shift.Y, tc.shift.X+tc.w, tc.shift.Y+tc.h)).(*image.RGBA)
		var buf bytes.Buffer
		if err := Encode(&buf, img, tc.o); err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%dx%d %+v: decode: %v", tc.w, tc.h, tc.o, err)
		}
		for y := 0; y < tc.h; y++ {
			for x := 0; x < tc.w; x++ {
				want := img.RGBAAt(tc.shift.X+x, tc.shift.Y+y)
				r, g, b, _ := got.At(got.Bounds().Min.X+x, got.Bounds().Min.Y+y).RGBA()
				if uint8(r>>8) != want.R || uint8(g>>8) != want.G || uint8(b>>8) != want.B {
					t.Fatalf("%dx%d %+v: pixel %d,%d differs", tc.w, tc.h, tc.o, x, y)
				}
			}
		}
	}
}

func TestAdler32Combine(t *testing.T) {
	data := []byte("a fairly long string of bytes, split in two parts at many places")
	for i := 0; i <= len(data); i++ {
		a, b := adler32.Checksum(data[:i]), adler32.Checksum(data[i:])
		if got := adler32Combine(a, b, len(data)-i); got != adler32.Checksum(data) {
			t.Fatalf("split at %d: %08x, want %08x", i, got, adler32.Checksum(data))
		}
	}
}

func BenchmarkEncode1080p(b *testing.B) {
	img := screenLike(1920, 1080, 1)
	for _, tc := range []struct {
		name string
		f    func() error
	}{
		{"fastpng-up", func() error { return Encode(&bytes.Buffer{}, img, Options{Filter: Up}) }},
		{"fastpng-sub", func() error { return Encode(&bytes.Buffer{}, img, Options{Filter: Sub}) }},
		{"image-png-bestspeed", func() error {
			return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&bytes.Buffer{}, img)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if err := tc.f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
