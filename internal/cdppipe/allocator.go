package cdppipe

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/proctor-eval/proctor/internal/tail"
)

// Allocator is a chromedp.Allocator that starts the browser at Path with
// Args and --remote-debugging-pipe=cbor, and talks to it through a Conn.
//
// It owns the process, and is meant for browsers whose profile is thrown
// away: when the context Allocate was given ends, it kills the browser's
// process group at once rather than wait for a shutdown. Wait returns once
// every browser it started has exited; callers cancel the chromedp context
// and call Wait before they remove the profile.
type Allocator struct {
	Path   string
	Args   []string  // flags; --remote-debugging-pipe=cbor is added
	Output io.Writer // the browser's standard output and error; nil drops them
	// Folder, where set, is removed with the browser when this process
	// dies without ending it (SIGKILL, a crash): see reaper.
	Folder string

	wg    sync.WaitGroup
	mu    sync.Mutex
	tail  *tail.Buffer                // the output's last bytes, for the error of a failed start
	conns map[*chromedp.Browser]*Conn // while each browser runs
	group int                         // the process group of the browser started last
}

// keepOutput is how much of the output's end Output keeps.
const keepOutput = 16 << 10

// Attaches reports true: to chromedp the allocator hands over a browser
// that is already running, so that no chromedp context treats itself as
// the browser's owner; the allocator ends the process itself.
func (a *Allocator) Attaches() bool { return true }

// Allocate starts the browser and returns chromedp's connection to it.
func (a *Allocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The browser reads commands from its descriptor 3 and writes
	// replies and events to its descriptor 4.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cdppipe: %w", err)
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		return nil, fmt.Errorf("cdppipe: %w", err)
	}
	cmd := exec.Command(a.Path, append(slices.Clone(a.Args), "--remote-debugging-pipe=cbor")...)
	cmd.ExtraFiles = []*os.File{cmdR, resW}
	a.mu.Lock()
	if a.tail == nil {
		a.tail = tail.New(keepOutput)
	}
	t := a.tail
	a.mu.Unlock()
	out := io.Writer(t)
	if a.Output != nil {
		out = io.MultiWriter(a.Output, out)
	}
	cmd.Stdout, cmd.Stderr = out, out
	// A helper process that outlives the browser keeps the output open:
	// Wait stops copying it after this.
	cmd.WaitDelay = time.Second
	// Its own process group, so that its helpers can be ended with it,
	// and killed by the kernel when this process dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	cmdR.Close()
	resW.Close()
	if err != nil {
		cmdW.Close()
		resR.Close()
		return nil, fmt.Errorf("cdppipe: start %s: %w", a.Path, err)
	}
	r, err := startReaper(cmd.Process.Pid, a.Folder)
	if err != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		cmdW.Close()
		resR.Close()
		return nil, fmt.Errorf("cdppipe: %w", err)
	}
	conn := NewConn(resR, cmdW)
	exited := make(chan struct{})
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		cmd.Wait()
		close(exited)
	}()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		select {
		case <-ctx.Done():
		case <-exited:
		}
		// The browser's profile is thrown away with it, so nothing is
		// lost in ending it at once rather than waiting for its shutdown
		// (chromedp closes the pipes as ctx ends, and writes nothing
		// after). Its whole group goes, the helpers too.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		r.stop()
	}()
	b, err := chromedp.NewBrowserTransport(ctx, conn, opts...)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("cdppipe: %w", err)
	}
	a.mu.Lock()
	if a.conns == nil {
		a.conns = map[*chromedp.Browser]*Conn{}
	}
	a.conns[b] = conn
	a.group = cmd.Process.Pid
	a.mu.Unlock()
	go func() {
		<-exited
		a.mu.Lock()
		delete(a.conns, b)
		a.mu.Unlock()
	}()
	return b, nil
}

// ConnOf returns the connection of the browser of ctx, a chromedp
// context, when an Allocator started it; nil otherwise.
func ConnOf(ctx context.Context) *Conn {
	c := chromedp.FromContext(ctx)
	if c == nil || c.Browser == nil {
		return nil
	}
	a, ok := c.Allocator.(*Allocator)
	if !ok {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conns[c.Browser]
}

// Group is the process group of the browser started last (its own
// process's id), 0 before one starts: its processes, the helpers too.
func (a *Allocator) Group() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.group
}

// Wait waits until every browser the allocator started has exited.
func (a *Allocator) Wait() { a.wg.Wait() }

// Tail is the end of the browser's output: the reason a browser that
// did not start gives.
func (a *Allocator) Tail() string {
	a.mu.Lock()
	t := a.tail
	a.mu.Unlock()
	if t == nil {
		return ""
	}
	return t.String()
}

var (
	_ chromedp.Allocator = (*Allocator)(nil)
	_ chromedp.Attacher  = (*Allocator)(nil)
)

// SessionOf is the session to send t's commands through: the
// connection's own (Conn.Session) where an Allocator started the browser
// of ctx, t itself otherwise.
func SessionOf(ctx context.Context, t *chromedp.Target) cdp.Session {
	if c := ConnOf(ctx); c != nil {
		return c.Session(t)
	}
	return t
}
