package episode

// Feedback is what the agent is told of its last turn with the next
// observation: a reply that could not be used, an action refused, what
// the environment did on its own. A caller that steps the episode for a
// policy elsewhere (package rollout) returns it with the step, since no
// observation may follow.
func (ep *Episode) Feedback() string { return ep.feedback }

// Step is the last step observed, from 1; 0 before the first.
func (ep *Episode) Step() int { return ep.step }
