package xdesktop

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
)

// watchdogVar makes this program a desktop's watchdog (see startWatchdog).
const watchdogVar = "PROCTOR_DESKTOP_WATCHDOG"

// watchdogReady is set once the program called Watchdog.
var watchdogReady atomic.Bool

// Watchdog makes this process a desktop's watchdog when it was started as
// one, and then never returns; otherwise it returns at once. Start runs
// the program's own binary again as each desktop's watchdog, so every
// program that starts desktops calls Watchdog first thing in main (a test
// binary in TestMain), and Start refuses to run in one that did not.
func Watchdog() {
	if base := os.Getenv(watchdogVar); base != "" {
		watchdog(base)
		os.Exit(0)
	}
	watchdogReady.Store(true)
}

// watchdog waits until its standard input closes — when the desktop is
// closed, or when the process that owns it dies in any way, SIGKILL
// included — then ends every process that carries the desktop's marker,
// even those that left their process group and parent, removes the socket
// and lock file the X server may have left, and removes the desktop's
// folder. Its input tells it the display ("display 5" lines).
func watchdog(base string) {
	var displays []string
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if num, ok := strings.CutPrefix(in.Text(), "display "); ok && len(displays) < 4 {
			displays = append(displays, num)
		}
	}
	io.Copy(io.Discard, os.Stdin) // a line too long stops the scanner, not the wait
	s := &session{id: filepath.Base(base)}
	s.sweep(nil)
	for _, num := range displays {
		removeStaleX(num)
	}
	if strings.Contains(filepath.Base(base), "proctor-desktop-") {
		os.RemoveAll(base)
	}
}

// watchdogScript is what waits for the desktop's owner: a shell, a
// fraction of this program's memory (its Go heap and the pages its
// packages' initialisation touches), which keeps the lines of its input
// until the input closes and only then runs this program (held open as
// fd 3, so that it is the same binary even if the file was replaced
// meanwhile) as the watchdog, with those lines as its input.
const watchdogScript = `in=
while IFS= read -r line; do in="$in$line
"; done
exec /proc/self/fd/3 <<EOF
$in
EOF
`

// startWatchdog starts the desktop's watchdog, in its own session so
// that nothing kills it with its owner, holding the write end of its
// standard input: a shell that waits for the input to close, then runs
// this program again as the watchdog (see watchdogScript).
func (s *session) startWatchdog() error {
	if !watchdogReady.Load() {
		return errors.New("the program did not call xdesktop.Watchdog at the start of main (or TestMain), which every program that starts desktops must")
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	bin, err := os.Open(exe)
	if err != nil {
		return err
	}
	defer bin.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	cmd.Env = []string{watchdogVar + "=" + s.base, "PATH=" + SafePath}
	cmd.Stdin = r
	cmd.ExtraFiles = []*os.File{bin}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return err
	}
	r.Close()
	s.watchdog, s.watchdogPipe = cmd, w
	return nil
}

// stopWatchdog lets the watchdog do its last sweep and waits for it.
func (s *session) stopWatchdog() {
	if s.watchdogPipe != nil {
		s.watchdogPipe.Close()
		s.watchdog.Wait()
		s.watchdogPipe = nil
	}
}
