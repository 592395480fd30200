package android

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/input"
	"github.com/proctor-eval/proctor/env/setup"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// pollEvery is how often a waiting setup step looks again.
const pollEvery = 250 * time.Millisecond

// baseline lists what shared storage held at the first reset; each reset
// removes what is not in it, so that a file an episode made is never seen
// by the next. Files that were there are not restored if an episode
// changed them (a device has no snapshot to go back to).
type baseline struct {
	files, dirs []string
}

// listing lists the files (type f) or folders (type d) under Home.
func (p *Phone) listing(ctx context.Context, typ string) ([]string, error) {
	out, err := p.shell(ctx, "find "+Home+"/ -type "+typ+" 2>/dev/null; true")
	if err != nil {
		return nil, err
	}
	var list []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			list = append(list, strings.ReplaceAll(l, "//", "/"))
		}
	}
	slices.Sort(list)
	return list, nil
}

// Reset force-stops and clears the apps the last setup launched and those
// this one launches, goes to the home screen, removes from shared storage
// what the last episode added, and runs the setup's steps. An error names
// the step: "setup[1] run: ...".
func (p *Phone) Reset(ctx context.Context, s env.Setup) error {
	if err := p.alive(); err != nil {
		return err
	}
	p.mu.Lock()
	apps, base := p.apps, p.base
	p.mu.Unlock()
	for _, st := range s.Steps {
		if st.Launch != nil {
			if pkg := packageOf(s, st.Launch.App); pkg != "" && !slices.Contains(apps, pkg) {
				apps = append(apps, pkg)
			}
		}
	}
	for _, pkg := range apps {
		if _, err := p.shell(ctx, "am force-stop "+Quote(pkg)+" && pm clear "+Quote(pkg)); err != nil {
			return fmt.Errorf("reset: %w", err)
		}
	}
	if _, err := p.shell(ctx, "input keyevent KEYCODE_HOME"); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	if base == nil {
		files, err := p.listing(ctx, "f")
		if err != nil {
			return fmt.Errorf("reset: %w", err)
		}
		dirs, err := p.listing(ctx, "d")
		if err != nil {
			return fmt.Errorf("reset: %w", err)
		}
		base = &baseline{files: files, dirs: dirs}
	} else if err := p.clean(ctx, base); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	p.mu.Lock()
	p.base, p.apps, p.marks = base, nil, nil
	p.mu.Unlock()
	h := &setupHook{p: p}
	err := setup.Executor{Env: p, Hook: h, PollEvery: pollEvery}.Run(ctx, s)
	p.mu.Lock()
	p.apps = h.launched
	p.mu.Unlock()
	return err
}

// RunSteps runs a task's steps after the agent on the phone as it is.
func (p *Phone) RunSteps(ctx context.Context, s env.Setup) error {
	if err := p.alive(); err != nil {
		return err
	}
	h := &setupHook{p: p}
	err := setup.Executor{Env: p, Hook: h, PollEvery: pollEvery}.After().Run(ctx, s)
	p.mu.Lock()
	p.apps = append(p.apps, h.launched...)
	p.mu.Unlock()
	return err
}

