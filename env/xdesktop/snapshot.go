package xdesktop

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/statediff"
)

// SnapshotFiles lists the home folder, and the watched folders within
// the allowed ones, on the local file system (package snapshot), keyed
// "~/..." in the home folder.
func (d *Desktop) SnapshotFiles(_ context.Context, s *statediff.Snapshot, watch []string, b *statediff.Budget) error {
	if err := d.alive(); err != nil {
		return err
	}
	home, err := d.openAllowed("home")
	if err != nil {
		return err
	}
	err = statediff.Walk(s, home, "~", b)
	home.Close()
	if err != nil {
		return err
	}
	for _, w := range watch {
		if w == "~" || strings.HasPrefix(w, "~/") {
			continue // in the home folder, listed
		}
		r, rel, err := d.within(w)
		if err != nil {
			s.Note("%s: %v", w, err)
			continue
		}
		sub, err := r.OpenRoot(rel)
		r.Close()
		if err != nil {
			s.Note("%s: %v", w, err)
			continue
		}
		if err := statediff.Walk(s, sub, filepath.Clean(w), b); err != nil {
			s.Note("%s: %v", w, err)
		}
		sub.Close()
	}
	return nil
}

// SnapshotProcesses lists the running processes the desktop started
// (Processes), but for its own infrastructure (the X server, the window
// manager, the session bus, AT-SPI, and what the bus started for them),
// keyed by command line.
func (d *Desktop) SnapshotProcesses(_ context.Context, s *statediff.Snapshot, b *statediff.Budget) error {
	if err := d.alive(); err != nil {
		return err
	}
	own := map[int]bool{}
	d.s.mu.Lock()
	for _, p := range d.s.infra {
		if p.cmd.Process != nil {
			own[p.cmd.Process.Pid] = true
		}
	}
	d.s.mu.Unlock()
	procs, marked := readProcs(d.s.id)
	infra := treeOf(procs, own)
	n := 0
	for _, pid := range marked {
		if infra[pid] || pid == os.Getpid() {
			continue
		}
		argv, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil || len(argv) == 0 {
			continue // ended meanwhile, or a kernel's
		}
		if n >= b.Limits.MaxItems {
			s.Note("more than %d processes: the rest are not listed", b.Limits.MaxItems)
			break
		}
		n++
		cmd := string(bytes.ReplaceAll(bytes.TrimRight(argv, "\x00"), []byte{0}, []byte{' '}))
		s.Add(statediff.Item{Kind: statediff.Process, Key: statediff.Cut(cmd, b.Limits.MaxValue)})
	}
	return nil
}
