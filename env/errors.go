package env

import "github.com/proctor-eval/proctor/observe"

// Error is a sentinel error of the environment contract.
type Error string

func (e Error) Error() string { return string(e) }

// Sentinel errors; implementations wrap them with details.
const (
	ErrNotFound        = observe.ErrNotFound   // no element, window or file matches (the checks' sentinel too)
	ErrForbidden Error = "forbidden"           // a path outside the allowed roots
	ErrClosed    Error = "environment closed"  // the environment was closed or died
	ErrBadAction Error = "action not possible" // the action cannot be done here
	// ErrLimit is a bound of the environment's own that the episode's
	// content passed (a page's memory): the episode ends uncompleted with
	// the reason, and the environment is sound for the next one.
	ErrLimit Error = "over the environment's limit"
)
