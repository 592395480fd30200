package android

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/input"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// DefaultWait bounds a setup step that waits, when it gives no timeout.
const DefaultWait = 30 * time.Second

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
	var launched []string
	for i, st := range s.Steps {
		pkg, err := p.step(ctx, s, st)
		if pkg != "" {
			launched = append(launched, pkg)
		}
		if err != nil {
			kind := "step"
			if spec := st.Spec(); spec != nil {
				kind = spec.Kind()
			}
			p.mu.Lock()
			p.apps = launched
			p.mu.Unlock()
			return fmt.Errorf("setup[%d] %s: %w", i, kind, err)
		}
	}
	p.mu.Lock()
	p.apps = launched
	p.mu.Unlock()
	return nil
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

// step runs one setup step; it returns the package a launch started.
func (p *Phone) step(ctx context.Context, s env.Setup, st task.Step) (string, error) {
	switch {
	case st.Launch != nil:
		l := st.Launch
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
			return "", fmt.Errorf("%q names no Android package (give the package, such as com.android.settings, or an app whose command starts it)", l.App)
		}
		if len(l.Args) > 0 {
			if !strings.Contains(target, "/") {
				return pkg, fmt.Errorf("args apply to an activity (PACKAGE/.Activity), not to the package %s", pkg)
			}
			for _, a := range l.Args {
				cmd += " " + Quote(a)
			}
		}
		if _, err := p.shell(ctx, cmd); err != nil {
			return pkg, err
		}
		if l.WaitWindow != "" {
			return pkg, p.waitWindow(ctx, l.WaitWindow, time.Duration(l.Timeout))
		}
		return pkg, nil
	case st.Run != nil:
		r := st.Run
		cmd := r.Command
		if r.Background {
			cmd = "nohup sh -c " + Quote(withHome(cmd)) + " >/dev/null 2>&1 &"
		}
		ctx, cancel := context.WithTimeout(ctx, orDefault(time.Duration(r.Timeout), 2*time.Minute))
		defer cancel()
		if _, err := p.shell(ctx, withHome(cmd)); err != nil {
			return "", err
		}
		if r.Until != "" {
			return "", p.poll(ctx, "until `"+r.Until+"`", func() (bool, error) {
				res, err := p.dev.Shell(ctx, withHome(r.Until))
				return err == nil && res.ExitCode == 0, err
			})
		}
		return "", nil
	case st.Write != nil:
		w := st.Write
		if err := p.WriteFile(ctx, w.Path, []byte(w.Content)); err != nil {
			return "", err
		}
		if w.Mode != "" {
			if _, err := strconv.ParseUint(w.Mode, 8, 32); err != nil {
				return "", fmt.Errorf("mode %q is not octal", w.Mode)
			}
			dst, _ := Resolve(w.Path)
			if _, err := p.shell(ctx, "chmod "+w.Mode+" "+Quote(dst)); err != nil {
				return "", err
			}
		}
		return "", nil
	case st.Copy != nil:
		b, ok := s.Assets[st.Copy.Asset]
		if !ok {
			return "", fmt.Errorf("the suite has no asset %q", st.Copy.Asset)
		}
		return "", p.WriteFile(ctx, st.Copy.To, b)
	case st.Open != nil:
		o := st.Open
		if o.URL == "" {
			return "", fmt.Errorf("%w: an Android setup opens a URL; open a file with a run step (am start -d content://...)", env.ErrBadAction)
		}
		cmd := "am start -W -a android.intent.action.VIEW -d " + Quote(o.URL)
		pkg := ""
		if o.App != "" {
			if pkg = packageOf(s, o.App); pkg == "" {
				return "", fmt.Errorf("%q names no Android package", o.App)
			}
			cmd += " -p " + Quote(pkg)
		}
		_, err := p.shell(ctx, cmd)
		return pkg, err
	case st.WaitWindow != nil:
		return "", p.waitWindow(ctx, st.WaitWindow.Title, time.Duration(st.WaitWindow.Timeout))
	case st.Focus != nil:
		return "", p.waitWindow(ctx, st.Focus.Title, time.Duration(st.Focus.Timeout))
	case st.WaitElement != nil:
		q := st.WaitElement.Element
		ctx, cancel := context.WithTimeout(ctx, orDefault(time.Duration(st.WaitElement.Timeout), DefaultWait))
		defer cancel()
		return "", p.poll(ctx, "an element "+q.Describe(), func() (bool, error) {
			els, err := p.Elements(ctx, q)
			if errors.Is(err, ErrDump) {
				return false, nil // the screen is changing
			}
			return len(els) > 0, err
		})
	case st.Sleep != nil:
		return "", input.Sleep(ctx, time.Duration(*st.Sleep))
	}
	return "", fmt.Errorf("%w: no step kind set", env.ErrBadAction)
}

// waitWindow waits until the focused window's title (PACKAGE/ACTIVITY)
// holds title.
func (p *Phone) waitWindow(ctx context.Context, title string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, orDefault(timeout, DefaultWait))
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

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
