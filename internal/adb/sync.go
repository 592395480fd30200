package adb

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FileInfo is what the sync protocol tells of a remote file.
type FileInfo struct {
	Name    string // the base name (List) or the path asked for (Stat)
	Mode    os.FileMode
	Size    int64
	ModTime time.Time
}

// IsDir reports whether the file is a directory.
func (f FileInfo) IsDir() bool { return f.Mode.IsDir() }

// Unix file type bits of st_mode.
const (
	sIFMT   = 0o170000
	sIFSOCK = 0o140000
	sIFLNK  = 0o120000
	sIFREG  = 0o100000
	sIFBLK  = 0o060000
	sIFDIR  = 0o040000
	sIFCHR  = 0o020000
	sIFIFO  = 0o010000
)

// fileMode converts a Unix st_mode to an os.FileMode.
func fileMode(m uint32) os.FileMode {
	fm := os.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		fm |= os.ModeSetuid
	}
	if m&0o2000 != 0 {
		fm |= os.ModeSetgid
	}
	if m&0o1000 != 0 {
		fm |= os.ModeSticky
	}
	switch m & sIFMT {
	case sIFDIR:
		fm |= os.ModeDir
	case sIFLNK:
		fm |= os.ModeSymlink
	case sIFSOCK:
		fm |= os.ModeSocket
	case sIFBLK:
		fm |= os.ModeDevice
	case sIFCHR:
		fm |= os.ModeDevice | os.ModeCharDevice
	case sIFIFO:
		fm |= os.ModeNamedPipe
	}
	return fm
}

// syncConn is a connection in sync mode.
type syncConn struct {
	*conn
	hdr [8]byte
}

func (d *Device) openSync(ctx context.Context, op string) (*syncConn, error) {
	cn, _, err := d.open(ctx, op, "sync:")
	if err != nil {
		return nil, err
	}
	return &syncConn{conn: cn}, nil
}

// close ends sync mode politely and closes the connection.
func (s *syncConn) close() {
	s.nc.Write([]byte("QUIT\x00\x00\x00\x00"))
	s.Close()
}

func appendSyncRequest(b []byte, id string, n uint32) []byte {
	b = append(b, id...)
	return binary.LittleEndian.AppendUint32(b, n)
}

// request sends a sync request carrying a path.
func (s *syncConn) request(id, path string) error {
	if len(path) > maxSyncPath {
		return s.fail(ErrFailed, fmt.Sprintf("path of %d bytes is longer than %d", len(path), maxSyncPath), nil)
	}
	b := appendSyncRequest(nil, id, uint32(len(path)))
	return s.write(append(b, path...))
}

// readSyncHeader reads an 8-byte sync header: 4-byte id, uint32.
func readSyncHeader(r io.Reader, h *[8]byte) (string, uint32, error) {
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return "", 0, noEOF(err)
	}
	return string(h[:4]), le32(h[4:]), nil
}

// syncFail is a FAIL answer in sync mode.
type syncFail struct{ msg string }

func (e *syncFail) Error() string { return e.msg }

