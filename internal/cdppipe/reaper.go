package cdppipe

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// A reaper ends a browser that outlives the process that started it.
//
// The parent-death signal (Pdeathsig) kills the browser's own process
// when this one dies, but not the helpers of its group (renderers, the
// zygote), which the kernel reparents, nor the profile folder. The reaper
// is a shell, in a process group of its own (so that a Ctrl-C meant for
// this process does not reach it), reading a pipe whose only writer is
// this process: when this process dies in any way, SIGKILL included, the
// pipe ends, and the shell kills the browser's process group and removes
// the folder. When the browser is ended as it should be, the reaper is
// killed instead, before the group's number can be taken by another.
type reaper struct {
	cmd *exec.Cmd
	w   *os.File // the pipe's write end, held open while this process lives
}

// reaperScript is the shell's program: $1 is the process group, $2 the
// folder ("" for none). A killed process still writes until the kernel
// has ended it, so the folder is removed once the group is gone (waited
// for up to 5 s), and once more a second later should a late write have
// made it again.
const reaperScript = `read _ ; kill -KILL -- -"$1" 2>/dev/null ; i=0 ; ` +
	`while kill -0 -- -"$1" 2>/dev/null && [ $i -lt 50 ] ; do sleep 0.1 ; i=$((i+1)) ; done ; ` +
	`if [ -n "$2" ] ; then rm -rf -- "$2" 2>/dev/null ; sleep 1 ; rm -rf -- "$2" ; fi ; exit 0`

// startReaper starts the reaper of the process group pgid and folder.
func startReaper(pgid int, folder string) (*reaper, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "reaper", strconv.Itoa(pgid), folder)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("start the browser's reaper: %w", err)
	}
	return &reaper{cmd: cmd, w: w}, nil
}

// stop ends the reaper without letting it act: the browser has exited.
func (r *reaper) stop() {
	r.cmd.Process.Kill()
	r.cmd.Wait()
	r.w.Close()
}
