package agent

import (
	"bytes"
	"image"
	"image/draw"
	"math"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent/agenttest"
)

var (
	fullHD = action.Size{W: 1920, H: 1080}
	wxga   = action.Size{W: 1366, H: 768} // an odd size: not a multiple of 28, about 16:9
)

// spaceCases are one case per coordinate space, on a 1920x1080 screen and
// on odd sizes: the image the model is shown, a point the model writes
// and the screen pixel it must land on. The arithmetic is in the
// comments: image pixel i covers screen pixels i*s to (i+1)*s, s = screen
// / image, and lands on floor((i+0.5)*s).
var spaceCases = []struct {
	name  string
	space func() (Space, error)
	image action.Size
	rule  string
	model action.Point
	want  [2]int
}{
	{"px", func() (Space, error) { return ScreenSpace(fullHD, action.Pixels) }, fullHD, "screen",
		action.Point{X: 960, Y: 540, Unit: action.Pixels}, [2]int{960, 540}},
	{"px fraction rounds", func() (Space, error) { return ScreenSpace(fullHD, "") }, fullHD, "screen",
		action.Point{X: 100.6, Y: 1079.4}, [2]int{101, 1079}},
	// 0.5 * 1920 = 960, 0.25 * 1080 = 270
	{"ratio", func() (Space, error) { return ScreenSpace(fullHD, action.Ratio) }, fullHD, "screen",
		action.Point{X: 0.5, Y: 0.25, Unit: action.Ratio}, [2]int{960, 270}},
	// 500/1000 * 1920 = 960, 250/1000 * 1080 = 270
	{"k", func() (Space, error) { return ScreenSpace(fullHD, action.Thousand) }, fullHD, "screen",
		action.Point{X: 500, Y: 250, Unit: action.Thousand}, [2]int{960, 270}},
	// 500/1000 * 1366 = 683, 500/1000 * 768 = 384
	{"k, odd screen", func() (Space, error) { return ScreenSpace(wxga, action.Thousand) }, wxga, "screen",
		action.Point{X: 500, Y: 500, Unit: action.Thousand}, [2]int{683, 384}},
	// 1920/28 = 68.57 -> 69*28 = 1932, 1080/28 = 38.57 -> 39*28 = 1092;
	// 1932*1092 is within 16384*28*28. floor(966.5*1920/1932) = floor(960.497) = 960,
	// floor(546.5*1080/1092) = floor(540.49) = 540
	{"smart-resize, UI-TARS 1.5 budget", func() (Space, error) { return SmartResizeSpace(fullHD, 0) }, action.Size{W: 1932, H: 1092},
		"smart-resize (factor 28, 78400..12845056 pixels)", action.Point{X: 966, Y: 546, Unit: action.Pixels}, [2]int{960, 540}},
	// budget 1280*28*28 = 1003520 < 1932*1092: beta = sqrt(1920*1080/1003520) = 1.4375,
	// 1920/1.4375 = 1335.65 -> 47*28 = 1316, 1080/1.4375 = 751.30 -> 26*28 = 728;
	// floor(658.5*1920/1316) = floor(960.73) = 960, floor(364.5*1080/728) = floor(540.74) = 540
	{"smart-resize, 1280 patches", func() (Space, error) { return SmartResizeSpace(fullHD, 1280*28*28) }, action.Size{W: 1316, H: 728},
		"smart-resize (factor 28, 78400..1003520 pixels)", action.Point{X: 658, Y: 364}, [2]int{960, 540}},
	// 1366/28 = 48.79 -> 49*28 = 1372, 768/28 = 27.43 -> 27*28 = 756;
	// floor(686.5*1366/1372) = floor(683.50) = 683, floor(378.5*768/756) = floor(384.51) = 384
	{"smart-resize, odd screen", func() (Space, error) { return SmartResizeSpace(wxga, 0) }, action.Size{W: 1372, H: 756},
		"smart-resize (factor 28, 78400..12845056 pixels)", action.Point{X: 686, Y: 378}, [2]int{683, 384}},
	// 16:9 is FWXGA's shape within 0.02: 1366x768; floor(683.5*1920/1366) = floor(960.70) = 960,
	// floor(384.5*1080/768) = floor(540.70) = 540
	{"anthropic 1920x1080", func() (Space, error) { return AnthropicSpace(fullHD) }, wxga, "FWXGA",
		action.Point{X: 683, Y: 384}, [2]int{960, 540}},
	// 16:10 is WXGA's: 1280x800; floor(640.5*1.5) = 960, floor(400.5*1.5) = 600
	{"anthropic 1920x1200", func() (Space, error) { return AnthropicSpace(action.Size{W: 1920, H: 1200}) }, action.Size{W: 1280, H: 800}, "WXGA",
		action.Point{X: 640, Y: 400}, [2]int{960, 600}},
	// 4:3 is XGA's: 1024x768; floor(512.5*1600/1024) = floor(800.78) = 800, floor(384.5*1200/768) = floor(600.78) = 600
	{"anthropic 1600x1200", func() (Space, error) { return AnthropicSpace(action.Size{W: 1600, H: 1200}) }, action.Size{W: 1024, H: 768}, "XGA",
		action.Point{X: 512, Y: 384}, [2]int{800, 600}},
	// WXGA's shape but not wider than WXGA: shown as it is
	{"anthropic 1280x800", func() (Space, error) { return AnthropicSpace(action.Size{W: 1280, H: 800}) }, action.Size{W: 1280, H: 800}, "screen",
		action.Point{X: 640, Y: 400}, [2]int{640, 400}},
	// 21:9 matches no target; the API would shrink it: s = min(1568/2560, sqrt(1150000/(2560*1080)))
	// = min(0.6125, 0.6449) = 0.6125: 1568x661; floor(100.5*2560/1568) = floor(164.08) = 164,
	// floor(100.5*1080/661) = floor(164.21) = 164
	{"anthropic 2560x1080 (odd shape)", func() (Space, error) { return AnthropicSpace(action.Size{W: 2560, H: 1080}) }, action.Size{W: 1568, H: 661},
		"fit 1568 px, 1150000 pixels", action.Point{X: 100, Y: 100}, [2]int{164, 164}},
	// a declared display of another size: 1280x720, floor(640.5*1.5) = 960, floor(360.5*1.5) = 540
	{"declared display 1280x720", func() (Space, error) { return DisplaySpace(fullHD, action.Size{W: 1280, H: 720}) }, action.Size{W: 1280, H: 720},
		"declared display", action.Point{X: 640, Y: 360}, [2]int{960, 540}},
	// a declared display of another shape scales each axis on its own:
	// floor(512.5*1366/1024) = floor(683.67) = 683, floor(384.5*768/768) = 384
	{"declared display 1024x768 on an odd screen", func() (Space, error) { return DisplaySpace(wxga, action.Size{W: 1024, H: 768}) }, action.Size{W: 1024, H: 768},
		"declared display", action.Point{X: 512, Y: 384}, [2]int{683, 384}},
	{"declared display empty", func() (Space, error) { return DisplaySpace(fullHD, action.Size{}) }, fullHD, "screen",
		action.Point{X: 960, Y: 540}, [2]int{960, 540}},
}

