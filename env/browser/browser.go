// Package browser is an environment of one Chromium tab set, driven over
// the Chrome DevTools Protocol: Debian's chromium, headless, started once,
// with a fresh browser context (an incognito profile: cookies, storage,
// cache and tabs of its own) for every episode.
//
// The observation is the viewport's screenshot and the page's
// accessibility tree joined with its layout (package pagetree), in the
// desktop's tree model, so that filtering, set-of-mark and the record of
// the element under a click work as on a desktop. Pointer and keyboard
// actions become CDP input events (package input interprets them), so a
// pixel agent acts as on a screen; element actions (an index, an id, a
// role and name) scroll the element into view and act on it; navigation,
// tabs, option selection, uploads and JavaScript dialogs are the
// browser's own. Site isolation is off, so that an iframe from another
// origin lives in its page's process and its elements are in the tree.
package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/input"
	"github.com/proctor-eval/proctor/env/setup"
	"github.com/proctor-eval/proctor/internal/cdppipe"
	"github.com/proctor-eval/proctor/internal/devtools"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// Defaults of Config.
const (
	DefaultWidth  = 1280
	DefaultHeight = 800
	// DefaultMaxTreeNodes bounds the page whose tree is read: the DOM's
	// nodes, text nodes included, as the renderer counts them (a page's
	// script cannot change the count). Reading the tree of 50,000
	// elements (about 100,000 nodes) takes about 10 s on a loaded
	// machine, of 200,000 elements over a minute and a gigabyte.
	DefaultMaxTreeNodes = 100_000
)

// Caps are the capabilities of a browser: its tree and elements, its tabs
// as windows, the files of its episode's folder (downloads, uploads), and
// its page for page probes.
var Caps = []task.Capability{task.CapTree, task.CapElements, task.CapWindows, task.CapFiles, task.CapPage, task.CapAfter}

// Config says how to start the browser.
type Config struct {
	Width, Height int    // the viewport; default DefaultWidth x DefaultHeight
	ExecPath      string // the browser; default chromium (or chromium-browser, google-chrome) on PATH
	MaxTabs       int    // the tabs an episode may have open at once; default DefaultMaxTabs (tabs.go)
	MaxMemory     int64  // the bytes the browser's processes may hold together; default DefaultMaxMemory (memory.go)
	MaxTreeNodes  int    // the DOM nodes of a page whose tree is read; default DefaultMaxTreeNodes
	Dir           string // where the browser's folders are made; default the system's
	Log           io.Writer
}

// Browser is the environment. Its methods are safe for concurrent use;
// actions run one at a time.
type Browser struct {
	cfg     Config
	base    string // the browser's folder: profile, episodes' homes
	version string

	alloc                      *cdppipe.Allocator
	cancelAlloc, cancelBrowser context.CancelFunc
	root                       context.Context // the browser's connection, which keeps it running
	// background is the context of the work done between episodes
	// (opening the next one), which Close cancels.
	background       context.Context
	cancelBackground context.CancelFunc

	in      sync.Mutex     // one Do or Reset at a time
	closing sync.WaitGroup // episodes being opened or disposed of in the background
	spare   chan *episode  // the next episode, opened in the background (nil: its opening failed)
	opening bool           // the next episode is being opened (guarded by mu)
	// due, when not nil, is closed to open the next episode now: at the
	// episode's first observation, or at the next reset (guarded by mu).
	due chan struct{}
	// input turns pointer and keyboard actions into CDP events (device
	// in input.go); dev holds their state.
	input *input.Interpreter
	dev   *device

	// reach is what the episode's pages may reach, which proxy enforces
	// (reach.go).
	reach reach
	proxy *proxy

	mu     sync.Mutex
	peak   int64    // the most memory the browser held (memory.go)
	notes  []string // for Notices, besides the refusals and closed tabs
	ep     *episode
	marks  []observe.Mark // of the last screenshot with marks
	closed bool
	// dialogs is closed (and replaced) when a JavaScript dialog opens: a
	// command that the dialog holds up (the click that opened it) stops
	// waiting for its reply.
	dialogs chan struct{}
}

