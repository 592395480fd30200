package adb

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Shell protocol v2 packet ids (AOSP adb/shell_protocol.h). A packet is
// one id byte, a little-endian uint32 length, then the data.
const (
	shellStdin      = 0
	shellStdout     = 1
	shellStderr     = 2
	shellExit       = 3
	shellCloseStdin = 4
	shellWinSize    = 5
)

func appendShellPacket(b []byte, id byte, data []byte) []byte {
	b = append(b, id)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// readShellPacket reads one shell v2 packet, refusing data longer than max.
func readShellPacket(r io.Reader, max int) (id byte, data []byte, err error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(h[1:])
	if uint64(n) > uint64(max) {
		return 0, nil, fmt.Errorf("%w: shell packet of %d bytes exceeds %d", ErrProtocol, n, max)
	}
	data = make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return 0, nil, noEOF(err)
	}
	return h[0], data, nil
}

// readShellStream reads shell v2 packets up to and including the exit
// packet. A stream that ends before it gives io.ErrUnexpectedEOF (the
// command's end was not seen); output past limit gives ErrProtocol.
func readShellStream(r io.Reader, limit int) (ShellResult, error) {
	var res ShellResult
	for {
		id, data, err := readShellPacket(r, maxShellPkt)
		if err != nil {
			return res, noEOF(err)
		}
		switch id {
		case shellStdout:
			if len(res.Stdout)+len(data) > limit {
				return res, fmt.Errorf("%w: stdout exceeds %d bytes", ErrProtocol, limit)
			}
			res.Stdout = append(res.Stdout, data...)
		case shellStderr:
			if len(res.Stderr)+len(data) > limit {
				return res, fmt.Errorf("%w: stderr exceeds %d bytes", ErrProtocol, limit)
			}
			res.Stderr = append(res.Stderr, data...)
		case shellExit:
			if len(data) != 1 {
				return res, fmt.Errorf("%w: exit packet of %d bytes", ErrProtocol, len(data))
			}
			res.ExitCode = int(data[0])
			return res, nil
		default:
			// Other ids (window size, stdin echoes) carry nothing for us.
		}
	}
}
