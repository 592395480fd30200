package mem

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/input"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// Reset closes every window, restores the files (WithFiles) and empties
// the clipboard, then runs the setup steps. Nothing happens on the
// in-memory desktop by itself, so the waits look once: a window or an
// element that is not there fails the step at once.
func (e *Env) Reset(ctx context.Context, s env.Setup) error {
	if err := e.enter(ctx, "Reset"); err != nil {
		return err
	}
	e.mu.Lock()
	e.resetLocked()
	e.mu.Unlock()
	for i, st := range s.Steps {
		spec := st.Spec()
		if spec == nil {
			return fmt.Errorf("setup[%d]: a step needs exactly one kind", i)
		}
		if err := e.step(ctx, s, spec); err != nil {
			return fmt.Errorf("setup[%d] %s: %w", i, spec.Kind(), err)
		}
		if err := e.alive(); err != nil {
			return err
		}
	}
	return nil
}

func (e *Env) step(ctx context.Context, s env.Setup, spec task.StepSpec) error {
	if st, ok := spec.(task.Sleep); ok {
		return input.Sleep(ctx, time.Duration(st.For))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch st := spec.(type) {
	case task.Launch:
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
	case task.Run:
		return errNoCommands("a run step")
	case task.Write:
		if st.Mode != "" {
			if _, err := strconv.ParseUint(st.Mode, 8, 32); err != nil {
				return fmt.Errorf("mode %q is not octal", st.Mode)
			}
		}
		return e.writeLocked(st.Path, []byte(st.Content))
	case task.Copy:
		b, ok := s.Assets[st.Asset]
		if !ok {
			return fmt.Errorf("asset %q was not given", st.Asset)
		}
		return e.writeLocked(st.To, b)
	case task.Open:
		if st.URL != "" {
			return fmt.Errorf("%w: opening %s needs a browser's page (%s), which the in-memory environment does not offer", env.ErrBadAction, st.URL, task.CapPage)
		}
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
	case task.WaitWindow:
		_, err := e.windowLocked(st.Title)
		return err
	case task.Focus:
		w, err := e.windowLocked(st.Title)
		if err == nil {
			e.raise(w)
		}
		return err
	case task.WaitElement:
		if len(e.treeLocked().Elements(st.Element)) == 0 {
			return fmt.Errorf("%w: no element %s is showing", observe.ErrNotFound, st.Element.Describe())
		}
		return nil
	}
	return fmt.Errorf("%w: the in-memory environment cannot do a %s step", env.ErrBadAction, spec.Kind())
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