// clean removes the files and folders under Home that the baseline does
// not list.
func (p *Phone) clean(ctx context.Context, base *baseline) error {
	files, err := p.listing(ctx, "f")
	if err != nil {
		return err
	}
	dirs, err := p.listing(ctx, "d")
	if err != nil {
		return err
	}
	var gone []string
	for _, f := range files {
		if _, found := slices.BinarySearch(base.files, f); !found {
			gone = append(gone, Quote(f))
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- { // deepest first
		if _, found := slices.BinarySearch(base.dirs, dirs[i]); !found {
			gone = append(gone, Quote(dirs[i]))
		}
	}
	for len(gone) > 0 {
		n := min(len(gone), 50)
		if _, err := p.shell(ctx, "rm -rf "+strings.Join(gone[:n], " ")); err != nil {
			return err
		}
		gone = gone[n:]
	}
	return nil
}

// packageOf is the package a launch step starts: the suite's app spec's
// command (a package, PACKAGE/ACTIVITY, or a command such as
// `am start -n PACKAGE/ACTIVITY`), else the app's name itself; "" when
// none can be told.
func packageOf(s env.Setup, app string) string {
	target := app
	if spec, ok := s.App(app); ok && spec.Command != "" {
		target = spec.Command
	}
	f := strings.Fields(target)
	if len(f) == 0 {
		return ""
	}
	if len(f) > 1 {
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "-n" || f[i] == "-p" {
				return packageOf(env.Setup{}, strings.Trim(f[i+1], `'"`))
			}
		}
		return ""
	}
	pkg, _, _ := strings.Cut(f[0], "/")
	if !packageRE.MatchString(pkg) {
		return ""
	}
	return pkg
}

// setupHook runs a phone's own setup steps for package setup, which runs
// the rest through the Env, and keeps the packages the steps started.
type setupHook struct {
	p        *Phone
	launched []string
}

// Launch starts an app: its package's launcher activity, the activity it
// names, or the suite's command for it.
func (h *setupHook) Launch(ctx context.Context, s env.Setup, l task.Launch) error {
	p := h.p
	target := l.App
	if spec, ok := s.App(l.App); ok && spec.Command != "" {
		target = spec.Command
	}
	pkg := packageOf(s, l.App)
	cmd := OpenCommand(target)
	switch {
	case strings.ContainsAny(strings.TrimSpace(target), " \t"):
		cmd = withHome(target) // the app's own command: am start -a ...
	case pkg == "":
		return fmt.Errorf("%q names no Android package (give the package, such as com.android.settings, or an app whose command starts it)", l.App)
	}
	h.started(pkg)
	if len(l.Args) > 0 {
		if !strings.Contains(target, "/") {
			return fmt.Errorf("args apply to an activity (PACKAGE/.Activity), not to the package %s", pkg)
		}
		for _, a := range l.Args {
			cmd += " " + Quote(a)
		}
	}
	if _, err := p.shell(ctx, cmd); err != nil {
		return err
	}
	if l.WaitWindow != "" {
		return p.waitWindow(ctx, l.WaitWindow, time.Duration(l.Timeout))
	}
	return nil
}

// Open opens a URL, with the app it names if any.
func (h *setupHook) Open(ctx context.Context, s env.Setup, o task.Open) error {
	if o.URL == "" {
		return fmt.Errorf("%w: an Android setup opens a URL; open a file with a run step (am start -d content://...)", env.ErrBadAction)
	}
	cmd := "am start -W -a android.intent.action.VIEW -d " + Quote(o.URL)
	if o.App != "" {
		pkg := packageOf(s, o.App)
		if pkg == "" {
			return fmt.Errorf("%q names no Android package", o.App)
		}
		h.started(pkg)
		cmd += " -p " + Quote(pkg)
	}
	_, err := h.p.shell(ctx, cmd)
	return err
}

// WaitWindow waits for the focused window's title to hold the step's.
func (h *setupHook) WaitWindow(ctx context.Context, st task.WaitWindow) error {
	return h.p.waitWindow(ctx, st.Title, time.Duration(st.Timeout))
}

// Focus waits for the focused window's title to hold the step's: the
// window in front is the only one a phone shows.
func (h *setupHook) Focus(ctx context.Context, st task.Focus) error {
	return h.p.waitWindow(ctx, st.Title, time.Duration(st.Timeout))
}

// WriteFileMode writes a file and sets its mode with chmod.
func (h *setupHook) WriteFileMode(ctx context.Context, name string, data []byte, mode fs.FileMode) error {
	if err := h.p.WriteFile(ctx, name, data); err != nil {
		return err
	}
	dst, _ := Resolve(name)
	_, err := h.p.shell(ctx, fmt.Sprintf("chmod %o %s", mode, Quote(dst)))
	return err
}

// Transient reports a failed window dump: the screen is changing.
func (h *setupHook) Transient(err error) bool { return errors.Is(err, ErrDump) }

// started notes a package the setup started, which the next reset stops
// and clears.
func (h *setupHook) started(pkg string) {
	if pkg != "" {
		h.launched = append(h.launched, pkg)
	}
}

// waitWindow waits until the focused window's title (PACKAGE/ACTIVITY)
// holds title.
func (p *Phone) waitWindow(ctx context.Context, title string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return p.poll(ctx, fmt.Sprintf("a focused window titled %q", title), func() (bool, error) {
		ws, err := p.Windows(ctx)
		for _, w := range ws {
			if strings.Contains(w.Title, title) {
				return true, nil
			}
		}
		return false, err
	})
}

// poll calls f until it holds, fails, or ctx ends.
func (p *Phone) poll(ctx context.Context, what string, f func() (bool, error)) error {
	for {
		ok, err := f()
		if ok {
			return nil
		}
		if ctx.Err() != nil {
			if err != nil {
				return fmt.Errorf("waited for %s: %w", what, err)
			}
			return fmt.Errorf("waited for %s: not there in time: %w", what, observe.ErrNotFound)
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if err := input.Sleep(ctx, pollEvery); err != nil {
			continue // the deadline: report it above
		}
	}
}

// withHome runs cmd with HOME at Home and in it, so that "~" in a task's
// command is shared storage as in its paths.
func withHome(cmd string) string {
	return "export HOME=" + Home + "; cd " + Home + " 2>/dev/null; " + cmd
}
