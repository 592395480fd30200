package adb

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Device is a handle on one device of a Client's server, by serial (for a
// device reached over TCP, "HOST:PORT"). It is safe for concurrent use.
type Device struct {
	c      *Client
	serial string

	mu       sync.Mutex
	features []string // cached once read
}

// Serial is the device's serial.
func (d *Device) Serial() string { return d.serial }

// State is the device's state as the server sees it
// (host-serial:SERIAL:get-state): "device", "offline", "unauthorized",
// "authorizing", "connecting", "recovery", .... (The server answers
// get-state for an unusable device with a failure; State turns it back
// into the state.) A device the server does not know gives ErrNoDevice.
func (d *Device) State(ctx context.Context) (string, error) {
	s, err := d.c.hostQuery(ctx, "host-serial:"+d.serial+":get-state", d.serial)
	var oe *OpError
	if err != nil && errors.As(err, &oe) {
		m := strings.ToLower(oe.Msg)
		switch {
		case strings.Contains(m, "still authorizing"):
			return "authorizing", nil
		case strings.Contains(m, "still connecting"):
			return "connecting", nil
		case oe.Kind == ErrUnauthorized:
			return "unauthorized", nil
		case oe.Kind == ErrOffline:
			return "offline", nil
		}
	}
	return s, err
}

// WaitFor blocks until the device is in state ("device", "recovery",
// "rescue", "sideload", "bootloader", "any", or "disconnect" for gone)
// (host-serial:SERIAL:wait-for-any-STATE), or ctx ends.
func (d *Device) WaitFor(ctx context.Context, state string) error {
	req := "host-serial:" + d.serial + ":wait-for-any-" + state
	cn, err := d.c.dial(ctx, req, d.serial)
	if err != nil {
		return err
	}
	defer cn.Close()
	if err := cn.request(req); err != nil {
		return err
	}
	return cn.status()
}

// Features lists the device's ADB features (host-serial:SERIAL:features),
// e.g. "shell_v2", "cmd", "stat_v2". The first successful answer is kept.
func (d *Device) Features(ctx context.Context) ([]string, error) {
	d.mu.Lock()
	f := d.features
	d.mu.Unlock()
	if f != nil {
		return f, nil
	}
	s, err := d.c.hostQuery(ctx, "host-serial:"+d.serial+":features", d.serial)
	if err != nil {
		return nil, err
	}
	f = []string{}
	for name := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		if name != "" {
			f = append(f, name)
		}
	}
	d.mu.Lock()
	d.features = f
	d.mu.Unlock()
	return f, nil
}

// hasFeature reports whether the device has a feature; an error names op.
func (d *Device) hasFeature(ctx context.Context, op, name string) (bool, error) {
	f, err := d.Features(ctx)
	if err != nil {
		var oe *OpError
		if errors.As(err, &oe) {
			e := *oe
			e.Op = op
			return false, &e
		}
		return false, err
	}
	return slices.Contains(f, name), nil
}

// open connects to the device's service through the server. It returns
// the connection, positioned after the service's OKAY, and the server's
// transport id for the device (0 if the server does not give it).
func (d *Device) open(ctx context.Context, op, service string) (*conn, uint64, error) {
	cn, err := d.c.dial(ctx, op, d.serial)
	if err != nil {
		return nil, 0, err
	}
	var tid uint64
	err = cn.request("host:tport:serial:" + d.serial)
	if err == nil {
		var b [8]byte
		if _, err := io.ReadFull(cn.r, b[:]); err != nil {
			cn.Close()
			return nil, 0, cn.ioErr(noEOF(err))
		}
		tid = binary.LittleEndian.Uint64(b[:])
	} else if errors.Is(err, ErrFailed) {
		// A server older than transport ids: the plain form.
		cn.Close()
		if cn, err = d.c.dial(ctx, op, d.serial); err != nil {
			return nil, 0, err
		}
		err = cn.request("host:transport:" + d.serial)
	}
	if err == nil {
		err = cn.request(service)
	}
	if err != nil {
		cn.Close()
		return nil, 0, err
	}
	return cn, tid, nil
}

// transportGone reports whether the transport tid no longer serves the
// device: how a dropped link shows after a stream ended without a marker
// of its own end.
func (d *Device) transportGone(ctx context.Context, tid uint64) bool {
	if tid == 0 || ctx.Err() != nil {
		return false
	}
	req := "host-transport-id:" + strconv.FormatUint(tid, 10) + ":get-state"
	s, err := d.c.hostQuery(ctx, req, d.serial)
	if err != nil {
		return errorsIsAny(err, ErrNoDevice, ErrOffline)
	}
	return s != "device"
}