// darkCentre is the centre of the dark pixels of an image, in its pixels.
func darkCentre(t testing.TB, data []byte) (action.Size, action.Point) {
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	rgba := image.NewRGBA(b)
	draw.Draw(rgba, b, img, b.Min, draw.Src)
	var sx, sy, n float64
	for y := 0; y < b.Dy(); y++ {
		row := rgba.Pix[y*rgba.Stride:]
		for x := 0; x < b.Dx(); x++ {
			if row[4*x] < 0x60 {
				sx, sy, n = sx+float64(x), sy+float64(y), n+1
			}
		}
	}
	if n == 0 {
		t.Fatal("no dark pixel in the image")
	}
	return action.Size{W: b.Dx(), H: b.Dy()}, action.Point{X: math.Round(sx / n), Y: math.Round(sy / n)}
}

func TestSpaces(t *testing.T) {
	for _, tc := range spaceCases {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := tc.space()
			if err != nil {
				t.Fatal(err)
			}
			if sp.Image != tc.image || sp.Rule != tc.rule {
				t.Fatalf("image %dx%d (%s), want %dx%d (%s)", sp.Image.W, sp.Image.H, sp.Rule, tc.image.W, tc.image.H, tc.rule)
			}
			x, y, err := sp.ToScreen(tc.model)
			if err != nil || [2]int{x, y} != tc.want {
				t.Fatalf("model point %v lands on (%d, %d) (%v), want %v", tc.model, x, y, err, tc.want)
			}
			// The reverse mapping gives a point that lands on the same pixel.
			back := sp.FromScreen(x, y)
			if bx, by, err := sp.ToScreen(back); err != nil || bx != x || by != y {
				t.Errorf("FromScreen(%d, %d) = %v, which lands on (%d, %d) %v", x, y, back, bx, by, err)
			}
			// The screenshot the model receives has the image's size, and a
			// button drawn around the intended pixel is where the model
			// sees it: its centre in the image lands inside the button.
			formats := []string{"png"}
			if strings.HasPrefix(tc.name, "anthropic 1920x1080") || strings.HasPrefix(tc.name, "smart-resize, UI") || !sp.Scaled() {
				formats = append(formats, "jpeg")
			}
			for _, format := range formats {
				button := image.Rect(x-12, y-8, x+13, y+9)
				shot, err := sp.Shot(agenttest.Screenshot(t, sp.Screen, button, format), format)
				if err != nil {
					t.Fatal(err)
				}
				_, kind, err := image.DecodeConfig(bytes.NewReader(shot))
				if err != nil || kind != format {
					t.Fatalf("%s screenshot resized to %s (%v)", format, kind, err)
				}
				size, seen := darkCentre(t, shot)
				if size != tc.image {
					t.Fatalf("%s: the model receives a %dx%d screenshot, want %dx%d", format, size.W, size.H, tc.image.W, tc.image.H)
				}
				if sp.Unit == action.Pixels {
					sx, sy, err := sp.ToScreen(seen)
					if err != nil || !(image.Point{X: sx, Y: sy}).In(button) {
						t.Errorf("%s: the button seen at %v in the image lands on (%d, %d), outside %v (%v)", format, seen, sx, sy, button, err)
					}
				}
			}
		})
	}
}

