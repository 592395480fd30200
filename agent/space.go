package agent

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // screenshots arrive as PNG or JPEG
	"math"
	"strconv"
	"strings"

	"golang.org/x/image/draw"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/internal/fastpng"
)

// Coordinate spaces. A model does not always answer in screen pixels: a
// model may be shown a resized screenshot and answer in that image's
// pixels (UI-TARS after its smart resize, Anthropic's and OpenAI's
// computer-use tools at the display size they were declared), or in
// fractions of the image (ratio, k). A Space says which image the model
// is shown and how its coordinates read; ToScreen is the one way from a
// model's point to a screen pixel.

// SmartResize is the --unit of a model that answers in pixels of the
// screenshot after UI-TARS's (and Qwen2.5-VL's) smart resize: both sides
// rounded to multiples of SmartResizeFactor, the area kept within a pixel
// budget. It is not a unit of action.Point: the agent parses such replies
// in pixels of the resized image and maps them to the screen.
const SmartResize action.Unit = "smart-resize"

// The smart resize's constants, those of UI-TARS 1.5.
const (
	SmartResizeFactor = 28              // sides are multiples of this (the vision encoder's patch of 14, merged 2x2)
	DefaultMinPixels  = 100 * 28 * 28   // 78,400: the smallest image area
	DefaultMaxPixels  = 16384 * 28 * 28 // 12,845,056: UI-TARS 1.5's pixel budget
	maxAspect         = 200             // a longer side over 200 times the shorter is refused
	minBudget         = SmartResizeFactor * SmartResizeFactor
)

// Space is the coordinate space a model answers in: the screen of the
// environment, the image the model is shown (the screenshot, resized when
// the two differ) and the unit of the model's coordinates in that image.
type Space struct {
	Screen action.Size `json:"screen"` // the environment's screen
	Image  action.Size `json:"image"`  // the screenshot as the model receives it
	// Unit is how the model's coordinates read: px (pixels of Image),
	// ratio (0..1) or k (0..1000) of Image.
	Unit action.Unit `json:"unit"`
	// Rule says how Image was chosen, e.g. "screen", "smart-resize
	// (factor 28, 78400..12845056 pixels)", "FWXGA", "declared display".
	Rule string `json:"rule"`
}

// ScreenSpace is the space of a model shown the screen as it is, writing
// coordinates in unit (px, ratio or k; empty means px).
func ScreenSpace(screen action.Size, unit action.Unit) (Space, error) {
	if err := positive("screen", screen); err != nil {
		return Space{}, err
	}
	switch unit {
	case "":
		unit = action.Pixels
	case action.Pixels, action.Ratio, action.Thousand:
	default:
		return Space{}, fmt.Errorf("coordinate unit %q: px, ratio, k or %s", unit, SmartResize)
	}
	return Space{Screen: screen, Image: screen, Unit: unit, Rule: "screen"}, nil
}

// SmartResizeSpace is the space of a model that answers in pixels of the
// screenshot after the smart resize with the given pixel budget (0:
// DefaultMaxPixels).
func SmartResizeSpace(screen action.Size, maxPixels int) (Space, error) {
	if maxPixels == 0 {
		maxPixels = DefaultMaxPixels
	}
	minPixels := min(DefaultMinPixels, maxPixels)
	img, err := SmartResizeSize(screen, minPixels, maxPixels)
	if err != nil {
		return Space{}, err
	}
	return Space{Screen: screen, Image: img, Unit: action.Pixels,
		Rule: fmt.Sprintf("smart-resize (factor %d, %d..%d pixels)", SmartResizeFactor, minPixels, maxPixels)}, nil
}

// SmartResizeSize is the size UI-TARS's smart resize gives an image of
// size s: each side rounded to the nearest multiple of 28 (half to even,
// as Python rounds); when the area is then above maxPixels both sides are
// scaled down by the same factor and floored to multiples of 28, when it
// is below minPixels scaled up and ceiled.
func SmartResizeSize(s action.Size, minPixels, maxPixels int) (action.Size, error) {
	if err := positive("screen", s); err != nil {
		return action.Size{}, err
	}
	if maxPixels < minBudget {
		return action.Size{}, fmt.Errorf("pixel budget %d is below one %dx%d patch (%d pixels)", maxPixels, SmartResizeFactor, SmartResizeFactor, minBudget)
	}
	if minPixels > maxPixels {
		return action.Size{}, fmt.Errorf("smallest area %d is above the pixel budget %d", minPixels, maxPixels)
	}
	w, h := float64(s.W), float64(s.H)
	if max(w, h)/min(w, h) > maxAspect {
		return action.Size{}, fmt.Errorf("screen %dx%d: the longer side is over %d times the shorter", s.W, s.H, maxAspect)
	}
	const f = SmartResizeFactor
	hb := max(f, int(math.RoundToEven(h/f))*f)
	wb := max(f, int(math.RoundToEven(w/f))*f)
	switch {
	case hb*wb > maxPixels:
		beta := math.Sqrt(h * w / float64(maxPixels))
		hb = max(f, int(math.Floor(h/beta/f))*f)
		wb = max(f, int(math.Floor(w/beta/f))*f)
	case hb*wb < minPixels:
		beta := math.Sqrt(float64(minPixels) / (h * w))
		hb = int(math.Ceil(h*beta/f)) * f
		wb = int(math.Ceil(w*beta/f)) * f
	}
	return action.Size{W: wb, H: hb}, nil
}

