package rfb

// Error is the type of the package's sentinel errors.
type Error string

func (e Error) Error() string { return string(e) }

const (
	// ErrAuth is returned by Dial when the server rejects the password.
	ErrAuth Error = "VNC authentication failed"
	// ErrClosed is wrapped by Err and by the methods called after the
	// connection ended, together with the cause.
	ErrClosed Error = "VNC connection closed"
)
