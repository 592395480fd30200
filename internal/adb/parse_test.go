package adb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func TestReadHexString(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      error
	}{
		{"0000", "", nil},
		{"0005hello", "hello", nil},
		{"000Ahello12345", "hello12345", nil},
		{"000ahello12345extra", "hello12345", nil},
		{"00", "", io.ErrUnexpectedEOF},
		{"", "", io.EOF},
		{"0005hel", "", io.ErrUnexpectedEOF},
		{"00g5hello", "", ErrProtocol},
		{"+005hello", "", ErrProtocol},
		{" 005hello", "", ErrProtocol},
		{"ffff", "", ErrProtocol}, // over the bound given below
	} {
		got, err := readHexString(strings.NewReader(tc.in), 100)
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("readHexString(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestReadStatus(t *testing.T) {
	if err := readStatus(strings.NewReader("OKAY")); err != nil {
		t.Errorf("OKAY: %v", err)
	}
	err := readStatus(strings.NewReader("FAIL0016device 'foo' not found"))
	var se *statusError
	if !errors.As(err, &se) || se.msg != "device 'foo' not found" {
		t.Errorf("FAIL: %v", err)
	}
	if err := readStatus(strings.NewReader("OKEY")); !errors.Is(err, ErrProtocol) {
		t.Errorf("OKEY: %v", err)
	}
	if err := readStatus(strings.NewReader("FAIL00")); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short FAIL: %v", err)
	}
}

func TestAppendRequest(t *testing.T) {
	b, err := appendRequest(nil, "host:version")
	if err != nil || string(b) != "000chost:version" {
		t.Errorf("appendRequest = %q, %v", b, err)
	}
	if _, err := appendRequest(nil, strings.Repeat("x", 0x10000)); err == nil {
		t.Error("a request of 64 KiB was accepted")
	}
}

func TestClassifyFail(t *testing.T) {
	for msg, want := range map[string]error{
		"device '127.0.0.1:5555' not found":                          ErrNoDevice,
		"no devices/emulators found":                                 ErrNoDevice,
		"device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS":   ErrUnauthorized,
		"device still authorizing":                                   ErrUnauthorized,
		"device offline":                                             ErrOffline,
		"device still connecting":                                    ErrOffline,
		"open failed: No such file or directory":                     ErrFileNotFound,
		"more than one device/emulator":                              ErrFailed,
		"closed":                                                     ErrFailed,
		"listener 'tcp:5000' not found":                              ErrFailed,
		"secure_mkdirs() failed: Permission denied":                  ErrFailed,
		"couldn't create file: Read-only file system":                ErrFailed,
		"unknown host service":                                       ErrFailed,
		"failed to connect to '1.2.3.4:5': Connection refused":       ErrFailed,
		"device '1.2.3.4:5' not found\n":                             ErrNoDevice,
		"remote object '/sdcard/x' does not exist":                   ErrFailed,
		"No such file or directory (while stat'ing /data/local/tmp)": ErrFileNotFound,
	} {
		if got := classifyFail(msg); got != want {
			t.Errorf("classifyFail(%q) = %v, want %v", msg, got, want)
		}
	}
}