// episode is one browser context: its tabs and its folder.
type episode struct {
	ctx    context.Context // the context's first tab; its cancel disposes of the browser context
	cancel context.CancelFunc
	id     cdp.BrowserContextID
	home   string
	tabs   []*tab // in the order they opened
	active *tab
	// pages are the page targets of the context open now, those
	// attached to or not (tabs.go); closedTabs counts those closed past
	// the cap, told (Notices) up to toldTabs.
	pages                map[target.ID]bool
	closedTabs, toldTabs int
	// limited ends (stop) when the episode passes a limit of the
	// browser's, over (memory.go).
	limited context.Context
	stop    context.CancelCauseFunc
	over    error
	dialog  *dialog // a JavaScript dialog waiting for an answer
	// requests are the requests with side effects its pages sent
	// (snapshot.go).
	requests requestLog
	// used is set by the first action, file written or page read: an
	// episode still unused (the one Start opened) is as fresh as a new
	// one, and the first reset takes it.
	used bool
}

// use marks the current episode as used.
func (b *Browser) use() {
	b.mu.Lock()
	if b.ep != nil {
		b.ep.used = true
	}
	b.mu.Unlock()
}

// tab is one page target with the chromedp context attached to it.
type tab struct {
	id     target.ID
	ctx    context.Context
	cancel context.CancelFunc

	// loading is set while the main frame loads a document; loaded is
	// closed (and replaced) when it stops.
	mu      sync.Mutex
	loading bool
	loaded  chan struct{}
}

// setLoading records the main frame starting or stopping to load.
func (t *tab) setLoading(v bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.loaded == nil {
		t.loaded = make(chan struct{})
	}
	if t.loading && !v {
		close(t.loaded)
		t.loaded = make(chan struct{})
	}
	t.loading = v
}

// waitLoaded waits until the main frame is not loading, at most max: a
// page being replaced cannot be captured.
func (t *tab) waitLoaded(ctx context.Context, max time.Duration) {
	t.mu.Lock()
	if !t.loading {
		t.mu.Unlock()
		return
	}
	if t.loaded == nil {
		t.loaded = make(chan struct{})
	}
	ch := t.loaded
	t.mu.Unlock()
	timer := time.NewTimer(max)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
	case <-ctx.Done():
	}
}

var _ env.Env = (*Browser)(nil)

// ExecPath finds the browser: Debian's chromium first.
func ExecPath() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium to start (apt-get install chromium)")
}

// flags are the browser's command line: headless, with the window's size
// and a profile in dir, and none of the background work that costs time
// or reaches the network. The list follows chromedp's
// DefaultExecAllocatorOptions, which cannot be read as flags, with
// scrollbars shown and the popup blocker on, as a person's browser has
// it: a page opens a window only from a click or a key, one per gesture
// (a loop of window.open in a click handler opens one), and the tabs of
// an episode are capped besides (tabs.go).
func flags(cfg Config, dir string) []string {
	return []string{
		"--headless",
		"--no-sandbox",
		"--disable-gpu",
		"--mute-audio",
		"--no-first-run",
		"--no-default-browser-check",
		"--user-data-dir=" + dir,
		fmt.Sprintf("--window-size=%d,%d", cfg.Width, cfg.Height),
		"--disable-background-networking",
		"--disable-background-timer-throttling",
		"--disable-backgrounding-occluded-windows",
		"--disable-renderer-backgrounding",
		"--disable-breakpad",
		"--disable-client-side-phishing-detection",
		"--disable-component-update",
		"--disable-default-apps",
		"--disable-dev-shm-usage",
		"--disable-extensions",
		"--disable-hang-monitor",
		"--disable-ipc-flooding-protection",
		"--disable-prompt-on-repost",
		"--disable-sync",
		"--disable-quic",
		"--force-color-profile=srgb",
		"--metrics-recording-only",
		"--safebrowsing-disable-auto-update",
		"--enable-automation",
		"--password-store=basic",
		"--use-mock-keychain",
		"--enable-features=NetworkService,NetworkServiceInProcess",
		"--disable-smooth-scrolling", // a wheel notch scrolls at once
		// An iframe from another origin stays in its page's process, so
		// that its elements are in the page's tree and input reaches it.
		"--disable-site-isolation-trials",
		// Without the back-forward cache, going back loads the page again,
		// and the wait for its load ends.
		"--disable-features=IsolateOrigins,site-per-process,Translate,MediaRouter,BackForwardCache",
		// No first tab: every episode opens its own context and window.
		"--no-startup-window",
	}
}