// readSyncFail reads the message of a FAIL whose length is n.
func readSyncFail(r io.Reader, n uint32) error {
	if n > maxSyncFail {
		return fmt.Errorf("%w: FAIL message of %d bytes", ErrProtocol, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return noEOF(err)
	}
	return &syncFail{string(b)}
}

// syncErr turns a sync-mode error into an *OpError.
func (s *syncConn) syncErr(err error) error {
	if f, ok := err.(*syncFail); ok {
		return s.fail(classifyFail(f.msg), f.msg, nil)
	}
	return s.ioErr(err)
}

// parseStatV1 parses a 16-byte STAT answer: "STAT", mode, size, mtime. A
// file that does not exist has all three zero.
func parseStatV1(b []byte) (FileInfo, bool, error) {
	if len(b) != 16 || string(b[:4]) != "STAT" {
		return FileInfo{}, false, fmt.Errorf("%w: bad STAT answer %q", ErrProtocol, b)
	}
	mode, size, mtime := le32(b[4:]), le32(b[8:]), le32(b[12:])
	if mode == 0 && size == 0 && mtime == 0 {
		return FileInfo{}, false, nil
	}
	return FileInfo{Mode: fileMode(mode), Size: int64(size), ModTime: time.Unix(int64(mtime), 0)}, true, nil
}

// parseStatV2 parses a 72-byte STA2/LST2 answer; errno is its error field.
func parseStatV2(b []byte) (fi FileInfo, errno uint32, err error) {
	if len(b) != 72 || (string(b[:4]) != "STA2" && string(b[:4]) != "LST2") {
		return FileInfo{}, 0, fmt.Errorf("%w: bad STA2 answer %q", ErrProtocol, b)
	}
	errno = le32(b[4:])
	if errno != 0 {
		return FileInfo{}, errno, nil
	}
	// id, error, dev(8), ino(8), mode, nlink, uid, gid, size(8), atime(8), mtime(8), ctime(8)
	mode := le32(b[24:])
	size := le64(b[40:])
	mtime := int64(le64(b[56:]))
	if size > 1<<62 {
		return FileInfo{}, 0, fmt.Errorf("%w: STA2 size %d", ErrProtocol, size)
	}
	return FileInfo{Mode: fileMode(mode), Size: int64(size), ModTime: time.Unix(mtime, 0)}, 0, nil
}

// Stat describes a remote file (sync STA2 where the device has stat_v2,
// else STAT). A missing file gives ErrFileNotFound.
func (d *Device) Stat(ctx context.Context, remote string) (FileInfo, error) {
	v2, err := d.hasFeature(ctx, "stat "+remote, "stat_v2")
	if err != nil {
		return FileInfo{}, err
	}
	s, err := d.openSync(ctx, "stat "+remote)
	if err != nil {
		return FileInfo{}, err
	}
	defer s.close()
	id, size := "STAT", 16
	if v2 {
		id, size = "STA2", 72
	}
	if err := s.request(id, remote); err != nil {
		return FileInfo{}, err
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(s.r, b); err != nil {
		return FileInfo{}, s.ioErr(noEOF(err))
	}
	var fi FileInfo
	if v2 {
		var errno uint32
		fi, errno, err = parseStatV2(b)
		if err == nil && errno != 0 {
			kind := error(ErrFailed)
			if errno == uint32(syscall.ENOENT) {
				kind = ErrFileNotFound
			}
			return FileInfo{}, s.fail(kind, syscall.Errno(errno).Error(), nil)
		}
	} else {
		var ok bool
		fi, ok, err = parseStatV1(b)
		if err == nil && !ok {
			return FileInfo{}, s.fail(ErrFileNotFound, "", nil)
		}
	}
	if err != nil {
		return FileInfo{}, s.fail(ErrProtocol, "", err)
	}
	fi.Name = remote
	return fi, nil
}

// Pull reads a remote file (sync RECV). A missing file gives
// ErrFileNotFound.
func (d *Device) Pull(ctx context.Context, remote string) ([]byte, error) {
	var b bytes.Buffer
	err := d.PullTo(ctx, remote, &b)
	return b.Bytes(), err
}

// PullTo copies a remote file to w (sync RECV).
func (d *Device) PullTo(ctx context.Context, remote string, w io.Writer) error {
	s, err := d.openSync(ctx, "pull "+remote)
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.request("RECV", remote); err != nil {
		return err
	}
	if err := readRecv(s.r, w, maxOutput); err != nil {
		return s.syncErr(err)
	}
	return nil
}

// readRecv reads the answer to RECV: DATA chunks then DONE, or FAIL.
func readRecv(r io.Reader, w io.Writer, limit int64) error {
	var h [8]byte
	var total int64
	buf := make([]byte, maxSyncData)
	for {
		id, n, err := readSyncHeader(r, &h)
		if err != nil {
			return err
		}
		switch id {
		case "DATA":
			if n > maxSyncData {
				return fmt.Errorf("%w: DATA chunk of %d bytes", ErrProtocol, n)
			}
			if total += int64(n); total > limit {
				return fmt.Errorf("%w: file exceeds %d bytes", ErrProtocol, limit)
			}
			if _, err := io.ReadFull(r, buf[:n]); err != nil {
				return noEOF(err)
			}
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
		case "DONE":
			return nil
		case "FAIL":
			return readSyncFail(r, n)
		default:
			return fmt.Errorf("%w: unexpected sync id %q in RECV", ErrProtocol, id)
		}
	}
}

// Push writes r to a remote file with permissions mode and modification
// time mtime (sync SEND, DATA, DONE). A zero mtime means now.
func (d *Device) Push(ctx context.Context, r io.Reader, remote string, mode os.FileMode, mtime time.Time) error {
	if mtime.IsZero() {
		mtime = time.Now()
	}
	s, err := d.openSync(ctx, "push "+remote)
	if err != nil {
		return err
	}
	defer s.close()
	// SYNC.TXT: the path, a comma, the mode in decimal (with its file type,
	// as adb sends st_mode).
	if err := s.request("SEND", remote+","+strconv.FormatUint(uint64(sIFREG|uint32(mode.Perm())), 10)); err != nil {
		return err
	}
	buf := make([]byte, 8+maxSyncData)
	for {
		n, rerr := io.ReadFull(r, buf[8:])
		if n > 0 {
			copy(buf, "DATA")
			binary.LittleEndian.PutUint32(buf[4:], uint32(n))
			if err := s.write(buf[:8+n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return s.fail(ErrFailed, "reading the local data", rerr)
		}
	}
	if err := s.write(appendSyncRequest(nil, "DONE", uint32(mtime.Unix()))); err != nil {
		return err
	}
	var h [8]byte
	id, n, err := readSyncHeader(s.r, &h)
	if err != nil {
		return s.ioErr(err)
	}
	switch id {
	case "OKAY":
		return nil
	case "FAIL":
		return s.syncErr(readSyncFail(s.r, n))
	}
	return s.fail(ErrProtocol, fmt.Sprintf("unexpected sync id %q after SEND", id), nil)
}

// List lists a remote directory (sync LIST), without "." and "..".
func (d *Device) List(ctx context.Context, remote string) ([]FileInfo, error) {
	s, err := d.openSync(ctx, "list "+remote)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := s.request("LIST", remote); err != nil {
		return nil, err
	}
	l, err := readList(s.r, maxDevices*16)
	if err != nil {
		return nil, s.syncErr(err)
	}
	return l, nil
}

// readList reads DENT entries up to DONE, at most max of them. Each entry
// is "DENT", mode, size, mtime, name length, name; DONE comes as a whole
// 20-byte entry; FAIL as an 8-byte header and its message.
func readList(r io.Reader, max int) ([]FileInfo, error) {
	var out []FileInfo
	var h [20]byte
	for {
		if _, err := io.ReadFull(r, h[:8]); err != nil {
			return out, noEOF(err)
		}
		switch string(h[:4]) {
		case "DONE":
			if _, err := io.ReadFull(r, h[8:]); err != nil {
				return out, noEOF(err)
			}
			return out, nil
		case "FAIL":
			return out, readSyncFail(r, le32(h[4:]))
		case "DENT":
		default:
			return out, fmt.Errorf("%w: unexpected sync id %q in LIST", ErrProtocol, h[:4])
		}
		if _, err := io.ReadFull(r, h[8:]); err != nil {
			return out, noEOF(err)
		}
		mode, size, mtime, n := le32(h[4:]), le32(h[8:]), le32(h[12:]), le32(h[16:])
		if n == 0 || n > maxSyncPath {
			return out, fmt.Errorf("%w: DENT name of %d bytes", ErrProtocol, n)
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(r, name); err != nil {
			return out, noEOF(err)
		}
		if len(out) >= max {
			return out, fmt.Errorf("%w: more than %d entries", ErrProtocol, max)
		}
		if s := string(name); s != "." && s != ".." && !strings.Contains(s, "/") {
			out = append(out, FileInfo{Name: s, Mode: fileMode(mode), Size: int64(size), ModTime: time.Unix(int64(mtime), 0)})
		}
	}
}
