package adbtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// service finds the service for an OPEN's destination, or nil; it
// records the destination (see Requests).
func (d *Device) service(name string) func(*stream) {
	d.record(name)
	switch {
	case name == "sync:":
		return d.syncService
	case strings.HasPrefix(name, "exec:"):
		cmd := strings.TrimPrefix(name, "exec:")
		return func(s *stream) { d.rawService(s, cmd) }
	case name == "shell" || strings.HasPrefix(name, "shell:") || strings.HasPrefix(name, "shell,"):
		args, cmd, _ := strings.Cut(name, ":")
		v2 := false
		for _, a := range strings.Split(args, ",")[1:] {
			if a == "v2" {
				v2 = true
			}
		}
		if v2 && d.hasFeature("shell_v2") {
			return func(s *stream) { d.shellV2Service(s, cmd) }
		}
		return func(s *stream) { d.rawService(s, cmd) }
	}
	return nil
}

func (d *Device) hasFeature(f string) bool {
	for _, g := range d.opts.Features {
		if g == f {
			return true
		}
	}
	return false
}

// exitPrintf matches a last line `printf 'FMT' $?`, which the stand-in runs
// itself (it has no sh): so a client that reads the exit status of a plain
// shell: command from such a marker works against it.
var exitPrintf = regexp.MustCompile(`\n\s*printf '([^'%]*)%d([^'%]*)' \$\?\s*$`)

