package xdesktop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// VNC says how a desktop serves its own screen over VNC: x11vnc, started
// with the desktop as part of it, so that a reset keeps it (a reset ends
// every other X client) and it ends with the desktop. A VNC client then
// sees and drives the very desktop the environment serves.
type VNC struct {
	// Listen is where x11vnc listens, HOST:PORT; port 0 picks a free
	// one. A loopback HOST listens on loopback only.
	Listen string
	// PasswordFile holds the VNC password on its first line (x11vnc reads
	// it); empty: no password.
	PasswordFile string
}

// vncStartTimeout bounds x11vnc's start.
const vncStartTimeout = 15 * time.Second

// startVNC starts x11vnc on the desktop's display and returns the address
// it accepts connections on, once it does.
func (d *Desktop) startVNC(ctx context.Context, v VNC) (string, error) {
	if _, err := exec.LookPath("x11vnc"); err != nil {
		return "", errors.New("serving the desktop over VNC needs x11vnc (apt-get install x11vnc)")
	}
	host, port, err := net.SplitHostPort(v.Listen)
	if err != nil {
		return "", fmt.Errorf("VNC address %q: %w", v.Listen, err)
	}
	if port == "0" {
		// x11vnc takes a port, not a listener: find a free one.
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return "", fmt.Errorf("VNC address %q: %w", v.Listen, err)
		}
		port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
	}
	args := []string{"x11vnc", "-display", d.s.display, "-auth", d.s.xauth, "-rfbport", port,
		"-forever", "-shared", "-noxrecord", "-nossl", "-add_keysyms", "-quiet"}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		args = append(args, "-localhost")
	} else if host != "" && !(ip != nil && ip.IsUnspecified()) {
		args = append(args, "-listen", host)
	}
	if v.PasswordFile != "" {
		// An absolute path: x11vnc reads prefixes such as "cmd:" as
		// instructions.
		abs, err := filepath.Abs(v.PasswordFile)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(abs); err != nil {
			return "", fmt.Errorf("VNC password file: %w", err)
		}
		args = append(args, "-passwdfile", abs)
	} else {
		args = append(args, "-nopw")
	}
	p, err := d.s.start("x11vnc", args, d.s.base, nil, nil, nil)
	if err != nil {
		return "", err
	}
	d.s.infra = append(d.s.infra, p)
	dial := host
	if dial == "" || net.ParseIP(dial) != nil && net.ParseIP(dial).IsUnspecified() {
		dial = "127.0.0.1"
	}
	addr := net.JoinHostPort(dial, port)
	err = d.poll(ctx, vncStartTimeout, "x11vnc to accept connections on "+addr, func() (bool, error) {
		if !p.alive() {
			return false, fmt.Errorf("x11vnc exited (%v) before it accepted connections on %s; is the port taken? (its output is in the desktop's log)", p.err, addr)
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, nil
		}
		c.Close()
		return true, nil
	})
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(host, port), nil
}

// VNCAddr is the address the desktop's own VNC server listens on
// (Config.VNC), or "" without one.
func (d *Desktop) VNCAddr() string { return d.vncAddr }
