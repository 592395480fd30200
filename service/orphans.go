package service

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Every process of a command service carries, beside its instance's
// marker, its owner's: the pid and the start time (in clock ticks since
// boot, /proc/PID/stat field 22) of the Proctor process that started it.
// A Proctor killed outright (SIGKILL, a crash, a test binary stopped by
// SIGTERM) cannot stop its servers, and Passenger's daemons outlive their
// parent: the next Proctor to run command services finds them by their
// owner's marker, sees the owner gone, kills them and removes their
// copies. The start time tells a live owner from a new process that
// reuses its pid.
const ownerVar = "PROCTOR_SERVICE_OWNER"

var (
	selfOwner     = ownerOf(os.Getpid())
	reapOrphansMu sync.Once
)

// ownerMarker is the environment variable naming this process as owner.
func ownerMarker() string { return ownerVar + "=" + selfOwner }

// ownerOf is pid's owner mark, "PID.STARTTIME", or "" when pid is gone.
func ownerOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after its closing parenthesis (field 3 onwards).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return strconv.Itoa(pid) + "." + f[19]
}

// ownerAlive reports whether the owner mark names a running process.
func ownerAlive(mark string) bool {
	pid, _, ok := strings.Cut(mark, ".")
	if !ok {
		return false
	}
	n, err := strconv.Atoi(pid)
	return err == nil && n > 0 && ownerOf(n) == mark
}

// reapOrphans kills the service processes whose owner is gone and removes
// their instances' copies (folders named proctor-service-*, the only ones
// Proctor makes); it returns how many processes it killed. It runs once
// per process, before the first instances start.
func reapOrphans() int {
	n := 0
	reapOrphansMu.Do(func() { n = reap() })
	return n
}

func reap() int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	killed := 0
	dirs := map[string]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		var owner, dir string
		for _, kv := range bytes.Split(env, []byte{0}) {
			k, v, _ := strings.Cut(string(kv), "=")
			switch k {
			case ownerVar:
				owner = v
			case "PROCTOR_SERVICE_INSTANCE":
				dir = v
			}
		}
		if owner == "" || owner == selfOwner || ownerAlive(owner) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
		}
		if strings.HasPrefix(filepath.Base(dir), "proctor-service-") {
			dirs[dir] = true
		}
	}
	for d := range dirs {
		os.RemoveAll(d)
	}
	return killed
}