func TestSmartResizeSize(t *testing.T) {
	for _, tc := range []struct {
		in       action.Size
		min, max int
		want     action.Size
		err      string
	}{
		// 1918/28 = 68.5 and 1078/28 = 38.5 round half to even, as Python does: 68 and 38
		{in: action.Size{W: 1918, H: 1078}, min: DefaultMinPixels, max: DefaultMaxPixels, want: action.Size{W: 1904, H: 1064}},
		// 1946/28 = 69.5 -> 70 (even)
		{in: action.Size{W: 1946, H: 1092}, min: DefaultMinPixels, max: DefaultMaxPixels, want: action.Size{W: 1960, H: 1092}},
		// 4K within UI-TARS 1.5's budget: 3836x2156 (137x77 patches)
		{in: action.Size{W: 3840, H: 2160}, min: DefaultMinPixels, max: DefaultMaxPixels, want: action.Size{W: 3836, H: 2156}},
		// too small: 196x112 = 21952 < 78400; beta = sqrt(78400/20000) = 1.980,
		// ceil(200*1.980/28) = 15 -> 420, ceil(100*1.980/28) = 8 -> 224
		{in: action.Size{W: 200, H: 100}, min: DefaultMinPixels, max: DefaultMaxPixels, want: action.Size{W: 420, H: 224}},
		// too large: beta = sqrt(1920*1080/(28*28*100)) = 5.143: floor(373.3/28) = 13 -> 364, floor(210/28) = 7 -> 196
		{in: fullHD, min: 784, max: 100 * 28 * 28, want: action.Size{W: 364, H: 196}},
		{in: action.Size{W: 10000, H: 20}, min: DefaultMinPixels, max: DefaultMaxPixels, err: "over 200 times"},
		{in: action.Size{W: 0, H: 20}, min: DefaultMinPixels, max: DefaultMaxPixels, err: "screen size 0x20 is not positive"},
		{in: fullHD, min: DefaultMinPixels, max: 100, err: "pixel budget 100 is below one 28x28 patch"},
		{in: fullHD, min: DefaultMaxPixels, max: DefaultMinPixels, err: "smallest area 12845056 is above the pixel budget 78400"},
	} {
		got, err := SmartResizeSize(tc.in, tc.min, tc.max)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v (%d..%d): %v %v, want %v", tc.in, tc.min, tc.max, got, err, tc.want)
		}
		if got.W%28 != 0 || got.H%28 != 0 || got.W*got.H > tc.max || got.W*got.H < tc.min {
			t.Errorf("%v: %v breaks the rules", tc.in, got)
		}
	}
}

