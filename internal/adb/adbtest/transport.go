package adbtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Transport message commands (AOSP adb/protocol.txt).
const (
	cmdSYNC = 0x434e5953
	cmdCNXN = 0x4e584e43
	cmdAUTH = 0x48545541
	cmdOPEN = 0x4e45504f
	cmdOKAY = 0x59414b4f
	cmdCLSE = 0x45534c43
	cmdWRTE = 0x45545257
	cmdSTLS = 0x534c5453
)

const (
	aVersion   = 0x01000001 // A_VERSION: checksums may be skipped
	maxPayload = 1024 * 1024
	ourMaxData = 256 * 1024 // what the stand-in accepts and sends at most

	authToken        = 1
	authSignature    = 2
	authRSAPublicKey = 3
)

// message is one transport message: a 24-byte header and its payload.
type message struct {
	cmd, arg0, arg1 uint32
	data            []byte
}

var errBadMessage = errors.New("adbtest: bad transport message")

func checksum(b []byte) uint32 {
	var s uint32
	for _, c := range b {
		s += uint32(c)
	}
	return s
}

func (m message) marshal() []byte {
	b := make([]byte, 24, 24+len(m.data))
	binary.LittleEndian.PutUint32(b[0:], m.cmd)
	binary.LittleEndian.PutUint32(b[4:], m.arg0)
	binary.LittleEndian.PutUint32(b[8:], m.arg1)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(m.data)))
	binary.LittleEndian.PutUint32(b[16:], checksum(m.data))
	binary.LittleEndian.PutUint32(b[20:], m.cmd^0xffffffff)
	return append(b, m.data...)
}

// readMessage reads one message, checking its magic, its length and, when
// checked is set (protocol versions before A_VERSION_SKIP_CHECKSUM), its
// checksum.
func readMessage(r io.Reader, checked bool) (message, error) {
	var h [24]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return message{}, err
	}
	m := message{
		cmd:  binary.LittleEndian.Uint32(h[0:]),
		arg0: binary.LittleEndian.Uint32(h[4:]),
		arg1: binary.LittleEndian.Uint32(h[8:]),
	}
	n := binary.LittleEndian.Uint32(h[12:])
	sum := binary.LittleEndian.Uint32(h[16:])
	if binary.LittleEndian.Uint32(h[20:]) != m.cmd^0xffffffff {
		return m, fmt.Errorf("%w: magic does not match command %08x", errBadMessage, m.cmd)
	}
	switch m.cmd {
	case cmdSYNC, cmdCNXN, cmdAUTH, cmdOPEN, cmdOKAY, cmdCLSE, cmdWRTE, cmdSTLS:
	default:
		return m, fmt.Errorf("%w: unknown command %08x", errBadMessage, m.cmd)
	}
	if n > maxPayload {
		return m, fmt.Errorf("%w: payload of %d bytes", errBadMessage, n)
	}
	m.data = make([]byte, n)
	if _, err := io.ReadFull(r, m.data); err != nil {
		return m, err
	}
	if checked && checksum(m.data) != sum {
		return m, fmt.Errorf("%w: checksum", errBadMessage)
	}
	return m, nil
}
