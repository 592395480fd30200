package adbtest

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestMessageRoundTrip(t *testing.T) {
	m := message{cmd: cmdWRTE, arg0: 1, arg1: 2, data: []byte("hello\x00")}
	b := m.marshal()
	if len(b) != 24+6 {
		t.Fatalf("marshal gave %d bytes", len(b))
	}
	got, err := readMessage(bytes.NewReader(b), true)
	if err != nil || got.cmd != m.cmd || got.arg0 != 1 || got.arg1 != 2 || string(got.data) != "hello\x00" {
		t.Fatalf("readMessage = %+v, %v", got, err)
	}
	bad := bytes.Clone(b)
	bad[20] ^= 1 // magic
	if _, err := readMessage(bytes.NewReader(bad), true); !errors.Is(err, errBadMessage) {
		t.Errorf("bad magic: %v", err)
	}
	bad = bytes.Clone(b)
	bad[16] ^= 1 // checksum
	if _, err := readMessage(bytes.NewReader(bad), true); !errors.Is(err, errBadMessage) {
		t.Errorf("bad checksum: %v", err)
	}
	if _, err := readMessage(bytes.NewReader(bad), false); err != nil {
		t.Errorf("unchecked checksum: %v", err)
	}
	huge := message{cmd: cmdWRTE}.marshal()
	huge[12], huge[13], huge[14], huge[15] = 0xff, 0xff, 0xff, 0xff
	if _, err := readMessage(bytes.NewReader(huge), false); !errors.Is(err, errBadMessage) {
		t.Errorf("huge payload: %v", err)
	}
	if _, err := readMessage(bytes.NewReader(b[:30-1]), false); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short: %v", err)
	}
}

func FuzzReadMessage(f *testing.F) {
	f.Add(message{cmd: cmdCNXN, arg0: 0x01000001, arg1: 1 << 20, data: []byte("host::features=shell_v2")}.marshal())
	f.Add(message{cmd: cmdOPEN, arg0: 1, data: []byte("shell,v2,raw:ls\x00")}.marshal())
	f.Add([]byte("garbage that is not a message at all"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := readMessage(bytes.NewReader(b), true)
		if err == nil && len(m.data)+24 > len(b) {
			t.Fatalf("%d bytes of data from %d", len(m.data), len(b))
		}
	})
}