// The scaling targets of Anthropic's computer-use reference code, tried
// in this order: a screen of about the same aspect ratio (within 0.02)
// and wider than the target is shown at the target's size.
var anthropicTargets = []struct {
	name string
	size action.Size
}{
	{"XGA", action.Size{W: 1024, H: 768}},   // 4:3
	{"WXGA", action.Size{W: 1280, H: 800}},  // 16:10
	{"FWXGA", action.Size{W: 1366, H: 768}}, // about 16:9
}

// The largest image the Messages API takes without shrinking it on its
// side (for the computer_20250124 tool's models): 1568 pixels on the long
// edge and about 1.15 megapixels.
const (
	anthropicMaxEdge   = 1568
	anthropicMaxPixels = 1_150_000
)

// AnthropicSpace is the space of Anthropic's computer-use tool on a
// screen: the display declared to the model, in pixels. As in Anthropic's
// reference code, a screen of a target's aspect ratio and larger than it
// is shown at XGA (1024x768), WXGA (1280x800) or FWXGA (1366x768); a
// screen of another shape that the API would shrink (over 1568 pixels on
// a side or 1.15 megapixels) is scaled down, keeping its aspect ratio,
// to the largest size it keeps as sent; any other screen is shown as it
// is.
func AnthropicSpace(screen action.Size) (Space, error) {
	if err := positive("screen", screen); err != nil {
		return Space{}, err
	}
	ratio := float64(screen.W) / float64(screen.H)
	for _, t := range anthropicTargets {
		if math.Abs(float64(t.size.W)/float64(t.size.H)-ratio) < 0.02 {
			if t.size.W < screen.W {
				return Space{Screen: screen, Image: t.size, Unit: action.Pixels, Rule: t.name}, nil
			}
			break
		}
	}
	w, h := float64(screen.W), float64(screen.H)
	s := min(1, anthropicMaxEdge/max(w, h), math.Sqrt(anthropicMaxPixels/(w*h)))
	if s == 1 {
		return Space{Screen: screen, Image: screen, Unit: action.Pixels, Rule: "screen"}, nil
	}
	img := action.Size{W: max(1, int(w*s)), H: max(1, int(h*s))}
	return Space{Screen: screen, Image: img, Unit: action.Pixels,
		Rule: fmt.Sprintf("fit %d px, %d pixels", anthropicMaxEdge, anthropicMaxPixels)}, nil
}

// DisplaySpace is the space of a model told that the display is display
// (OpenAI's computer-use tool): the screenshot is scaled to it and the
// model's pixels are mapped back. An empty display is the screen.
func DisplaySpace(screen, display action.Size) (Space, error) {
	if err := positive("screen", screen); err != nil {
		return Space{}, err
	}
	if display == (action.Size{}) || display == screen {
		return Space{Screen: screen, Image: screen, Unit: action.Pixels, Rule: "screen"}, nil
	}
	if err := positive("declared display", display); err != nil {
		return Space{}, err
	}
	return Space{Screen: screen, Image: display, Unit: action.Pixels, Rule: "declared display"}, nil
}

// SpaceFor is the space of the prompt's unit on a screen.
func SpaceFor(screen action.Size, pc PromptConfig) (Space, error) {
	switch pc.Unit {
	case SmartResize:
		return SmartResizeSpace(screen, pc.MaxPixels)
	case "":
		return ScreenSpace(screen, formatUnit(pc.Format))
	}
	return ScreenSpace(screen, pc.Unit)
}

// formatUnit is the unit of bare coordinates in format f when none is
// asked for, as its parser reads them: thousandths for OS-Atlas and
// UI-TARS, pixels for the rest.
func formatUnit(f action.Format) action.Unit {
	if f == action.FormatOSAtlas || f == action.FormatUITARS {
		return action.Thousand
	}
	return action.Pixels
}

