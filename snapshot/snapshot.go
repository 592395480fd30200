// Package snapshot takes a snapshot of an environment's state (package
// statediff compares two) through the env.Env contract: the clipboard and
// the windows of any environment that offers them, and the files and
// processes of one that runs commands (a shell script lists them, so a
// guest reached through env/remote is listed as a local desktop is).
// An environment may list its own state faster, or what the contract
// cannot reach, by implementing the optional interfaces here: a local
// desktop walks its home folder on the local file system, the in-memory
// environment lists its files, a browser reads its cookies, storage,
// tabs and the requests its pages made over the DevTools protocol.
package snapshot

import (
	"context"
	"errors"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/task"
)

// Options say what a snapshot lists.
type Options struct {
	// Watch are folders besides the home folder to list (~/... or
	// absolute), where the environment can list them.
	Watch []string
	// Databases are SQLite databases whose rows to list (the suite's
	// services the task uses).
	Databases []Database
	Limits    statediff.Limits
}

// Files is implemented by an environment that lists its home folder and
// the watched folders itself (with statediff.Walk, say): the files,
// folders and links beneath them, keyed "~/..." in the home folder.
type Files interface {
	SnapshotFiles(ctx context.Context, s *statediff.Snapshot, watch []string, b *statediff.Budget) error
}

// Processes is implemented by an environment that lists the processes of
// its session itself, keyed by command line.
type Processes interface {
	SnapshotProcesses(ctx context.Context, s *statediff.Snapshot, b *statediff.Budget) error
}

// Browser is implemented by a browser: its cookies, local and session
// storage per origin, open tabs and the requests with side effects its
// pages made in the episode.
type Browser interface {
	SnapshotBrowser(ctx context.Context, s *statediff.Snapshot, b *statediff.Budget) error
}

// Device is implemented by a device that lists its own state, in place
// of the files and processes of a desktop: a phone's settings, installed
// packages and the files of its shared storage and of the watched folders.
type Device interface {
	SnapshotDevice(ctx context.Context, s *statediff.Snapshot, watch []string, b *statediff.Budget) error
}

// find returns e, or an environment e wraps, as a T.
func find[T any](e env.Env) (T, bool) {
	for {
		if t, ok := e.(T); ok {
			return t, true
		}
		w, ok := e.(env.Wrapper)
		if !ok {
			var zero T
			return zero, false
		}
		e = w.Unwrap()
	}
}

// Take takes a snapshot of e. A part that cannot be read (an application
// holding the clipboard that does not answer) is a note of the
// snapshot; the error is that of an environment that failed or a ctx
// that ended.
func Take(ctx context.Context, e env.Env, o Options) (*statediff.Snapshot, error) {
	start := time.Now()
	info, err := e.Info(ctx)
	if err != nil {
		return nil, err
	}
	s := &statediff.Snapshot{Type: info.Kind, Items: []statediff.Item{}}
	b := statediff.NewBudget(o.Limits)
	part := func(what string, err error) error {
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil || errors.Is(err, env.ErrClosed):
			return err
		}
		s.Note("%s: %v", what, err)
		return nil
	}
	dev, isDevice := find[Device](e)
	if isDevice {
		if err := part("device", dev.SnapshotDevice(ctx, s, o.Watch, b)); err != nil {
			return nil, err
		}
	} else if f, ok := find[Files](e); ok {
		if err := part("files", f.SnapshotFiles(ctx, s, o.Watch, b)); err != nil {
			return nil, err
		}
	} else if info.Has(task.CapCommands) {
		if err := part("files", listFiles(ctx, e, s, o.Watch, b)); err != nil {
			return nil, err
		}
	}
	if p, ok := find[Processes](e); ok && !isDevice {
		if err := part("processes", p.SnapshotProcesses(ctx, s, b)); err != nil {
			return nil, err
		}
	} else if info.Has(task.CapCommands) && !isDevice {
		if err := part("processes", listProcesses(ctx, e, s, b)); err != nil {
			return nil, err
		}
	}
	if br, ok := find[Browser](e); ok {
		if err := part("browser", br.SnapshotBrowser(ctx, s, b)); err != nil {
			return nil, err
		}
	} else if info.Has(task.CapWindows) {
		ws, err := e.Windows(ctx)
		if err := part("windows", err); err != nil {
			return nil, err
		}
		for i, w := range ws {
			if i >= b.Limits.MaxItems {
				s.Note("more than %d windows: the rest are not listed", b.Limits.MaxItems)
				break
			}
			s.Add(statediff.Item{Kind: statediff.Window, Key: statediff.Cut(w.Title, b.Limits.MaxValue)})
		}
	}
	if info.Has(task.CapClipboard) {
		text, err := e.Clipboard(ctx)
		if err := part("clipboard", err); err != nil {
			return nil, err
		}
		it := statediff.Item{Kind: statediff.Clipboard, Key: "clipboard"}
		b.Value(&it, text)
		s.Add(it)
	}
	for _, d := range o.Databases {
		if err := part("the rows of "+d.Service, Rows(ctx, s, d, b)); err != nil {
			return nil, err
		}
	}
	s.Took = time.Since(start)
	return s, nil
}
