package imagecmp

import (
	"fmt"
	"image"
	"slices"
	"sort"
)

// Options choose a metric, by OSWorld's name, and its parameters.
type Options struct {
	Metric string `json:"metric"`
	// Threshold: check_brightness_decrease_and_structure_sim's largest
	// mean squared error (default 0.03).
	Threshold *float64 `json:"threshold,omitempty"`
	// SSIMThreshold: check_structure_sim_with_threshold's least SSIM
	// (default 0.85).
	SSIMThreshold *float64 `json:"ssim_threshold,omitempty"`
	// ReferenceBaseResult: compare_images scores the SSIM's gain over
	// this base, (ssim - base) / (1 - base), 0 under base + 0.01.
	ReferenceBaseResult *float64 `json:"reference_base_result,omitempty"`
}

// metric is one comparison: result and expected images in, a score in
// 0..1 and what was seen out. Scored metrics (compare_images) pass from
// the check's least score; the others score 1 or 0.
type metric struct {
	run    func(r, e image.Image, o Options) (float64, string)
	scored bool
	opts   []string // the options that apply
}

var metrics = map[string]metric{
	"compare_images":                              {run: compareImages, scored: true, opts: []string{"reference_base_result"}},
	"check_structure_sim":                         {run: structureSim(0.9)},
	"check_file_exists_and_structure_sim":         {run: structureSim(0.9)},
	"check_structure_sim_with_threshold":          {run: structureSimWithThreshold, opts: []string{"ssim_threshold"}},
	"check_structure_sim_resized":                 {run: structureSimResized},
	"check_image_mirror":                          {run: mirror},
	"check_brightness_decrease_and_structure_sim": {run: brightnessDecrease, opts: []string{"threshold"}},
	"check_contrast_increase_and_structure_sim":   {run: contrastIncrease},
	"check_saturation_increase_and_structure_sim": {run: saturationIncrease},
	"check_palette_and_structure_sim":             {run: paletteAndStructure},
}

