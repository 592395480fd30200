package adb

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
)

// Bounds on what is read from the server or device.
const (
	maxRequest   = 0xffff    // a request's length must fit 4 hex digits
	maxReply     = 0xffff    // a hex4-prefixed reply cannot be longer
	maxSyncPath  = 1024      // SYNC.TXT: path_length <= 1024
	maxSyncData  = 64 * 1024 // SYNC.TXT: chunks are at most 64k
	maxSyncFail  = 64 * 1024 // a sync FAIL message
	maxShellPkt  = 1 << 20   // shell v2 packets; adbd sends at most MAX_PAYLOAD (1 MiB)
	maxOutput    = 1 << 30   // what one command's output may total
	maxStatusMsg = maxReply
)

// appendRequest appends the smart-socket form of req: its length as 4 hex
// digits, then req.
func appendRequest(b []byte, req string) ([]byte, error) {
	if len(req) > maxRequest {
		return b, fmt.Errorf("request of %d bytes is too long", len(req))
	}
	b = fmt.Appendf(b, "%04x", len(req))
	return append(b, req...), nil
}

// parseHex4 parses exactly four hex digits.
func parseHex4(b []byte) (int, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("%w: length prefix %q is not 4 bytes", ErrProtocol, b)
	}
	n := 0
	for _, c := range b {
		var d int
		switch {
		case '0' <= c && c <= '9':
			d = int(c - '0')
		case 'a' <= c && c <= 'f':
			d = int(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = int(c-'A') + 10
		default:
			return 0, fmt.Errorf("%w: length prefix %q is not hex", ErrProtocol, b)
		}
		n = n<<4 | d
	}
	return n, nil
}

// readHexString reads a string prefixed by its length as 4 hex digits,
// refusing one longer than max.
func readHexString(r io.Reader, max int) (string, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return "", err
	}
	n, err := parseHex4(h[:])
	if err != nil {
		return "", err
	}
	if n > max {
		return "", fmt.Errorf("%w: reply of %d bytes exceeds %d", ErrProtocol, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", noEOF(err)
	}
	return string(b), nil
}

// noEOF turns io.EOF into io.ErrUnexpectedEOF: for reads in the middle of
// a message.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// statusError is a FAIL reply: the server's or device's text.
type statusError struct{ msg string }

func (e *statusError) Error() string { return e.msg }

// readStatus reads "OKAY", or "FAIL" and a hex4-prefixed message (a
// *statusError).
func readStatus(r io.Reader) error {
	var s [4]byte
	if _, err := io.ReadFull(r, s[:]); err != nil {
		return err
	}
	switch string(s[:]) {
	case "OKAY":
		return nil
	case "FAIL":
		msg, err := readHexString(r, maxStatusMsg)
		if err != nil {
			return noEOF(err)
		}
		return &statusError{msg}
	}
	return fmt.Errorf("%w: status %q is neither OKAY nor FAIL", ErrProtocol, s[:])
}

// conn is one connection to the adb server, for one operation. Cancelling
// the context it was opened with closes it.
type conn struct {
	ctx    context.Context
	nc     net.Conn
	r      *bufio.Reader
	stop   func() bool
	op     string
	serial string
}

func (c *conn) Close() error {
	c.stop()
	return c.nc.Close()
}

// send writes one smart-socket request.
func (c *conn) send(req string) error {
	b, err := appendRequest(nil, req)
	if err != nil {
		return c.fail(ErrFailed, "", err)
	}
	if _, err := c.nc.Write(b); err != nil {
		return c.ioErr(err)
	}
	return nil
}

// write writes raw bytes (sync and shell protocol).
func (c *conn) write(b []byte) error {
	if _, err := c.nc.Write(b); err != nil {
		return c.ioErr(err)
	}
	return nil
}

// request sends req and reads its status.
func (c *conn) request(req string) error {
	if err := c.send(req); err != nil {
		return err
	}
	return c.status()
}

// status reads an OKAY/FAIL status and turns a FAIL into an *OpError.
func (c *conn) status() error {
	err := readStatus(c.r)
	if err == nil {
		return nil
	}
	var se *statusError
	if errors.As(err, &se) {
		return c.fail(classifyFail(se.msg), se.msg, nil)
	}
	return c.ioErr(err)
}

// readString reads a hex4-prefixed string.
func (c *conn) readString() (string, error) {
	s, err := readHexString(c.r, maxReply)
	if err != nil {
		return "", c.ioErr(noEOF(err))
	}
	return s, nil
}

func (c *conn) fail(kind error, msg string, err error) error {
	return &OpError{Op: c.op, Serial: c.serial, Msg: msg, Kind: kind, Err: err}
}

// ioErr classifies an error from reading or writing the connection: the
// context's error if it was cancelled, ErrProtocol for a malformed reply,
// ErrConnClosed otherwise.
func (c *conn) ioErr(err error) error {
	var oe *OpError
	if errors.As(err, &oe) {
		return err
	}
	if cerr := c.ctx.Err(); cerr != nil {
		return c.fail(cerr, "", err)
	}
	if errors.Is(err, ErrProtocol) {
		return c.fail(ErrProtocol, "", err)
	}
	return c.fail(ErrConnClosed, "", err)
}

// le32 and le64 are little-endian helpers for the sync protocol.
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