func positive(what string, s action.Size) error {
	if s.W <= 0 || s.H <= 0 {
		return fmt.Errorf("%s size %dx%d is not positive", what, s.W, s.H)
	}
	return nil
}

// Scaled reports whether the model is shown another size than the
// screen's.
func (s Space) Scaled() bool { return s.Image != s.Screen }

// Scale is how many screen pixels one image pixel spans on each axis.
func (s Space) Scale() (x, y float64) {
	return float64(s.Screen.W) / float64(s.Image.W), float64(s.Screen.H) / float64(s.Image.H)
}

// String names both sizes, e.g. "image 1366x768 of screen 1920x1080 (FWXGA)".
func (s Space) String() string {
	return fmt.Sprintf("image %dx%d of screen %dx%d (%s, %s)", s.Image.W, s.Image.H, s.Screen.W, s.Screen.H, s.Rule, s.Unit)
}

// ToScreen maps a point the model wrote to the screen pixel it means. A
// point in pixels (or without a unit) is in pixels of the image: it must
// lie inside the image, and image pixel i covers the screen from i*scale
// to (i+1)*scale, so its centre lands on screen pixel
// floor((i+0.5)*scale). A ratio or k point is a fraction of the image,
// which is the fraction of the screen. A point outside the image is an
// error naming both sizes.
func (s Space) ToScreen(p action.Point) (x, y int, err error) {
	if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
		return 0, 0, fmt.Errorf("coordinate (%v, %v) is not a number", p.X, p.Y)
	}
	switch p.Unit {
	case "", action.Pixels:
		if p.X < 0 || p.Y < 0 || p.X >= float64(s.Image.W) || p.Y >= float64(s.Image.H) {
			return 0, 0, fmt.Errorf("point (%s, %s) is outside the model's %dx%d image (screen %dx%d)",
				num(p.X), num(p.Y), s.Image.W, s.Image.H, s.Screen.W, s.Screen.H)
		}
		return toPixel(p.X, s.Image.W, s.Screen.W), toPixel(p.Y, s.Image.H, s.Screen.H), nil
	case action.Ratio, action.Thousand:
		top := 1.0
		if p.Unit == action.Thousand {
			top = 1000
		}
		if p.X < 0 || p.Y < 0 || p.X > top || p.Y > top {
			return 0, 0, fmt.Errorf("point (%s, %s) is outside 0..%s of the model's %dx%d image (screen %dx%d)",
				num(p.X), num(p.Y), num(top), s.Image.W, s.Image.H, s.Screen.W, s.Screen.H)
		}
		return p.Pixels(s.Screen)
	}
	return 0, 0, fmt.Errorf("unknown coordinate unit %q", p.Unit)
}

