package run

// Error is a sentinel error of the runner.
type Error string

func (e Error) Error() string { return string(e) }

// ErrNoEnvironment means a place of the pool lost its environment for good.
const ErrNoEnvironment Error = "no environment"

// errAbandoned marks an agent call that did not return after its context
// ended: the agent may still be running it, so it is not called again.
const errAbandoned Error = "the agent did not return when its call was cancelled"