func TestAnthropicSpaceFitsTheAPI(t *testing.T) {
	// Every screen is shown at a size the API keeps as it is, so the
	// model's coordinates are in the image Proctor scaled, never in one
	// the API scaled again.
	for _, s := range []action.Size{fullHD, wxga, {W: 3840, H: 2160}, {W: 2560, H: 1440}, {W: 2560, H: 1600}, {W: 2048, H: 1536},
		{W: 2560, H: 1080}, {W: 1080, H: 1920}, {W: 1500, H: 1500}, {W: 3000, H: 100}, {W: 800, H: 600}, {W: 640, H: 480}} {
		sp, err := AnthropicSpace(s)
		if err != nil {
			t.Fatal(err)
		}
		if max(sp.Image.W, sp.Image.H) > anthropicMaxEdge || sp.Image.W*sp.Image.H > anthropicMaxPixels {
			t.Errorf("%v: shown at %v, which the API would shrink", s, sp.Image)
		}
		if sp.Image.W > s.W || sp.Image.H > s.H {
			t.Errorf("%v: shown at %v, larger than the screen", s, sp.Image)
		}
		if !sp.Scaled() && sp.Image != s {
			t.Errorf("%v: %v", s, sp)
		}
	}
}

func TestToScreenRefusesPointsOutsideTheImage(t *testing.T) {
	anth, _ := AnthropicSpace(fullHD)
	smart, _ := SmartResizeSpace(fullHD, 1280*28*28)
	k, _ := ScreenSpace(fullHD, action.Thousand)
	for _, tc := range []struct {
		sp   Space
		p    action.Point
		want string
	}{
		// on the screen, but not in the image the model was shown
		{anth, action.Point{X: 1400, Y: 20}, "point (1400, 20) is outside the model's 1366x768 image (screen 1920x1080)"},
		{anth, action.Point{X: 20, Y: 768}, "point (20, 768) is outside the model's 1366x768 image (screen 1920x1080)"},
		{smart, action.Point{X: 1316, Y: 0}, "point (1316, 0) is outside the model's 1316x728 image (screen 1920x1080)"},
		{anth, action.Point{X: -1, Y: 5, Unit: action.Pixels}, "point (-1, 5) is outside the model's 1366x768 image"},
		{k, action.Point{X: 1001, Y: 5, Unit: action.Thousand}, "point (1001, 5) is outside 0..1000 of the model's 1920x1080 image (screen 1920x1080)"},
		{anth, action.Point{X: math.NaN(), Y: 5}, "is not a number"},
		{anth, action.Point{X: 1, Y: 5, Unit: "mm"}, `unknown coordinate unit "mm"`},
	} {
		if _, _, err := tc.sp.ToScreen(tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v in %v: %v, want %q", tc.p, tc.sp, err, tc.want)
		}
	}
	// The last pixel of the image is in; it lands on the last pixel of the screen.
	if x, y, err := anth.ToScreen(action.Point{X: 1365, Y: 767}); err != nil || x != 1919 || y != 1079 {
		t.Errorf("last pixel: (%d, %d) %v", x, y, err)
	}
}

