package browser

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/memory"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/internal/cdppipe"
	"github.com/proctor-eval/proctor/internal/pagetree"
	"github.com/proctor-eval/proctor/observe"
)

// screenshot captures the active tab's viewport. A JavaScript dialog
// waiting for an answer is drawn over it where the tree places it, so
// that a pixel agent sees it and can click its buttons.
func (b *Browser) screenshot(ctx context.Context, o env.ShotOptions) (env.Shot, error) {
	pctx, err := b.page(ctx)
	if err != nil {
		return env.Shot{}, err
	}
	dl := b.dialogOpen()
	// With marks, the tree is read while the page is captured.
	var tree *observe.Tree
	treeDone := make(chan error, 1)
	if o.Marks {
		go func() {
			var err error
			tree, err = b.Tree(ctx)
			treeDone <- err
		}()
	} else {
		treeDone <- nil
	}
	var data []byte
	if dl == nil {
		if data, err = b.capture(ctx, pctx); err != nil {
			<-treeDone
			return env.Shot{}, b.failed("take a screenshot", err)
		}
	}
	plain := !o.Marks && !o.Cursor && (o.Scale == 0 || o.Scale == 1) && o.JPEG == 0
	if plain && dl == nil {
		return env.Shot{Data: data, Format: "png", Size: b.size()}, nil
	}
	// The capture is decoded while the tree is still being read.
	bounds := image.Rect(0, 0, b.cfg.Width, b.cfg.Height)
	var img *image.RGBA
	if dl == nil {
		src, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			<-treeDone
			return env.Shot{}, fmt.Errorf("the browser's screenshot: %w", err)
		}
		if rgba, ok := src.(*image.RGBA); ok && rgba.Rect == bounds {
			img = rgba
		} else {
			img = image.NewRGBA(bounds)
			draw.Draw(img, img.Rect, src, src.Bounds().Min, draw.Src)
		}
	} else {
		img = image.NewRGBA(bounds)
	}
	if err := <-treeDone; err != nil {
		return env.Shot{}, err
	}
	if dl != nil {
		// A page under a dialog cannot be captured: the dialog blocks its
		// rendering. It is shown greyed, as a browser shows it.
		draw.Draw(img, img.Rect, image.NewUniform(dialogShade), image.Point{}, draw.Src)
		dl.draw(img, b.size())
	}
	var marks []observe.Mark
	if o.Marks {
		marks = b.marksOf(tree)
		observe.DrawMarks(img, marks)
		b.mu.Lock()
		b.marks = marks
		b.mu.Unlock()
	}
	x, y, _ := b.dev.Pointer()
	return env.FinishShot(img, o, &image.Point{X: x, Y: y}, marks, tree)
}

// Waits of a capture: for a document being loaded, and for the capture
// itself before it is tried again once the page has loaded.
const (
	loadWait    = 10 * time.Second
	captureWait = 5 * time.Second
)

// capture takes the PNG of the active tab's viewport. Chromium does not
// answer a capture asked for while the tab replaces its document (a form
// sent, a link followed): the capture waits for the load, and one that
// gets no answer is tried again once the page has loaded.
func (b *Browser) capture(ctx context.Context, pctx context.Context) ([]byte, error) {
	t := b.activeTab()
	var err error
	for try := 0; try < 2; try++ {
		if t != nil {
			t.waitLoaded(ctx, loadWait)
		}
		cctx, cancel := context.WithTimeout(ctx, captureWait)
		var data []byte
		data, err = chromedp.Run(pctx, func(tctx context.Context, tg *chromedp.Target) ([]byte, error) {
			res, err := cdp.Call(cctx, cdppipe.SessionOf(tctx, tg), page.CaptureScreenshot, page.CaptureScreenshotParams{
				Format: page.CaptureScreenshotFormatPng, OptimizeForSpeed: ptr(true)})
			return res.Data, err
		})
		cancel()
		if err == nil || ctx.Err() != nil {
			return data, err
		}
	}
	return nil, err
}

// activeTab is the episode's active tab, or nil.
func (b *Browser) activeTab() *tab {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ep == nil {
		return nil
	}
	return b.ep.active
}

