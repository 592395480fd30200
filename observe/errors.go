package observe

// Error is a sentinel error of the environment contract.
type Error string

func (e Error) Error() string { return string(e) }

// ErrNotFound means no element, window or file matches: the one not-found
// sentinel of every environment and of the checks.
const ErrNotFound Error = "not found"