// runScript runs cmd with the handler; for a final `printf 'FMT' $?` line
// it returns what that printf writes as trailer, which follows the
// command's stdout and stderr, and exit status 0.
func (d *Device) runScript(cmd string, stdin []byte) (stdout, stderr, trailer []byte, exit int) {
	m := exitPrintf.FindStringSubmatchIndex(cmd)
	if m == nil {
		stdout, stderr, exit = d.run(cmd, stdin)
		return stdout, stderr, nil, exit
	}
	pre, post := cmd[m[2]:m[3]], cmd[m[4]:m[5]]
	stdout, stderr, exit = d.run(cmd[:m[0]], stdin)
	unescape := strings.NewReplacer(`\n`, "\n", `\r`, "\r", `\t`, "\t", `\\`, `\`)
	trailer = fmt.Appendf(nil, "%s%d%s", unescape.Replace(pre), exit, unescape.Replace(post))
	return stdout, stderr, trailer, 0
}

// rawService serves exec: and plain shell: one stream of output (stdout,
// stderr, then any trailer), then close.
func (d *Device) rawService(s *stream, cmd string) {
	stdout, stderr, trailer, _ := d.runScript(cmd, nil)
	out := append(bytes.Clone(stdout), stderr...)
	s.Write(append(out, trailer...))
}

// Shell protocol v2 packet ids (AOSP adb/shell_protocol.h).
const (
	shStdin      = 0
	shStdout     = 1
	shStderr     = 2
	shExit       = 3
	shCloseStdin = 4
)

func shellPacket(id byte, data []byte) []byte {
	b := []byte{id, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(b[1:], uint32(len(data)))
	return append(b, data...)
}

// shellV2Service reads stdin packets up to CLOSE_STDIN, runs the command,
// and answers with stdout, stderr and exit packets.
func (d *Device) shellV2Service(s *stream, cmd string) {
	var stdin []byte
	for {
		var h [5]byte
		if _, err := io.ReadFull(s, h[:]); err != nil {
			return // the host went away
		}
		n := binary.LittleEndian.Uint32(h[1:])
		if n > maxPayload {
			return
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(s, data); err != nil {
			return
		}
		if h[0] == shStdin {
			stdin = append(stdin, data...)
		}
		if h[0] == shCloseStdin {
			break
		}
	}
	stdout, stderr, trailer, exit := d.runScript(cmd, stdin)
	stdout = append(bytes.Clone(stdout), trailer...)
	var out []byte
	for _, part := range []struct {
		id   byte
		data []byte
	}{{shStdout, stdout}, {shStderr, stderr}} {
		for len(part.data) > 0 {
			n := min(len(part.data), 64*1024)
			out = append(out, shellPacket(part.id, part.data[:n])...)
			part.data = part.data[n:]
		}
	}
	out = append(out, shellPacket(shExit, []byte{byte(exit)})...)
	s.Write(out)
}

// Unix st_mode type bits.
const (
	sIFREG = 0o100000
	sIFDIR = 0o040000
)

func syncHdr(id string, n uint32) []byte {
	b := []byte(id)
	return binary.LittleEndian.AppendUint32(b, n)
}

func syncFail(msg string) []byte {
	return append(syncHdr("FAIL", uint32(len(msg))), msg...)
}

func statMode(f File, dir bool) uint32 {
	if dir {
		return sIFDIR | 0o755
	}
	return sIFREG | uint32(f.Mode.Perm())
}

// syncService serves the sync protocol (AOSP adb/SYNC.TXT) over the file
// system until QUIT or a failure.
func (d *Device) syncService(s *stream) {
	for {
		var h [8]byte
		if _, err := io.ReadFull(s, h[:]); err != nil {
			return
		}
		id, n := string(h[:4]), binary.LittleEndian.Uint32(h[4:])
		if id == "QUIT" {
			return
		}
		if n > 1024 {
			s.Write(syncFail("path too long"))
			return
		}
		pb := make([]byte, n)
		if _, err := io.ReadFull(s, pb); err != nil {
			return
		}
		p := string(pb)
		d.record("sync " + id + " " + p)
		var out []byte
		switch id {
		case "STAT":
			out = append([]byte("STAT"), d.statV1(p)...)
		case "STA2", "LST2":
			out = append([]byte(id), d.statV2(p)...)
		case "LIST", "LIS2":
			if id == "LIS2" {
				s.Write(syncFail("LIS2 not supported"))
				return
			}
			files, dirs := d.list(p)
			for name := range dirs {
				out = append(out, dent(name, sIFDIR|0o755, 0, time.Time{})...)
			}
			for name, f := range files {
				out = append(out, dent(name, statMode(f, false), uint32(len(f.Data)), f.ModTime)...)
			}
			out = append(out, dent("", 0, 0, time.Time{})[:20]...)
			copy(out[len(out)-20:], "DONE")
		case "RECV":
			f, dir, ok := d.lookup(p)
			if !ok {
				s.Write(syncFail("open failed: No such file or directory"))
				return
			}
			if dir {
				s.Write(syncFail("read failed: Is a directory"))
				return
			}
			for data := f.Data; len(data) > 0; {
				k := min(len(data), 64*1024)
				out = append(out, syncHdr("DATA", uint32(k))...)
				out = append(out, data[:k]...)
				data = data[k:]
			}
			out = append(out, syncHdr("DONE", 0)...)
		case "SEND":
			if !d.recvFile(s, p) {
				return
			}
			out = syncHdr("OKAY", 0)
		default:
			s.Write(syncFail("unknown sync request " + strconv.Quote(id)))
			return
		}
		if _, err := s.Write(out); err != nil {
			return
		}
	}
}

// statV1 is the 12 bytes after "STAT": mode, size, mtime, all zero for a
// missing file.
func (d *Device) statV1(p string) []byte {
	f, dir, ok := d.lookup(p)
	b := make([]byte, 12)
	if ok {
		binary.LittleEndian.PutUint32(b[0:], statMode(f, dir))
		binary.LittleEndian.PutUint32(b[4:], uint32(len(f.Data)))
		binary.LittleEndian.PutUint32(b[8:], uint32(f.ModTime.Unix()))
	}
	return b
}

// statV2 is the 68 bytes after "STA2": error, dev, ino, mode, nlink, uid,
// gid, size, atime, mtime, ctime.
func (d *Device) statV2(p string) []byte {
	f, dir, ok := d.lookup(p)
	b := make([]byte, 68)
	if !ok {
		binary.LittleEndian.PutUint32(b[0:], 2) // ENOENT
		return b
	}
	binary.LittleEndian.PutUint32(b[20:], statMode(f, dir))
	binary.LittleEndian.PutUint32(b[24:], 1) // nlink
	binary.LittleEndian.PutUint64(b[36:], uint64(len(f.Data)))
	t := uint64(f.ModTime.Unix())
	binary.LittleEndian.PutUint64(b[44:], t)
	binary.LittleEndian.PutUint64(b[52:], t)
	binary.LittleEndian.PutUint64(b[60:], t)
	return b
}

func dent(name string, mode, size uint32, mtime time.Time) []byte {
	b := syncHdr("DENT", mode)
	b = binary.LittleEndian.AppendUint32(b, size)
	b = binary.LittleEndian.AppendUint32(b, uint32(mtime.Unix()))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(name)))
	return append(b, name...)
}

// recvFile reads a SEND's DATA chunks and DONE and stores the file; false
// means it failed (and said so).
func (d *Device) recvFile(s *stream, spec string) bool {
	i := strings.LastIndexByte(spec, ',')
	if i < 0 {
		s.Write(syncFail("missing mode in " + strconv.Quote(spec)))
		return false
	}
	name := spec[:i]
	mode, err := strconv.ParseUint(spec[i+1:], 10, 32)
	if err != nil || name == "" {
		s.Write(syncFail("bad SEND request " + strconv.Quote(spec)))
		return false
	}
	var data []byte
	for {
		var h [8]byte
		if _, err := io.ReadFull(s, h[:]); err != nil {
			return false
		}
		id, n := string(h[:4]), binary.LittleEndian.Uint32(h[4:])
		switch id {
		case "DATA":
			if n > 64*1024 {
				s.Write(syncFail("DATA chunk too large"))
				return false
			}
			chunk := make([]byte, n)
			if _, err := io.ReadFull(s, chunk); err != nil {
				return false
			}
			data = append(data, chunk...)
		case "DONE":
			d.PutFile(name, File{Data: data, Mode: os.FileMode(mode & 0o777), ModTime: time.Unix(int64(n), 0)})
			return true
		default:
			s.Write(syncFail("unexpected " + strconv.Quote(id) + " in SEND"))
			return false
		}
	}
}