// ShellResult is what a shell command gave.
type ShellResult struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// Shell runs cmd with sh on the device, with empty stdin, and returns its
// output and exit status. It uses shell protocol v2 (separate stdout and
// stderr, exit status); on a device without the shell_v2 feature (Android
// 6 and older) it falls back to the plain "shell:" service, where stderr
// is merged into Stdout and the exit status is read from a marker that an
// appended `printf` writes. A non-zero exit status is not an error.
func (d *Device) Shell(ctx context.Context, cmd string) (ShellResult, error) {
	return d.ShellInput(ctx, cmd, nil)
}

// ShellInput is Shell with stdin. The fallback without shell_v2 refuses
// a non-empty stdin.
func (d *Device) ShellInput(ctx context.Context, cmd string, stdin []byte) (ShellResult, error) {
	v2, err := d.hasFeature(ctx, "shell", "shell_v2")
	if err != nil {
		return ShellResult{}, err
	}
	if !v2 {
		if len(stdin) > 0 {
			return ShellResult{}, &OpError{Op: "shell", Serial: d.serial, Kind: ErrFailed, Msg: "stdin needs shell_v2, which the device lacks"}
		}
		return d.shellV1(ctx, cmd)
	}
	cn, _, err := d.open(ctx, "shell", "shell,v2,raw:"+cmd)
	if err != nil {
		return ShellResult{}, err
	}
	defer cn.Close()
	werr := make(chan error, 1)
	go func() {
		var b []byte
		for len(stdin) > 0 {
			n := min(len(stdin), maxSyncData)
			b = appendShellPacket(b[:0], shellStdin, stdin[:n])
			stdin = stdin[n:]
			if err := cn.write(b); err != nil {
				werr <- err
				return
			}
		}
		werr <- cn.write(appendShellPacket(b[:0], shellCloseStdin, nil))
	}()
	res, err := readShellStream(cn.r, maxOutput)
	if err != nil {
		return res, cn.ioErr(err)
	}
	return res, nil
}

// shellV1 runs cmd with the plain shell service and a marker for the
// exit status.
func (d *Device) shellV1(ctx context.Context, cmd string) (ShellResult, error) {
	var rb [8]byte
	rand.Read(rb[:])
	marker := "PROCTOR-EXIT-" + hex.EncodeToString(rb[:]) + ":"
	cn, _, err := d.open(ctx, "shell", "shell:"+cmd+"\nprintf '\\n"+marker+"%d\\n' $?")
	if err != nil {
		return ShellResult{}, err
	}
	defer cn.Close()
	out, err := readAllMax(cn.r, maxOutput)
	if err != nil {
		return ShellResult{}, cn.ioErr(err)
	}
	res, ok := splitExitMarker(out, marker)
	if !ok {
		return ShellResult{Stdout: out}, cn.fail(ErrConnClosed, "the shell ended before the command did", nil)
	}
	return res, nil
}

// splitExitMarker finds the last "\nMARKER<digits>" in out and returns the
// output before it and the status.
func splitExitMarker(out []byte, marker string) (ShellResult, bool) {
	i := bytes.LastIndex(out, []byte(marker))
	if i < 0 {
		return ShellResult{}, false
	}
	rest := out[i+len(marker):]
	j := 0
	for j < len(rest) && j < 4 && '0' <= rest[j] && rest[j] <= '9' {
		j++
	}
	if j == 0 {
		return ShellResult{}, false
	}
	code, _ := strconv.Atoi(string(rest[:j]))
	body := out[:i]
	// Drop the newline printf put before the marker (a pty makes it \r\n).
	body = bytes.TrimSuffix(body, []byte("\n"))
	body = bytes.TrimSuffix(body, []byte("\r"))
	return ShellResult{Stdout: body, ExitCode: code}, true
}

// ExecOut runs cmd on the device with the exec: service and returns its
// raw output, byte for byte (no pty, no newline translation), e.g.
// `screencap -p`. The stream has no end marker: when it ends and the
// server no longer has the device on the same transport, the result is
// ErrConnClosed.
func (d *Device) ExecOut(ctx context.Context, cmd string) ([]byte, error) {
	cn, tid, err := d.open(ctx, "exec", "exec:"+cmd)
	if err != nil {
		return nil, err
	}
	defer cn.Close()
	out, err := readAllMax(cn.r, maxOutput)
	if err != nil {
		return out, cn.ioErr(err)
	}
	if d.transportGone(ctx, tid) {
		return out, cn.fail(ErrConnClosed, "the device's transport went away", nil)
	}
	return out, nil
}

// readAllMax reads r to EOF, refusing more than max bytes.
func readAllMax(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return b, err
	}
	if int64(len(b)) > max {
		return b[:max], fmt.Errorf("%w: output exceeds %d bytes", ErrProtocol, max)
	}
	return b, nil
}