// Start starts the browser and opens the first episode's context.
func Start(ctx context.Context, cfg Config) (*Browser, error) {
	if cfg.Width == 0 {
		cfg.Width, cfg.Height = DefaultWidth, DefaultHeight
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.MaxTabs <= 0 {
		cfg.MaxTabs = DefaultMaxTabs
	}
	if cfg.MaxTreeNodes <= 0 {
		cfg.MaxTreeNodes = DefaultMaxTreeNodes
	}
	if cfg.MaxMemory <= 0 {
		cfg.MaxMemory = DefaultMaxMemory
	}
	// The browser's output and chromedp's complaints are written from
	// different goroutines.
	cfg.Log = &syncWriter{w: cfg.Log}
	if cfg.ExecPath == "" {
		p, err := ExecPath()
		if err != nil {
			return nil, err
		}
		cfg.ExecPath = p
	}
	base, err := os.MkdirTemp(cfg.Dir, "proctor-browser-")
	if err != nil {
		return nil, err
	}
	b := &Browser{cfg: cfg, base: base, dialogs: make(chan struct{}), spare: make(chan *episode, 1)}
	b.dev = &device{b: b}
	b.input = &input.Interpreter{Device: b.dev, Place: place{b}, Name: "the browser", Gapless: true}
	b.reach.log = cfg.Log
	if b.proxy, err = startProxy(&b.reach); err != nil {
		os.RemoveAll(base)
		return nil, err
	}
	b.alloc = &cdppipe.Allocator{Path: cfg.ExecPath, Args: append(flags(cfg, filepath.Join(base, "profile")), b.proxy.flags()...), Output: cfg.Log, Folder: base}
	actx, cancelAlloc := chromedp.NewAllocatorContext(context.Background(), b.alloc)
	// chromedp's complaints (a command written as the browser closes)
	// go to the browser's log, not the program's.
	logf := func(format string, args ...any) { fmt.Fprintf(cfg.Log, "chromedp: "+format+"\n", args...) }
	root, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(logf))
	b.cancelAlloc, b.cancelBrowser, b.root = cancelAlloc, cancelBrowser, root
	b.background, b.cancelBackground = context.WithCancel(root)
	// The browser starts with no tab; root is its connection.
	type version struct {
		v   browser.GetVersionResult
		err error
	}
	started := make(chan version, 1)
	go func() {
		v, err := chromedp.CallBrowser(root, browser.GetVersion, cdp.Empty{})
		started <- version{v, err}
	}()
	select {
	case v := <-started:
		b.version, err = v.v.Product, v.err
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		b.Close()
		if tail := b.alloc.Tail(); tail != "" {
			err = fmt.Errorf("%w; it printed:\n%s", err, tail)
		}
		return nil, fmt.Errorf("start %s: %w", cfg.ExecPath, err)
	}
	if err := b.watchTargets(ctx); err != nil {
		b.Close()
		return nil, err
	}
	b.watchMemory()
	// The first episode, unused until the first reset takes it; that
	// reset opens the next one in the background.
	if _, err := b.newEpisode(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// newEpisode makes a fresh browser context current: the one opened in the
// background after the last reset when it is ready, else one opened now.
// It returns the last episode, for after: the caller disposes of it and
// opens the next one once the setup has run, so that neither slows the
// setup down.
func (b *Browser) newEpisode(ctx context.Context) (old *episode, err error) {
	b.mu.Lock()
	old = b.ep
	if old != nil && !old.used && old.dialog == nil {
		b.marks, b.notes = nil, nil
		b.mu.Unlock()
		b.dev.reset()
		return nil, b.front(ctx, old.active)
	}
	b.ep = nil
	b.marks, b.notes = nil, nil // the last episode's notices are not this one's
	opening := b.opening
	b.startSpare()
	b.mu.Unlock()
	var ep *episode
	select {
	case ep = <-b.spare:
	default:
		if opening { // half open already: wait for it rather than open another
			select {
			case ep = <-b.spare:
			case <-ctx.Done():
				return old, ctx.Err()
			}
		}
	}
	if ep == nil {
		if ep, err = b.openEpisode(ctx); err != nil {
			return old, err
		}
	}
	b.mu.Lock()
	b.ep = ep
	b.mu.Unlock()
	b.dev.reset()
	return old, b.front(ctx, ep.active)
}

// openingSpare reports whether the next episode's context is being
// opened in the background.
func (b *Browser) openingSpare() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.opening
}

// after disposes of the last episode and opens the next one, in the
// background: a reset then costs no start of a context and its tab
// (about 280 ms here). Both wait for the episode's first observation (or
// spareDelay, or the next reset): done at once, they hold the browser up
// for several hundred milliseconds just as the episode's state is
// snapshotted and its first screen taken, and once the agent has the
// screen the browser idles while it thinks.
func (b *Browser) after(old *episode) {
	b.closing.Add(1)
	b.mu.Lock()
	b.opening = true
	due := make(chan struct{})
	b.due = due
	b.mu.Unlock()
	go func() {
		defer b.closing.Done()
		t := time.NewTimer(spareDelay)
		select {
		case <-due:
		case <-t.C:
		case <-b.background.Done():
		}
		t.Stop()
		if old != nil {
			b.dispose(old)
		}
		next, err := b.openEpisode(b.background)
		if err != nil {
			next = nil // the next reset opens one itself
		}
		select {
		case b.spare <- next:
		default:
			if next != nil {
				b.dispose(next)
			}
		}
		b.mu.Lock()
		b.opening = false
		b.mu.Unlock()
	}()
}

// spareDelay is how long after a reset the next episode is opened at the
// latest, when the episode takes no observation before.
const spareDelay = time.Second

// startSpare lets the next episode's opening start now (b.mu held).
func (b *Browser) startSpare() {
	if b.due != nil {
		close(b.due)
		b.due = nil
	}
}

// observed is called after an observation: the first of an episode lets
// the next episode's opening start.
func (b *Browser) observed() {
	b.mu.Lock()
	b.startSpare()
	b.mu.Unlock()
}

// front makes a tab the one its window shows, so that it gets frames.
func (b *Browser) front(ctx context.Context, t *tab) error {
	if t == nil {
		return nil
	}
	err := chromedp.Do(t.ctx, chromedp.Func(func(_ context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.BringToFront, cdp.Empty{})
		return err
	}))
	if err != nil {
		return fmt.Errorf("bring the tab to the front: %w", err)
	}
	return nil
}

