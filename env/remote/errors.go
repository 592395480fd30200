package remote

import "github.com/proctor-eval/proctor/env"

// Errors about the daemon as a whole, which Dial returns, each with a
// message that names the daemon and says what to do.
const (
	// ErrUnauthorized is returned when the daemon refuses the token.
	ErrUnauthorized = env.Error("unauthorized: wrong or missing token")
	// ErrFingerprint is returned when the daemon's certificate is not
	// the one the target pins, or, with no pin, not one the system
	// trusts: another daemon, a restarted one, or someone in between.
	// The token is not sent.
	ErrFingerprint = env.Error("the daemon's certificate is not the expected one")
	// ErrTLSMismatch is returned when the target says https and the
	// daemon serves plain HTTP, or the other way round.
	ErrTLSMismatch = env.Error("TLS and plain HTTP mixed up")
	// ErrVersion is returned when the daemon speaks another API version.
	ErrVersion = env.Error("API version mismatch")
)

// ErrBadRequest wraps the daemon's answer to a request it refused as the
// caller's mistake (kinds bad_request and too_large): a malformed
// parameter, a path that names a folder or is too long, a body over the
// limit.
const ErrBadRequest = env.Error("bad request")
