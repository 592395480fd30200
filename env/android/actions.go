package android

import (
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/input"
	"github.com/proctor-eval/proctor/observe"
)

// Timing of touch input.
const (
	TapGap      = 100 * time.Millisecond // between the taps of a double tap
	LongPress   = 800 * time.Millisecond // a right click, or a click without a duration of its own
	SwipeTime   = 300 * time.Millisecond // a swipe or scroll without a duration
	codeTimeout = 2 * time.Minute
)

// Keycodes maps the key names of the action space to Android's key
// events.
var Keycodes = map[string]string{
	"enter": "KEYCODE_ENTER", "return": "KEYCODE_ENTER", "back": "KEYCODE_BACK", "home": "KEYCODE_HOME",
	"tab": "KEYCODE_TAB", "space": "KEYCODE_SPACE", "backspace": "KEYCODE_DEL", "delete": "KEYCODE_FORWARD_DEL",
	"escape": "KEYCODE_ESCAPE", "esc": "KEYCODE_ESCAPE", "up": "KEYCODE_DPAD_UP", "down": "KEYCODE_DPAD_DOWN",
	"left": "KEYCODE_DPAD_LEFT", "right": "KEYCODE_DPAD_RIGHT", "menu": "KEYCODE_MENU", "search": "KEYCODE_SEARCH",
	"pageup": "KEYCODE_PAGE_UP", "pagedown": "KEYCODE_PAGE_DOWN", "volumeup": "KEYCODE_VOLUME_UP",
	"volumedown": "KEYCODE_VOLUME_DOWN", "power": "KEYCODE_POWER", "appswitch": "KEYCODE_APP_SWITCH",
	"ctrl": "KEYCODE_CTRL_LEFT", "shift": "KEYCODE_SHIFT_LEFT", "alt": "KEYCODE_ALT_LEFT",
}

// Keycode is the key event of a key name: a name of Keycodes, a letter,
// a digit, or a KEYCODE_ name itself.
func Keycode(name string) (string, error) {
	n := strings.ToLower(name)
	if k, ok := Keycodes[n]; ok {
		return k, nil
	}
	if r := []rune(n); len(r) == 1 && (r[0] >= 'a' && r[0] <= 'z' || r[0] >= '0' && r[0] <= '9') {
		return "KEYCODE_" + strings.ToUpper(n), nil
	}
	if strings.HasPrefix(name, "KEYCODE_") && strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	}) < 0 {
		return name, nil
	}
	return "", fmt.Errorf("%w: no Android key for %q", action.ErrInvalid, name)
}

// InputText is the command that types s with `input text`, which takes
// printable ASCII only: spaces become %s and the rest is quoted for the
// device's shell. ok is false for text it cannot type (see TypeCommand).
func InputText(s string) (cmd string, ok bool) {
	for _, r := range s {
		if r > unicode.MaxASCII || r < 0x20 || r == 0x7f {
			return "", false
		}
	}
	return "input text " + Quote(strings.ReplaceAll(s, " ", "%s")), true
}

// TypeCommand is the command that types s: `input text` for printable
// ASCII; for other text (accents, other scripts, line breaks), a
// broadcast to ADBKeyBoard (the ADB_INPUT_B64 intent of
// github.com/senzhk/ADBKeyBoard, which must be installed and chosen as the
// input method), since Android's input command cannot type it.
func TypeCommand(s string) string {
	if cmd, ok := InputText(s); ok {
		return cmd
	}
	return "am broadcast -a ADB_INPUT_B64 --es msg " + base64.StdEncoding.EncodeToString([]byte(s))
}

