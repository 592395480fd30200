package browser

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
)

// dialog is a JavaScript dialog (alert, confirm, prompt, beforeunload)
// waiting for an answer. The page is blocked until it gets one. It shows
// in the observation as a box with its message, the prompt's field and
// its buttons, drawn on the screenshot and placed in the tree, so that an
// agent answers it by clicking OK or Cancel, by typing into the prompt
// and pressing Enter or Escape, or with the accept_dialog and
// dismiss_dialog actions.
type dialog struct {
	tab     *tab
	kind    string // alert, confirm, prompt, beforeunload
	message string
	text    string // the prompt's text, as typed so far
}

// dialogShade is the page behind a dialog.
var dialogShade = color.RGBA{0x80, 0x80, 0x80, 0xff}

// Layout of the dialog box, in the viewport.
const (
	dialogW, dialogH = 420, 160
	buttonW, buttonH = 84, 28
)

// boxes places the dialog, its field (prompts only) and its buttons on a
// screen of size s.
func (d *dialog) boxes(s action.Size) (box, field, ok, cancel action.Box) {
	box = action.Box{X: (s.W - dialogW) / 2, Y: max((s.H-dialogH)/3, 0), W: dialogW, H: dialogH}
	ok = action.Box{X: box.X + box.W - buttonW - 12, Y: box.Y + box.H - buttonH - 12, W: buttonW, H: buttonH}
	if d.kind != "alert" {
		cancel = ok
		cancel.X -= buttonW + 8
	}
	if d.kind == "prompt" {
		field = action.Box{X: box.X + 12, Y: ok.Y - 36, W: box.W - 24, H: 26}
	}
	return box, field, ok, cancel
}

// node is the dialog in the tree: an alert holding its message, the
// prompt's entry and its push buttons.
func (d *dialog) node(s action.Size) *observe.Node {
	box, field, ok, cancel := d.boxes(s)
	st := []string{"visible", "showing", "enabled", "sensitive"}
	dl := &observe.Node{Role: "alert", Name: d.message, Box: box, States: append(st, "modal")}
	dl.Children = append(dl.Children, &observe.Node{Role: "label", Name: d.message, Text: d.message, Box: action.Box{X: box.X + 12, Y: box.Y + 12, W: box.W - 24, H: 40}, States: st})
	if field.W > 0 {
		dl.Children = append(dl.Children, &observe.Node{Role: "entry", Text: d.text, Box: field, States: append(st, "editable", "focused", "focusable")})
	}
	if cancel.W > 0 {
		dl.Children = append(dl.Children, &observe.Node{Role: "push button", Name: "Cancel", Box: cancel, States: append(st, "focusable")})
	}
	dl.Children = append(dl.Children, &observe.Node{Role: "push button", Name: "OK", Box: ok, States: append(st, "focusable")})
	return &observe.Node{App: "chromium", Role: "application", Name: "JavaScript " + d.kind, States: st, Box: action.Box{W: s.W, H: s.H},
		Children: []*observe.Node{dl}}
}

// draw paints the dialog on img.
func (d *dialog) draw(img *image.RGBA, s action.Size) {
	box, field, ok, cancel := d.boxes(s)
	fill := func(b action.Box, c color.RGBA) {
		draw.Draw(img, image.Rect(b.X, b.Y, b.X+b.W, b.Y+b.H), image.NewUniform(c), image.Point{}, draw.Src)
	}
	frame := func(b action.Box, c color.RGBA) {
		fill(action.Box{X: b.X, Y: b.Y, W: b.W, H: 1}, c)
		fill(action.Box{X: b.X, Y: b.Y + b.H - 1, W: b.W, H: 1}, c)
		fill(action.Box{X: b.X, Y: b.Y, W: 1, H: b.H}, c)
		fill(action.Box{X: b.X + b.W - 1, Y: b.Y, W: 1, H: b.H}, c)
	}
	text := func(x, y int, s string) {
		dr := font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
		dr.DrawString(s)
	}
	white, grey, blue := color.RGBA{255, 255, 255, 255}, color.RGBA{0x60, 0x60, 0x60, 255}, color.RGBA{0xd0, 0xe0, 0xff, 255}
	fill(box, white)
	frame(box, grey)
	for i, line := range wrap(d.message, (box.W-24)/7, 3) {
		text(box.X+12, box.Y+24+i*15, line)
	}
	if field.W > 0 {
		frame(field, grey)
		t := d.text
		if n := (field.W - 12) / 7; len(t) > n {
			t = t[len(t)-n:]
		}
		text(field.X+6, field.Y+18, t)
	}
	for _, bt := range []struct {
		b     action.Box
		label string
	}{{ok, "OK"}, {cancel, "Cancel"}} {
		if bt.b.W == 0 {
			continue
		}
		fill(bt.b, blue)
		frame(bt.b, grey)
		text(bt.b.X+(bt.b.W-7*len(bt.label))/2, bt.b.Y+19, bt.label)
	}
}