// dispose closes an episode's context in the background: closing a tab
// waits for the browser to drop it.
func (b *Browser) dispose(ep *episode) {
	b.closing.Add(1)
	go func() {
		defer b.closing.Done()
		ep.close()
		os.RemoveAll(ep.home)
	}()
}

// openEpisode opens a browser context with one blank tab and an empty
// folder, where downloads go.
func (b *Browser) openEpisode(ctx context.Context) (*episode, error) {
	home, err := os.MkdirTemp(b.base, "home-")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(home, "Downloads"), 0o700); err != nil {
		return nil, err
	}
	// A window of its own: a tab that another one hides gets no frames,
	// and a screenshot of it waits for ever.
	ectx, cancel := chromedp.NewContext(b.root, chromedp.WithNewBrowserContext(), chromedp.WithNewWindow(true))
	ep := &episode{ctx: ectx, cancel: cancel, home: home}
	ep.limited, ep.stop = context.WithCancelCause(context.Background())
	// ctx ends the opening, not the episode.
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	fail := func(err error) (*episode, error) {
		cancel()
		os.RemoveAll(home)
		return nil, err
	}
	if err := chromedp.Do(ectx); err != nil {
		return fail(fmt.Errorf("open a browser context: %w", err))
	}
	c := chromedp.FromContext(ectx)
	ep.id = c.BrowserContextID
	first := &tab{id: c.Target.TargetID, ctx: ectx}
	if err := b.prepareTab(first, ep); err != nil {
		return fail(err)
	}
	ep.tabs, ep.active = []*tab{first}, first
	ep.pages = map[target.ID]bool{first.id: true}
	_, err = cdp.Call(ctx, c.Browser, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, BrowserContextID: ep.id,
		DownloadPath: filepath.Join(home, "Downloads"), EventsEnabled: ptr(true)})
	if err != nil {
		return fail(fmt.Errorf("set the download folder: %w", err))
	}
	return ep, nil
}