// tree reads the active tab's accessibility tree, every frame's, with the
// boxes of the page's layout; a JavaScript dialog waiting for an answer
// is its own node, with its buttons.
func (b *Browser) tree(ctx context.Context) (*observe.Tree, error) {
	pctx, err := b.page(ctx)
	if err != nil {
		return nil, err
	}
	if dl := b.dialogOpen(); dl != nil {
		return &observe.Tree{Apps: []*observe.Node{dl.node(b.size())}}, nil
	}
	if t := b.activeTab(); t != nil {
		t.waitLoaded(ctx, loadWait)
	}
	rctx, stop := within(pctx, ctx)
	defer stop()
	counts, err := chromedp.Run(rctx, func(tctx context.Context, tg *chromedp.Target) (memory.GetDOMCountersResult, error) {
		return cdp.Call(tctx, cdppipe.SessionOf(tctx, tg), memory.GetDOMCounters, cdp.Empty{})
	})
	if err != nil {
		return nil, b.failed("count the page's nodes", cmp.Or(ctx.Err(), err))
	}
	if counts.Nodes > int64(b.cfg.MaxTreeNodes) {
		msg := fmt.Sprintf("the page holds %d nodes, more than the %d whose tree the browser reads: its tree is left out (act on the screenshot)", counts.Nodes, b.cfg.MaxTreeNodes)
		b.notice(msg)
		return &observe.Tree{Errors: []string{msg}}, nil
	}
	t, err := pagetree.Read(rctx)
	if err != nil {
		return nil, b.failed("read the page's tree", cmp.Or(ctx.Err(), err)) // the caller's deadline, not rctx's cancel
	}
	return t, nil
}

// within is pctx, a tab's chromedp context, ended also when ctx, the
// caller's, ends: a call on the tab honours the caller's deadline.
func within(pctx, ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancelCause(pctx)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return rctx, func() { stop(); cancel(nil) }
}

// failed names what failed, and says so when the browser is gone.
func (b *Browser) failed(what string, err error) error {
	if _, aerr := b.episode(); aerr != nil {
		return aerr
	}
	if ctx := context.Cause(b.root); ctx != nil {
		return fmt.Errorf("%s: the browser ended (%v): %w", what, ctx, env.ErrClosed)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Elements finds the tree's elements a query names.
func (b *Browser) Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	t, err := b.Tree(ctx)
	if err != nil {
		return nil, err
	}
	return t.Elements(q), nil
}

// Windows lists the tabs, in the order they opened, as windows: the title
// (or the URL of a page without one), and which is active. IDs count from
// 1 in that order.
func (b *Browser) Windows(ctx context.Context) ([]env.Window, error) {
	tabs, err := b.Tabs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]env.Window, len(tabs))
	for i, t := range tabs {
		out[i] = env.Window{ID: uint32(i + 1), Title: cmp.Or(t.Title, t.URL), Active: t.Active, Box: action.Box{W: b.cfg.Width, H: b.cfg.Height}}
	}
	return out, nil
}

// tabs lists the episode's tabs in the order they opened, with each one's
// page title and address, the active one marked.
func (b *Browser) tabs(ctx context.Context) ([]observe.Tab, error) {
	ep, err := b.episode()
	if err != nil {
		return nil, err
	}
	infos, err := b.syncTabs(ctx, ep) // the targets it listed
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]observe.Tab, 0, len(ep.tabs))
	for _, t := range ep.tabs {
		tab := observe.Tab{Active: t == ep.active}
		for _, in := range infos {
			if in.TargetID == t.id {
				tab.Title, tab.URL = in.Title, in.URL
			}
		}
		out = append(out, tab)
	}
	return out, nil
}

var _ env.Tabs = (*Browser)(nil)

// Eval evaluates a JavaScript expression in the active tab's page
// (awaiting a promise) and returns its value as text: a string as it is,
// anything else as JSON. An exception is an error that says so.
func (b *Browser) Eval(ctx context.Context, expr string) (string, error) {
	v, _, err := b.eval(ctx, expr)
	return v, err
}

// eval is Eval that also says whether the value is null or undefined.
func (b *Browser) eval(ctx context.Context, expr string) (string, bool, error) {
	v, found, err := b.Page(ctx, observe.PageQuery{JS: expr})
	return v, !found, err
}

// pageText are the roles of a page's own text containers: the desktop
// counts them among the elements a person acts on (an office document's
// paragraphs take the caret), a page's do not.
var pageText = map[string]bool{"document": true, "frame": true, "paragraph": true, "table cell": true,
	"list item": true, "heading": true, "status bar": true}

// marksOf numbers the elements of the tree that a person acts on, as
// browser-use's indexes do: the desktop's interactive elements less the
// page's text containers, which count only where the page made them
// editable or, but for a document, focusable (tabindex).
func (b *Browser) marksOf(tree *observe.Tree) []observe.Mark {
	var keep []observe.Located
	for _, n := range tree.Filter(observe.Options{Screen: b.size()}) {
		if pageText[n.Role] && !n.Has("editable") && (n.Role == "document" || n.Role == "frame" || !n.Has("focusable")) {
			continue
		}
		keep = append(keep, n)
	}
	return observe.Marks(keep)
}