// wrap cuts s into at most n lines of width runes.
func wrap(s string, width, n int) []string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			if line != "" && len(line)+1+len(w) > width {
				lines = append(lines, line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		lines = append(lines, line)
	}
	if len(lines) > n {
		lines = append(lines[:n-1], lines[n-1]+" …")
	}
	return lines
}

// dialogOpen returns the dialog waiting for an answer, or nil.
func (b *Browser) dialogOpen() *dialog {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ep == nil {
		return nil
	}
	return b.ep.dialog
}

// answer accepts (with the prompt's text) or dismisses the dialog.
func (b *Browser) answer(ctx context.Context, accept bool, text *string) error {
	dl := b.dialogOpen()
	if dl == nil {
		return fmt.Errorf("%w: no JavaScript dialog is open", env.ErrBadAction)
	}
	p := page.HandleJavaScriptDialogParams{Accept: accept}
	if accept && dl.kind == "prompt" {
		t := dl.text
		if text != nil {
			t = *text
		}
		p.PromptText = t
	}
	err := chromedp.Do(dl.tab.ctx, chromedp.Func(func(_ context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.HandleJavaScriptDialog, p)
		return err
	}))
	if err != nil {
		return fmt.Errorf("answer the %s dialog: %w", dl.kind, err)
	}
	b.mu.Lock()
	if b.ep != nil && b.ep.dialog == dl {
		b.ep.dialog = nil
	}
	b.mu.Unlock()
	return nil
}

// dialogKey answers a dialog with Enter (accept) or Escape (dismiss), or
// edits the prompt's text with BackSpace; other keys do nothing, as in a
// browser's dialog.
func (b *Browser) dialogKey(sym uint32) error {
	ctx := b.dev.context()
	switch sym {
	case 0xff0d, 0xff8d:
		return b.answer(ctx, true, nil)
	case 0xff1b:
		return b.answer(ctx, false, nil)
	case 0xff08:
		b.mu.Lock()
		if dl := b.ep.dialog; dl != nil && dl.text != "" {
			r := []rune(dl.text)
			dl.text = string(r[:len(r)-1])
		}
		b.mu.Unlock()
	}
	return nil
}

// dialogType types into a prompt; Enter accepts it.
func (b *Browser) dialogType(r rune) error {
	if r == '\n' || r == '\r' {
		return b.dialogKey(0xff0d)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if dl := b.ep.dialog; dl != nil && dl.kind == "prompt" {
		dl.text += string(r)
	}
	return nil
}

// clickDialog answers a dialog clicked at (x, y): OK accepts, Cancel
// dismisses, anywhere else does nothing. It reports whether a dialog was
// open.
func (b *Browser) clickDialog(ctx context.Context, x, y int) (bool, error) {
	dl := b.dialogOpen()
	if dl == nil {
		return false, nil
	}
	_, _, ok, cancel := dl.boxes(b.size())
	switch {
	case ok.Contains(x, y):
		return true, b.answer(ctx, true, nil)
	case cancel.W > 0 && cancel.Contains(x, y):
		return true, b.answer(ctx, false, nil)
	}
	return true, nil
}
