package xdesktop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/setup"
	"github.com/proctor-eval/proctor/internal/x11"
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
	want := d.wantSession(s.Session)
	if want != "" {
		if why := sessionMissing(want); why != "" {
			return fmt.Errorf("%s", why)
		}
	}
	infra := d.s.stopApps()
	d.endStrayClients(infra)
	d.endSessionFor(want)
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
	if want != "" && d.Session() == "" {
		if err := d.startSession(ctx, want); err != nil {
			return fmt.Errorf("start the %s session: %w", want, err)
		}
	}
	return setup.Executor{Env: d, Hook: setupHook{d}, PollEvery: pollEvery}.Run(ctx, s)
}

// RunSteps runs a task's steps after the agent on the desktop as it is:
// the setup's kinds, with keys pressed and windows closed as the harness.
func (d *Desktop) RunSteps(ctx context.Context, s env.Setup) error {
	if err := d.alive(); err != nil {
		return err
	}
	return setup.Executor{Env: d, Hook: setupHook{d}, PollEvery: pollEvery}.After().Run(ctx, s)
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

func (d *Desktop) expand(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return d.s.home + strings.TrimPrefix(p, "~")
	}
	return p
}

// setupHook runs the desktop's own setup steps (package setup runs the
// rest through the Env): launching and opening with the desktop's apps,
// window waits and focus, file modes, background commands as the
// desktop's applications, and commands in its private network.
type setupHook struct{ d *Desktop }

// Launch prepares the app, starts it with the step's arguments and waits
// for its window when the step names one.
func (h setupHook) Launch(ctx context.Context, s env.Setup, st task.Launch) error {
	d := h.d
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
		return d.waitWindow(ctx, st.WaitWindow, time.Duration(st.Timeout))
	}
	return nil
}

// Open opens a file or URL with the step's app, with Chromium for a
// browser task, or else with xdg-open.
func (h setupHook) Open(_ context.Context, s env.Setup, st task.Open) error {
	d := h.d
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
}

// WaitWindow waits for a steady window whose title holds the step's.
func (h setupHook) WaitWindow(ctx context.Context, st task.WaitWindow) error {
	return h.d.waitWindow(ctx, st.Title, time.Duration(st.Timeout))
}

// Focus makes the window whose title holds the step's the active one.
func (h setupHook) Focus(ctx context.Context, st task.Focus) error {
	return h.d.focus(ctx, st.Title, time.Duration(st.Timeout))
}

// Close asks each window whose title holds the step's to close and waits
// until none is left; with Kill, a window still there when the timeout
// passes has its process killed (its pid as the window says), and the
// wait goes on for a few seconds more.
func (h setupHook) Close(ctx context.Context, st task.Close) error {
	return h.d.closeWindows(ctx, st.Title, time.Duration(st.Timeout), st.Kill)
}

// WriteFileMode writes a file with the given mode.
func (h setupHook) WriteFileMode(_ context.Context, p string, data []byte, mode os.FileMode) error {
	_, err := h.d.writeFile(p, data, &mode, false)
	return err
}

// Start starts a background command as one of the desktop's
// applications, which a reset ends.
func (h setupHook) Start(_ context.Context, command, network string) error {
	return h.d.launchApp(task.AppSpec{Network: network}, []string{"/bin/bash", "-c", command})
}

// RunIn runs a command in the desktop's private network namespace.
func (h setupHook) RunIn(ctx context.Context, network, command string, timeout time.Duration) (observe.CommandResult, error) {
	if network != task.NetworkPrivate {
		return observe.CommandResult{}, fmt.Errorf("%w: network %q: a desktop has only its private network", env.ErrBadAction, network)
	}
	return h.d.run(ctx, command, timeout, true)
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
func (d *Desktop) closeWindows(ctx context.Context, title string, timeout time.Duration, kill bool) error {
	title = strings.ToLower(title)
	matching := func() ([]x11.Window, error) {
		ws, err := d.x.Windows()
		if err != nil {
			return nil, err
		}
		var out []x11.Window
		for _, w := range ws {
			if strings.Contains(strings.ToLower(w.Title), title) {
				out = append(out, w)
			}
		}
		return out, nil
	}
	ws, err := matching()
	if err != nil {
		return err
	}
	if len(ws) == 0 {
		return fmt.Errorf("no window's title holds %q", title)
	}
	asked := map[uint32]bool{}
	gone := func() (bool, error) {
		ws, err := matching()
		if err != nil {
			return false, err
		}
		for _, w := range ws {
			if !asked[w.ID] {
				asked[w.ID] = true
				if err := d.x.CloseWindow(w.ID); err != nil {
					return false, err
				}
			}
		}
		return len(ws) == 0, nil
	}
	what := fmt.Sprintf("the windows titled %q to close", title)
	err = d.poll(ctx, timeout, what, gone)
	if err == nil || !kill || ctx.Err() != nil {
		return err
	}
	left, lerr := matching()
	if lerr != nil {
		return lerr
	}
	for _, w := range left {
		if w.PID > 0 && d.ownsApp(w.PID) {
			_ = syscall.Kill(w.PID, syscall.SIGKILL)
		}
	}
	return d.poll(ctx, killGrace, what+" after their applications were killed", func() (bool, error) {
		ws, err := matching()
		return len(ws) == 0, err
	})
}

// killGrace is how long a close step with kill waits for the windows of
// the applications it killed to go.
const killGrace = 5 * time.Second

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

// ownsApp reports whether pid may be killed as one of the desktop's
// applications: a process that carries the desktop's marker (a window's
// _NET_WM_PID is the application's word, and could name any process of
// the host), not this process or its group, and not in the group of the
// desktop's infrastructure (X server, buses, window manager).
func (d *Desktop) ownsApp(pid int) bool {
	if pid <= 1 || pid == os.Getpid() {
		return false
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || !bytes.Contains(append(env, 0), []byte(MarkerVar+"="+d.s.id+"\x00")) {
		return false
	}
	pg, err := syscall.Getpgid(pid)
	if err != nil || pg == syscall.Getpgrp() {
		return false
	}
	for _, p := range d.s.infra {
		if p.cmd.Process != nil && (p.cmd.Process.Pid == pid || p.cmd.Process.Pid == pg) {
			return false
		}
	}
	return true
}
