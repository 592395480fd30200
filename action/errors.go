package action

// Error is a sentinel error of the action space.
type Error string

func (e Error) Error() string { return string(e) }

// ErrInvalid marks an action the agent got wrong: an unknown kind, a
// missing field, a point off the screen, an amount over a limit. Such an
// error is the agent's mistake, never an infrastructure fault.
const ErrInvalid Error = "invalid action"
