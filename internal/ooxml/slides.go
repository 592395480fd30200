package ooxml

import (
	"fmt"
	"math"
	"strings"
)

// SlideOptions are the options of OSWorld's compare_pptx_files, by its
// names; a nil option takes the peer's default (the examine_*_position,
// image_size, modify_height and shape_for_shift_size checks are off, the
// others on). ExamineTransition is Proctor's own, off unless set: the
// peer's function does not compare transitions.
type SlideOptions struct {
	ExamineNumberOfSlides      *bool    `json:"examine_number_of_slides,omitempty"`
	ExamineShape               *bool    `json:"examine_shape,omitempty"`
	ExamineText                *bool    `json:"examine_text,omitempty"`
	ExamineIndent              *bool    `json:"examine_indent,omitempty"`
	ExamineFontName            *bool    `json:"examine_font_name,omitempty"`
	ExamineFontSize            *bool    `json:"examine_font_size,omitempty"`
	ExamineFontBold            *bool    `json:"examine_font_bold,omitempty"`
	ExamineFontItalic          *bool    `json:"examine_font_italic,omitempty"`
	ExamineColorRGB            *bool    `json:"examine_color_rgb,omitempty"`
	ExamineFontUnderline       *bool    `json:"examine_font_underline,omitempty"`
	ExamineStrikeThrough       *bool    `json:"examine_strike_through,omitempty"`
	ExamineAlignment           *bool    `json:"examine_alignment,omitempty"`
	ExamineTitleBottomPosition *bool    `json:"examine_title_bottom_position,omitempty"`
	ExamineTableBottomPosition *bool    `json:"examine_table_bottom_position,omitempty"`
	ExamineRunCount            *bool    `json:"examine_run_count,omitempty"`
	ExamineRightPosition       *bool    `json:"examine_right_position,omitempty"`
	ExamineTopPosition         *bool    `json:"examine_top_position,omitempty"`
	ExamineShapeForShiftSize   *bool    `json:"examine_shape_for_shift_size,omitempty"`
	ExamineImageSize           *bool    `json:"examine_image_size,omitempty"`
	ExamineModifyHeight        *bool    `json:"examine_modify_height,omitempty"`
	ExamineBullets             *bool    `json:"examine_bullets,omitempty"`
	ExamineBackgroundColor     *bool    `json:"examine_background_color,omitempty"`
	ExamineNote                *bool    `json:"examine_note,omitempty"`
	ExamineShapeLenientHeight  *bool    `json:"examine_shape_lenient_height,omitempty"`
	ExamineTransition          *bool    `json:"examine_transition,omitempty"`
	ApproximatelyTolerance     *float64 `json:"approximately_tolerance,omitempty"`
}

