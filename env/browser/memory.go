package browser

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
)

// DefaultMaxMemory is Config.MaxMemory's default: 2 GiB.
const DefaultMaxMemory = 2 << 30

// memoryEvery is how often the browser's memory is read.
const memoryEvery = 200 * time.Millisecond

// The browser's memory is bounded by a watch of its processes (the
// browser's, its renderers', its helpers': the process group cdppipe
// started), not by a control group or an address-space limit: the
// machine's control groups may not be ours to make, and Chromium reserves
// far more address space than it uses. Every memoryEvery the watch sums
// the group's resident memory (its proportional share, so that pages
// shared between the processes count once), and past Config.MaxMemory it
// kills the largest renderer: the page it held crashes, the episode ends
// with the reason (env.ErrLimit), and the next episode's fresh browser
// context gets a new renderer. The bound is exceeded for at most one
// interval's growth.

// watchMemory watches the browser's memory until it closes.
func (b *Browser) watchMemory() {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		fmt.Fprintf(b.cfg.Log, "browser: no memory bound: %v\n", err)
		return
	}
	b.closing.Add(1)
	go func() {
		defer b.closing.Done()
		t := time.NewTicker(memoryEvery)
		defer t.Stop()
		for {
			select {
			case <-b.background.Done():
				return
			case <-t.C:
			}
			used, renderers := groupMemory(fs, b.alloc.Group(), b.cfg.MaxMemory)
			b.mu.Lock()
			b.peak = max(b.peak, used)
			b.mu.Unlock()
			if used <= b.cfg.MaxMemory || len(renderers) == 0 {
				continue
			}
			big := renderers[0]
			syscall.Kill(big.pid, syscall.SIGKILL)
			b.overLimit(fmt.Errorf("%w: the browser's pages held %s of memory, over the bound of %s: the page was stopped (a renderer of %s)",
				env.ErrLimit, size(used), size(b.cfg.MaxMemory), size(big.mem)))
		}
	}()
}

// process is a renderer and its memory.
type process struct {
	pid int
	mem int64
}

// groupMemory sums the memory of the process group's processes and lists
// its renderers, largest first. The resident sizes are summed first (one
// read of each process's stat); the proportional shares, which cost a walk
// of each process's mappings, are read only when those pass half of
// bound.
func groupMemory(fs procfs.FS, group int, bound int64) (int64, []process) {
	if group == 0 {
		return 0, nil
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return 0, nil
	}
	var members []procfs.Proc
	var rss int64
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil || st.PGRP != group {
			continue
		}
		members = append(members, p)
		rss += int64(st.ResidentMemory())
	}
	if rss <= bound/2 {
		return rss, nil
	}
	var used int64
	var renderers []process
	for _, p := range members {
		r, err := p.ProcSMapsRollup()
		if err != nil {
			continue // gone
		}
		used += int64(r.Pss)
		// Chromium rewrites its helpers' command lines as one string.
		if cmd, err := p.CmdLine(); err == nil && strings.Contains(strings.Join(cmd, " "), "--type=renderer") {
			renderers = append(renderers, process{pid: p.PID, mem: int64(r.Pss)})
		}
	}
	slices.SortFunc(renderers, func(a, b process) int { return int(b.mem>>20 - a.mem>>20) })
	return used, renderers
}

// overLimit ends the current episode's use of the browser with err: its
// calls in progress and to come fail with it.
func (b *Browser) overLimit(err error) {
	fmt.Fprintf(b.cfg.Log, "browser: %v\n", err)
	b.mu.Lock()
	defer b.mu.Unlock()
	if ep := b.ep; ep != nil && ep.over == nil {
		ep.over = err
		ep.stop(err)
	}
}

// Peak is the most memory the browser's processes held together, as the
// watch read it (the resident sizes, or the proportional shares where
// those passed the bound).
func (b *Browser) Peak() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// bounded is ctx, ended also when the episode passes a limit; done turns
// an error of the call into that limit's error.
func (b *Browser) bounded(ctx context.Context) (context.Context, func(error) error) {
	b.mu.Lock()
	ep := b.ep
	b.mu.Unlock()
	if ep == nil {
		return ctx, func(err error) error { return err }
	}
	cctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(ep.limited, func() { cancel(context.Cause(ep.limited)) })
	return cctx, func(err error) error {
		stop()
		cancel(nil)
		if cause := context.Cause(ep.limited); err != nil && errors.Is(cause, env.ErrLimit) {
			return cause
		}
		return err
	}
}

// size writes a byte count in MiB or GiB.
func size(n int64) string {
	if n >= 1<<30 {
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", float64(n)/(1<<30)), "0"), ".") + " GiB"
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// The calls that reach the page end with the episode's limit (bounded).

// Do performs actions (see doActions).
func (b *Browser) Do(ctx context.Context, acts []action.Action) ([]action.Step, error) {
	ctx, done := b.bounded(ctx)
	steps, err := b.doActions(ctx, acts)
	return steps, done(err)
}

// Screenshot captures the active tab's viewport (see screenshot).
func (b *Browser) Screenshot(ctx context.Context, o env.ShotOptions) (env.Shot, error) {
	ctx, done := b.bounded(ctx)
	shot, err := b.screenshot(ctx, o)
	b.observed()
	return shot, done(err)
}

// Tree reads the active tab's accessibility tree (see tree).
func (b *Browser) Tree(ctx context.Context) (*observe.Tree, error) {
	ctx, done := b.bounded(ctx)
	t, err := b.tree(ctx)
	b.observed()
	return t, done(err)
}

// Tabs lists the episode's tabs (see tabs).
func (b *Browser) Tabs(ctx context.Context) ([]observe.Tab, error) {
	ctx, done := b.bounded(ctx)
	tabs, err := b.tabs(ctx)
	return tabs, done(err)
}

// Page answers a page probe (see pageQuery).
func (b *Browser) Page(ctx context.Context, q observe.PageQuery) (string, bool, error) {
	ctx, done := b.bounded(ctx)
	v, found, err := b.pageQuery(ctx, q)
	return v, found, done(err)
}
