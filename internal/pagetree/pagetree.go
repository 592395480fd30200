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
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/proctor-eval/proctor/internal/cdppipe"
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

// read is Read as a chromedp action. Where cdppipe started the browser,
// the calls go through its connection's own session, which hands the
// megabytes of the AX reply to the tree's decoder as they came.
func read(ctx context.Context, t *chromedp.Target) (*observe.Tree, error) {
	r, err := fetch(ctx, cdppipe.SessionOf(ctx, t))
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

// raw is what the browser answered, indexed as each answer came (while
// the other was still being read), before the two are joined.
type raw struct {
	main   cdp.FrameID
	frames map[cdp.FrameID]*frameTree // each frame's AX nodes
	lay    *layout                    // the DOM snapshot
	errors []string
}

// fetch asks for every frame's AX tree and the DOM snapshot. The frame
// tree comes first (a short round trip); then the AX trees are asked for,
// and the snapshot once they are on their way. The order is for speed: the
// page's renderer answers one call at a time, and the AX tree is the long
// one, so the snapshot is computed while the AX reply is still being sent
// and decoded, and costs almost nothing; asked for first, it would add its
// whole time. A frame whose AX tree cannot be read is named in raw.errors.
func fetch(ctx context.Context, s cdp.Session) (*raw, error) {
	ft, err := cdp.Call(ctx, s, page.GetFrameTree, cdp.Empty{})
	switch {
	case err != nil:
		return nil, fmt.Errorf("pagetree: frame tree: %w", err)
	case ft.FrameTree == nil || ft.FrameTree.Frame == nil:
		return nil, errors.New("pagetree: frame tree: the page has no main frame")
	}
	r := &raw{main: ft.FrameTree.Frame.ID, frames: map[cdp.FrameID]*frameTree{}}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		mainErr error
		asked   sync.WaitGroup // the AX calls handed to the session
	)
	walkFrames(ft.FrameTree, func(f *page.FrameTree, depth int) {
		id := f.Frame.ID
		var params accessibility.GetFullAXTreeParams
		if depth > 0 {
			params.FrameID = id
		}
		asked.Add(1)
		wg.Go(func() {
			res, err := cdp.Call(ctx, sending{s, asked.Done}, getFullAXTree, params)
			var nodes *frameTree
			if err == nil {
				nodes = newFrameTree(res.Nodes)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				r.frames[id] = nodes
			case depth == 0:
				mainErr = err
			default:
				r.errors = append(r.errors, fmt.Sprintf("frame %s (%s): %v", id, f.Frame.URL, err))
			}
		})
	})
	asked.Wait()
	time.Sleep(followGap)
	snap, snapErr := cdp.Call(ctx, s, domsnapshot.CaptureSnapshot, domsnapshot.CaptureSnapshotParams{
		ComputedStyles: styles,
	})
	if snapErr == nil {
		r.lay = index(&snap)
	}
	wg.Wait()
	for _, err := range []error{mainErr, snapErr} {
		if err != nil {
			return nil, fmt.Errorf("pagetree: %w", err)
		}
	}
	return r, nil
}

// followGap is how long the snapshot waits after the AX calls are handed
// to the session, for them to reach the browser's send queue first. The
// order only saves time: a snapshot sent first is answered as well.
const followGap = time.Millisecond

// sending is a session that calls sent as a call is handed to it, just
// before the call is sent, so that a later call can follow it.
type sending struct {
	cdp.Session
	sent func()
}

func (s sending) Call(ctx context.Context, method string, params, res any) error {
	s.sent()
	return s.Session.Call(ctx, method, params, res)
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
