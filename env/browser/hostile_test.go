package browser

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/task"
)

// processesUsing lists the processes whose command line holds arg.
func processesUsing(arg string) []string {
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

// eventually polls cond until it holds or a generous limit passes (a
// bound for a broken build, not a timing assertion).
func eventually(cond func() bool) bool {
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestKilledOwnerLeavesNothing starts a browser in a child process, kills
// that process with SIGKILL (no cleanup of its own runs), and checks that
// no process of the browser and no profile folder is left.
func TestKilledOwnerLeavesNothing(t *testing.T) {
	if os.Getenv("PROCTOR_BROWSER_CHILD") != "" {
		b, err := Start(context.Background(), Config{Dir: os.Getenv("PROCTOR_BROWSER_CHILD")})
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		fmt.Println("BASE", b.base)
		time.Sleep(time.Hour)
		return
	}
	need(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledOwnerLeavesNothing$", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), "PROCTOR_BROWSER_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	var base string
	for sc.Scan() {
		if b, ok := strings.CutPrefix(sc.Text(), "BASE "); ok {
			base = b
			break
		}
		if strings.HasPrefix(sc.Text(), "ERROR") {
			t.Fatal(sc.Text())
		}
	}
	if base == "" {
		t.Fatal("the child printed no browser folder")
	}
	if len(processesUsing(base)) == 0 {
		t.Fatal("no browser process runs with the child's folder")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !eventually(func() bool { return len(processesUsing(base)) == 0 }) {
		t.Errorf("browser processes outlive their owner: %v", processesUsing(base))
	}
	if !eventually(func() bool { _, err := os.Stat(base); return os.IsNotExist(err) }) {
		entries, _ := os.ReadDir(base)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the browser's folder %s outlives its owner (%d entries: %v)", base, len(entries), names)
	}
}

// TestPopupStorm: a click that opens 1,000 windows opens one (the popup
// blocker lets one window open per gesture), and the observation after it
// answers; windows a page opens gesture after gesture stop at MaxTabs
// open, the rest closed as they appear and told to the agent; the agent's
// own tabs are refused past the cap; the next episode starts clean.
func TestPopupStorm(t *testing.T) {
	b := start(t)
	u := site(t, map[string]string{
		"storm": `<!doctype html><title>Storm</title><button id=go style="width:300px;height:100px" onclick="for (let i = 0; i < 1000; i++) window.open('/pop?' + i)">Go</button>`,
		"pop":   `<!doctype html><title>Pop</title><p>pop</p>`,
		"chain": `<!doctype html><title>Chain</title><script>onkeydown = () => window.open('/chain')</script>`,
	})
	open(t, b, u+"/storm")
	ctx := testCtx(t)
	if _, err := b.Do(ctx, []action.Action{{Kind: action.Click, Point: action.At(100, 40)}}); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	tabs, err := b.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Screenshot(ctx, env.ShotOptions{Marks: true}); err != nil {
		t.Fatal(err)
	}
	t.Logf("the observation after the storm took %v, with %d tabs", time.Since(started).Round(time.Millisecond), len(tabs))
	if len(tabs) != 2 {
		t.Fatalf("%d tabs open after a click that opens 1,000 windows; want 2", len(tabs))
	}

	// A window per key press, each opened from the newest.
	open(t, b, u+"/chain")
	for i := 0; i < DefaultMaxTabs+4; i++ {
		if _, err := b.Do(ctx, []action.Action{{Kind: action.Key, Keys: []string{"a"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Tabs(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var closed string
	if !eventually(func() bool {
		closed += strings.Join(b.Notices(), "\n")
		return strings.Contains(closed, "past its cap of 16 tabs")
	}) {
		t.Fatalf("no notice of the windows closed: %q", closed)
	}
	if tabs, err := b.Tabs(ctx); err != nil || len(tabs) != DefaultMaxTabs {
		t.Fatalf("%d tabs open (%v); want the cap, %d", len(tabs), err, DefaultMaxTabs)
	}
	_, err = b.Do(ctx, []action.Action{{Kind: action.Navigate, Text: u + "/pop", NewTab: true}})
	if !errors.Is(err, env.ErrBadAction) || !strings.Contains(err.Error(), "at most 16 tabs") {
		t.Fatalf("a tab past the cap: %v", err)
	}
	// A fresh episode has one tab.
	open(t, b, u+"/pop")
	if tabs, err := b.Tabs(ctx); err != nil || len(tabs) != 1 {
		t.Fatalf("the next episode has %d tabs (%v)", len(tabs), err)
	}
}

// TestMemoryBound: a page that builds two million nodes, and one that
// grows without end, are stopped when the browser passes its memory bound,
// in the setup that opens them or in the observation after; the
// episode's calls then fail with env.ErrLimit, naming the bound, and the
// next episode works.
func TestMemoryBound(t *testing.T) {
	need(t)
	// 768 MiB: the browser with a calm page holds about 400 MiB here; the
	// pages pass the bound well before their scripts end, which on a
	// loaded machine take minutes.
	const bound = 768 << 20
	b, err := Start(testCtx(t), Config{MaxMemory: bound})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	u := site(t, map[string]string{
		"million": `<!doctype html><title>Nodes</title><body><script>
const f = document.createDocumentFragment();
for (let i = 0; i < 2000000; i++) { const d = document.createElement(i % 10 ? 'span' : 'button'); d.textContent = 'node ' + i; f.appendChild(d); }
document.body.appendChild(f);
</script>`,
		"grow": `<!doctype html><title>Grow</title><body><p>growing</p><script>
const keep = [];
function grow() { const f = document.createDocumentFragment(); for (let i = 0; i < 200000; i++) { const d = document.createElement('div'); d.textContent = 'node ' + i + ' '.repeat(64); f.appendChild(d); } document.body.appendChild(f); keep.push(new Array(4e6).fill(keep.length)); setTimeout(grow, 0); }
setTimeout(grow, 0);
</script>`,
		"calm": `<!doctype html><title>Calm</title><p>calm</p>`,
	})
	for _, page := range []string{"million", "grow"} {
		t.Run(page, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			started := time.Now()
			err := b.Reset(ctx, env.Setup{Steps: []task.Step{{Open: &task.Open{URL: u + "/" + page}}}})
			for err == nil && ctx.Err() == nil {
				if _, err = b.Screenshot(ctx, env.ShotOptions{}); err == nil {
					_, err = b.Tree(ctx)
				}
			}
			t.Logf("the page was stopped after %v; the browser's memory peaked at %s (bound %s): %v",
				time.Since(started).Round(time.Millisecond), size(b.Peak()), size(bound), err)
			if !errors.Is(err, env.ErrLimit) || !strings.Contains(err.Error(), "over the bound of "+size(bound)) {
				t.Fatalf("a page past the bound: %v", err)
			}
			if _, err := b.Do(ctx, []action.Action{{Kind: action.Click, Point: action.At(5, 5)}}); !errors.Is(err, env.ErrLimit) {
				t.Fatalf("an action after the bound: %v", err)
			}
			open(t, b, u+"/calm")
			if v := eval(t, b, "document.title"); v != "Calm" {
				t.Fatalf("the next episode's page: %q", v)
			}
		})
	}
}

// TestHugePage: the tree of a page of 200,000 elements is left out, with
// the reason told to the agent; read anyway (a bound set past it), the
// read ends at the caller's deadline.
func TestHugePage(t *testing.T) {
	need(t)
	// The page grows after it has loaded, so that the navigation's own
	// bound (30 s) is not what a loaded machine tests; the test waits
	// for the nodes itself.
	u := site(t, map[string]string{"huge": `<!doctype html><title>Huge</title><body><script>
addEventListener('load', () => setTimeout(() => {
const f = document.createDocumentFragment();
for (let i = 0; i < 200000; i++) { const d = document.createElement(i % 10 ? 'span' : 'button'); d.textContent = 'node ' + i; f.appendChild(d); }
document.body.appendChild(f);
document.title = 'Huge, grown';
}, 0));
</script>`})
	for _, tc := range []struct {
		name  string
		nodes int
	}{{"capped", 0}, {"read past the cap", 10_000_000}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Start(testCtx(t), Config{MaxTreeNodes: tc.nodes})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			open(t, b, u+"/huge")
			waitTitle(t, b, "Huge, grown")
			if tc.nodes == 0 {
				tr, err := b.Tree(testCtx(t))
				if err != nil || len(tr.Apps) != 0 || len(tr.Errors) != 1 || !strings.Contains(tr.Errors[0], "more than the 100000") {
					t.Fatalf("tree %+v, %v; want none, and why", tr, err)
				}
				if n := strings.Join(b.Notices(), "\n"); !strings.Contains(n, "its tree is left out") {
					t.Fatalf("notices %q", n)
				}
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			started := time.Now()
			_, err = b.Tree(ctx)
			t.Logf("the read ended after %v: %v", time.Since(started).Round(time.Millisecond), err)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("a tree read past its deadline: %v", err)
			}
		})
	}
}

// TestFloodingPage: what a page does in numbers (nodes appended, console
// lines) sends no event of its own to the tab, so that it cannot hold
// the connection every tab shares (devtools.Quiet). Without it the page
// below sends 40,000 events.
func TestFloodingPage(t *testing.T) {
	b := start(t)
	u := site(t, map[string]string{"flood": `<!doctype html><title>Flood</title><body><script>
function flood() {
  for (let i = 0; i < 20000; i++) { const d = document.createElement('span'); d.textContent = 'node ' + i; document.body.appendChild(d); }
  for (let i = 0; i < 20000; i++) console.log('line ' + i);
  return 'flooded';
}
</script>`})
	open(t, b, u+"/flood")
	ep, err := b.episode()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	events := map[string]int{}
	if err := chromedp.Listen(ep.active.ctx, func(ev any) {
		mu.Lock()
		events[fmt.Sprintf("%T", ev)]++
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	// The reply comes after the page's events, on the same session.
	if v := eval(t, b, "flood()"); v != "flooded" {
		t.Fatalf("flood() = %q", v)
	}
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, c := range events {
		n += c
	}
	if n > 1000 {
		t.Fatalf("the tab got %d events from the page: %v", n, events)
	}
	t.Logf("the tab got %d events: %v", n, events)
}

// TestLoggingPage: a page that logs 20,000 lines as its document is
// ready does not wedge the browser. Before devtools.Quiet the second
// episode's navigation never ended: chromedp asked for the document on
// DOM.documentUpdated and waited for a reply queued behind the page's
// Runtime events, which waited for it, and every tab's commands waited
// behind them.
func TestLoggingPage(t *testing.T) {
	b := start(t)
	u := site(t, map[string]string{"log": `<!doctype html><title>Logged</title><body><script>
addEventListener('DOMContentLoaded', () => { for (let i = 0; i < 20000; i++) console.log('line ' + i); });
</script>`})
	for i := range 3 {
		open(t, b, u+"/log")
		if v := eval(t, b, "document.title"); v != "Logged" {
			t.Fatalf("episode %d: the title is %q", i, v)
		}
	}
}
