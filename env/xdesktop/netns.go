package xdesktop

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/proctor-eval/proctor/env"
)

// The desktop's own network namespace. An app declared with network:
// private (task.AppSpec.Network) runs in it, where the only interface is
// a loopback of the desktop's own: what the app serves there (PyMOL's
// XML-RPC server, Stellarium's RemoteControl API) is reachable from no
// other desktop, no other machine and no other process of this one, and
// two desktops' apps can listen on the same port. The checks' loopback
// probes reach it through LoopbackTransport.
//
// The namespace is made on first use by a holder process (sleep, started
// with CLONE_NEWNET), kept across resets with the X server, and ends with
// the desktop. Processes enter it by being started from a thread that has
// joined it (setns), which needs CAP_SYS_ADMIN: Proctor's desktops run as
// root.

// netnsPath is the namespace's file, making the namespace first if need be.
func (s *session) netnsPath() (string, error) {
	env := s.env() // before s.mu, which env takes
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.netns != nil && s.netns.alive() {
		return nsFile(s.netns), nil
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		return "", fmt.Errorf("the desktop's network namespace: %w", err)
	}
	cmd := exec.Command(sleep, "infinity")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: syscall.CLONE_NEWNET}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("make the desktop's network namespace (it needs root): %w", err)
	}
	p := &proc{name: "netns", cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	path := nsFile(p)
	if err := inNetns(path, loopbackUp); err != nil {
		stop(p, time.Second)
		return "", fmt.Errorf("bring up the desktop's loopback: %w", err)
	}
	s.netns = p
	s.infra = append(s.infra, p)
	return path, nil
}

func nsFile(p *proc) string {
	return filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "ns", "net")
}

// inNetns runs fn on a thread that has joined the network namespace at
// path, and returns the thread to its own namespace after. Sockets fn
// opens, and processes it starts, belong to the namespace. Threads the
// runtime makes meanwhile are made from a clean template thread, since
// this one is locked (Go 1.10 and later).
func inNetns(path string, fn func() error) error {
	runtime.LockOSThread()
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer own.Close()
	target, err := os.Open(path)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("the desktop's network namespace: %w", err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("join the desktop's network namespace: %w", err)
	}
	ferr := fn()
	if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked, so that it ends with its goroutine
		// and never serves another.
		return fmt.Errorf("leave the desktop's network namespace: %w", err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// loopbackUp brings up the "lo" interface of the calling thread's
// network namespace (a new namespace has it down).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// launchPrivate starts argv in the desktop's network namespace, as an
// app of the session (ended by reset).
func (d *Desktop) launchPrivate(argv ...string) error {
	path, err := d.s.netnsPath()
	if err != nil {
		return err
	}
	return inNetns(path, func() error { return d.Launch(argv...) })
}

// dialLoopback connects to port on the desktop's own loopback.
func (d *Desktop) dialLoopback(ctx context.Context, port int) (net.Conn, error) {
	path, err := d.s.netnsPath()
	if err != nil {
		return nil, err
	}
	var c net.Conn
	err = inNetns(path, func() error {
		var derr error
		c, derr = (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		return derr
	})
	return c, err
}

// LoopbackTransport sends HTTP requests to port on the desktop's own
// loopback, in its network namespace, whatever host their URL names
// (env.LoopbackAPI).
func (d *Desktop) LoopbackTransport(port int) http.RoundTripper {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.dialLoopback(ctx, port)
		},
		DisableKeepAlives:     true,
		ResponseHeaderTimeout: 30 * time.Second,
	}
}

var _ env.LoopbackAPI = (*Desktop)(nil)
