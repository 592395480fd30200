package cdppipe

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// using lists the processes whose command line holds arg.
func using(arg string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || e.Name() == "self" {
			continue
		}
		if bytes.Contains(cmdline, []byte(arg)) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestAllocator starts the real browser, drives a tab through the pipe,
// and checks that no process of it is left once the context is cancelled
// and Wait has returned.
func TestAllocator(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed")
	}
	profile := "--user-data-dir=" + t.TempDir()
	var log bytes.Buffer
	a := &Allocator{Path: path, Args: []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", profile}, Output: &log}
	actx, cancelAlloc := chromedp.NewAllocatorContext(context.Background(), a)
	defer cancelAlloc()
	root, cancel := chromedp.NewContext(actx)
	v, err := chromedp.CallBrowser(root, browser.GetVersion, cdp.Empty{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if !strings.Contains(v.Product, "Chrome") {
		t.Errorf("version %q", v.Product)
	}
	tab, cancelTab := chromedp.NewContext(root)
	if err := chromedp.Do(tab, chromedp.Navigate(`data:text/html,<title>t</title>`)); err != nil {
		t.Fatal(err)
	}
	// A reply of a megabyte, read by its envelope and decoded once.
	text, err := chromedp.Run(tab, chromedp.Evaluate[string](`'word '.repeat(200000)`))
	if err != nil || len(text) != len("word ")*200000 {
		t.Fatalf("the page's text: %d bytes, %v", len(text), err)
	}
	// The same through the connection's own session, which bypasses
	// chromedp.
	conn := ConnOf(tab)
	if conn == nil {
		t.Fatal("ConnOf: no connection for the allocator's browser")
	}
	v2, err := chromedp.Run(tab, func(ctx context.Context, tg *chromedp.Target) (runtime.EvaluateResult, error) {
		return cdp.Call(ctx, conn.Session(tg), runtime.Evaluate, runtime.EvaluateParams{Expression: "'word '.repeat(200000)", ReturnByValue: ptr(true)})
	})
	if err != nil || len(v2.Result.Value) != len("word ")*200000+2 {
		t.Fatalf("through the session: %d bytes, %v", len(v2.Result.Value), err)
	}
	if ConnOf(context.Background()) != nil {
		t.Error("ConnOf found a connection in a plain context")
	}
	cancelTab()
	if len(using(profile)) == 0 {
		t.Fatal("no browser process found while it runs")
	}
	cancel()
	cancelAlloc()
	done := make(chan struct{})
	waitStart := time.Now()
	go func() { a.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return")
	}
	t.Logf("Wait took %v", time.Since(waitStart))
	if left := using(profile); len(left) > 0 {
		t.Errorf("processes left after Wait: %v", left)
	}
}

// TestAllocatorFailedStart checks that a browser that exits at once is an
// error, with what it printed at hand, and that a missing program is one.
func TestAllocatorFailedStart(t *testing.T) {
	script := filepath.Join(t.TempDir(), "chromium")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'cannot open display' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := &Allocator{Path: script}
	actx, cancelAlloc := chromedp.NewAllocatorContext(context.Background(), a)
	root, cancel := chromedp.NewContext(actx)
	ctx, stop := context.WithTimeout(root, 10*time.Second)
	defer stop()
	if _, err := chromedp.CallBrowser(ctx, browser.GetVersion, cdp.Empty{}); err == nil {
		t.Error("a browser that exited answered")
	}
	cancel()
	cancelAlloc()
	a.Wait()
	if got := a.Tail(); got != "cannot open display" {
		t.Errorf("Tail() = %q", got)
	}

	a = &Allocator{Path: filepath.Join(t.TempDir(), "none")}
	actx, cancelAlloc = chromedp.NewAllocatorContext(context.Background(), a)
	defer cancelAlloc()
	root, cancel = chromedp.NewContext(actx)
	defer cancel()
	if _, err := chromedp.CallBrowser(root, browser.GetVersion, cdp.Empty{}); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("a missing program: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