func TestParseDevices(t *testing.T) {
	in := "emulator-5554          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64x transport_id:1\n" +
		"127.0.0.1:5555         unauthorized transport_id:2\n" +
		"0123456789ABCDEF       no permissions (user in plugdev group; are your udev rules wrong?); see [http://developer.android.com/tools/device.html] usb:1-1 transport_id:3\n" +
		"R58M\toffline\r\n" +
		"\n" +
		"1234 recovery usb:3-2 product:x model:Pixel_7 device:panther transport_id:12\n"
	got, err := parseDevices(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []DeviceInfo{
		{Serial: "emulator-5554", State: "device", Product: "sdk_gphone64_x86_64", Model: "sdk_gphone64_x86_64", Device: "emu64x", TransportID: 1},
		{Serial: "127.0.0.1:5555", State: "unauthorized", TransportID: 2},
		{Serial: "0123456789ABCDEF", State: "no permissions (user in plugdev group; are your udev rules wrong?); see [http://developer.android.com/tools/device.html]", USB: "1-1", TransportID: 3},
		{Serial: "R58M", State: "offline"},
		{Serial: "1234", State: "recovery", USB: "3-2", Product: "x", Model: "Pixel_7", Device: "panther", TransportID: 12},
	}
	if len(got) != len(want) {
		t.Fatalf("parseDevices = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"serialonly\n", " device\n", "x device transport_id:-1\n", "x device transport_id:abc\n"} {
		if _, err := parseDevices(bad); !errors.Is(err, ErrProtocol) {
			t.Errorf("parseDevices(%q) = %v, want ErrProtocol", bad, err)
		}
	}
	if d, err := parseDevices(""); err != nil || len(d) != 0 {
		t.Errorf("parseDevices(\"\") = %v, %v", d, err)
	}
}

func shellPkts(pk ...any) []byte {
	var b []byte
	for i := 0; i < len(pk); i += 2 {
		b = appendShellPacket(b, byte(pk[i].(int)), []byte(pk[i+1].(string)))
	}
	return b
}

func TestReadShellStream(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want ShellResult
		err  error
	}{
		{"exit only", shellPkts(3, "\x00"), ShellResult{}, nil},
		{"out err exit", shellPkts(1, "a", 2, "b", 1, "c\x00\r\n", 5, "24x80", 3, "\x03"), ShellResult{Stdout: []byte("ac\x00\r\n"), Stderr: []byte("b"), ExitCode: 3}, nil},
		{"exit 255", shellPkts(3, "\xff"), ShellResult{ExitCode: 255}, nil},
		{"no exit", shellPkts(1, "a"), ShellResult{Stdout: []byte("a")}, io.ErrUnexpectedEOF},
		{"empty", nil, ShellResult{}, io.ErrUnexpectedEOF},
		{"short header", []byte{1, 2, 0}, ShellResult{}, io.ErrUnexpectedEOF},
		{"short data", []byte{1, 5, 0, 0, 0, 'a'}, ShellResult{}, io.ErrUnexpectedEOF},
		{"long exit", shellPkts(3, "\x01\x02"), ShellResult{}, ErrProtocol},
		{"empty exit", shellPkts(3, ""), ShellResult{}, ErrProtocol},
		{"huge packet", []byte{1, 0xff, 0xff, 0xff, 0xff}, ShellResult{}, ErrProtocol},
	} {
		got, err := readShellStream(bytes.NewReader(tc.in), 100)
		if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) ||
			!bytes.Equal(got.Stdout, tc.want.Stdout) || !bytes.Equal(got.Stderr, tc.want.Stderr) || got.ExitCode != tc.want.ExitCode {
			t.Errorf("%s: = %+v, %v; want %+v, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
	// Output past the limit.
	in := shellPkts(1, strings.Repeat("x", 60), 1, strings.Repeat("y", 60), 3, "\x00")
	if _, err := readShellStream(bytes.NewReader(in), 100); !errors.Is(err, ErrProtocol) {
		t.Errorf("over limit: %v", err)
	}
}

func TestSplitExitMarker(t *testing.T) {
	const m = "PROCTOR-EXIT-0011:"
	for _, tc := range []struct {
		in   string
		out  string
		code int
		ok   bool
	}{
		{"hello\n\n" + m + "0\n", "hello\n", 0, true},
		{"hello\r\n\r\n" + m + "3\r\n", "hello\r\n", 3, true},
		{"no newline\n" + m + "127\n", "no newline", 127, true},
		{"\n" + m + "1", "", 1, true},
		{"hello " + m + "x\n", "", 0, false},
		{"hello\n", "", 0, false},
		{"fake " + m + "9\n\n" + m + "2\n", "fake " + m + "9\n", 2, true},
	} {
		r, ok := splitExitMarker([]byte(tc.in), m)
		if ok != tc.ok || (ok && (string(r.Stdout) != tc.out || r.ExitCode != tc.code)) {
			t.Errorf("splitExitMarker(%q) = %q %d %v", tc.in, r.Stdout, r.ExitCode, ok)
		}
	}
}

func syncMsg(id string, n int, data string) []byte {
	b := appendSyncRequest(nil, id, uint32(n))
	return append(b, data...)
}

func TestReadRecv(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
		err  error
	}{
		{"empty file", syncMsg("DONE", 0, ""), "", nil},
		{"two chunks", append(append(syncMsg("DATA", 3, "ab\x00"), syncMsg("DATA", 2, "\r\n")...), syncMsg("DONE", 1234, "")...), "ab\x00\r\n", nil},
		{"fail", syncMsg("FAIL", 38, "open failed: No such file or directory"), "", &syncFail{}},
		{"eof", syncMsg("DATA", 3, "ab\x00"), "ab\x00", io.ErrUnexpectedEOF},
		{"short data", syncMsg("DATA", 3, "ab"), "", io.ErrUnexpectedEOF},
		{"big chunk", syncMsg("DATA", 64*1024+1, ""), "", ErrProtocol},
		{"big fail", syncMsg("FAIL", 1<<30, ""), "", ErrProtocol},
		{"bad id", syncMsg("DENT", 0, ""), "", ErrProtocol},
		{"over limit", syncMsg("DATA", 101, strings.Repeat("x", 101)), "", ErrProtocol},
	} {
		var w bytes.Buffer
		err := readRecv(bytes.NewReader(tc.in), &w, 100)
		var sf *syncFail
		switch {
		case tc.err == nil && err != nil, tc.err != nil && err == nil:
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		case tc.err != nil && !errors.Is(err, tc.err) && !(errors.As(tc.err, &sf) && errors.As(err, &sf)):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		case w.String() != tc.want:
			t.Errorf("%s: got %q, want %q", tc.name, w.String(), tc.want)
		}
	}
}

func TestParseStat(t *testing.T) {
	b := binary.LittleEndian.AppendUint32([]byte("STAT"), 0o100640)
	b = binary.LittleEndian.AppendUint32(b, 12)
	b = binary.LittleEndian.AppendUint32(b, 1_700_000_000)
	fi, ok, err := parseStatV1(b)
	if err != nil || !ok || fi.Mode != 0o640 || fi.Size != 12 || fi.ModTime.Unix() != 1_700_000_000 {
		t.Errorf("parseStatV1 = %+v %v %v", fi, ok, err)
	}
	if _, ok, err := parseStatV1([]byte("STAT\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")); ok || err != nil {
		t.Errorf("missing file: %v %v", ok, err)
	}
	if _, _, err := parseStatV1([]byte("STA2\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")); !errors.Is(err, ErrProtocol) {
		t.Errorf("bad id: %v", err)
	}
	v2 := make([]byte, 72)
	copy(v2, "STA2")
	binary.LittleEndian.PutUint32(v2[24:], 0o040755)
	binary.LittleEndian.PutUint64(v2[40:], 4096)
	binary.LittleEndian.PutUint64(v2[56:], 1_700_000_000)
	fi, errno, err := parseStatV2(v2)
	if err != nil || errno != 0 || fi.Mode != os.ModeDir|0o755 || fi.Size != 4096 || !fi.ModTime.Equal(time.Unix(1_700_000_000, 0)) {
		t.Errorf("parseStatV2 = %+v %v %v", fi, errno, err)
	}
	binary.LittleEndian.PutUint32(v2[4:], 2)
	if _, errno, err := parseStatV2(v2); errno != 2 || err != nil {
		t.Errorf("ENOENT: %v %v", errno, err)
	}
	if _, _, err := parseStatV2(v2[:70]); !errors.Is(err, ErrProtocol) {
		t.Errorf("short: %v", err)
	}
	for m, want := range map[uint32]os.FileMode{
		0o120777: os.ModeSymlink | 0o777,
		0o020666: os.ModeDevice | os.ModeCharDevice | 0o666,
		0o104755: os.ModeSetuid | 0o755,
		0o041777: os.ModeDir | os.ModeSticky | 0o777,
	} {
		if got := fileMode(m); got != want {
			t.Errorf("fileMode(%o) = %v, want %v", m, got, want)
		}
	}
}

func dentMsg(name string, mode uint32) []byte {
	b := binary.LittleEndian.AppendUint32([]byte("DENT"), mode)
	b = binary.LittleEndian.AppendUint32(b, 5)
	b = binary.LittleEndian.AppendUint32(b, 7)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(name)))
	return append(b, name...)
}

