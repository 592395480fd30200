package xdesktop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/internal/devtools"
	"github.com/proctor-eval/proctor/observe"
)

// A browser task (environment.type: browser) on the desktop runs in
// Chromium's window, which the agent sees and drives as pixels, as on any
// desktop. Its open step starts Chromium with a DevTools port on the
// loopback interface and a profile in the episode's home, so that the
// checks' page probes read the page the same way as in the browser
// environment.

// chromiumProfile is the profile folder of a browser task's Chromium.
const chromiumProfile = "~/.config/chromium"

// devtoolsFlags make Chromium answer the DevTools protocol on a free
// loopback port, which it writes to DevToolsActivePort in its profile.
func (d *Desktop) devtoolsFlags() []string {
	return []string{"--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
		"--user-data-dir=" + d.expand(chromiumProfile)}
}

// devtoolsURL reads the browser's DevTools address from its profile.
func (d *Desktop) devtoolsURL() (string, error) {
	b, err := os.ReadFile(filepath.Join(d.expand(chromiumProfile), "DevToolsActivePort"))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%w: page probes read the Chromium that a browser task's open step starts, and none runs", env.ErrBadAction)
	}
	if err != nil {
		return "", err
	}
	port, path, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 || !strings.HasPrefix(path, "/devtools/browser/") {
		return "", fmt.Errorf("Chromium's DevToolsActivePort holds %q, not a port and a browser path", b)
	}
	return "ws://127.0.0.1:" + port + path, nil
}

// Page reads a check's page probe in the tab Chromium shows.
func (d *Desktop) Page(ctx context.Context, q observe.PageQuery) (string, bool, error) {
	if err := q.Validate(); err != nil {
		return "", false, fmt.Errorf("%w: %v", env.ErrBadAction, err)
	}
	u, err := d.devtoolsURL()
	if err != nil {
		return "", false, err
	}
	actx, cancelAlloc := remote.NewAllocator(ctx, u, remote.NoModifyURL)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	infos, err := chromedp.Targets(bctx)
	if err != nil {
		return "", false, fmt.Errorf("list Chromium's tabs: %w", err)
	}
	type read struct {
		v              string
		found, visible bool
	}
	for _, in := range infos {
		if in.Type != "page" || strings.HasPrefix(in.URL, "devtools://") {
			continue
		}
		// Attached only for the read: the tab stays when the context ends.
		tctx, cancel := chromedp.NewContext(bctx, chromedp.WithTargetID(in.TargetID), chromedp.WithDetachOnCancel())
		r, err := chromedp.Run(tctx, func(ctx context.Context, t *chromedp.Target) (read, error) {
			if err := devtools.Quiet(ctx, t); err != nil {
				return read{}, err
			}
			vis, _, err := devtools.Eval(ctx, t, "document.visibilityState")
			if err != nil || vis != "visible" {
				return read{}, err
			}
			v, found, err := devtools.Read(ctx, t, q)
			return read{v, found, true}, err
		})
		cancel()
		if err != nil {
			return "", false, fmt.Errorf("read %s in the tab %q: %w", q.Describe(), in.URL, err)
		}
		if r.visible {
			return r.v, r.found, nil
		}
	}
	return "", false, fmt.Errorf("%w: Chromium shows no tab to read %s in", env.ErrBadAction, q.Describe())
}
