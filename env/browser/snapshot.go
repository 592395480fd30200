package browser

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domstorage"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"

	"github.com/proctor-eval/proctor/statediff"
)

// What an episode's pages did that a snapshot of its state (package
// snapshot) reports: every tab listens to the DevTools network domain,
// and the requests with side effects (any method but GET, HEAD and
// OPTIONS) are kept with their form fields, as are the origins of the
// documents the tabs loaded, whose storage the snapshot reads.

// Bounds of an episode's request log.
const (
	maxRequests   = 512
	maxOrigins    = 64
	maxPostData   = 64 << 10
	maxStorageLen = 5_000 // items of one origin's storage read
)

// requestLog is what an episode's pages sent.
type requestLog struct {
	mu      sync.Mutex
	reqs    []sentRequest
	dropped int
	origins []string // of the documents loaded, in order
}

// sentRequest is a request with side effects.
type sentRequest struct {
	method, url, origin, form string
}

// add records a request of a tab.
func (l *requestLog) add(ev *network.EventRequestWillBeSent) {
	r := ev.Request
	if r == nil {
		return
	}
	origin := statediff.OriginOf(r.URL)
	l.mu.Lock()
	defer l.mu.Unlock()
	if ev.Type == network.ResourceTypeDocument && origin != "" && !slices.Contains(l.origins, origin) && len(l.origins) < maxOrigins {
		l.origins = append(l.origins, origin)
	}
	switch r.Method {
	case "GET", "HEAD", "OPTIONS":
		return
	}
	if origin == "" { // data:, blob:
		return
	}
	if len(l.reqs) >= maxRequests {
		l.dropped++
		return
	}
	l.reqs = append(l.reqs, sentRequest{method: r.Method, url: r.URL, origin: origin, form: formOf(r)})
}

// formOf is a request's body as its form fields ("name=value" a line,
// sorted by name) where it is a URL-encoded form, else as sent.
func formOf(r *network.Request) string {
	var body []byte
	for _, e := range r.PostDataEntries {
		body = append(body, e.Bytes...)
		if len(body) > maxPostData {
			break
		}
	}
	ct := ""
	for k, v := range r.Headers {
		if strings.EqualFold(k, "content-type") {
			ct, _ = v.(string)
		}
	}
	if strings.HasPrefix(strings.ToLower(ct), "application/x-www-form-urlencoded") {
		if vals, err := url.ParseQuery(string(body)); err == nil {
			var lines []string
			for k, vs := range vals {
				for _, v := range vs {
					lines = append(lines, k+"="+v)
				}
			}
			sort.Strings(lines)
			return strings.Join(lines, "\n")
		}
	}
	if len(body) == 0 && r.HasPostData {
		return "(a body too long to record)"
	}
	return string(body)
}

// watchRequests makes a tab report its requests to the episode's log.
func (b *Browser) watchRequests(t *tab, ep *episode) error {
	err := chromedp.Do(t.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{MaxPostDataSize: ptr(int64(maxPostData))})
		return err
	}))
	if err != nil {
		return fmt.Errorf("watch the tab's requests: %w", err)
	}
	return chromedp.Listen(t.ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			ep.requests.add(e)
		}
	})
}

// SnapshotFiles lists the episode's folder (its downloads in
// ~/Downloads), keyed "~/...".
func (b *Browser) SnapshotFiles(_ context.Context, s *statediff.Snapshot, _ []string, bu *statediff.Budget) error {
	home, err := b.home()
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(home)
	if err != nil {
		return err
	}
	defer r.Close()
	return statediff.Walk(s, r, "~", bu)
}

