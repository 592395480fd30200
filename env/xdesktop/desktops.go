package xdesktop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/proctor-eval/proctor/internal/tail"
	"github.com/proctor-eval/proctor/task"
)

// desktopSession is how a desktop session (task.Sessions) starts: its
// processes, started in order, the first of them the window manager;
// what says it is ready; and what its processes' environment adds.
type desktopSession struct {
	procs [][]string
	// wm is a part of the name the window manager gives itself
	// (_NET_WM_NAME on its check window) once it manages the screen.
	wm string
	// names are the D-Bus names its processes own once they are ready.
	names []string
	// env is added to the environment of every process of the desktop.
	env []string
	// settings are the settings daemons the session bus starts on demand
	// (by their command names): ended with the session, so that the next
	// one reads its settings afresh from the restored home folder.
	settings []string
	// systemBus gives the session's processes a system bus of the
	// desktop's own, on which no service runs: GNOME Shell asks logind,
	// polkit and accountsservice there, and stops at start where no
	// system bus answers at all (while /run/systemd/seats exists).
	systemBus bool
	// files are copied into the home folder (paths relative to it) from
	// the system's files before the session starts, unless already
	// there: settings that spare first-start dialogs.
	files map[string]string
	// before are commands run on the desktop before the session's
	// processes start.
	before []string
	// started, when set, is a line the window manager writes to its
	// standard error once it has started (its start is watched).
	started string
	// ready, when set, is what the session does once its names are on
	// the bus (and its started line written), before it counts as
	// started.
	ready func(ctx context.Context, d *Desktop, conn *dbus.Conn) error
}

// openboxEnv is what openbox's session, and a desktop without any, adds
// to the environment: GSettings in memory, per process.
var openboxEnv = []string{"GSETTINGS_BACKEND=memory"}

// systemBusFile is the socket of a desktop's own system bus, in its
// runtime folder.
const systemBusFile = "system_bus"

var desktopSessions = map[string]desktopSession{
	task.SessionOpenbox: {
		procs: [][]string{{"openbox", "--sm-disable"}},
		wm:    "Openbox",
		env:   openboxEnv,
	},
	task.SessionXFCE: {
		procs: [][]string{
			{"xfwm4", "--compositor=off", "--sm-client-disable"},
			{"xfsettingsd", "--no-daemon", "--sm-client-disable"},
			{"xfce4-panel", "--sm-client-disable"},
			{"xfdesktop", "--sm-client-disable"},
		},
		wm:       "Xfwm4",
		names:    []string{"org.xfce.Panel", "org.xfce.xfdesktop", "org.xfce.SettingsDaemon"},
		env:      []string{"GSETTINGS_BACKEND=dconf", "XDG_CURRENT_DESKTOP=XFCE", "XDG_SESSION_DESKTOP=xfce", "DESKTOP_SESSION=xfce"},
		settings: []string{"xfconfd", "dconf-service"},
		// Without settings of its own, the panel starts with a dialog
		// that asks which layout to use: it gets Debian's default one.
		files: map[string]string{".config/xfce4/xfconf/xfce-perchannel-xml/xfce4-panel.xml": "/etc/xdg/xfce4/panel/default.xml"},
	},
	task.SessionGNOME: {
		procs: [][]string{{"gnome-shell", "--x11", "--replace", "--sm-disable"}},
		wm:    "GNOME Shell",
		names: []string{"org.gnome.Shell"},
		// vblank_mode=0: Mesa's GLX does not wait for a vertical blank
		// that Xvfb never gives, which left new windows undrawn.
		env: []string{"GSETTINGS_BACKEND=dconf", "XDG_CURRENT_DESKTOP=GNOME", "XDG_SESSION_DESKTOP=gnome",
			"DESKTOP_SESSION=gnome", "vblank_mode=0"},
		settings:  []string{"dconf-service"},
		systemBus: true,
		// GNOME Shell tells a session of root that it runs as a
		// privileged user, in a banner that stays until the user moves
		// (GNOME holds banners while the user is idle): it is sent to the
		// message tray without a banner, and the setting then reset.
		before:  []string{"dconf write " + showBanners + " false"},
		started: "GNOME Shell started at",
		ready: func(ctx context.Context, d *Desktop, conn *dbus.Conn) error {
			if err := leaveOverview(ctx, d, conn); err != nil {
				return err
			}
			return d.runChecked(ctx, "dconf reset "+showBanners)
		},
	},
}

