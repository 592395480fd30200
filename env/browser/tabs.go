package browser

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// DefaultMaxTabs is Config.MaxTabs's default.
const DefaultMaxTabs = 16

// A page may open windows (window.open, links to a new window), and a
// hostile one opens them without end. The browser watches every page
// target created in the current episode's browser context: past
// Config.MaxTabs open at once, each new one is closed as it appears,
// before anything attaches to it, and counted; the count is told to the
// agent with its next observation (Notices). Tabs the agent opens itself
// are refused past the cap.

// watchTargets makes the browser report targets to its own connection and
// enforces the cap on them.
func (b *Browser) watchTargets(ctx context.Context) error {
	c := chromedp.FromContext(b.root)
	if _, err := cdp.Call(ctx, c.Browser, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		return fmt.Errorf("watch the browser's tabs: %w", err)
	}
	return chromedp.ListenBrowser(b.root, func(ev any) {
		switch ev := ev.(type) {
		case *target.EventTargetCreated:
			b.targetCreated(ev.TargetInfo)
		case *target.EventTargetDestroyed:
			b.mu.Lock()
			if b.ep != nil {
				delete(b.ep.pages, ev.TargetID)
			}
			b.mu.Unlock()
		}
	})
}

// targetCreated counts a page of the current episode, and closes it past
// the cap. It runs on the connection's event loop: the closing is sent
// from another goroutine.
func (b *Browser) targetCreated(in *target.Info) {
	if in == nil || in.Type != "page" {
		return
	}
	b.mu.Lock()
	ep := b.ep
	if ep == nil || in.BrowserContextID != ep.id || ep.pages[in.TargetID] {
		b.mu.Unlock()
		return
	}
	over := len(ep.pages) >= b.cfg.MaxTabs
	if over {
		ep.closedTabs++
	} else {
		ep.pages[in.TargetID] = true
	}
	b.mu.Unlock()
	if !over {
		return
	}
	b.closing.Add(1)
	go func() {
		defer b.closing.Done()
		ctx, cancel := context.WithTimeout(b.background, 10*time.Second)
		defer cancel()
		cdp.Call(ctx, chromedp.FromContext(b.root).Browser, target.CloseTarget, target.CloseTargetParams{TargetID: in.TargetID})
	}()
}

// tabsFull is the error of a tab the agent opens past the cap.
func (b *Browser) tabsFull(ep *episode) error {
	b.mu.Lock()
	n := len(ep.pages)
	b.mu.Unlock()
	if n < b.cfg.MaxTabs {
		return nil
	}
	return fmt.Errorf("the browser holds at most %d tabs at once, and %d are open: close one first", b.cfg.MaxTabs, n)
}

// Notices tells what the browser refused or closed since the last call:
// the page requests refused (the last few addresses) and the tabs closed
// past the cap.
func (b *Browser) Notices() []string {
	var out []string
	if n, last := b.reach.news(3); n > 0 {
		out = append(out, fmt.Sprintf("the browser refused %s of the page to addresses this task does not allow: %s", count(n, "request"), strings.Join(last, ", ")))
	}
	b.mu.Lock()
	ep := b.ep
	var closed int
	if ep != nil {
		closed = ep.closedTabs - ep.toldTabs
		ep.toldTabs = ep.closedTabs
	}
	b.mu.Unlock()
	if closed > 0 {
		out = append(out, fmt.Sprintf("the browser closed %s the page opened past its cap of %d tabs", count(closed, "window"), b.cfg.MaxTabs))
	}
	b.mu.Lock()
	out = append(out, b.notes...)
	b.notes = nil
	b.mu.Unlock()
	return out
}

// notice keeps a line for Notices (the last few).
func (b *Browser) notice(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.notes) < 4 && !slices.Contains(b.notes, s) {
		b.notes = append(b.notes, s)
	}
}

// count is n and a noun, singular or plural.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