func TestReadList(t *testing.T) {
	done := append([]byte("DONE"), make([]byte, 16)...)
	in := append(append(append(dentMsg(".", 0o40755), dentMsg("a.txt", 0o100644)...), dentMsg("sub", 0o40700)...), done...)
	l, err := readList(bytes.NewReader(in), 10)
	if err != nil || len(l) != 2 || l[0].Name != "a.txt" || l[0].Size != 5 || l[1].Name != "sub" || !l[1].IsDir() {
		t.Errorf("readList = %+v, %v", l, err)
	}
	if _, err := readList(bytes.NewReader(syncMsg("FAIL", 4, "nope")), 10); err == nil || err.Error() != "nope" {
		t.Errorf("FAIL: %v", err)
	}
	if _, err := readList(bytes.NewReader(dentMsg("", 0)), 10); !errors.Is(err, ErrProtocol) {
		t.Errorf("empty name: %v", err)
	}
	if _, err := readList(bytes.NewReader(append(dentMsg("a", 0), dentMsg("b", 0)...)), 1); !errors.Is(err, ErrProtocol) {
		t.Errorf("too many: %v", err)
	}
	if _, err := readList(bytes.NewReader(dentMsg("a", 0)[:10]), 10); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short: %v", err)
	}
}

// Fuzz tests: each parser must return (not panic, not allocate without
// bound) on any input. The seeds run with the normal tests.