// prepareTab quiets a tab's page-driven events (devtools.Quiet), sets
// its viewport and listens to its dialogs and requests.
func (b *Browser) prepareTab(t *tab, ep *episode) error {
	err := chromedp.Do(t.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if err := devtools.Quiet(ctx, tg); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: int64(b.cfg.Width), Height: int64(b.cfg.Height), DeviceScaleFactor: 1})
		if err != nil {
			return fmt.Errorf("set the viewport: %w", err)
		}
		return nil
	}))
	if err != nil {
		return fmt.Errorf("prepare the tab: %w", err)
	}
	if err := b.watchRequests(t, ep); err != nil {
		return err
	}
	main := cdp.FrameID(t.id) // a page target's main frame has its id
	return chromedp.Listen(t.ctx, func(ev any) {
		switch ev := ev.(type) {
		case *page.EventFrameStartedLoading:
			if ev.FrameID == main {
				t.setLoading(true)
			}
		case *page.EventFrameRequestedNavigation:
			if ev.FrameID == main {
				t.setLoading(true)
			}
		case *page.EventFrameStartedNavigating:
			if ev.FrameID == main && ev.NavigationType != page.FrameStartedNavigatingNavigationTypeSameDocument && ev.NavigationType != page.FrameStartedNavigatingNavigationTypeHistorySameDocument {
				t.setLoading(true)
			}
		case *page.EventFrameStoppedLoading:
			if ev.FrameID == main {
				t.setLoading(false)
			}
		case *page.EventJavascriptDialogOpening:
			b.mu.Lock()
			ep.dialog = &dialog{tab: t, kind: string(ev.Type), message: ev.Message, text: ev.DefaultPrompt}
			close(b.dialogs)
			b.dialogs = make(chan struct{})
			b.mu.Unlock()
		case *page.EventJavascriptDialogClosed:
			b.mu.Lock()
			if ep.dialog != nil && ep.dialog.tab == t {
				ep.dialog = nil
			}
			b.mu.Unlock()
		}
	})
}

// dialogOpened returns a channel closed when a dialog opens.
func (b *Browser) dialogOpened() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dialogs
}

// close ends the episode's tabs and disposes of its browser context.
func (ep *episode) close() {
	ep.stop(nil)
	for _, t := range ep.tabs {
		if t.cancel != nil {
			t.cancel()
		}
	}
	ep.cancel()
}

