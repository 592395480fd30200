package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// memCgroup is the memory cgroup of one pod, made under the stand-in
// kubelet's own, that holds the pod's memory limit as a container
// runtime's does: the kernel's OOM killer ends a process of the pod that
// goes over it, and the kubelet then ends the whole pod (as kubelets do
// with memory.oom.group) and reports it OOMKilled.
type memCgroup struct {
	dir string
	v2  bool
}

// cgroupRoot is where the cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// ownMemCgroup returns the folder of this process's memory cgroup, and
// whether it is of cgroup v2 (the unified hierarchy).
func ownMemCgroup() (string, bool, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	unified := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				return filepath.Join(cgroupRoot, "memory", parts[2]), false, nil
			}
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
		}
	}
	if unified != "" {
		if b, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil && strings.Contains(" "+string(b)+" ", " memory") {
			return filepath.Join(cgroupRoot, unified), true, nil
		}
	}
	return "", false, errors.New("no memory cgroup controller")
}

// newMemCgroup makes the memory cgroup name under this process's with
// limit bytes, swap included.
func newMemCgroup(name string, limit int64) (*memCgroup, error) {
	parent, v2, err := ownMemCgroup()
	if err != nil {
		return nil, err
	}
	c := &memCgroup{dir: filepath.Join(parent, name), v2: v2}
	if v2 {
		// A child's memory controller is enabled by its parent.
		if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+memory"), 0o644); err != nil {
			return nil, fmt.Errorf("enable the memory controller under %s: %w", parent, err)
		}
	}
	if err := os.Mkdir(c.dir, 0o755); err != nil && !os.IsExist(err) {
		return nil, err
	}
	lim := []byte(strconv.FormatInt(limit, 10))
	if v2 {
		err = os.WriteFile(filepath.Join(c.dir, "memory.max"), lim, 0o644)
		if err == nil {
			os.WriteFile(filepath.Join(c.dir, "memory.swap.max"), []byte("0"), 0o644)
		}
	} else {
		err = os.WriteFile(filepath.Join(c.dir, "memory.limit_in_bytes"), lim, 0o644)
		if err == nil {
			// Without swap accounting this file is absent: the limit
			// is then of memory alone.
			os.WriteFile(filepath.Join(c.dir, "memory.memsw.limit_in_bytes"), lim, 0o644)
		}
	}
	if err != nil {
		c.remove()
		return nil, fmt.Errorf("set the memory limit of %s: %w", c.dir, err)
	}
	return c, nil
}

// join moves process pid (0: the caller) into the cgroup folder dir.
func joinCgroup(dir string, pid int) error {
	if pid == 0 {
		pid = os.Getpid()
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// oomKills returns how many processes the OOM killer ended in the cgroup.
func (c *memCgroup) oomKills() int {
	file := "memory.oom_control"
	if c.v2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(c.dir, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// killAll sends SIGKILL to every process in the cgroup.
func (c *memCgroup) killAll() {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// remove removes the cgroup, once its processes have ended.
func (c *memCgroup) remove() {
	c.killAll()
	os.Remove(c.dir)
}

// removeWait removes the cgroup once its processes have ended, and the
// cgroups under it (a container runtime's), waiting up to a second for
// the kernel to let them go.
func (c *memCgroup) removeWait() {
	for i := 0; i < 50; i++ {
		subs, _ := filepath.Glob(filepath.Join(c.dir, "*", "cgroup.procs"))
		for _, s := range subs {
			os.Remove(filepath.Dir(s))
		}
		if err := os.Remove(c.dir); err == nil || os.IsNotExist(err) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// path is the cgroup's path in its hierarchy, as a container runtime's
// --cgroup-parent names it.
func (c *memCgroup) path() string {
	root := cgroupRoot
	if !c.v2 {
		root = filepath.Join(cgroupRoot, "memory")
	}
	return strings.TrimPrefix(c.dir, root)
}

// watchOOM calls f when the OOM killer acts on the cgroup's limit, for
// processes in cgroups under it too (a container's), until stop is
// closed. cgroup v2 counts its sub-cgroups' kills in its own
// memory.events; v1 counts a kill in the victim's cgroup, and tells of an
// OOM in the cgroup or under it through an eventfd on memory.oom_control.
func (c *memCgroup) watchOOM(stop <-chan struct{}, f func()) error {
	if c.v2 {
		go func() {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				if c.oomKills() > 0 {
					f()
					return
				}
			}
		}()
		return nil
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return err
	}
	ctl, err := os.Open(filepath.Join(c.dir, "memory.oom_control"))
	if err != nil {
		unix.Close(efd)
		return err
	}
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.event_control"), []byte(fmt.Sprintf("%d %d", efd, ctl.Fd())), 0o644); err != nil {
		ctl.Close()
		unix.Close(efd)
		return fmt.Errorf("OOM notifications of %s: %w", c.dir, err)
	}
	events := make(chan struct{})
	go func() {
		// The read returns at an OOM, or when the cgroup is removed.
		defer unix.Close(efd)
		buf := make([]byte, 8)
		if _, err := unix.Read(efd, buf); err == nil {
			close(events)
		}
	}()
	go func() {
		defer ctl.Close()
		select {
		case <-stop:
			// Closing the eventfd does not end a read blocked on it: the
			// cgroup's removal, after this, does.
		case <-events:
			select {
			case <-stop:
			default:
				f()
			}
		}
	}()
	return nil
}
