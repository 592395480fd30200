package viewer

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"image/draw"
	"image/gif"
	_ "image/jpeg" // screenshots of JPEG runs
	_ "image/png"
	"net/http"
	"os"
	"strconv"

	"github.com/proctor-eval/proctor/store"
	xdraw "golang.org/x/image/draw"
)

// GIF export of an episode: one frame per step's screenshot, with the
// step's pointer actions drawn, and the screen after the last action.
const (
	gifWidth    = 640 // frames are scaled down to this width at most
	gifMaxSteps = 200 // frames beyond are left out (the last is kept)
)

// episodeGIF serves an episode as an animated GIF (?delay= seconds a
// frame, 0.2 to 10, default 1).
func (s *Server) episodeGIF(w http.ResponseWriter, r *http.Request) {
	run, res, steps, _, err := s.episodeData(r, false)
	if err != nil {
		s.fail(w, err)
		return
	}
	delay := 1.0
	if d := r.URL.Query().Get("delay"); d != "" {
		v, err := strconv.ParseFloat(d, 64)
		if err != nil || v < 0.2 || v > 10 {
			s.fail(w, fmt.Errorf("%w: delay %q: give seconds a frame, 0.2 to 10", errBadRequest, d))
			return
		}
		delay = v
	}
	db, err := store.Open(run.Dir)
	if err != nil {
		s.fail(w, err)
		return
	}
	defer db.Close()
	width, height := episodeScreen(run, steps, res.FinalShot)
	type frame struct {
		shot  string
		marks []mark
	}
	var frames []frame
	for _, st := range steps {
		if st.Shot == "" {
			continue
		}
		marks, _, _ := overlay(st, width, height)
		frames = append(frames, frame{st.Shot, marks})
	}
	if res.FinalShot != "" {
		frames = append(frames, frame{shot: res.FinalShot})
	}
	if len(frames) == 0 {
		s.fail(w, fmt.Errorf("%w: the episode kept no screenshots", errNotFound))
		return
	}
	if len(frames) > gifMaxSteps {
		frames = append(frames[:gifMaxSteps-1], frames[len(frames)-1])
	}
	anim := &gif.GIF{LoopCount: 0}
	for i, f := range frames {
		b, err := db.Shot(f.shot)
		if err != nil {
			s.fail(w, err)
			return
		}
		img, _, err := image.Decode(bytes.NewReader(b))
		if err != nil {
			s.fail(w, fmt.Errorf("screenshot %s: %w", f.shot, err))
			return
		}
		p := gifFrame(img, f.marks, i == len(frames)-1 && res.FinalShot != "")
		anim.Image = append(anim.Image, p)
		anim.Delay = append(anim.Delay, int(delay*100))
	}
	anim.Delay[len(anim.Delay)-1] = int(delay * 300) // linger on the end
	w.Header().Set("Content-Type", "image/gif")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`inline; filename="%s-%d.gif"`, fileName(res.Task), res.Repeat))
	if err := gif.EncodeAll(w, anim); err != nil {
		// Headers are sent; the truncated image is the only signal left.
		fmt.Fprintf(os.Stderr, "proctor view: gif of %s: %v\n", res.Task, err)
	}
}

// gifFrame scales a screenshot to at most gifWidth wide, draws where the
// step's pointer actions landed (a ring for a click, a line for a drag)
// and a green bar under the final screen, and maps it to a palette.
func gifFrame(img image.Image, marks []mark, final bool) *image.Paletted {
	b := img.Bounds()
	scale := 1.0
	if b.Dx() > gifWidth {
		scale = float64(gifWidth) / float64(b.Dx())
	}
	w, h := max(1, int(float64(b.Dx())*scale)), max(1, int(float64(b.Dy())*scale))
	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.ApproxBiLinear.Scale(rgba, rgba.Bounds(), img, b, draw.Src, nil)
	red := color.RGBA{255, 59, 48, 255}
	for _, m := range marks {
		x, y := int(float64(m.X)*scale), int(float64(m.Y)*scale)
		switch m.Kind {
		case "drag", "swipe":
			line(rgba, x, y, int(float64(m.X2)*scale), int(float64(m.Y2)*scale), red)
			ring(rgba, x, y, 6, red)
		default:
			ring(rgba, x, y, 12, red)
			ring(rgba, x, y, 11, red)
		}
	}
	if final {
		draw.Draw(rgba, image.Rect(0, h-6, w, h), image.NewUniform(color.RGBA{52, 199, 89, 255}), image.Point{}, draw.Src)
	}
	p := image.NewPaletted(rgba.Bounds(), palette.Plan9)
	draw.FloydSteinberg.Draw(p, p.Bounds(), rgba, image.Point{})
	return p
}

// ring draws a circle's outline of radius r.
func ring(img *image.RGBA, cx, cy, r int, c color.RGBA) {
	// The midpoint circle: each point of one octant, mirrored to all.
	x, y := r, 0
	err := 1 - r
	for x >= y {
		for _, p := range [][2]int{{x, y}, {y, x}, {-y, x}, {-x, y}, {-x, -y}, {-y, -x}, {y, -x}, {x, -y}} {
			img.SetRGBA(cx+p[0], cy+p[1], c)
		}
		y++
		if err < 0 {
			err += 2*y + 1
		} else {
			x--
			err += 2*(y-x) + 1
		}
	}
}

// line draws a straight line.
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
	err := dx + dy
	for n := 0; n < 100000; n++ {
		img.SetRGBA(x0, y0, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * err
		if e2 >= dy {
			err += dy
			x0 += sx
		}
		if e2 <= dx {
			err += dx
			y0 += sy
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
