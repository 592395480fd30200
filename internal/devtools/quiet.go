package devtools

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Quiet turns off the event domains that chromedp enables on every
// target it attaches to and that nothing here reads: DOM, CSS, Log and
// Runtime. A page drives how many events those send (one DOM event per
// node it appends, one Runtime event per console line), and chromedp
// passes a target's events and its replies through one queue, in order,
// on the connection the whole browser shares: 200,000 appended nodes
// held every tab's commands for minutes, and a DOM.documentUpdated
// among them, on which chromedp asks for the document and waits for a
// reply queued behind events it cannot take, held them for good. The
// commands of those domains (DOM.resolveNode, Runtime.evaluate, ...)
// work without their events.
func Quiet(ctx context.Context, t *chromedp.Target) error {
	// CSS first: its agent needs the DOM's.
	for _, m := range []string{css.Disable.Method, dom.Disable.Method, log.Disable.Method, runtime.Disable.Method} {
		if err := t.Call(ctx, m, cdp.Empty{}, nil); err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
	}
	return nil
}