// showBanners is GNOME's setting that shows notifications in banners.
const showBanners = "/org/gnome/desktop/notifications/show-banners"

// runChecked runs a command of the harness on the desktop and fails
// unless it exits 0.
func (d *Desktop) runChecked(ctx context.Context, cmd string) error {
	res, err := d.Run(ctx, cmd, 30*time.Second)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("%s: exit status %d: %s", cmd, res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	return nil
}

// lineWatch passes a process's output on and closes seen once a line
// holding want was written.
type lineWatch struct {
	out  io.Writer
	said *tail.Buffer // the end of the output, for the error of a late start
	want []byte
	seen chan struct{}
	buf  []byte
	once sync.Once
}

func (w *lineWatch) Write(p []byte) (int, error) {
	if w.out != nil {
		w.out.Write(p)
	}
	w.said.Write(p)
	w.buf = append(w.buf, p...)
	if bytes.Contains(w.buf, w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	if i := bytes.LastIndexByte(w.buf, '\n'); i >= 0 {
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 4096 {
		w.buf = w.buf[len(w.buf)-4096:]
	}
	return len(p), nil
}

// leaveOverview leaves the overview where GNOME Shell (40 and later)
// starts, so that an episode starts on the desktop, as with the other
// sessions.
func leaveOverview(ctx context.Context, d *Desktop, conn *dbus.Conn) error {
	shell := conn.Object("org.gnome.Shell", "/org/gnome/Shell")
	return d.poll(ctx, 30*time.Second, "GNOME Shell to leave its overview", func() (bool, error) {
		if err := d.s.infraDown(); err != nil {
			return false, err
		}
		v, err := shell.GetProperty("org.gnome.Shell.OverviewActive")
		if err != nil {
			return false, nil // not exported yet
		}
		if active, _ := v.Value().(bool); !active {
			return true, nil
		}
		// Left alone while an animation runs: asked again.
		_ = shell.SetProperty("org.gnome.Shell.OverviewActive", dbus.MakeVariant(false))
		return false, nil
	})
}

// dconfModule is GIO's dconf backend of GSettings, without which
// GSETTINGS_BACKEND=dconf falls back to memory.
var dconfModules = []string{"/usr/lib/x86_64-linux-gnu/gio/modules/libdconfsettings.so",
	"/usr/lib/aarch64-linux-gnu/gio/modules/libdconfsettings.so"}

// sessionMissing names what this machine lacks to run a session, with
// the packages to install; "" when nothing.
func sessionMissing(name string) string {
	ds, ok := desktopSessions[name]
	if !ok {
		return fmt.Sprintf("unknown desktop session %q (one of %s)", name, strings.Join(task.Sessions, ", "))
	}
	var missing []string
	for _, argv := range ds.procs {
		if _, err := exec.LookPath(argv[0]); err != nil {
			missing = append(missing, argv[0])
		}
	}
	if slices.Contains(ds.env, "GSETTINGS_BACKEND=dconf") && !slices.ContainsFunc(dconfModules, exists) {
		missing = append(missing, "GSettings' dconf backend")
	}
	if len(missing) == 0 {
		return ""
	}
	pkgs := task.SessionPackages[name]
	if name == task.SessionOpenbox {
		pkgs = []string{"openbox"}
	}
	return fmt.Sprintf("the %s session needs %s (apt-get install --no-install-recommends %s)",
		name, strings.Join(missing, ", "), strings.Join(pkgs, " "))
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Session is the desktop session running, "" when none (Config.NoWM).
func (d *Desktop) Session() string {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	return d.s.kind
}

// startSession starts a desktop session on the running X server and bus
// and waits until its window manager manages the screen and its
// processes answer on the bus. A shell that has not said it started
// after sessionFirstWait is ended and started once more, for what is
// left of sessionStartWait (sessionFirstWait at least): gnome-shell now and then never says it on a
// loaded machine (it did not in 3 minutes on CI, and starts in 3 s idle
// and 22 s beside the whole test suite here).
func (d *Desktop) startSession(ctx context.Context, name string) error {
	if why := sessionMissing(name); why != "" {
		return fmt.Errorf("%s", why)
	}
	began := time.Now()
	err := d.startSessionOnce(ctx, name, sessionFirstWait, 1)
	var late lateStart
	if !errors.As(err, &late) {
		return err
	}
	fmt.Fprintf(d.cfg.Log, "%v; the session is started again\n", err)
	d.stopSession()
	// At least as long as the first wait: the start's other steps (the
	// window manager, the bus names) may have used most of the bound.
	again := d.startSessionOnce(ctx, name, max(sessionStartWait-time.Since(began), sessionFirstWait), 2)
	if errors.As(again, &late) {
		return fmt.Errorf("%w, and again once started again: %v", err, again)
	}
	return again
}

// lateStart is the error of a session's shell that did not say it
// started in time.
type lateStart struct{ msg string }

func (e lateStart) Error() string { return e.msg }

// startSessionOnce starts the session and waits up to wait for its shell
// to say it started (the attempt counts from 1).
func (d *Desktop) startSessionOnce(ctx context.Context, name string, wait time.Duration, attempt int) error {
	ds := desktopSessions[name]
	started := startedLine(ds.started, attempt)
	s := d.s
	for rel, src := range ds.files {
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("the %s session's settings: %w", name, err)
		}
		if _, err := d.writeFile("~/"+rel, b, nil, true); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.kind, s.kindEnv = name, s.sessionEnv(ds)
	s.mu.Unlock()
	// Services the bus starts from now on (the settings daemons) get the
	// session's environment too.
	if err := s.activationEnv(ctx, s.sessionEnv(ds)); err != nil {
		return err
	}
	if ds.systemBus {
		p, err := s.start("system bus", []string{"dbus-daemon", "--session", "--nofork",
			"--address=unix:path=" + filepath.Join(s.runtime, systemBusFile)}, s.base, nil, nil, nil)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.desk = append(s.desk, p)
		s.infra = append(s.infra, p)
		s.mu.Unlock()
	}
	for _, c := range ds.before {
		if err := d.runChecked(ctx, c); err != nil {
			return err
		}
	}
	var watch *lineWatch
	for i, argv := range ds.procs {
		var stderr io.Writer
		if i == 0 && started != "" {
			watch = &lineWatch{out: s.logFile(), said: tail.New(4096), want: []byte(started), seen: make(chan struct{})}
			stderr = watch
		}
		p, err := s.start(argv[0], argv, s.home, nil, nil, stderr)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.desk = append(s.desk, p)
		s.infra = append(s.infra, p)
		s.mu.Unlock()
		if i == 0 {
			// Until the window manager has taken over the screen, a
			// window mapped stays unmanaged (no frame, not in the client
			// list), and the panel and desktop of a session wait for it.
			if err := d.poll(ctx, 60*time.Second, "the window manager "+argv[0], func() (bool, error) {
				if !p.alive() {
					return false, fmt.Errorf("%s exited: %v", p.name, p.err)
				}
				n, ok, err := d.x.WindowManager()
				return ok && strings.Contains(n, ds.wm), err
			}); err != nil {
				return err
			}
		}
	}
	if len(ds.names) == 0 {
		return nil
	}
	conn, err := dbus.Connect(s.busAddr)
	if err != nil {
		return fmt.Errorf("connect to the session bus: %w", err)
	}
	defer conn.Close()
	err = d.poll(ctx, 60*time.Second, "the "+name+" session", func() (bool, error) {
		if err := s.infraDown(); err != nil {
			return false, err
		}
		for _, n := range ds.names {
			var has bool
			if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, n).Store(&has); err != nil || !has {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if watch != nil {
		select {
		case <-watch.seen:
		case <-time.After(wait):
			return lateStart{fmt.Sprintf("%s did not say %q in %s (it said: %s; %s)", ds.procs[0][0], started, wait.Round(time.Second), watch.said.Lines(8), machineLoad())}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if ds.ready == nil {
		return nil
	}
	return ds.ready(ctx, d, conn)
}

// stopSession ends the session's processes and its settings daemons.
func (d *Desktop) stopSession() {
	s := d.s
	s.mu.Lock()
	desk, kind := s.desk, s.kind
	s.desk, s.kind, s.kindEnv = nil, "", nil
	s.infra = slices.DeleteFunc(s.infra, func(p *proc) bool { return slices.Contains(desk, p) })
	s.mu.Unlock()
	for i := len(desk) - 1; i >= 0; i-- {
		stop(desk[i], time.Second)
	}
	if names := desktopSessions[kind].settings; len(names) > 0 {
		s.killCommands(names)
	}
}

// killCommands kills the desktop's processes with these command names
// (what the session bus started on demand lives on in the bus's process
// group), before the home folder they write to is restored.
func (s *session) killCommands(names []string) {
	for _, pid := range Processes(s.id) {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err == nil && slices.Contains(names, strings.TrimSpace(string(comm))) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			for i := 0; i < 50 && running(pid); i++ {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
}

// activationEnv sets variables in the environment of the services the
// session bus starts from now on: a session's, in place of another's.
func (s *session) activationEnv(ctx context.Context, vars []string) error {
	if len(vars) == 0 {
		return nil
	}
	// What another session set is emptied (the bus cannot unset it).
	m := map[string]string{}
	for _, ds := range desktopSessions {
		for _, v := range ds.env {
			k, _, _ := strings.Cut(v, "=")
			m[k] = ""
		}
	}
	for _, v := range vars {
		k, val, _ := strings.Cut(v, "=")
		m[k] = val
	}
	conn, err := dbus.Connect(s.busAddr)
	if err != nil {
		return fmt.Errorf("connect to the session bus: %w", err)
	}
	defer conn.Close()
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.UpdateActivationEnvironment", 0, m).Err; err != nil {
		return fmt.Errorf("set the session bus's activation environment: %w", err)
	}
	return nil
}

// endSessionFor ends the session running before a reset that brings up
// want. Openbox keeps running from one reset to the next; any other
// session is ended before the home folder is restored and started afresh
// after it, as at a new login, so that it reads its settings from the
// restored folder.
func (d *Desktop) endSessionFor(want string) {
	if cur := d.Session(); cur != "" && (cur != want || cur != task.SessionOpenbox) {
		d.stopSession()
	}
}

// wantSession is the session a reset brings up: the one its setup asks
// for, else the desktop's own; "" for none (Config.NoWM, or openbox by
// default where it is not installed).
func (d *Desktop) wantSession(asked string) string {
	switch {
	case asked != "":
		return asked
	case d.cfg.NoWM:
		return ""
	case d.cfg.Session != "":
		return d.cfg.Session
	case sessionMissing(task.SessionOpenbox) != "":
		return ""
	}
	return task.SessionOpenbox
}

// sessionStartWait bounds how long a session's shell may take to say it
// started, in all; after sessionFirstWait it is started again.
var (
	sessionStartWait = 3 * time.Minute
	sessionFirstWait = time.Minute
	// startedLine is the line a session's shell says once started, at
	// each attempt (tests make a first attempt wait for a line never said).
	startedLine = func(line string, attempt int) string { return line }
)

// machineLoad says how busy the machine is, for an error about a process
// that was slow to start: the load averages and, where the kernel keeps
// them, the share of time tasks waited for the CPU, I/O and memory over
// the last minute (pressure stall information).
func machineLoad() string {
	parts := []string{}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			parts = append(parts, "load averages "+strings.Join(f[:3], " "))
		}
	}
	for _, r := range []string{"cpu", "io", "memory"} {
		b, err := os.ReadFile("/proc/pressure/" + r)
		if err != nil {
			continue
		}
		// some avg10=0.00 avg60=0.54 avg300=1.23 total=...
		for _, f := range strings.Fields(strings.SplitN(string(b), "\n", 2)[0]) {
			if v, ok := strings.CutPrefix(f, "avg60="); ok {
				parts = append(parts, fmt.Sprintf("%s waited %s%%", r, v))
			}
		}
	}
	if len(parts) == 0 {
		return "the machine's load unknown"
	}
	return "the machine: " + strings.Join(parts, ", ") + " (last minute)"
}
