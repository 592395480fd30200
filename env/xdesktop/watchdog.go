package xdesktop

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// watchdogVar makes this program a desktop's watchdog (see startWatchdog).
const watchdogVar = "PROCTOR_DESKTOP_WATCHDOG"

func init() {
	if base := os.Getenv(watchdogVar); base != "" {
		watchdog(base)
		os.Exit(0)
	}
}

// watchdog waits until its standard input closes — when the desktop is
// closed, or when the process that owns it dies in any way, SIGKILL
// included — then ends every process that carries the desktop's marker,
// even those that left their process group and parent, and removes the
// desktop's folder.
func watchdog(base string) {
	io.Copy(io.Discard, os.Stdin)
	s := &session{id: filepath.Base(base)}
	s.sweep(nil)
	if strings.Contains(filepath.Base(base), "proctor-desktop-") {
		os.RemoveAll(base)
	}
}

// startWatchdog starts this program again as the desktop's watchdog, in
// its own session so that nothing kills it with its owner, holding the
// write end of its standard input.
func (s *session) startWatchdog() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{watchdogVar + "=" + s.base, "PATH=" + SafePath}
	cmd.Stdin = r
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
