package episode

// Error is a sentinel error of the episode.
type Error string

func (e Error) Error() string { return string(e) }

// ErrInfrastructure matches every error that ends an episode as a fault
// of the environment, a service or the harness: the episode is run again
// and never scored.
const ErrInfrastructure Error = "infrastructure fault"

// infraError is a fault of the environment, a service or the harness; its
// message is the fault's own.
type infraError struct{ err error }

func (e infraError) Error() string        { return e.err.Error() }
func (e infraError) Unwrap() error        { return e.err }
func (e infraError) Is(target error) bool { return target == ErrInfrastructure }

// infra marks err as an infrastructure fault.
func infra(err error) error { return infraError{err} }
