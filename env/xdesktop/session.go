package xdesktop

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/proctor-eval/proctor/internal/tail"
)

// MarkerVar is set in the environment of every process a desktop starts,
// so that Close and Reset can find the ones that left their process group.
const MarkerVar = "PROCTOR_DESKTOP"

// SafePath is the PATH of desktop processes: Debian's directories only,
// without language-version shims that break Debian's launchers.
const SafePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// proc is a process the session started and waits for.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// session owns the processes of one desktop: the X server, the window
// manager, the D-Bus session bus and AT-SPI, and the applications.
type session struct {
	id      string
	base    string // the desktop's own folder
	home    string
	runtime string
	tmp     string
	display string
	xauth   string // the Xauthority file holding cookie
	cookie  []byte // the X server's MIT-MAGIC-COOKIE-1
	busAddr string
	width   int
	height  int
	log     io.Writer

	mu      sync.Mutex
	devnull *os.File

	watchdog     *exec.Cmd
	watchdogPipe *os.File
	infra        []*proc  // X server, bus, a11y, the session's: kept across resets
	kind         string   // the desktop session running (task.Sessions), "" when none
	kindEnv      []string // what it adds to the processes' environment (openbox's when none)
	desk         []*proc  // the session's processes, the window manager first
	apps         []*proc  // applications and setup commands: ended on reset
	netns        *proc    // the holder of the desktop's network namespace, once made (netns.go)
}