func on(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// Unsupported names the options set that this comparison does not apply.
func (o SlideOptions) Unsupported() []string {
	if on(o.ExamineShapeLenientHeight, false) {
		return []string{"examine_shape_lenient_height"}
	}
	return nil
}

// ComparePresentations compares two presentations as compare_pptx_files
// does: slide by slide, shape by shape, down to each run's font; the first
// difference fails.
func ComparePresentations(result, expected *Presentation, o SlideOptions) (bool, string) {
	tol := 0.005
	if o.ApproximatelyTolerance != nil {
		tol = *o.ApproximatelyTolerance
	}
	approx := func(a, b *int64) bool {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		x, y := float64(*a), float64(*b)
		if x == y {
			return true
		}
		if x == 0 || y == 0 {
			return false
		}
		return math.Abs(x-y)/math.Max(math.Abs(x), math.Abs(y)) <= tol
	}
	samePlace := func(a, b *Shape) bool {
		return approx(a.Left, b.Left) && approx(a.Top, b.Top) && approx(a.Width, b.Width) && approx(a.Height, b.Height)
	}
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	if len(result.Slides) != len(expected.Slides) && on(o.ExamineNumberOfSlides, true) {
		return false, fmt.Sprintf("%d slides, expected %d", len(result.Slides), len(expected.Slides))
	}
	for si := range min(len(result.Slides), len(expected.Slides)) {
		s1, s2 := &result.Slides[si], &expected.Slides[si]
		n := si + 1
		fail := func(format string, args ...any) (bool, string) {
			return false, fmt.Sprintf("slide %d: ", n) + fmt.Sprintf(format, args...)
		}
		if s1.Background != s2.Background && on(o.ExamineBackgroundColor, true) {
			return fail("background %q, expected %q", s1.Background, s2.Background)
		}
		if strings.TrimSpace(s1.Notes) != strings.TrimSpace(s2.Notes) && on(o.ExamineNote, true) {
			return fail("notes %q, expected %q", shorten(s1.Notes), shorten(s2.Notes))
		}
		if on(o.ExamineTransition, false) && transitionOf(s1) != transitionOf(s2) {
			return fail("transition %s, expected %s", transitionOf(s1), transitionOf(s2))
		}
		if len(s1.Shapes) != len(s2.Shapes) {
			return fail("%d shapes, expected %d", len(s1.Shapes), len(s2.Shapes))
		}
		for hi := range s1.Shapes {
			a, b := &s1.Shapes[hi], &s2.Shapes[hi]
			failShape := func(format string, args ...any) (bool, string) {
				return fail("shape %d (%s): %s", hi+1, a.Name, fmt.Sprintf(format, args...))
			}
			bothText := a.HasText && b.HasText
			if on(o.ExamineTitleBottomPosition, false) {
				if bothText && a.Text == b.Text {
					if a.Text == "Product Comparison" && (val(a.Top) <= val(b.Top) || val(a.Top) < 3600000) {
						return failShape("the title is not moved down")
					}
				} else if !samePlace(a, b) {
					return failShape("position or size differs")
				}
			}
			if on(o.ExamineTableBottomPosition, false) {
				if n == 3 && a.Kind == "table" && b.Kind == "table" {
					if val(a.Top) <= val(b.Top) || val(a.Top) < 3600000 {
						return failShape("the table is not moved down")
					}
				} else if !samePlace(a, b) {
					return failShape("position or size differs")
				}
			}
			if on(o.ExamineRightPosition, false) && n == 2 && !a.HasText && !b.HasText {
				if val(a.Left) <= val(b.Left) || val(a.Left) < 4320000 {
					return failShape("not moved right")
				}
			}
			if on(o.ExamineTopPosition, false) && n == 2 && a.Kind == "picture" && b.Kind == "picture" {
				if val(a.Top) >= val(b.Top) || val(a.Top) > 1980000 {
					return failShape("not moved up")
				}
			}
			if on(o.ExamineShapeForShiftSize, false) && !samePlace(a, b) {
				if !(bothText && a.Text == b.Text && a.Text == "Elaborate on what you want to discuss.") {
					return failShape("position or size differs")
				}
			}
			bothEmpty := strings.TrimSpace(a.Text) == "" && strings.TrimSpace(b.Text) == ""
			if on(o.ExamineShape, true) && !bothEmpty && !samePlace(a, b) {
				return failShape("position or size (%s) differs from the expected (%s)", place(a), place(b))
			}
			if on(o.ExamineImageSize, false) {
				if a.Kind == "picture" && b.Kind == "picture" {
					if !approx(a.Width, b.Width) || !approx(a.Height, b.Height) {
						return failShape("picture size (%s) differs from the expected (%s)", place(a), place(b))
					}
				} else if !samePlace(a, b) {
					return failShape("position or size differs")
				}
			}
			if on(o.ExamineModifyHeight, false) {
				if !a.HasText && !b.HasText || a.Kind == "freeform" && b.Kind == "freeform" {
					if !approx(a.Height, b.Height) {
						return failShape("height %d, expected %d", val(a.Height), val(b.Height))
					}
				} else if !samePlace(a, b) {
					return failShape("position or size differs")
				}
			}
			if a.Kind == "table" && b.Kind == "table" {
				if ok, why := compareTableShapes(a, b, o); !ok {
					return failShape("%s", why)
				}
			}
			if bothText {
				if ok, why := compareText(a, b, s1, s2, o); !ok {
					return failShape("%s", why)
				}
			}
		}
		t1, t2 := textShapes(s1.Shapes), textShapes(s2.Shapes)
		if len(t1) != len(t2) {
			return fail("%d shapes with text, expected %d", len(t1), len(t2))
		}
		if on(o.ExamineAlignment, true) {
			for i := range t1 {
				a, b := t1[i], t2[i]
				if strings.TrimSpace(a.Text) != strings.TrimSpace(b.Text) && on(o.ExamineText, true) {
					return fail("text %q, expected %q", shorten(a.Text), shorten(b.Text))
				}
				if len(a.Paragraphs) != len(b.Paragraphs) {
					return fail("shape %s has %d paragraphs, expected %d", a.Name, len(a.Paragraphs), len(b.Paragraphs))
				}
				for pi := range a.Paragraphs {
					if align(a.Paragraphs[pi].Align) != align(b.Paragraphs[pi].Align) {
						return fail("shape %s paragraph %d is aligned %s, expected %s", a.Name, pi+1, align(a.Paragraphs[pi].Align), align(b.Paragraphs[pi].Align))
					}
				}
			}
		}
	}
	return true, "the presentations match"
}

func transitionOf(s *Slide) string {
	if s.Transition == nil {
		return "none"
	}
	return s.Transition.Type
}

func place(s *Shape) string {
	v := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("at %s,%s size %sx%s", v(s.Left), v(s.Top), v(s.Width), v(s.Height))
}

// align reads an unset alignment as left.
func align(a string) string {
	if a == "" {
		return "l"
	}
	return a
}

// textShapes lists the shapes with text, those in groups included, in
// order.
func textShapes(shs []Shape) []*Shape {
	var out []*Shape
	for i := range shs {
		if shs[i].HasText {
			out = append(out, &shs[i])
		}
		out = append(out, textShapes(shs[i].Shapes)...)
	}
	return out
}

// runsOf is a paragraph's runs; for two blank paragraphs, only the runs
// with text (none), so that a missing run equals an empty one.
func runsOf(p1, p2 *TextParagraph) ([]TextRun, []TextRun) {
	if strings.TrimSpace(p1.Text) == "" && strings.TrimSpace(p2.Text) == "" {
		return nonEmpty(p1.Runs), nonEmpty(p2.Runs)
	}
	return p1.Runs, p2.Runs
}

func nonEmpty(rs []TextRun) []TextRun {
	var out []TextRun
	for _, r := range rs {
		if strings.TrimSpace(r.Text) != "" {
			out = append(out, r)
		}
	}
	return out
}

// isTrue reads a run's boolean property: unset and false are alike.
func isTrue(b *bool) bool { return b != nil && *b }

// underline reads a:rPr u as python-pptx does: unset is nil, none false,
// sng true, others themselves.
func underline(u string) any {
	switch u {
	case "":
		return nil
	case "none":
		return false
	case "sng":
		return true
	}
	return u
}

// underlineDiffers is the peer's test: two set values that differ, or
// unset against a single underline.
func underlineDiffers(a, b string) bool {
	ua, ub := underline(a), underline(b)
	if ua == ub {
		return false
	}
	if ua != nil && ub != nil {
		return true
	}
	return ua == nil && ub == true || ua == true && ub == nil
}

func compareTableShapes(a, b *Shape, o SlideOptions) (bool, string) {
	if len(a.Table) != len(b.Table) || a.TableCols != b.TableCols {
		return false, fmt.Sprintf("table of %dx%d, expected %dx%d", len(a.Table), a.TableCols, len(b.Table), b.TableCols)
	}
	for r := range a.Table {
		for c := range min(a.TableCols, len(a.Table[r]), len(b.Table[r])) {
			c1, c2 := &a.Table[r][c], &b.Table[r][c]
			if len(c1.Paragraphs) != len(c2.Paragraphs) {
				return false, fmt.Sprintf("cell %d,%d has %d paragraphs, expected %d", r+1, c+1, len(c1.Paragraphs), len(c2.Paragraphs))
			}
			for pi := range c1.Paragraphs {
				r1, r2 := runsOf(&c1.Paragraphs[pi], &c2.Paragraphs[pi])
				if len(r1) != len(r2) && on(o.ExamineRunCount, true) {
					return false, fmt.Sprintf("cell %d,%d paragraph %d has %d runs, expected %d", r+1, c+1, pi+1, len(r1), len(r2))
				}
				for ri := range min(len(r1), len(r2)) {
					x, y := &r1[ri], &r2[ri]
					switch {
					case x.Color != "" && y.Color != "" && x.Color != y.Color && on(o.ExamineColorRGB, true):
						return false, fmt.Sprintf("cell %d,%d run %q has colour %s, expected %s", r+1, c+1, x.Text, x.Color, y.Color)
					case isTrue(x.Bold) != isTrue(y.Bold):
						return false, fmt.Sprintf("cell %d,%d run %q differs in bold", r+1, c+1, x.Text)
					case isTrue(x.Italic) != isTrue(y.Italic):
						return false, fmt.Sprintf("cell %d,%d run %q differs in italic", r+1, c+1, x.Text)
					case underlineDiffers(x.Underline, y.Underline):
						return false, fmt.Sprintf("cell %d,%d run %q differs in underline", r+1, c+1, x.Text)
					}
				}
			}
		}
	}
	return true, ""
}

func compareText(a, b *Shape, s1, s2 *Slide, o SlideOptions) (bool, string) {
	examineText := on(o.ExamineText, true)
	if strings.TrimSpace(a.Text) != strings.TrimSpace(b.Text) && examineText {
		return false, fmt.Sprintf("text %q, expected %q", shorten(a.Text), shorten(b.Text))
	}
	if len(a.Paragraphs) != len(b.Paragraphs) {
		return false, fmt.Sprintf("%d paragraphs, expected %d", len(a.Paragraphs), len(b.Paragraphs))
	}
	for pi := range a.Paragraphs {
		p1, p2 := &a.Paragraphs[pi], &b.Paragraphs[pi]
		if on(o.ExamineAlignment, true) && align(p1.Align) != align(p2.Align) {
			return false, fmt.Sprintf("paragraph %d is aligned %s, expected %s", pi+1, align(p1.Align), align(p2.Align))
		}
		if p1.Text != p2.Text && examineText {
			return false, fmt.Sprintf("paragraph %d is %q, expected %q", pi+1, shorten(p1.Text), shorten(p2.Text))
		}
		if p1.Level != p2.Level && on(o.ExamineIndent, true) && (p1.Level > 1 || p2.Level > 1) {
			return false, fmt.Sprintf("paragraph %d is at level %d, expected %d", pi+1, p1.Level, p2.Level)
		}
		r1, r2 := runsOf(p1, p2)
		if len(r1) != len(r2) && on(o.ExamineRunCount, true) {
			return false, fmt.Sprintf("paragraph %d has %d runs, expected %d", pi+1, len(r1), len(r2))
		}
		for ri := range min(len(r1), len(r2)) {
			x, y := &r1[ri], &r2[ri]
			what := ""
			switch {
			case x.Font != y.Font && on(o.ExamineFontName, true):
				what = fmt.Sprintf("font %q, expected %q", x.Font, y.Font)
			case x.Size != y.Size && on(o.ExamineFontSize, true):
				what = fmt.Sprintf("size %v, expected %v", x.Size, y.Size)
			case isTrue(x.Bold) != isTrue(y.Bold) && on(o.ExamineFontBold, true):
				what = fmt.Sprintf("bold %v, expected %v", isTrue(x.Bold), isTrue(y.Bold))
			case isTrue(x.Italic) != isTrue(y.Italic) && on(o.ExamineFontItalic, true):
				what = fmt.Sprintf("italic %v, expected %v", isTrue(x.Italic), isTrue(y.Italic))
			case x.Color != "" && y.Color != "" && x.Color != y.Color && on(o.ExamineColorRGB, true):
				what = fmt.Sprintf("colour %s, expected %s", x.Color, y.Color)
			case underlineDiffers(x.Underline, y.Underline) && on(o.ExamineFontUnderline, true):
				what = fmt.Sprintf("underline %q, expected %q", x.Underline, y.Underline)
			case strikeOf(x) != strikeOf(y) && on(o.ExamineStrikeThrough, true):
				what = fmt.Sprintf("strike %s, expected %s", strikeOf(x), strikeOf(y))
			case on(o.ExamineBullets, true) && !sameBullets(s1, s2):
				what = "the slide's bullets differ"
			}
			if what != "" {
				return false, fmt.Sprintf("paragraph %d run %q: %s", pi+1, shorten(x.Text), what)
			}
		}
	}
	return true, ""
}

func strikeOf(r *TextRun) string {
	if r.Strike == "" {
		return "noStrike"
	}
	return r.Strike
}

// bullet is a paragraph with text as the bullet comparison sees it.
type bullet struct{ level, char, text string }

// bullets lists the slide's paragraphs with text (tables' included) with
// their level as written and bullet character.
func bullets(s *Slide) []bullet {
	var out []bullet
	add := func(ps []TextParagraph) {
		for _, p := range ps {
			text := ""
			for _, r := range p.Runs {
				text += r.Text
			}
			if strings.TrimSpace(text) == "" {
				continue
			}
			b := bullet{level: "No Level", char: "No Bullet", text: text}
			if p.hasPPr {
				b.level = "0"
				if p.lvl != nil {
					b.level = *p.lvl
				}
				if p.Bullet != "" {
					b.char = p.Bullet
				}
			}
			out = append(out, b)
		}
	}
	var walk func([]Shape)
	walk = func(shs []Shape) {
		for _, sh := range shs {
			add(sh.Paragraphs)
			for _, row := range sh.Table {
				for _, c := range row {
					add(c.Paragraphs)
				}
			}
			walk(sh.Shapes)
		}
	}
	walk(s.Shapes)
	return out
}

func sameBullets(s1, s2 *Slide) bool {
	a, b := bullets(s1), bullets(s2)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].text != b[i].text || a[i].char != b[i].char {
			return false
		}
		if (a[i].char != "No Bullet" || b[i].char != "No Bullet") && a[i].level != b[i].level {
			return false
		}
	}
	return true
}