// SnapshotBrowser lists the episode's cookies, the local and session
// storage of the origins its tabs show and loaded, its tabs' addresses
// (blank ones left out) and the requests with side effects its pages
// sent. Its DevTools calls go out together: the tabs, the cookies and the
// storage of the origins already known at once, then the storage of an
// origin only a tab's address names.
func (b *Browser) SnapshotBrowser(ctx context.Context, s *statediff.Snapshot, bu *statediff.Budget) error {
	ep, err := b.episode()
	if err != nil {
		return err
	}
	ep.requests.mu.Lock()
	reqs, dropped, origins := slices.Clone(ep.requests.reqs), ep.requests.dropped, slices.Clone(ep.requests.origins)
	ep.requests.mu.Unlock()
	b.mu.Lock()
	open := slices.Clone(ep.tabs)
	b.mu.Unlock()

	var wg sync.WaitGroup
	var cookies storage.GetCookiesResult
	var cookiesErr error
	c := chromedp.FromContext(b.root)
	wg.Go(func() {
		cookies, cookiesErr = cdp.Call(ctx, c.Browser, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: ep.id})
	})
	// Storage: local storage of each origin (read in the first tab),
	// session storage of each origin in each tab.
	var reads []*storageRead
	readAll := func(origins []string) {
		for i, t := range open {
			for _, o := range origins {
				kinds := []bool{false}
				if i == 0 {
					kinds = []bool{true, false}
				}
				for _, local := range kinds {
					r := &storageRead{origin: o, local: local}
					reads = append(reads, r)
					wg.Go(func() { r.entries, r.err = readStorage(ctx, t, o, local) })
				}
			}
		}
	}
	readAll(origins)
	tabs, err := b.Tabs(ctx)
	if err != nil {
		wg.Wait()
		return err
	}
	n := 0
	var more []string
	for _, t := range tabs {
		u := stripFragment(t.URL)
		o := statediff.OriginOf(u)
		if o == "" || n >= bu.Limits.MaxItems {
			continue
		}
		n++
		it := statediff.Item{Kind: statediff.Tab, Key: statediff.Cut(u, bu.Limits.MaxValue), Origin: o}
		bu.Value(&it, u)
		s.Add(it)
		if !slices.Contains(origins, o) && len(origins) < maxOrigins {
			origins = append(origins, o)
			more = append(more, o)
		}
	}
	readAll(more)
	wg.Wait()
	for i, r := range reqs {
		if i >= bu.Limits.MaxItems {
			break
		}
		it := statediff.Item{Kind: statediff.Request, Key: statediff.Cut(r.method+" "+r.url, bu.Limits.MaxValue), Origin: r.origin}
		bu.Value(&it, r.form)
		s.Add(it)
	}
	if dropped > 0 {
		s.Note("%d more requests with side effects were sent than the %d recorded", dropped, maxRequests)
	}
	// Cookies, of the episode's browser context.
	if cookiesErr != nil {
		return b.failed("read the cookies", cookiesErr)
	}
	for i, ck := range cookies.Cookies {
		if i >= bu.Limits.MaxItems {
			s.Note("more than %d cookies: the rest are not listed", bu.Limits.MaxItems)
			break
		}
		host := strings.TrimPrefix(ck.Domain, ".")
		it := statediff.Item{Kind: statediff.Cookie, Key: statediff.Cut(host+" "+ck.Path+" "+ck.Name, bu.Limits.MaxValue), Origin: host}
		bu.Value(&it, fmt.Sprintf("%s; httponly=%v; secure=%v; samesite=%s", ck.Value, ck.HTTPOnly, ck.Secure, ck.SameSite))
		s.Add(it)
	}
	for _, r := range reads {
		if err := r.add(ctx, s, bu); err != nil {
			return err
		}
	}
	return nil
}

// storageRead is one read of an origin's local or session storage.
type storageRead struct {
	origin  string
	local   bool
	entries []domstorage.Item
	err     error
}

// readStorage reads an origin's local or session storage, as a tab sees it.
func readStorage(ctx context.Context, t *tab, origin string, local bool) ([]domstorage.Item, error) {
	return chromedp.Run(t.ctx, func(_ context.Context, tg *chromedp.Target) ([]domstorage.Item, error) {
		r, err := cdp.Call(ctx, tg, domstorage.GetDOMStorageItems, domstorage.GetDOMStorageItemsParams{
			StorageID: &domstorage.StorageID{SecurityOrigin: origin, IsLocalStorage: local}})
		return r.Entries, err
	})
}

// add lists what a read found.
func (r *storageRead) add(ctx context.Context, s *statediff.Snapshot, bu *statediff.Budget) error {
	origin := r.origin
	if r.err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.Note("storage of %s: %v", origin, r.err)
		return nil
	}
	kind := statediff.SessionStorage
	if r.local {
		kind = statediff.LocalStorage
	}
	for i, e := range r.entries {
		if i >= min(bu.Limits.MaxItems, maxStorageLen) {
			s.Note("more than %d items in the %s of %s: the rest are not listed", i, kind, origin)
			break
		}
		if len(e) != 2 {
			continue
		}
		it := statediff.Item{Kind: kind, Key: statediff.Cut(origin+" "+e[0], bu.Limits.MaxValue), Origin: origin}
		bu.Value(&it, e[1])
		s.Add(it)
	}
	return nil
}
