// Package adb is a client of the ADB host protocol: it talks to an adb
// server (by default on 127.0.0.1:5037) the way the adb command-line tool
// does, to list and connect devices, run shell commands with their exit
// status (shell protocol v2), read a command's raw output (exec:) and move
// files with the sync protocol.
//
// The API is context-first: every call that talks to the server takes a
// context, and cancelling it closes the connection, which interrupts a
// blocked read. Failures wrap one of the sentinel errors below (ErrNoDevice,
// ErrUnauthorized, ErrOffline, ErrServerUnreachable, ErrConnClosed,
// ErrFileNotFound, ErrProtocol) together with the serial and the command,
// so callers test them with errors.Is.
//
// Everything the server or the device sends is treated as untrusted input:
// lengths are bounded and malformed replies give ErrProtocol.
//
// Why not an existing library: the Go ADB clients known to us
// (github.com/zach-klippenstein/goadb, archived since 2019, and its forks
// such as github.com/electricbubble/gadb) take no context, so a call to a
// hung device cannot be interrupted, do not speak shell protocol v2 (no
// exit status, stdout and stderr merged) and are not maintained; none is
// offered by the module proxy this project uses either. The protocol
// needed here is small (AOSP's adb/SERVICES.TXT, adb/SYNC.TXT and
// adb/shell_protocol.h describe it), so it is written here.
//
// Package adbtest, beside this one, is a stand-in device that speaks the
// device side of the ADB transport protocol, for tests against a real adb
// server.
package adb