// toPixel maps image coordinate v (of an axis of n pixels) to the screen
// pixel (of an axis of m) under its centre.
func toPixel(v float64, n, m int) int {
	if n == m {
		return min(int(math.Round(v)), m-1) // the identity, rounding as action.Point.Pixels does
	}
	return min(int(math.Floor((v+0.5)*float64(m)/float64(n))), m-1)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// FromScreen is the point in the model's space that ToScreen maps to
// screen pixel (x, y), or to the screen pixel nearest it when the image
// is smaller than the screen: the reverse mapping, for showing the model
// screen positions (the accessibility tree) in its own coordinates.
func (s Space) FromScreen(x, y int) action.Point {
	switch s.Unit {
	case action.Ratio:
		return action.Point{X: (float64(x) + 0.5) / float64(s.Screen.W), Y: (float64(y) + 0.5) / float64(s.Screen.H), Unit: action.Ratio}
	case action.Thousand:
		return action.Point{X: (float64(x) + 0.5) * 1000 / float64(s.Screen.W), Y: (float64(y) + 0.5) * 1000 / float64(s.Screen.H), Unit: action.Thousand}
	}
	return action.Point{X: float64(toPixel(float64(x), s.Screen.W, s.Image.W)), Y: float64(toPixel(float64(y), s.Screen.H, s.Image.H)), Unit: action.Pixels}
}

// Actions maps the points of a model's actions to screen pixels. It stops
// at the first point that does not map, returning the actions before it
// and an error naming the action; relative moves and drags (pixel
// offsets) are scaled.
func (s Space) Actions(acts []action.Action) ([]action.Action, error) {
	out := make([]action.Action, 0, len(acts))
	for i, a := range acts {
		rel := a.Kind == action.MoveRel || a.Kind == action.DragRel
		for _, pp := range []**action.Point{&a.Point, &a.To} {
			p := *pp
			if p == nil {
				continue
			}
			if rel {
				if p.Unit == "" || p.Unit == action.Pixels {
					sx, sy := s.Scale()
					*pp = &action.Point{X: math.Round(p.X * sx), Y: math.Round(p.Y * sy), Unit: action.Pixels}
				}
				continue
			}
			x, y, err := s.ToScreen(*p)
			if err != nil {
				return out, fmt.Errorf("action %d (%s): %w", i+1, a.Kind, err)
			}
			*pp = &action.Point{X: float64(x), Y: float64(y), Unit: action.Pixels}
		}
		out = append(out, a)
	}
	return out, nil
}

// Tree rewrites the positions and sizes of a linearised accessibility
// tree (the tab-separated table with the columns x, y, w and h last) in
// pixels of the model's image, so that the tree and the screenshot agree.
// Other trees, and trees of an unscaled space, are returned unchanged.
func (s Space) Tree(tree string) string {
	if !s.Scaled() || s.Unit != action.Pixels || tree == "" {
		return tree
	}
	lines := strings.SplitAfter(tree, "\n")
	if !strings.HasSuffix(strings.TrimRight(lines[0], "\n"), "\tx\ty\tw\th") {
		return tree
	}
	sx, sy := s.Scale()
	var b strings.Builder
	b.Grow(len(tree))
	b.WriteString(lines[0])
	for _, l := range lines[1:] {
		body := strings.TrimSuffix(l, "\n")
		f := strings.Split(body, "\t")
		if len(f) < 4 {
			b.WriteString(l)
			continue
		}
		var v [4]int
		ok := true
		for i := range v {
			n, err := strconv.Atoi(f[len(f)-4+i])
			v[i], ok = n, ok && err == nil
		}
		if !ok {
			b.WriteString(l)
			continue
		}
		p := s.FromScreen(v[0], v[1])
		w := int(math.Max(1, math.Round(float64(v[2])/sx)))
		h := int(math.Max(1, math.Round(float64(v[3])/sy)))
		if v[2] == 0 {
			w = 0
		}
		if v[3] == 0 {
			h = 0
		}
		f[len(f)-4], f[len(f)-3], f[len(f)-2], f[len(f)-1] = strconv.Itoa(int(p.X)), strconv.Itoa(int(p.Y)), strconv.Itoa(w), strconv.Itoa(h)
		b.WriteString(strings.Join(f, "\t"))
		b.WriteString(l[len(body):])
	}
	return b.String()
}

// View is obs as the model is shown it: the screenshot resized to the
// model's image and the tree's positions in that image's pixels.
func (s Space) View(obs Observation) (Observation, error) {
	shot, err := s.Shot(obs.Screenshot, obs.Format)
	if err != nil {
		return obs, err
	}
	obs.Screenshot, obs.Tree = shot, s.Tree(obs.Tree)
	return obs, nil
}

// ScreenOf is the screen of an observation, or the task's when the
// observation names none.
func ScreenOf(obs Observation, t Task) (action.Size, error) {
	if obs.Screen != (action.Size{}) {
		return obs.Screen, nil
	}
	if t.Screen != (action.Size{}) {
		return t.Screen, nil
	}
	return action.Size{}, errors.New("neither the observation nor the task names the screen size")
}

// jpegQuality encodes a resized JPEG screenshot.
const jpegQuality = 90

// Shot resizes a screenshot (PNG or JPEG) to the model's image, in the
// same format; a screenshot already of that size is returned as it is.
// The resampling is Catmull-Rom, which keeps text legible when shrinking.
func (s Space) Shot(data []byte, format string) ([]byte, error) {
	if len(data) == 0 {
		return data, nil
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		if !s.Scaled() {
			return data, nil // not read: nothing to resize
		}
		return nil, fmt.Errorf("screenshot to resize to %dx%d: %w", s.Image.W, s.Image.H, err)
	}
	if cfg.Width == s.Image.W && cfg.Height == s.Image.H {
		return data, nil
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("screenshot to resize to %dx%d: %w", s.Image.W, s.Image.H, err)
	}
	dst := image.NewRGBA(image.Rect(0, 0, s.Image.W, s.Image.H))
	// ApproxBiLinear: a fifth of Catmull-Rom's time on a 1080p screen, and
	// a downscale by less than half loses no detail a model reads.
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	var buf bytes.Buffer
	switch format {
	case "jpeg", "jpg":
		err = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: jpegQuality})
	case "", "png":
		err = fastpng.Encode(&buf, dst, fastpng.Options{Filter: fastpng.Up})
	default:
		err = errors.New("unknown format " + strconv.Quote(format))
	}
	if err != nil {
		return nil, fmt.Errorf("screenshot resized to %dx%d: %w", s.Image.W, s.Image.H, err)
	}
	return buf.Bytes(), nil
}
