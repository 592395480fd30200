package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// podInitArg makes this program the first process of a pod: started in new
// network and mount namespaces, it brings the loopback up, mounts the
// pod's volumes at their paths, gives it a /tmp of its own and becomes
// the container's command.
const podInitArg = "pod-init"

// xkbDir is where X servers write the keymaps they compile.
const xkbDir = "/var/lib/xkb"

// podInit is "standin-kubelet pod-init [--cgroup DIR] [--mount SRC:DST[:ro]]... [--workdir DIR] -- COMMAND ARGS...".
// With --cgroup it first moves itself into the cgroup folder DIR (the
// pod's memory limit), before anything of the pod runs.
func podInit(args []string) {
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "pod-init: "+format+"\n", a...)
		os.Exit(127)
	}
	var mounts []string
	workdir := ""
	for len(args) > 0 && args[0] != "--" {
		if len(args) < 2 {
			fail("%s wants a value", args[0])
		}
		switch args[0] {
		case "--mount":
			mounts = append(mounts, args[1])
		case "--workdir":
			workdir = args[1]
		case "--cgroup":
			if err := joinCgroup(args[1], 0); err != nil {
				fail("join the pod's cgroup: %v", err)
			}
		default:
			fail("unknown option %s", args[0])
		}
		args = args[2:]
	}
	if len(args) < 2 {
		fail("no command after --")
	}
	cmd := args[1:]
	// Mounts made here stay in the pod's mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail("make / private: %v", err)
	}
	for _, m := range mounts {
		parts := strings.Split(m, ":")
		if len(parts) < 2 {
			fail("--mount %s: want SRC:DST[:ro]", m)
		}
		src, dst := parts[0], parts[1]
		if err := os.MkdirAll(dst, 0o755); err != nil {
			fail("mount point %s: %v", dst, err)
		}
		if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			fail("mount %s on %s: %v", src, dst, err)
		}
		if len(parts) > 2 && parts[2] == "ro" {
			if err := unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
				fail("make %s read-only: %v", dst, err)
			}
		}
	}
	// A /tmp of its own, as a container has: X servers' lock files and
	// sockets are there, and each pod runs one on display :0.
	// After the volumes, whose sources may be under /tmp.
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		fail("mount /tmp: %v", err)
	}
	// So is the X server's folder of compiled keymaps, which a container
	// has of its own too: each server on display :0 writes and then
	// removes /var/lib/xkb/server-0.xkm, and servers of pods starting
	// together read each other's half-written file and end ("Failed to
	// activate virtual core keyboard").
	if st, err := os.Stat(xkbDir); err == nil && st.IsDir() {
		if err := unix.Mount("tmpfs", xkbDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
			fail("mount %s: %v", xkbDir, err)
		}
	}
	if err := loopbackUp(); err != nil {
		fail("loopback: %v", err)
	}
	if workdir != "" {
		if err := os.Chdir(workdir); err != nil {
			fail("working folder: %v", err)
		}
	}
	bin, err := exec.LookPath(cmd[0])
	if err != nil {
		fail("%v", err)
	}
	err = syscall.Exec(bin, cmd, os.Environ())
	fail("exec %s: %v", bin, err)
}

// loopbackUp brings up the interface lo of this process's network
// namespace, which a new namespace has down.
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

// dialIn connects to addr from inside the network namespace of the
// process pid: a socket made by a thread in that namespace belongs to it.
func dialIn(ctx context.Context, pid int, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer own.Close()
		ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("the pod's network namespace: %w", err)}
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("enter the pod's network namespace: %w", err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			// Back in our own namespace: the thread may serve others.
			runtime.UnlockOSThread()
		} // else the thread ends with this goroutine, still locked.
		ch <- result{c, err}
	}()
	r := <-ch
	if r.err != nil && r.c != nil {
		r.c.Close()
	}
	if r.c == nil && r.err == nil {
		return nil, errors.New("no connection")
	}
	return r.c, r.err
}