// Do performs the actions in order; it stops at the first that fails.
func (p *Phone) Do(ctx context.Context, acts []action.Action) ([]action.Step, error) {
	var steps []action.Step
	for i, a := range acts {
		if err := ctx.Err(); err != nil {
			return steps, err
		}
		if err := p.alive(); err != nil {
			return steps, err
		}
		st, err := p.do(ctx, a)
		if err != nil {
			return steps, fmt.Errorf("action %d (%s): %w", i+1, a, err)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// point resolves where a pointer action lands: its target (read from the
// window hierarchy, or the last set-of-mark screenshot) or its point.
func (p *Phone) point(ctx context.Context, a action.Action, pt *action.Point) (x, y int, err error) {
	s, err := p.screen(ctx)
	if err != nil {
		return 0, 0, err
	}
	size := action.Size{W: s.W, H: s.H}
	if a.Target != nil {
		return p.target(ctx, a.Target, size)
	}
	if pt == nil {
		return 0, 0, fmt.Errorf("%w: %s needs a point or a target", action.ErrInvalid, a.Kind)
	}
	return pt.Pixels(size)
}

func (p *Phone) target(ctx context.Context, t *action.Target, size action.Size) (int, int, error) {
	if t.Tag > 0 || t.Index != nil {
		p.mu.Lock()
		marks := p.marks
		p.mu.Unlock()
		if marks == nil {
			tree, err := p.Tree(ctx)
			if err != nil {
				return 0, 0, err
			}
			marks = observe.Marks(tree.Filter(observe.Options{Screen: size}))
		}
		m, err := observe.LookupTarget(marks, *t)
		if err != nil {
			return 0, 0, err
		}
		x, y := m.Center()
		return x, y, nil
	}
	tree, err := p.Tree(ctx)
	if err != nil {
		return 0, 0, err
	}
	r, err := tree.Resolve(*t, size)
	if err != nil {
		return 0, 0, err
	}
	x, y := r.Box.Center()
	return x, y, nil
}

// describeOrShoot names the smallest clickable node under (x, y) before a
// tap; where the window hierarchy cannot be read, it takes the screen
// instead, for compare to describe the tap by what it changed.
func (p *Phone) describeOrShoot(ctx context.Context, x, y int) (string, image.Image) {
	tree, err := p.Tree(ctx)
	if err == nil {
		if n := tree.At(x, y); n != nil {
			return observe.Describe(n.Node), nil
		}
		return "", nil
	}
	img, serr := p.capture(ctx)
	if serr != nil {
		return fmt.Sprintf("(no window hierarchy: %v)", err), nil
	}
	return "", img
}

// CompareSettle is how long the screen gets to change after a tap that
// is described by comparing screenshots.
var CompareSettle = 500 * time.Millisecond

// compare describes a tap by the screens before and after it, ProBench's
// screenshot-comparison mode for when the window hierarchy is not there:
// the share of the screen that changed and the box around the change,
// marked so in the step's record.
func (p *Phone) compare(ctx context.Context, before image.Image, x, y int) string {
	const mark = "(screenshot comparison; no window hierarchy)"
	if err := input.Sleep(ctx, CompareSettle); err != nil {
		return mark
	}
	after, err := p.capture(ctx)
	if err != nil {
		return fmt.Sprintf("%s the screen after the tap could not be taken: %v", mark, err)
	}
	b := before.Bounds().Intersect(after.Bounds())
	changed, box := 0, image.Rectangle{}
	for yy := b.Min.Y; yy < b.Max.Y; yy += 2 {
		for xx := b.Min.X; xx < b.Max.X; xx += 2 {
			r1, g1, b1, _ := before.At(xx, yy).RGBA()
			r2, g2, b2, _ := after.At(xx, yy).RGBA()
			if diff(r1, r2)+diff(g1, g2)+diff(b1, b2) > 3*0x1000 {
				changed++
				box = box.Union(image.Rect(xx, yy, xx+2, yy+2))
			}
		}
	}
	total := (b.Dx() / 2) * (b.Dy() / 2)
	if changed == 0 || total == 0 {
		return fmt.Sprintf("%s the tap at (%d, %d) changed nothing on the screen", mark, x, y)
	}
	return fmt.Sprintf("%s the tap at (%d, %d) changed %.0f%% of the screen, within %dx%d at (%d, %d)",
		mark, x, y, 100*float64(changed)/float64(total), box.Dx(), box.Dy(), box.Min.X, box.Min.Y)
}

func diff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// describe names the smallest clickable node under (x, y), ProBench's
// Algorithm 1; where the hierarchy cannot be read, it says so, so that
// the step's record shows the click was not described from the tree.
func (p *Phone) describe(ctx context.Context, x, y int) string {
	tree, err := p.Tree(ctx)
	if err != nil {
		return fmt.Sprintf("(no window hierarchy: %v)", err)
	}
	if n := tree.At(x, y); n != nil {
		return observe.Describe(n.Node)
	}
	return ""
}

func (p *Phone) do(ctx context.Context, a action.Action) (action.Step, error) {
	st := action.Step{Action: a}
	at := func(x, y int) { st.At = &[2]int{x, y} }
	switch a.Kind {
	case action.Click:
		x, y, err := p.point(ctx, a, a.Point)
		if err != nil {
			return st, err
		}
		at(x, y)
		var before image.Image
		st.Element, before = p.describeOrShoot(ctx, x, y) // before the tap changes the screen
		if err := p.tap(ctx, a, x, y); err != nil {
			return st, err
		}
		if before != nil {
			st.Element = p.compare(ctx, before, x, y)
		}
		return st, nil
	case action.Swipe, action.Drag:
		fx, fy, err := p.point(ctx, action.Action{Kind: a.Kind}, a.Point)
		if err != nil {
			return st, err
		}
		tx, ty, err := p.point(ctx, action.Action{Kind: a.Kind}, a.To)
		if err != nil {
			return st, err
		}
		at(tx, ty)
		st.Element = p.describe(ctx, fx, fy)
		_, err = p.shell(ctx, fmt.Sprintf("input swipe %d %d %d %d %d", fx, fy, tx, ty, duration(a.Duration, SwipeTime).Milliseconds()))
		return st, err
	case action.Scroll:
		s, err := p.screen(ctx)
		if err != nil {
			return st, err
		}
		x, y := s.W/2, s.H/2
		if a.Point != nil || a.Target != nil {
			if x, y, err = p.point(ctx, a, a.Point); err != nil {
				return st, err
			}
		}
		// A wheel notch moves a tenth of the screen; content moves up
		// when one scrolls down, so the finger moves against DY.
		dx, dy := a.DX*s.W/10, a.DY*s.H/10
		if a.Pages != 0 {
			dy = int(a.Pages * float64(s.H) * 0.8)
		}
		tx, ty := clamp(x-dx, s.W), clamp(y-dy, s.H)
		at(x, y)
		_, err = p.shell(ctx, fmt.Sprintf("input swipe %d %d %d %d %d", x, y, tx, ty, SwipeTime.Milliseconds()))
		return st, err
	case action.Type:
		if a.Target != nil {
			x, y, err := p.point(ctx, a, nil)
			if err != nil {
				return st, err
			}
			at(x, y)
			if _, err := p.shell(ctx, fmt.Sprintf("input tap %d %d", x, y)); err != nil {
				return st, err
			}
		}
		if a.Clear {
			// Select the field's text and delete it.
			if _, err := p.shell(ctx, "input keyevent KEYCODE_MOVE_END && input keyevent --longpress KEYCODE_DEL"); err != nil {
				return st, err
			}
		}
		_, err := p.shell(ctx, TypeCommand(a.Text))
		return st, err
	case action.Key, action.Hotkey:
		var codes []string
		for _, k := range a.Keys {
			c, err := Keycode(k)
			if err != nil {
				return st, err
			}
			codes = append(codes, c)
		}
		if len(codes) == 0 {
			return st, fmt.Errorf("%w: %s needs keys", action.ErrInvalid, a.Kind)
		}
		cmd := "input keyevent " + strings.Join(codes, " ")
		if a.Kind == action.Hotkey && len(codes) > 1 {
			cmd = "input keycombination " + strings.Join(codes, " ") // Android 13 and later
		}
		_, err := p.shell(ctx, cmd)
		return st, err
	case action.Back:
		_, err := p.shell(ctx, "input keyevent KEYCODE_BACK")
		return st, err
	case action.Navigate:
		_, err := p.shell(ctx, OpenCommand(a.Text))
		return st, err
	case action.Wait:
		return st, input.Sleep(ctx, duration(a.Duration, time.Duration(action.DefaultWait*float64(time.Second))))
	case action.Code:
		res, err := p.Run(ctx, a.Text, codeTimeout)
		if err != nil {
			return st, err
		}
		st.Output = fmt.Sprintf("exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
		return st, nil
	case action.Plan, action.Reflect:
		return st, nil
	}
	return st, fmt.Errorf("%w: %s is not an action of an Android device", env.ErrBadAction, a.Kind)
}

// tap taps (x, y) as a click asks: a long press for a right click or a
// click with a duration, else Count taps.
func (p *Phone) tap(ctx context.Context, a action.Action, x, y int) error {
	if a.Button == action.Right || a.Duration > 0 {
		hold := LongPress
		if a.Duration > 0 {
			hold = time.Duration(a.Duration * float64(time.Second))
		}
		_, err := p.shell(ctx, fmt.Sprintf("input swipe %d %d %d %d %d", x, y, x, y, hold.Milliseconds()))
		return err
	}
	for i := range max(a.Count, 1) {
		if i > 0 {
			if err := input.Sleep(ctx, TapGap); err != nil {
				return err
			}
		}
		if _, err := p.shell(ctx, fmt.Sprintf("input tap %d %d", x, y)); err != nil {
			return err
		}
	}
	return nil
}

// OpenCommand opens what a navigate action names: an app by its package
// ("com.android.settings", or android-app://PACKAGE), an activity
// ("PACKAGE/.Activity"), or a URL in its app.
func OpenCommand(s string) string {
	s = strings.TrimSpace(s)
	pkg, isApp := strings.CutPrefix(s, "android-app://")
	switch {
	case isApp || packageRE.MatchString(s):
		if !isApp {
			pkg = s
		}
		return "monkey -p " + Quote(pkg) + " -c android.intent.category.LAUNCHER 1"
	case componentRE.MatchString(s):
		return "am start -W -n " + Quote(s)
	}
	return "am start -W -a android.intent.action.VIEW -d " + Quote(s)
}

var (
	packageRE   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$`)
	componentRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+/[.A-Za-z0-9_$]+$`)
)

func duration(seconds float64, def time.Duration) time.Duration {
	if seconds > 0 {
		return time.Duration(seconds * float64(time.Second))
	}
	return def
}

func clamp(v, n int) int { return max(0, min(v, n-1)) }