// episode returns the current episode, or ErrClosed.
func (b *Browser) episode() (*episode, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.ep == nil {
		return nil, fmt.Errorf("the browser: %w", env.ErrClosed)
	}
	select {
	case <-b.root.Done():
		return nil, fmt.Errorf("the browser ended: %w", env.ErrClosed)
	default:
	}
	return b.ep, nil
}

// page returns the active tab's context after bringing in the tabs the
// page opened itself (a link to a new window): the newest becomes active,
// as a person sees it in front.
func (b *Browser) page(ctx context.Context) (context.Context, error) {
	ep, err := b.episode()
	if err != nil {
		return nil, err
	}
	if _, err := b.syncTabs(ctx, ep); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if ep.active == nil {
		return nil, fmt.Errorf("%w: the browser has no tab open", env.ErrBadAction)
	}
	return ep.active.ctx, nil
}

// syncTabs attaches to the page targets of the episode's browser context
// that it does not know yet and forgets those that closed; it returns
// the targets it listed.
func (b *Browser) syncTabs(ctx context.Context, ep *episode) ([]*target.Info, error) {
	res, err := cdp.Call(ctx, chromedp.FromContext(ep.ctx).Browser, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, fmt.Errorf("list the tabs: %w", err)
	}
	infos := res.TargetInfos
	live := map[target.ID]bool{}
	var fresh []*target.Info
	b.mu.Lock()
	known := map[target.ID]bool{}
	for _, t := range ep.tabs {
		known[t.id] = true
	}
	for _, in := range infos {
		if in.Type != "page" || in.BrowserContextID != ep.id {
			continue
		}
		live[in.TargetID] = true
		if !known[in.TargetID] && ep.pages[in.TargetID] { // not one closed past the cap
			fresh = append(fresh, in)
		}
	}
	b.mu.Unlock()
	b.mu.Lock()
	kept := ep.tabs[:0]
	for _, t := range ep.tabs {
		if live[t.id] {
			kept = append(kept, t)
		} else if t.cancel != nil {
			go t.cancel()
		}
	}
	ep.tabs = kept
	if ep.active != nil && !live[ep.active.id] {
		ep.active = nil
		if len(kept) > 0 {
			ep.active = kept[len(kept)-1]
		}
	}
	b.mu.Unlock()
	for _, in := range fresh {
		if err := ctx.Err(); err != nil {
			return infos, err
		}
		tctx, cancel := chromedp.NewContext(ep.ctx, chromedp.WithTargetID(in.TargetID))
		t := &tab{id: in.TargetID, ctx: tctx, cancel: cancel}
		stop := context.AfterFunc(ctx, cancel) // the caller's deadline ends the attaching
		err := b.prepareTab(t, ep)
		if !stop() || err != nil {
			cancel()
			if ctx.Err() != nil {
				return infos, ctx.Err()
			}
			continue // it closed while attaching
		}
		b.mu.Lock()
		ep.tabs = append(ep.tabs, t)
		ep.active = t
		b.mu.Unlock()
	}
	return infos, nil
}

// Info describes the browser.
func (b *Browser) Info(ctx context.Context) (env.Info, error) {
	if _, err := b.episode(); err != nil {
		return env.Info{}, err
	}
	return env.Info{Kind: "browser", Screen: b.size(), Display: "chromium (headless)",
		Versions: map[string]string{"browser": b.version, "go": runtime.Version()}, Caps: append([]task.Capability(nil), Caps...)}, nil
}

func (b *Browser) size() action.Size { return action.Size{W: b.cfg.Width, H: b.cfg.Height} }

