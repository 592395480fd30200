package mem

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/setup"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// Reset closes every window, restores the files (WithFiles) and empties
// the clipboard, then runs the setup steps through setup.Executor. Nothing
// happens on the in-memory desktop by itself, so the waits look once: a
// window or an element that is not there fails the step at once.
func (e *Env) Reset(ctx context.Context, s env.Setup) error {
	if err := e.enter(ctx, "Reset"); err != nil {
		return err
	}
	e.mu.Lock()
	e.resetLocked()
	e.mu.Unlock()
	if err := (setup.Executor{Env: setupEnv{e}, Hook: setupHook{e}}).Run(ctx, s); err != nil {
		return err
	}
	return e.alive()
}

// RunSteps runs a task's steps after the agent on the desktop as it is.
func (e *Env) RunSteps(ctx context.Context, s env.Setup) error {
	if err := e.enter(ctx, "RunSteps"); err != nil {
		return err
	}
	if err := (setup.Executor{Env: setupEnv{e}, Hook: setupHook{e}}).After().Run(ctx, s); err != nil {
		return err
	}
	return e.alive()
}

// setupEnv is the environment the setup steps run on: e, whose files,
// commands and elements the steps use without counting as calls (so that
// a Fault falls on the calls of the episode, as it always has).
type setupEnv struct{ *Env }

// locked runs f under e's lock, on a live environment.
func (e *Env) locked(f func() error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down != nil {
		return e.down
	}
	return f()
}

// Run refuses: a run step needs a shell.
func (v setupEnv) Run(context.Context, string, time.Duration) (observe.CommandResult, error) {
	return observe.CommandResult{}, errNoCommands("a run step")
}

// WriteFile writes a file for a write or copy step.
func (v setupEnv) WriteFile(_ context.Context, p string, data []byte) error {
	return v.locked(func() error { return v.writeLocked(p, data) })
}

// Elements looks for the element of a wait_element step.
func (v setupEnv) Elements(_ context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	var els []observe.Element
	err := v.locked(func() error {
		els = v.treeLocked().Elements(q)
		return nil
	})
	return els, err
}

// setupHook runs the launch, open, wait_window and focus steps on the
// in-memory desktop. It is Still, and a write step's mode is checked and
// left: the in-memory files have no modes.
type setupHook struct{ e *Env }

func (h setupHook) Still() bool { return true }

func (h setupHook) WriteFileMode(_ context.Context, p string, data []byte, _ fs.FileMode) error {
	return h.e.locked(func() error { return h.e.writeLocked(p, data) })
}

func (h setupHook) Launch(_ context.Context, s env.Setup, st task.Launch) error {
	e := h.e
	return e.locked(func() error {
		a, err := e.app(s, st.App, st.Args)
		if err != nil {
			return err
		}
		e.wins = append(e.wins, e.layout(st.App, a))
		if st.WaitWindow != "" {
			_, err := e.windowLocked(st.WaitWindow)
			return err
		}
		return nil
	})
}

func (h setupHook) Open(_ context.Context, s env.Setup, st task.Open) error {
	if st.URL != "" {
		return fmt.Errorf("%w: opening %s needs a browser's page (%s), which the in-memory environment does not offer", env.ErrBadAction, st.URL, task.CapPage)
	}
	e := h.e
	return e.locked(func() error {
		b, err := e.readLocked(st.Path)
		if err != nil {
			return err
		}
		title := "Editor"
		if st.App != "" {
			if a, ok := e.cfg.apps[st.App]; ok {
				title = a.Title
			} else if spec, ok := s.App(st.App); ok {
				title = appTitle(st.App, spec)
			} else {
				return fmt.Errorf("unknown app %q", st.App)
			}
		}
		e.wins = append(e.wins, e.layout(title, editor(fileTitle(st.Path)+" - "+title, st.Path, string(b))))
		return nil
	})
}

func (h setupHook) WaitWindow(_ context.Context, st task.WaitWindow) error {
	return h.e.locked(func() error {
		_, err := h.e.windowLocked(st.Title)
		return err
	})
}

func (h setupHook) Focus(_ context.Context, st task.Focus) error {
	e := h.e
	return e.locked(func() error {
		w, err := e.windowLocked(st.Title)
		if err == nil {
			e.raise(w)
		}
		return err
	})
}

// Close closes every window whose title holds the step's, as their close
// buttons would (the in-memory desktop's applications never refuse).
func (h setupHook) Close(_ context.Context, st task.Close) error {
	e := h.e
	return e.locked(func() error {
		for closed := 0; ; closed++ {
			w, err := e.windowLocked(st.Title)
			if err != nil {
				if closed > 0 {
					return nil
				}
				return err
			}
			e.closeWindow(w)
		}
	})
}

// app finds the application a launch step names: one of WithApp, else a
// text window for an application the setup knows (showing the file its
// arguments name, if one exists).
func (e *Env) app(s env.Setup, name string, args []string) (App, error) {
	if a, ok := e.cfg.apps[name]; ok {
		return a, nil
	}
	spec, ok := s.App(name)
	if !ok {
		return App{}, fmt.Errorf("unknown app %q", name)
	}
	title := appTitle(name, spec)
	for _, arg := range args {
		if b, err := e.readLocked(arg); err == nil {
			return editor(fileTitle(arg)+" - "+title, arg, string(b)), nil
		}
	}
	return editor(title, "", ""), nil
}

// windowLocked finds the newest window whose title holds title.
func (e *Env) windowLocked(title string) (*window, error) {
	ws := e.byAge()
	for i := len(ws) - 1; i >= 0; i-- {
		if strings.Contains(ws[i].title, title) {
			return ws[i], nil
		}
	}
	return nil, fmt.Errorf("%w: no window whose title holds %q is open", observe.ErrNotFound, title)
}
