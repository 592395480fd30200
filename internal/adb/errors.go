package adb

import (
	"errors"
	"fmt"
	"strings"
)

// Error is the type of the package's sentinel errors.
type Error string

func (e Error) Error() string { return string(e) }

// Sentinel errors. Errors returned by this package wrap one of them where
// one applies; test with errors.Is.
const (
	// ErrNoDevice: the server knows no device with that serial (or none at
	// all).
	ErrNoDevice Error = "adb: no such device"
	// ErrUnauthorized: the device has not accepted this host's key.
	ErrUnauthorized Error = "adb: device unauthorized"
	// ErrOffline: the device is known but not usable (offline, still
	// connecting).
	ErrOffline Error = "adb: device offline"
	// ErrServerUnreachable: no adb server answers at the address, and none
	// could be started.
	ErrServerUnreachable Error = "adb: server not reachable"
	// ErrConnClosed: the connection closed before the command finished (the
	// device went away or the link dropped).
	ErrConnClosed Error = "adb: connection closed mid-command"
	// ErrFileNotFound: the remote file does not exist.
	ErrFileNotFound Error = "adb: remote file not found"
	// ErrProtocol: the server or device sent something this package does
	// not understand or that exceeds its bounds.
	ErrProtocol Error = "adb: protocol error"
	// ErrFailed: the server or device refused the request for a reason
	// that none of the other sentinels describes.
	ErrFailed Error = "adb: request failed"
)

// OpError describes a failed operation: which command, on which device,
// what the server or device said, and the sentinel (Kind) it amounts to.
type OpError struct {
	Op     string // the request, e.g. "shell", "host:connect:1.2.3.4:5555"
	Serial string // the device's serial, "" for host requests
	Msg    string // what the server or device said, if anything
	Kind   error  // a sentinel, or a context error
	Err    error  // the underlying error, if any (e.g. a network error)
}

func (e *OpError) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	b.WriteString(": ")
	b.WriteString(e.Op)
	if e.Serial != "" {
		fmt.Fprintf(&b, " on %s", e.Serial)
	}
	if e.Msg != "" {
		fmt.Fprintf(&b, ": %s", strings.TrimSpace(e.Msg))
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap gives both the sentinel and the underlying error.
func (e *OpError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// classifyFail maps the text of a FAIL reply from the server to a sentinel.
func classifyFail(msg string) error {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "unauthorized"), strings.Contains(m, "still authorizing"):
		return ErrUnauthorized
	case strings.Contains(m, "not found") && strings.HasPrefix(m, "device"),
		strings.HasPrefix(m, "no devices"), strings.Contains(m, "no emulators"):
		return ErrNoDevice
	case strings.Contains(m, "offline"), strings.Contains(m, "still connecting"):
		return ErrOffline
	case strings.Contains(m, "no such file or directory"):
		return ErrFileNotFound
	}
	return ErrFailed
}

// errorsIsAny reports whether err is any of targets.
func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
