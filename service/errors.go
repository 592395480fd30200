package service

// Error is a sentinel error of the package.
type Error string

func (e Error) Error() string { return string(e) }

// ErrStart is wrapped by the errors of a service that did not start.
const ErrStart Error = "service did not start"
