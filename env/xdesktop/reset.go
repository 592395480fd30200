package xdesktop

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// pollEvery is how often waits look again.
const pollEvery = 100 * time.Millisecond

// Reset ends every application, restores the home folder from the
// template, clears the temporary folder and the set-of-mark memory, and
// runs the setup steps. The X server, window manager, session bus and
// AT-SPI keep running, which keeps a reset fast.
func (d *Desktop) Reset(ctx context.Context, s env.Setup) error {
	if err := d.alive(); err != nil {
		return err
	}
	infra := d.s.stopApps()
	d.endStrayClients(infra)
	// The pointer waits in the bottom-right corner, not where the last
	// episode left it or in the middle of the screen where new windows
	// open: a window mapped under the pointer may never hear the pointer
	// enter it, and GTK 4 then ignores the first click.
	if w, h := d.x.Size(); w > 0 && h > 0 {
		if err := d.x.Move(w-1, h-1); err != nil {
			return fmt.Errorf("park the pointer: %w", err)
		}
	}
	d.mu.Lock()
	d.marks = nil
	d.mu.Unlock()
	if err := d.resetHome(); err != nil {
		return fmt.Errorf("restore the home folder: %w", err)
	}
	if err := os.RemoveAll(d.s.tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(d.s.tmp, 0o700); err != nil {
		return err
	}
	for i, st := range s.Steps {
		spec := st.Spec()
		if spec == nil {
			return fmt.Errorf("setup[%d]: a step needs exactly one kind", i)
		}
		if err := d.step(ctx, s, spec); err != nil {
			return fmt.Errorf("setup[%d] %s: %w", i, spec.Kind(), err)
		}
	}
	return nil
}

// endStrayClients kills the programs still connected to the display that
// are neither the infrastructure's nor this process: what an agent started
// in a session of its own with an environment that lost the desktop's
// marker (Chromium rewrites its own), which the sweep cannot recognise. A
// stray that leads its own process group takes the group with it.
func (d *Desktop) endStrayClients(infra map[int]bool) {
	pids, err := d.x.ClientPIDs()
	if err != nil {
		return // an X server without X-Resource: the marker sweep is all there is
	}
	own := syscall.Getpgrp()
	for _, pid := range pids {
		if infra[pid] || pid == os.Getpid() {
			continue
		}
		if pg, err := syscall.Getpgid(pid); err == nil && pg == pid && pg != own {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func timeoutOr(d duration.Duration) time.Duration {
	if d > 0 {
		return time.Duration(d)
	}
	return task.DefaultStepTimeout
}

func (d *Desktop) expand(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return d.s.home + strings.TrimPrefix(p, "~")
	}
	return p
}

func (d *Desktop) step(ctx context.Context, s env.Setup, spec task.StepSpec) error {
	switch st := spec.(type) {
	case task.Launch:
		app, ok := s.App(st.App)
		if !ok {
			return fmt.Errorf("unknown app %q", st.App)
		}
		if err := d.prepare(app); err != nil {
			return err
		}
		argv := appArgv(app)
		for _, a := range st.Args {
			argv = append(argv, d.expand(a))
		}
		if err := d.launchApp(app, argv); err != nil {
			return err
		}
		if st.WaitWindow != "" {
			return d.waitWindow(ctx, st.WaitWindow, timeoutOr(st.Timeout))
		}
		return nil
	case task.Run:
		private := st.Network == task.NetworkPrivate
		if st.Background {
			if err := d.launchApp(task.AppSpec{Network: st.Network}, []string{"/bin/bash", "-c", st.Command}); err != nil {
				return err
			}
		} else {
			res, err := d.run(ctx, st.Command, timeoutOr(st.Timeout), private)
			if err != nil {
				return err
			}
			if res.ExitCode != 0 {
				return fmt.Errorf("`%s` exited %d: %s", st.Command, res.ExitCode, strings.TrimSpace(res.Stderr))
			}
		}
		if st.Until != "" {
			return d.poll(ctx, timeoutOr(st.Timeout), "`"+st.Until+"` to succeed", func() (bool, error) {
				res, err := d.run(ctx, st.Until, 5*time.Second, private)
				return err == nil && res.ExitCode == 0, nil
			})
		}
		return nil
	case task.Write:
		var mode *os.FileMode
		if st.Mode != "" {
			m, err := strconv.ParseUint(st.Mode, 8, 32)
			if err != nil {
				return fmt.Errorf("mode %q is not octal", st.Mode)
			}
			mode = new(os.FileMode(m))
		}
		_, err := d.writeFile(st.Path, []byte(st.Content), mode, false)
		return err
	case task.Copy:
		b, ok := s.Assets[st.Asset]
		if !ok {
			return fmt.Errorf("asset %q was not given", st.Asset)
		}
		return d.WriteFile(ctx, st.To, b)
	case task.Open:
		target := st.URL
		if target == "" {
			target = d.expand(st.Path)
		}
		name := st.App
		browserTask := s.Type == "browser"
		if browserTask {
			if name != "" && name != "chromium" {
				return fmt.Errorf("a browser task opens its pages in Chromium, not %q", name)
			}
			name = "chromium"
		}
		if name != "" {
			app, ok := s.App(name)
			if !ok {
				return fmt.Errorf("unknown app %q", name)
			}
			if err := d.prepare(app); err != nil {
				return err
			}
			argv := appArgv(app)
			if browserTask {
				argv = append(argv, d.devtoolsFlags()...)
			}
			return d.launchApp(app, append(argv, target))
		}
		return d.Launch("xdg-open", target)
	case task.WaitWindow:
		return d.waitWindow(ctx, st.Title, timeoutOr(st.Timeout))
	case task.Focus:
		return d.focus(ctx, st.Title, timeoutOr(st.Timeout))
	case task.WaitElement:
		return d.poll(ctx, timeoutOr(st.Timeout), "element "+describeQuery(st.Element), func() (bool, error) {
			els, err := d.Elements(ctx, st.Element)
			return len(els) > 0, err
		})
	case task.Sleep:
		return sleep(ctx, time.Duration(st.For))
	}
	return fmt.Errorf("unknown step %T", spec)
}

func describeQuery(q observe.ElementQuery) string {
	return strings.TrimSpace(fmt.Sprintf("%s %q", q.Role, q.Name))
}

// waitWindow waits for a window whose title contains title.
func (d *Desktop) waitWindow(ctx context.Context, title string, timeout time.Duration) error {
	// A window is ready once it has kept the same place and size for one
	// poll: apps that map a window and then resize or move it (GTK 4 does)
	// lose clicks aimed at where their widgets were a moment before.
	var last *env.Window
	return d.poll(ctx, timeout, fmt.Sprintf("a window titled %q", title), func() (bool, error) {
		ws, err := d.Windows(ctx)
		if err != nil {
			return false, err
		}
		for _, w := range ws {
			if strings.Contains(strings.ToLower(w.Title), strings.ToLower(title)) {
				steady := last != nil && last.ID == w.ID && last.Box == w.Box
				last = &w
				return steady, nil
			}
		}
		last = nil
		return false, nil
	})
}

// poll calls ok until it reports true, fails, or the timeout passes.
func (d *Desktop) poll(ctx context.Context, timeout time.Duration, what string, ok func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		done, err := ok()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up waiting for %s after %s", what, timeout)
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return err
		}
	}
}

// validVarName reports whether k is a shell variable name, which env(1)
// takes for nothing else.
func validVarName(k string) bool {
	for i, r := range k {
		if !(r == '_' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return k != ""
}

// appArgv is the app's command line, run through env(1) with the app's
// variables when it has some.
func appArgv(app task.AppSpec) []string {
	argv := strings.Fields(app.Command)
	if len(app.Env) == 0 {
		return argv
	}
	vars := make([]string, 0, len(app.Env))
	for k, v := range app.Env {
		vars = append(vars, k+"="+v)
	}
	sort.Strings(vars)
	return append(append([]string{"env"}, vars...), argv...)
}

// launchApp starts an app's command line, in the desktop's own network
// namespace when the app asks for a private network.
func (d *Desktop) launchApp(app task.AppSpec, argv []string) error {
	if app.Network == task.NetworkPrivate {
		return d.launchPrivate(argv...)
	}
	return d.Launch(argv...)
}

// prepare writes the app's settings files into the home folder, where
// they are not there yet, and checks its variables.
func (d *Desktop) prepare(app task.AppSpec) error {
	for k := range app.Env {
		if !validVarName(k) || k == MarkerVar {
			return fmt.Errorf("app environment variable %q is not allowed", k)
		}
	}
	for rel, content := range app.Files {
		if _, err := d.writeFile("~/"+rel, []byte(content), nil, true); err != nil {
			return err
		}
	}
	return nil
}

// focus waits for a window whose title contains title, asks the window
// manager to activate it, and waits until it is the active window.
func (d *Desktop) focus(ctx context.Context, title string, timeout time.Duration) error {
	title = strings.ToLower(title)
	return d.poll(ctx, timeout, fmt.Sprintf("the window titled %q to be active", title), func() (bool, error) {
		ws, err := d.x.Windows()
		if err != nil {
			return false, err
		}
		for _, w := range ws {
			if strings.Contains(strings.ToLower(w.Title), title) {
				if w.Active {
					return true, nil
				}
				return false, d.x.Activate(w.ID)
			}
		}
		return false, nil
	})
}