// env is the environment of the session's processes: the desktop's, and
// the desktop session's (openbox's when none runs).
func (s *session) env() []string {
	s.mu.Lock()
	own := s.kindEnv
	s.mu.Unlock()
	if own == nil {
		own = openboxEnv
	}
	return append([]string{
		"DISPLAY=" + s.display,
		"XAUTHORITY=" + s.xauth,
		"HOME=" + s.home,
		"USER=root", "LOGNAME=root", "SHELL=/bin/bash", "TERM=xterm-256color",
		"PATH=" + SafePath,
		"LANG=C.UTF-8",
		"TMPDIR=" + s.tmp,
		"XDG_RUNTIME_DIR=" + s.runtime,
		"XDG_CONFIG_HOME=" + filepath.Join(s.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(s.home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(s.home, ".cache"),
		"XDG_SESSION_TYPE=x11",
		"DBUS_SESSION_BUS_ADDRESS=" + s.busAddr,
		"GTK_MODULES=gail:atk-bridge",
		"GDK_BACKEND=x11",
		"NO_AT_BRIDGE=0",
		"QT_QPA_PLATFORM=xcb",
		"QT_ACCESSIBILITY=1",
		"QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1",
		"QTWEBENGINE_DISABLE_SANDBOX=1",
		"LIBGL_ALWAYS_SOFTWARE=1",
		"SAL_USE_VCLPLUGIN=gtk3",
		MarkerVar + "=" + s.id,
	}, own...)
}

// sessionEnv is what a desktop session adds to its processes' environment.
func (s *session) sessionEnv(ds desktopSession) []string {
	if !ds.systemBus {
		return ds.env
	}
	return append(slices.Clone(ds.env), "DBUS_SYSTEM_BUS_ADDRESS=unix:path="+filepath.Join(s.runtime, systemBusFile))
}

// logFile is where the session's processes write: the log when it is a
// file, else /dev/null.
func (s *session) logFile() *os.File {
	if f, ok := s.log.(*os.File); ok {
		return f
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.devnull == nil {
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return nil
		}
		s.devnull = f
	}
	return s.devnull
}

// start launches a process in its own process group, killed with the
// daemon (Pdeathsig), and waits for it in the background.
func (s *session) start(name string, argv []string, dir string, extra []*os.File, stdout, stderr io.Writer) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = s.env()
	cmd.Dir = dir
	cmd.ExtraFiles = extra
	// Output goes to a file, not a pipe, unless the caller captures it:
	// with a pipe, Wait would also wait for every grandchild that keeps it.
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if cmd.Stdout == nil {
		cmd.Stdout = s.logFile()
	}
	if cmd.Stderr == nil {
		cmd.Stderr = s.logFile()
	}
	cmd.WaitDelay = 500 * time.Millisecond
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop ends a process group: SIGTERM, then SIGKILL after grace.
func stop(p *proc, grace time.Duration) {
	if !p.alive() {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
}

// Processes lists the running processes (zombies excluded) that carry
// the marker of the desktop with this id (see Desktop.ID).
func Processes(id string) []int {
	_, marked := readProcs(id)
	return marked
}

// procEntry is what a reading of /proc keeps of a process.
type procEntry struct{ ppid, pgrp int }

// readProcs reads /proc once: every process's parent and group, and the
// running processes (zombies excluded) that carry the marker of the
// desktop with this id ("": none is looked for). A kernel's thread
// (kthreadd and its children) has no environment to search.
func readProcs(id string) (procs map[int]procEntry, marked []int) {
	want := []byte(MarkerVar + "=" + id + "\x00")
	procs = map[int]procEntry{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // ended meanwhile
		}
		i := bytes.LastIndexByte(st, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(st[i+1:])) // state ppid pgrp ...
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		procs[pid] = procEntry{ppid, pgrp}
		if id == "" || f[0] == "Z" || pid == 2 || ppid == 2 {
			continue // a zombie is not running; a kernel's thread has no environment
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && bytes.Contains(append(b, 0), want) {
			marked = append(marked, pid)
		}
	}
	return procs, marked
}

// sweep kills every process that carries this desktop's marker, wherever
// it went (a daemonised child leaves its process group), except keep.
func (s *session) sweep(keep map[int]bool) {
	for range 3 {
		found := 0
		for _, pid := range Processes(s.id) {
			if keep[pid] || pid == os.Getpid() {
				continue
			}
			found++
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if found == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startInfra starts the X server, the session bus and AT-SPI, in that
// order, each only once the one before answers (the desktop session comes
// after: startSession).
func (s *session) startInfra(ctx context.Context) error {
	// The X server picks a free display and writes its number to fd 3
	// once it accepts connections.
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	// Only clients with the cookie may connect. The server keeps its
	// abstract socket, which any local user may open: with -displayfd,
	// that socket is what tells the next server the display is taken
	// (it replaces the socket file of a display it thinks free).
	if err := s.makeXauth(); err != nil {
		r.Close()
		w.Close()
		return err
	}
	// What the server says is kept (its end), for the error when it
	// does not start.
	said := tail.New(2048)
	x, err := s.start("Xvfb", []string{"Xvfb", "-displayfd", "3", "-screen", "0",
		fmt.Sprintf("%dx%dx24", s.width, s.height), "-nolisten", "tcp", "-noreset",
		"-auth", s.xauth, "+extension", "XTEST"},
		s.base, []*os.File{w}, io.Discard, io.MultiWriter(s.logFile(), said))
	w.Close()
	if err != nil {
		r.Close()
		return err
	}
	s.infra = append(s.infra, x)
	num, err := readLine(ctx, r, 15*time.Second, x)
	r.Close()
	if err != nil {
		// A server that ended is waited for, so that all it said is in.
		select {
		case <-x.done:
			return fmt.Errorf("Xvfb did not report its display: %w (Xvfb ended: %v; it said: %s)", err, x.err, said.Lines(8))
		case <-time.After(2 * time.Second):
			return fmt.Errorf("Xvfb did not report its display: %w (it said: %s)", err, said.Lines(8))
		}
	}
	num = strings.TrimSpace(num)
	s.display = ":" + num
	// The watchdog removes the server's socket if the server is killed.
	if _, err := fmt.Fprintf(s.watchdogPipe, "display %s\n", num); err != nil {
		return fmt.Errorf("tell the watchdog the display: %w", err)
	}
	if err := privateSocket(num); err != nil {
		return err
	}

	r, w, err = os.Pipe()
	if err != nil {
		return err
	}
	bus, err := s.start("dbus-daemon", []string{"dbus-daemon", "--session", "--nofork", "--print-address=3",
		"--address=unix:path=" + filepath.Join(s.runtime, "bus")}, s.base, []*os.File{w}, nil, nil)
	w.Close()
	if err != nil {
		r.Close()
		return err
	}
	s.infra = append(s.infra, bus)
	addr, err := readLine(ctx, r, 10*time.Second, bus)
	r.Close()
	if err != nil {
		return fmt.Errorf("dbus-daemon did not report its address: %w", err)
	}
	s.busAddr = strings.TrimSpace(addr)

	// The session bus starts AT-SPI's bus launcher on the first call to
	// org.a11y.Bus (D-Bus activation); it lives in the bus's process group
	// and carries the desktop's marker, so it ends with the desktop.
	if findLauncher() == "" {
		return fmt.Errorf("AT-SPI is not installed (apt-get install at-spi2-core)")
	}
	return s.enableA11y(ctx)
}

// makeXauth makes the desktop's X cookie and writes it to an Xauthority
// file only the owner may read, in the desktop's private folder. Its one
// entry matches any address and display (FamilyWild, both empty): the
// server reads every entry, and the display is not known until it runs.
func (s *session) makeXauth() error {
	s.xauth = filepath.Join(s.base, "Xauthority")
	s.cookie = make([]byte, 16)
	rand.Read(s.cookie)
	const familyWild = 0xffff
	b := binary.BigEndian.AppendUint16(nil, familyWild)
	for _, f := range [][]byte{nil, nil, []byte("MIT-MAGIC-COOKIE-1"), s.cookie} {
		b = binary.BigEndian.AppendUint16(b, uint16(len(f)))
		b = append(b, f...)
	}
	f, err := os.OpenFile(s.xauth, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write the X authority file: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write the X authority file %s: %w", s.xauth, err)
	}
	return nil
}

// xSocket and xLock are the socket and lock file of display num.
func xSocket(num string) string { return "/tmp/.X11-unix/X" + num }
func xLock(num string) string   { return "/tmp/.X" + num + "-lock" }

// staleXWait bounds how long removeStaleX waits for a killed X server's
// socket to close.
const staleXWait = 30 * time.Second

// privateSocket lets only its owner open the X server's socket file (the
// X server makes it open to all): another user is left with the abstract
// socket, where the cookie is asked for.
func privateSocket(num string) error {
	p := xSocket(num)
	st, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("the X server's socket: %w", err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || st.Mode().Type() != fs.ModeSocket || int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is not a socket of this user's X server", p)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		return fmt.Errorf("make the X server's socket private: %w", err)
	}
	return nil
}

// removeStaleX removes the socket and lock file of display num that a
// server killed with SIGKILL leaves behind: the socket once nothing
// listens on it, the lock once the process it names is gone. A killed
// server's socket is served until the kernel closes its files, which on a
// loaded machine (a GNOME session's dozens of processes ending at once)
// takes seconds after its memory is gone: it waits for that up to
// staleXWait, and leaves a socket still served after it (a live server's).
func removeStaleX(num string) {
	if _, err := strconv.ParseUint(num, 10, 16); err != nil {
		return
	}
	sock := xSocket(num)
	for end := time.Now().Add(staleXWait); ; {
		before, err := os.Lstat(sock)
		if err != nil {
			break
		}
		c, err := net.Dial("unix", sock)
		if err == nil { // still served: the server may be exiting
			c.Close()
			if time.Now().After(end) {
				break
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		// Remove the file only if it is still the one nothing answered on.
		if errors.Is(err, syscall.ECONNREFUSED) {
			if now, err := os.Lstat(sock); err == nil && os.SameFile(before, now) {
				os.Remove(sock)
			}
		}
		break
	}
	lock := xLock(num)
	if b, err := os.ReadFile(lock); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && !running(pid) {
			os.Remove(lock)
		}
	}
}

// running reports whether a process runs (exists and is not a zombie).
func running(pid int) bool {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	return i >= 0 && len(st) > i+2 && st[i+2] != 'Z'
}

func findLauncher() string {
	for _, p := range []string{"/usr/libexec/at-spi-bus-launcher", "/usr/lib/at-spi2-core/at-spi-bus-launcher"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// enableA11y waits for the accessibility bus and switches accessibility on.
func (s *session) enableA11y(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		conn, err := dbus.Connect(s.busAddr)
		if err == nil {
			obj := conn.Object("org.a11y.Bus", "/org/a11y/bus")
			var addr string
			err = obj.CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0).Store(&addr)
			if err == nil {
				err = obj.SetProperty("org.a11y.Status.IsEnabled", dbus.MakeVariant(true))
			}
			conn.Close()
			if err == nil {
				return nil
			}
		}
		last = err
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the accessibility bus did not come up: %v", last)
}

// readLine reads one line from r, giving up after d or when p exits.
func readLine(ctx context.Context, r io.Reader, d time.Duration, p *proc) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := bufio.NewReader(r).ReadString('\n')
		ch <- res{s, err}
	}()
	select {
	case v := <-ch:
		if v.err != nil && v.s == "" {
			return "", v.err
		}
		return v.s, nil
	case <-p.done:
		return "", fmt.Errorf("%s exited: %v", p.name, p.err)
	case <-time.After(d):
		return "", fmt.Errorf("timed out after %s", d)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// stopApps ends every application and setup command and sweeps the
// marked processes that are not the infrastructure's; it returns the
// infrastructure's processes (with their descendants).
func (s *session) stopApps() map[int]bool {
	s.mu.Lock()
	apps := s.apps
	s.apps = nil
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range apps {
		wg.Add(1)
		go func() { defer wg.Done(); stop(p, 300*time.Millisecond) }()
	}
	wg.Wait()
	keep := map[int]bool{}
	for _, p := range s.infra {
		if p.alive() {
			keep[p.cmd.Process.Pid] = true
		}
	}
	return s.sweepExceptInfra(keep)
}

// sweepExceptInfra kills marked processes that do not belong to the
// infrastructure, and returns those that do: a process belongs when its
// process group is an infrastructure process's group (services the session
// bus activated, such as the accessibility bus, are re-parented to init but
// keep the bus's group) or when it descends from one.
func (s *session) sweepExceptInfra(infra map[int]bool) map[int]bool {
	keep := infraTree(infra)
	s.sweep(keep)
	return keep
}

// infraTree is the infrastructure's processes: those of infra, those in
// their process groups, and their descendants.
func infraTree(infra map[int]bool) map[int]bool {
	procs, _ := readProcs("")
	return treeOf(procs, infra)
}

// treeOf is infraTree over a reading of /proc.
func treeOf(procs map[int]procEntry, infra map[int]bool) map[int]bool {
	keep := map[int]bool{}
	for pid, p := range procs {
		if infra[pid] || infra[p.pgrp] {
			keep[pid] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for pid, p := range procs {
			if keep[p.ppid] && !keep[pid] {
				keep[pid] = true
				changed = true
			}
		}
	}
	return keep
}

// close ends everything the session started and removes its folder.
func (s *session) close() error {
	s.stopApps()
	for i := len(s.infra) - 1; i >= 0; i-- {
		stop(s.infra[i], time.Second)
	}
	s.infra = nil
	s.sweep(nil)
	s.stopWatchdog()
	if s.devnull != nil {
		s.devnull.Close()
	}
	return os.RemoveAll(s.base)
}

// infraDown returns an error naming the first infrastructure process that
// has exited.
func (s *session) infraDown() error {
	s.mu.Lock()
	infra := slices.Clone(s.infra)
	s.mu.Unlock()
	for _, p := range infra {
		if !p.alive() {
			return fmt.Errorf("%s exited: %v", p.name, p.err)
		}
	}
	return nil
}
