package imagecmp

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"strings"
	"testing"
)

// scene is a deterministic test picture: a gradient sky, a green hill and
// a red box on the left (so that a mirror image differs), w×h.
func scene(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.NRGBA{uint8(60 + 100*y/h), uint8(120 + 80*y/h), 230, 255}
			if y > h/2+int(8*math.Sin(float64(x)/7)) {
				c = color.NRGBA{40, uint8(150 + (x*y)%40), 60, 255}
			}
			if x > w/8 && x < w/3 && y > h/4 && y < h/2 {
				c = color.NRGBA{200, 30, 40, 255}
			}
			img.Set(x, y, c)
		}
	}
	return img
}

// mapped applies f to every pixel's channels.
func mapped(img image.Image, f func(r, g, b float64) (float64, float64, float64)) *image.NRGBA {
	bd := img.Bounds()
	out := image.NewNRGBA(bd)
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, a := rgb8(img.At(x, y))
			nr, ng, nb := f(float64(r), float64(g), float64(b))
			clip := func(v float64) uint8 { return uint8(min(255, max(0, math.Round(v)))) }
			out.Set(x, y, color.NRGBA{clip(nr), clip(ng), clip(nb), a})
		}
	}
	return out
}

func flipped(img image.Image) *image.NRGBA {
	bd := img.Bounds()
	out := image.NewNRGBA(bd)
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			out.Set(bd.Max.X-1-x, y, img.At(x, y))
		}
	}
	return out
}

