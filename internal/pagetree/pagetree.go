// Package pagetree reads a web page's accessibility tree over the Chrome
// DevTools Protocol and returns it in Proctor's tree model (package
// observe), with boxes in viewport CSS pixels and the desktop's role and
// state names, so that filtering, set-of-mark and click descriptions work
// on a browser tab as they do on a desktop.
//
// The tree joins Accessibility.getFullAXTree, read for every frame, with
// DOMSnapshot.captureSnapshot, which gives each DOM node's layout box and
// the computed styles that decide whether it is visible. The two are joined
// by the DOM node's backend id, which also serves as the node's ID.
package pagetree

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/proctor-eval/proctor/observe"
)

// App is the application name of the tab's root node.
const App = "chromium"

// Read returns the accessibility tree of the page that ctx's target shows.
// ctx is a chromedp context whose target is a page (chromedp.NewContext).
// The tree has one root, the tab (role "application", named by the page's
// title), holding the main frame's document; each iframe's document hangs
// under its iframe's node. Frames whose tree cannot be read are left out
// and named in Tree.Errors.
func Read(ctx context.Context) (*observe.Tree, error) {
	return chromedp.Run(ctx, read)
}

// read is Read as a chromedp action.
func read(ctx context.Context, t *chromedp.Target) (*observe.Tree, error) {
	r, err := fetch(ctx, t)
	if err != nil {
		return nil, err
	}
	return build(r), nil
}

// styles are the computed styles the snapshot asks for, in this order (see
// the style* indexes).
var styles = []string{"visibility", "border-left-width", "border-top-width", "padding-left", "padding-top"}

// Indexes of the computed styles in styles.
const (
	styleVisibility = iota
	styleBorderLeft
	styleBorderTop
	stylePaddingLeft
	stylePaddingTop
)

// raw is what the browser answered, before it is joined.
type raw struct {
	main   cdp.FrameID
	ax     map[cdp.FrameID][]*axNode // each frame's AX nodes
	snap   *domsnapshot.CaptureSnapshotResult
	errors []string
}

// fetch issues the CDP calls concurrently: the DOM snapshot, the main
// frame's AX tree, and, once the frame tree is known, every other frame's
// AX tree. A frame whose AX tree cannot be read is named in raw.errors.
func fetch(ctx context.Context, s cdp.Session) (*raw, error) {
	r := &raw{ax: map[cdp.FrameID][]*axNode{}}
	var (
		wg                sync.WaitGroup
		mu                sync.Mutex
		snapErr, frameErr error
		mainAX            []*axNode
		mainAXErr         error
	)
	wg.Go(func() {
		var snap domsnapshot.CaptureSnapshotResult
		snap, snapErr = cdp.Call(ctx, s, domsnapshot.CaptureSnapshot, domsnapshot.CaptureSnapshotParams{
			ComputedStyles: styles,
		})
		r.snap = &snap
	})
	wg.Go(func() {
		res, err := cdp.Call(ctx, s, getFullAXTree, accessibility.GetFullAXTreeParams{})
		mainAX, mainAXErr = res.Nodes, err
	})
	wg.Go(func() {
		ft, err := cdp.Call(ctx, s, page.GetFrameTree, cdp.Empty{})
		switch {
		case err != nil:
			frameErr = fmt.Errorf("frame tree: %w", err)
			return
		case ft.FrameTree == nil || ft.FrameTree.Frame == nil:
			frameErr = errors.New("frame tree: the page has no main frame")
			return
		}
		r.main = ft.FrameTree.Frame.ID
		var inner sync.WaitGroup
		walkFrames(ft.FrameTree, func(f *page.FrameTree, depth int) {
			if depth == 0 {
				return
			}
			id := f.Frame.ID
			inner.Go(func() {
				res, err := cdp.Call(ctx, s, getFullAXTree, accessibility.GetFullAXTreeParams{FrameID: id})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					r.errors = append(r.errors, fmt.Sprintf("frame %s (%s): %v", id, f.Frame.URL, err))
					return
				}
				r.ax[id] = res.Nodes
			})
		})
		inner.Wait()
	})
	wg.Wait()
	for _, err := range []error{frameErr, mainAXErr, snapErr} {
		if err != nil {
			return nil, fmt.Errorf("pagetree: %w", err)
		}
	}
	r.ax[r.main] = mainAX
	return r, nil
}

// walkFrames calls fn for the frame and its descendants, parents first.
func walkFrames(f *page.FrameTree, fn func(f *page.FrameTree, depth int)) {
	var walk func(f *page.FrameTree, depth int)
	walk = func(f *page.FrameTree, depth int) {
		fn(f, depth)
		for _, c := range f.ChildFrames {
			walk(c, depth+1)
		}
	}
	walk(f, 0)
}
