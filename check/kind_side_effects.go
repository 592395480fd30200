package check

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/statediff"
)

// SideEffects: nothing changed in the environment during the episode
// besides what the task declares may change (its changes: section,
// joined with its suite's), noise filtered apart (package statediff).
// It fails naming each change outside the allowed set; as a milestone's
// check it scores that milestone.
const SideEffects Kind = "side_effects"

func init() {
	register(SideEffects, kindDef{
		fields:   []string{},
		evaluate: evalSideEffects,
	})
}

// StateChanges is Evidence that holds what changed in the environment
// during the episode: the state diff between the end of its setup and
// its checks, classified against the task's declared changes.
type StateChanges interface {
	StateChanges(ctx context.Context) (*statediff.Diff, error)
}

// maxNamed bounds the changes a side_effects check's reason names.
const maxNamed = 20

func evalSideEffects(ctx context.Context, c *Check, in input) (bool, string, error) {
	sc, ok := in.ev.(StateChanges)
	if !ok {
		return false, "", infraError{errors.New("no state diff was taken of this environment")}
	}
	d, err := sc.StateChanges(ctx)
	if err != nil {
		return false, "", infraError{fmt.Errorf("the state diff: %w", err)}
	}
	bad := d.Violations()
	allowed := len(d.Changes) - len(bad)
	tail := fmt.Sprintf("%d allowed, %d filtered as noise", allowed, len(d.Filtered))
	if d.Truncated {
		tail += "; more changes than were listed"
	}
	if len(bad) == 0 {
		return pass("nothing changed outside the allowed set (%s)", tail)
	}
	var names []string
	for i, ch := range bad {
		if i == maxNamed {
			names = append(names, fmt.Sprintf("and %d more", len(bad)-maxNamed))
			break
		}
		names = append(names, ch.String())
	}
	noun := "changes"
	if len(bad) == 1 {
		noun = "change"
	}
	return failf("%d %s outside the allowed set: %s (%s)", len(bad), noun, strings.Join(names, "; "), tail)
}

// StateChanges returns the recorded state diff.
func (r *Recorded) StateChanges(context.Context) (*statediff.Diff, error) {
	if r.Changes == nil {
		return nil, fmt.Errorf("the state diff was %w", ErrNotRecorded)
	}
	return r.Changes, nil
}

// StateChanges passes the evidence's state diff on and records it.
func (r *Recorder) StateChanges(ctx context.Context) (*statediff.Diff, error) {
	sc, ok := r.ev.(StateChanges)
	if !ok {
		return nil, errors.New("no state diff was taken of this environment")
	}
	d, err := sc.StateChanges(ctx)
	if err == nil {
		r.mu.Lock()
		r.changes = d
		r.mu.Unlock()
	}
	return d, err
}