func FuzzReadHexString(f *testing.F) {
	for _, s := range []string{"0000", "0005hello", "ffff", "00g0", "FAIL0004oops", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := readHexString(bytes.NewReader(b), 1000)
		if err == nil && (len(s) > 1000 || len(s)+4 > len(b)) {
			t.Fatalf("got %d bytes from %d", len(s), len(b))
		}
		readStatus(bytes.NewReader(b))
	})
}

func FuzzParseDevices(f *testing.F) {
	f.Add("emulator-5554 device product:p model:m device:d transport_id:1\n")
	f.Add("127.0.0.1:5555\tunauthorized\r\nx no permissions (a b); see [u] usb:1-1 transport_id:3\n")
	f.Add("a b transport_id:99999999999999999999\n::: ::: :::\n")
	f.Fuzz(func(t *testing.T, s string) {
		ds, err := parseDevices(s)
		if err != nil {
			return
		}
		for _, d := range ds {
			if d.Serial == "" || d.State == "" || strings.ContainsAny(d.Serial, " \t\n") || d.TransportID < 0 {
				t.Fatalf("bad device %+v from %q", d, s)
			}
		}
	})
}

func FuzzShellStream(f *testing.F) {
	f.Add(shellPkts(1, "out", 2, "err", 3, "\x03"))
	f.Add(shellPkts(5, "24x80", 3, "\x00"))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0x7f})
	f.Add([]byte{3, 1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := readShellStream(bytes.NewReader(b), 1<<16)
		if err == nil && (r.ExitCode < 0 || r.ExitCode > 255 || len(r.Stdout)+len(r.Stderr) > len(b)) {
			t.Fatalf("bad result %+v", r)
		}
	})
}

func FuzzSyncRecv(f *testing.F) {
	f.Add(append(syncMsg("DATA", 3, "abc"), syncMsg("DONE", 0, "")...))
	f.Add(syncMsg("FAIL", 5, "oops!"))
	f.Add(syncMsg("DATA", 1<<20, ""))
	f.Fuzz(func(t *testing.T, b []byte) {
		var w bytes.Buffer
		if err := readRecv(bytes.NewReader(b), &w, 1<<16); err == nil && w.Len() > len(b) {
			t.Fatalf("wrote %d from %d", w.Len(), len(b))
		}
	})
}

func FuzzSyncStat(f *testing.F) {
	f.Add(syncMsg("STAT", 0o100644, "\x05\x00\x00\x00\x07\x00\x00\x00"))
	v2 := make([]byte, 72)
	copy(v2, "STA2")
	f.Add(v2)
	f.Fuzz(func(t *testing.T, b []byte) {
		parseStatV1(b)
		parseStatV2(b)
	})
}

func FuzzSyncList(f *testing.F) {
	f.Add(append(dentMsg("a", 0o100644), append([]byte("DONE"), make([]byte, 16)...)...))
	f.Add(syncMsg("FAIL", 4, "nope"))
	f.Add(dentMsg("", 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := readList(bytes.NewReader(b), 100)
		if err == nil && len(l) > 100 {
			t.Fatalf("%d entries", len(l))
		}
	})
}

func FuzzExitMarker(f *testing.F) {
	f.Add([]byte("x\nPROCTOR-EXIT-00:3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := splitExitMarker(b, "PROCTOR-EXIT-00:")
		if ok && (r.ExitCode < 0 || len(r.Stdout) > len(b)) {
			t.Fatalf("bad %+v", r)
		}
	})
}
