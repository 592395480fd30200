//go:build linux

package guest

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pageOutExecutable hands back the pages of this program's file that it
// maps and no other process does: most of what the initialisation of
// its packages touched (agents, judges, the browser's protocol, the
// database), which a daemon serving a desktop never touches again. The
// pages its requests need come back as they are used. It returns how
// many bytes of mappings it advised.
func pageOutExecutable() int {
	exe, err := os.Executable()
	if err != nil {
		return 0
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 00400000-02f3c000 r-xp 00000000 fd:01 1234 /path/to/proctor
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start || strings.Contains(fields[1], "w") {
			continue // writable: the program's data, not file pages to give back
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_PAGEOUT); errno == 0 {
			n += int(end - start)
		}
	}
	return n
}
