package run

// Error is a sentinel error of the runner.
type Error string

func (e Error) Error() string { return string(e) }

// ErrNoEnvironment means a place of the pool lost its environment for good.
const ErrNoEnvironment Error = "no environment"

// errAbandoned marks an agent call that did not return after its context
// ended: the agent may still be running it, so it is not called again.
const errAbandoned Error = "the agent did not return when its call was cancelled"

// What a pre-flight refuses (see PreflightError).
const (
	ErrPreflight Error = "pre-flight refused the run"
	// ErrNoJudge: tasks have judge checks and the run has no judge.
	ErrNoJudge Error = "no judge model is configured"
	// ErrNeedsTree: the observation mode shows the accessibility tree,
	// which a place does not offer.
	ErrNeedsTree Error = "the observation mode needs an accessibility tree"
	// ErrLocalService: a task uses a command service, which only an
	// environment on this machine reaches.
	ErrLocalService Error = "a task's service needs an environment on this machine"
)