// Reset opens a fresh browser context (nothing of the last episode is
// left: cookies, storage, tabs, files) and runs the setup: open a URL,
// write or copy files into the episode's folder, wait for an element,
// sleep. The browser has no shell: a setup that runs commands is refused.
func (b *Browser) Reset(ctx context.Context, s env.Setup) error {
	b.in.Lock()
	defer b.in.Unlock()
	if _, err := b.episode(); err != nil {
		return err
	}
	old, err := b.newEpisode(ctx)
	defer b.after(old)
	if err != nil {
		return err
	}
	b.use() // the setup starts using it, whatever its steps
	b.allow(s)
	sctx, done := b.bounded(ctx) // a setup's page that passes a bound ends it too
	return done(setup.Executor{Env: b, Hook: newSetupHook(b)}.Run(sctx, s))
}

// RunSteps runs a task's steps after the agent in the episode's browser
// as it is: keys pressed on the active tab, files written, waits.
func (b *Browser) RunSteps(ctx context.Context, s env.Setup) error {
	b.in.Lock()
	defer b.in.Unlock()
	if _, err := b.episode(); err != nil {
		return err
	}
	sctx, done := b.bounded(ctx)
	return done(setup.Executor{Env: b, Hook: newSetupHook(b)}.After().Run(sctx, s))
}

// setupHook opens the browser's pages for package setup, which runs the
// other steps through the Env; the browser refuses launching apps and
// waiting for or focusing windows.
type setupHook struct {
	setup.Refuse
	b *Browser
}

// newSetupHook is b's hook, whose refusals say what a browser's setup
// does instead.
func newSetupHook(b *Browser) setupHook {
	return setupHook{Refuse: setup.Refuse{Why: "the browser has no shell, applications or windows to set up; open a URL, write or copy files, wait for an element"}, b: b}
}

// Open opens a URL, or a file of the episode's folder, in the active tab.
func (h setupHook) Open(ctx context.Context, _ env.Setup, st task.Open) error {
	b := h.b
	if st.App != "" {
		return fmt.Errorf("%w: the browser opens URLs and files itself, with no app", env.ErrBadAction)
	}
	u := st.URL
	if u == "" {
		u = b.expandURL(st.Path)
	}
	pctx, err := b.page(ctx)
	if err != nil {
		return err
	}
	return b.navigate(ctx, pctx, u)
}

// expandURL turns a path in the episode's folder (~/page.html) into a
// file URL; URLs are kept.
func (b *Browser) expandURL(u string) string {
	if strings.HasPrefix(u, "~/") || u == "~" {
		p, err := b.path(u)
		if err == nil {
			return "file://" + p
		}
	}
	return u
}

// Run refuses: the browser has no shell.
func (b *Browser) Run(context.Context, string, time.Duration) (observe.CommandResult, error) {
	return observe.CommandResult{}, b.missing("a shell command", task.CapCommands)
}

// Clipboard refuses: a headless browser has no clipboard of its own.
func (b *Browser) Clipboard(context.Context) (string, error) {
	return "", b.missing("the clipboard", task.CapClipboard)
}

// missing is the error of a use of a capability the browser lacks.
func (b *Browser) missing(what string, c task.Capability) error {
	return fmt.Errorf("%w: %s needs %s, which the browser does not offer", env.ErrBadAction, what, c)
}

// Close ends the browser and removes its folders.
func (b *Browser) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.ep = nil
	b.mu.Unlock()
	// The episodes end with the browser: none is closed on its own, and
	// the next one is no longer opened.
	if b.cancelBackground != nil {
		b.cancelBackground()
	}
	b.closing.Wait()
	if b.cancelBrowser != nil {
		b.cancelBrowser()
	}
	if b.cancelAlloc != nil {
		b.cancelAlloc()
	}
	if b.alloc != nil {
		b.alloc.Wait() // the browser has exited: its profile can go
	}
	if b.proxy != nil {
		b.proxy.close()
	}
	return os.RemoveAll(b.base)
}

func ptr[T any](v T) *T { return &v }

// syncWriter makes a writer safe to write from more than one goroutine.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