// Metrics lists the metrics Compare knows, sorted.
func Metrics() []string {
	out := make([]string, 0, len(metrics))
	for k := range metrics {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Scored reports whether a metric gives a score between 0 and 1 (passing
// from a least score) rather than a pass or a fail.
func Scored(name string) bool { return metrics[name].scored }

// Validate checks that the metric is known and that the options set
// apply to it.
func (o Options) Validate() error {
	m, ok := metrics[o.Metric]
	if !ok {
		return fmt.Errorf("metric %q is not one of %v", o.Metric, Metrics())
	}
	for name, set := range map[string]bool{"threshold": o.Threshold != nil, "ssim_threshold": o.SSIMThreshold != nil, "reference_base_result": o.ReferenceBaseResult != nil} {
		if set && !slices.Contains(m.opts, name) {
			return fmt.Errorf("%s does not apply to %s", name, o.Metric)
		}
	}
	return nil
}

// Compare runs the metric on the result and the expected image: its
// score (0 or 1 but for scored metrics) and what it saw.
func Compare(result, expected image.Image, o Options) (float64, string, error) {
	if err := o.Validate(); err != nil {
		return 0, "", err
	}
	score, why := metrics[o.Metric].run(result, expected, o)
	return score, why, nil
}

func bool01(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

// ssimOf is the SSIM of two images' RGB planes, or why there is none.
func ssimOf(r, e image.Image) (float64, string) {
	rw, rh := size(r)
	ew, eh := size(e)
	if rw != ew || rh != eh {
		return 0, fmt.Sprintf("the image is %dx%d, the expected one %dx%d", rw, rh, ew, eh)
	}
	s, err := ssim(rgbPlanes(r), rgbPlanes(e))
	if err != nil {
		return 0, err.Error()
	}
	return s, ""
}

// structureSim: the two images are the same size and their SSIM reaches
// min.
func structureSim(min float64) func(r, e image.Image, _ Options) (float64, string) {
	return func(r, e image.Image, _ Options) (float64, string) {
		s, why := ssimOf(r, e)
		if why != "" {
			return 0, why
		}
		return bool01(s >= min), fmt.Sprintf("SSIM %.4f, at least %.2f wanted", s, min)
	}
}

func structureSimWithThreshold(r, e image.Image, o Options) (float64, string) {
	min := 0.85
	if o.SSIMThreshold != nil {
		min = *o.SSIMThreshold
	}
	return structureSim(min)(r, e, o)
}

// compareImages: the SSIM of the two images in greyscale, the larger
// resized to the smaller's size first (the smaller by width, then
// height).
func compareImages(r, e image.Image, o Options) (float64, string) {
	rw, rh := size(r)
	ew, eh := size(e)
	w, h := rw, rh
	if ew < rw || ew == rw && eh < rh {
		w, h = ew, eh
	}
	if rw != w || rh != h {
		r = resize(r, w, h)
	}
	if ew != w || eh != h {
		e = resize(e, w, h)
	}
	s, err := ssim(grayPlane(r), grayPlane(e))
	if err != nil {
		return 0, err.Error()
	}
	if b := o.ReferenceBaseResult; b != nil {
		if s >= *b+0.01 {
			return (s - *b) / (1 - *b), fmt.Sprintf("SSIM %.4f over the base %.4f", s, *b)
		}
		return 0, fmt.Sprintf("SSIM %.4f is not over the base %.4f", s, *b)
	}
	return s, fmt.Sprintf("SSIM %.4f", s)
}

// structureSimResized: the result, cropped to its opaque pixels where it
// has any transparency, resized to the expected size, reaches SSIM 0.9.
func structureSimResized(r, e image.Image, o Options) (float64, string) {
	if box, transparent := opaqueBox(r); transparent {
		if box.Empty() {
			return 0, "the image is transparent throughout"
		}
		r = crop(r, box)
	}
	ew, eh := size(e)
	return structureSim(0.9)(resize(r, ew, eh), e, o)
}

// opaqueBox is the bounds of the image's pixels that are not fully
// transparent, and whether any pixel is transparent at all.
func opaqueBox(img image.Image) (image.Rectangle, bool) {
	b := img.Bounds()
	box, transparent := image.Rectangle{}, false
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			_, _, _, a := rgb8(img.At(x, y))
			if a < 255 {
				transparent = true
			}
			if a > 0 {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box, transparent
}

func crop(img image.Image, box image.Rectangle) image.Image {
	out := image.NewNRGBA(image.Rect(0, 0, box.Dx(), box.Dy()))
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			out.Set(x-box.Min.X, y-box.Min.Y, img.At(x, y))
		}
	}
	return out
}

// mirror: the result flipped left to right reaches SSIM 0.99 with the
// expected image (the source it mirrors).
func mirror(r, e image.Image, o Options) (float64, string) {
	b := r.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			out.Set(b.Max.X-1-x, y-b.Min.Y, r.At(x, y))
		}
	}
	score, why := structureSim(0.99)(out, e, o)
	return score, "mirrored: " + why
}

// brightnessDecrease: the result is darker than the expected image (the
// original), and the two, each scaled to a mean brightness of 128, differ
// by a mean squared error under the threshold (default 0.03, on values
// 0..1).
func brightnessDecrease(r, e image.Image, o Options) (float64, string) {
	th := 0.03
	if o.Threshold != nil {
		th = *o.Threshold
	}
	br, be := mean(grayPlane(r)), mean(grayPlane(e))
	rn, en := normalized(r, br), normalized(e, be)
	if rn[0].w != en[0].w || rn[0].h != en[0].h {
		rn = normalized(resize(r, en[0].w, en[0].h), br)
	}
	mse := 0.0
	n := 0
	for c := range rn {
		for i, v := range rn[c].v {
			d := v/255 - en[c].v[i]/255
			mse += d * d
			n++
		}
	}
	mse /= float64(n)
	ok := br < be && mse < th
	return bool01(ok), fmt.Sprintf("brightness %.1f against the original's %.1f; after normalising, a mean squared error of %.4f (under %.4f wanted)", br, be, mse, th)
}

// normalized scales every channel by 128 over the image's brightness,
// clipped to 0..255 and truncated, as a point transform does.
func normalized(img image.Image, brightness float64) planes {
	ps := rgbPlanes(img)
	if brightness == 0 {
		return ps
	}
	f := 128 / brightness
	for c := range ps {
		for i, v := range ps[c].v {
			ps[c].v[i] = float64(int(min(255, max(0, v*f))))
		}
	}
	return ps
}

// contrastIncrease: the result's pixel values spread more (standard
// deviation) than the original's, and the two reach SSIM 0.65.
func contrastIncrease(r, e image.Image, o Options) (float64, string) {
	cr, ce := std(rgbPlanes(r)), std(rgbPlanes(e))
	s, why := ssimOf(r, e)
	if why != "" {
		return 0, why
	}
	return bool01(cr > ce && s >= 0.65), fmt.Sprintf("contrast %.2f against the original's %.2f, SSIM %.4f (at least 0.65 wanted)", cr, ce, s)
}

// saturationIncrease: the result is more saturated than the original,
// and their hue and value each reach SSIM 0.9.
func saturationIncrease(r, e image.Image, o Options) (float64, string) {
	hr, he := hsvPlanes(r), hsvPlanes(e)
	sr, se := mean(hr[1:2]), mean(he[1:2])
	hs, err := ssim(hr[0:1], he[0:1])
	if err != nil {
		return 0, err.Error()
	}
	vs, err := ssim(hr[2:3], he[2:3])
	if err != nil {
		return 0, err.Error()
	}
	ok := sr > se && hs >= 0.9 && vs >= 0.9
	return bool01(ok), fmt.Sprintf("saturation %.1f against the original's %.1f; hue SSIM %.4f, value SSIM %.4f (at least 0.9 wanted)", sr, se, hs, vs)
}

// paletteAndStructure: the result is a palette image and reaches SSIM
// 0.9 with the expected one.
func paletteAndStructure(r, e image.Image, o Options) (float64, string) {
	_, paletted := r.(*image.Paletted)
	s, why := ssimOf(r, e)
	if why != "" {
		return 0, why
	}
	return bool01(paletted && s >= 0.9), fmt.Sprintf("palette image %v, SSIM %.4f (at least 0.9 wanted)", paletted, s)
}