func TestSpaceActions(t *testing.T) {
	sp, _ := AnthropicSpace(fullHD) // 1366x768: s = 1.4056 x 1.40625
	acts := []action.Action{
		{Kind: action.Click, Point: &action.Point{X: 683, Y: 384}},
		{Kind: action.Drag, Point: &action.Point{X: 0, Y: 0}, To: &action.Point{X: 1365, Y: 767}},
		{Kind: action.MoveRel, Point: &action.Point{X: 100, Y: -100, Unit: action.Pixels}}, // an offset: scaled, 140.56 -> 141
		{Kind: action.Click, Target: &action.Target{Tag: 3}},
		{Kind: action.Type, Text: "hi"},
		{Kind: action.Click, Point: &action.Point{X: 1400, Y: 20}},
		{Kind: action.Click, Point: &action.Point{X: 1, Y: 1}},
	}
	got, err := sp.Actions(acts)
	if err == nil || err.Error() != "action 6 (click): point (1400, 20) is outside the model's 1366x768 image (screen 1920x1080)" {
		t.Fatalf("error %v", err)
	}
	var s []string
	for _, a := range got {
		s = append(s, a.String())
	}
	if want := "click (960,540) | drag (0,0) to (1919,1079) | move_rel (141,-141) | click tag_3 | type \"hi\""; strings.Join(s, " | ") != want {
		t.Fatalf("actions %s, want %s", strings.Join(s, " | "), want)
	}
	if acts[0].Point.X != 683 {
		t.Fatal("the model's actions were changed in place")
	}
	for _, a := range got {
		if err := a.Check(fullHD); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}

func TestSpaceTree(t *testing.T) {
	tree := "tag\tname\ttext\tx\ty\tw\th\npush-button\tSave\t\t960\t540\t90\t30\nlabel\tA b\tc\t0\t0\t0\t0\n"
	smart, _ := SmartResizeSpace(fullHD, 1280*28*28) // 1316x728: x / 1.459, y / 1.4835
	// floor(960.5/1.459) = 658, floor(540.5/1.4835) = 364; 90/1.459 = 61.7 -> 62, 30/1.4835 = 20.2 -> 20
	want := "tag\tname\ttext\tx\ty\tw\th\npush-button\tSave\t\t658\t364\t62\t20\nlabel\tA b\tc\t0\t0\t0\t0\n"
	if got := smart.Tree(tree); got != want {
		t.Errorf("tree in the model's pixels:\n%q\nwant\n%q", got, want)
	}
	px, _ := ScreenSpace(fullHD, action.Pixels)
	if got := px.Tree(tree); got != tree {
		t.Errorf("an unscaled space changed the tree: %q", got)
	}
	if got := smart.Tree("not a table\n1\t2\t3\t4\n"); got != "not a table\n1\t2\t3\t4\n" {
		t.Errorf("another text changed: %q", got)
	}
}

func TestShotKeepsAScreenshotOfTheImageSize(t *testing.T) {
	sp, _ := ScreenSpace(fullHD, action.Pixels)
	for _, data := range [][]byte{[]byte("not an image"), nil} {
		if got, err := sp.Shot(data, "png"); err != nil || !bytes.Equal(got, data) {
			t.Errorf("unscaled space: %q %v", got, err)
		}
	}
	shot := agenttest.Screenshot(t, fullHD, image.Rect(0, 0, 1, 1), "png")
	if got, err := sp.Shot(shot, "png"); err != nil || &got[0] != &shot[0] {
		t.Errorf("a screenshot of the right size was encoded again (%v)", err)
	}
	anth, _ := AnthropicSpace(fullHD)
	if _, err := anth.Shot([]byte("not an image"), "png"); err == nil || !strings.Contains(err.Error(), "screenshot to resize to 1366x768") {
		t.Errorf("undecodable screenshot: %v", err)
	}
}

func FuzzToScreen(f *testing.F) {
	f.Add(1920, 1080, 1366, 768, 683.0, 384.0)
	f.Add(1366, 768, 1372, 756, 1371.9, 0.0)
	f.Add(17, 3000, 5000, 2, -0.0, 1.9999)
	f.Fuzz(func(t *testing.T, sw, sh, iw, ih int, x, y float64) {
		if sw <= 0 || sh <= 0 || iw <= 0 || ih <= 0 || sw > 1<<15 || sh > 1<<15 || iw > 1<<15 || ih > 1<<15 {
			return
		}
		sp := Space{Screen: action.Size{W: sw, H: sh}, Image: action.Size{W: iw, H: ih}, Unit: action.Pixels}
		px, py, err := sp.ToScreen(action.Point{X: x, Y: y})
		inside := x >= 0 && y >= 0 && x < float64(iw) && y < float64(ih)
		if inside != (err == nil) {
			t.Fatalf("(%v, %v) in %v: err %v", x, y, sp, err)
		}
		if err == nil && (px < 0 || py < 0 || px >= sw || py >= sh) {
			t.Fatalf("(%v, %v) in %v lands off the screen at (%d, %d)", x, y, sp, px, py)
		}
		// Every screen pixel has a model point that lands on it, or on a
		// screen pixel at most one image pixel away.
		qx, qy := min(max(int(math.Abs(x)), 0), sw-1), min(max(int(math.Abs(y)), 0), sh-1)
		bx, by, err := sp.ToScreen(sp.FromScreen(qx, qy))
		scx, scy := sp.Scale()
		if err != nil || math.Abs(float64(bx-qx)) > math.Max(1, scx) || math.Abs(float64(by-qy)) > math.Max(1, scy) {
			t.Fatalf("screen (%d, %d) -> %v -> (%d, %d) %v in %v", qx, qy, sp.FromScreen(qx, qy), bx, by, err, sp)
		}
	})
}

func FuzzParseDisplay(f *testing.F) {
	for _, s := range []string{"1280x800", "", "x", "16x16", "1e3x5", "-5x10", "1280X800", "99999999999999999999x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDisplay(s)
		if err != nil {
			if !strings.Contains(err.Error(), "is not WIDTHxHEIGHT") {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if s != "" && (d.W < 16 || d.H < 16 || d.W > 16384 || d.H > 16384) {
			t.Fatalf("%q: %v", s, d)
		}
	})
}

// BenchmarkShot resizes a 1920x1080 PNG screenshot to the model's image.
func BenchmarkShot(b *testing.B) {
	shot := agenttest.Screenshot(b, fullHD, image.Rect(900, 500, 1000, 560), "png")
	for _, tc := range []struct {
		name  string
		space func() (Space, error)
	}{
		{"anthropic-1366x768", func() (Space, error) { return AnthropicSpace(fullHD) }},
		{"smart-resize-1932x1092", func() (Space, error) { return SmartResizeSpace(fullHD, 0) }},
		{"smart-resize-1316x728", func() (Space, error) { return SmartResizeSpace(fullHD, 1280*28*28) }},
	} {
		sp, err := tc.space()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := sp.Shot(shot, "png"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