// roundTrip encodes and decodes as PNG, as a file of the desktop is read.
func roundTrip(t *testing.T, img image.Image) image.Image {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	out, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMetrics(t *testing.T) {
	base := scene(96, 64)
	noisy := mapped(base, func(r, g, b float64) (float64, float64, float64) { return r + 3, g - 2, b + 1 })
	darker := mapped(base, func(r, g, b float64) (float64, float64, float64) { return r * 0.7, g * 0.7, b * 0.7 })
	brighter := mapped(base, func(r, g, b float64) (float64, float64, float64) { return r*1.1 + 10, g*1.1 + 10, b*1.1 + 10 })
	stretch := func(k float64) func(r, g, b float64) (float64, float64, float64) {
		return func(r, g, b float64) (float64, float64, float64) {
			return 128 + (r-128)*k, 128 + (g-128)*k, 128 + (b-128)*k
		}
	}
	saturate := func(k float64) func(r, g, b float64) (float64, float64, float64) {
		return func(r, g, b float64) (float64, float64, float64) {
			m := (r + g + b) / 3
			return m + (r-m)*k, m + (g-m)*k, m + (b-m)*k
		}
	}
	// The scene in a palette of its own colours (it has under 256).
	var pal color.Palette
	seen := map[color.Color]bool{}
	for y := 0; y < 64; y++ {
		for x := 0; x < 96; x++ {
			if c := base.At(x, y); !seen[c] {
				seen[c] = true
				pal = append(pal, c)
			}
		}
	}
	if len(pal) > 256 {
		t.Fatalf("the scene has %d colours", len(pal))
	}
	paletted := image.NewPaletted(base.Bounds(), pal)
	draw.Draw(paletted, base.Bounds(), base, image.Point{}, draw.Src)
	// A cut-out: the scene in the middle of a larger transparent image.
	cutout := image.NewNRGBA(image.Rect(0, 0, 140, 100))
	draw.Draw(cutout, image.Rect(20, 18, 116, 82), base, image.Point{}, draw.Src)

	tests := []struct {
		metric           string
		result, expected image.Image
		opts             Options
		score            float64 // wanted: exactly for pass/fail metrics, at least for scored ones
		why              string
	}{
		{"check_structure_sim", base, base, Options{}, 1, "SSIM 1.0000"},
		{"check_structure_sim", noisy, base, Options{}, 1, "SSIM 0.9"},
		{"check_structure_sim", flipped(base), base, Options{}, 0, "at least 0.90 wanted"},
		{"check_structure_sim", scene(90, 64), base, Options{}, 0, "the image is 90x64, the expected one 96x64"},
		{"check_file_exists_and_structure_sim", noisy, base, Options{}, 1, ""},
		{"check_structure_sim_with_threshold", flipped(base), base, Options{SSIMThreshold: ptr(0.1)}, 1, "at least 0.10 wanted"},
		{"check_image_mirror", flipped(base), base, Options{}, 1, "mirrored: SSIM 1.0000"},
		{"check_image_mirror", base, base, Options{}, 0, "mirrored: SSIM"},
		{"check_brightness_decrease_and_structure_sim", darker, base, Options{}, 1, "under 0.0300 wanted"},
		{"check_brightness_decrease_and_structure_sim", brighter, base, Options{}, 0, ""},
		{"check_brightness_decrease_and_structure_sim", mapped(flipped(base), func(r, g, b float64) (float64, float64, float64) { return r * 0.7, g * 0.7, b * 0.7 }), base, Options{Threshold: ptr(0.001)}, 0, ""},
		{"check_contrast_increase_and_structure_sim", mapped(base, stretch(1.3)), base, Options{}, 1, ""},
		{"check_contrast_increase_and_structure_sim", mapped(base, stretch(0.7)), base, Options{}, 0, ""},
		{"check_saturation_increase_and_structure_sim", mapped(base, saturate(1.4)), base, Options{}, 1, ""},
		{"check_saturation_increase_and_structure_sim", mapped(base, saturate(0.5)), base, Options{}, 0, ""},
		{"check_palette_and_structure_sim", roundTrip(t, paletted), base, Options{}, 1, "palette image true"},
		{"check_palette_and_structure_sim", roundTrip(t, base), base, Options{}, 0, "palette image false"},
		{"check_structure_sim_resized", roundTrip(t, cutout), base, Options{}, 1, ""},
		{"compare_images", base, base, Options{}, 1, "SSIM 1.0000"},
		{"compare_images", noisy, resize(base, 192, 128), Options{}, 0.9, "SSIM 0.9"},
		{"compare_images", base, base, Options{ReferenceBaseResult: ptr(0.5)}, 1, "over the base 0.5000"},
	}
	for _, tc := range tests {
		tc.opts.Metric = tc.metric
		score, why, err := Compare(tc.result, tc.expected, tc.opts)
		if err != nil {
			t.Errorf("%s: %v", tc.metric, err)
			continue
		}
		ok := score == tc.score
		if Scored(tc.metric) {
			ok = score >= tc.score-1e-9
		}
		if !ok || !strings.Contains(why, tc.why) {
			t.Errorf("%s: score %.4f (%s), want %.2f with %q", tc.metric, score, why, tc.score, tc.why)
		}
	}
}

func ptr(v float64) *float64 { return &v }

// TestSSIMAgreesWithScikitImage compares with the numbers scikit-image's
// structural_similarity gives for the fixtures (testdata/README.md says
// how they were made and measured).
func TestSSIMAgreesWithScikitImage(t *testing.T) {
	read := func(name string) image.Image {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		img, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	a, b := read("a.png"), read("b.png")
	gray, err := ssim(grayPlane(a), grayPlane(b))
	if err != nil {
		t.Fatal(err)
	}
	rgb, err := ssim(rgbPlanes(a), rgbPlanes(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"grey", gray, 0.8641051686}, {"rgb", rgb, 0.8344751250}} {
		if math.Abs(c.got-c.want) > 1e-6 {
			t.Errorf("%s SSIM %.8f, scikit-image %.8f", c.name, c.got, c.want)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Metric: "check_sharper"}, `metric "check_sharper" is not one of`},
		{Options{Metric: "check_structure_sim", Threshold: ptr(1)}, "threshold does not apply to check_structure_sim"},
		{Options{Metric: "compare_images", ReferenceBaseResult: ptr(0.2)}, ""},
	} {
		err := tc.o.Validate()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	if _, err := Decode([]byte("GIF89a")); err == nil {
		t.Error("a truncated image decodes")
	}
}

// FuzzDecode: any bytes decode to an image or an error, within the
// pixel bound.
func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	png.Encode(&buf, scene(8, 8))
	f.Add(buf.Bytes())
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		img, err := Decode(b)
		if err == nil && img.Bounds().Dx()*img.Bounds().Dy() > MaxPixels {
			t.Fatalf("decoded %v", img.Bounds())
		}
	})
}
