package task

import (
	"bytes"
	"encoding/json"

	"github.com/proctor-eval/proctor/statediff"
)

// AllowedChanges is what an episode of t may change: the suite's
// default changes: section (s may be nil) joined with the task's own.
func (t *Task) AllowedChanges(s *Suite) statediff.Allowed {
	var a statediff.Allowed
	if s != nil && s.Changes != nil {
		a = *s.Changes
	}
	if t.Changes != nil {
		a = a.Join(*t.Changes)
	}
	return a
}

// lintChanges reports the patterns of a task's changes: section that are
// not valid, where they stand.
func lintChanges(f *fileCtx, t *Task) Problems {
	if t.Changes == nil {
		return nil
	}
	return changesProblems(f, t.Changes)
}

func changesProblems(f *fileCtx, a *statediff.Allowed) Problems {
	var ps Problems
	for _, p := range a.Problems() {
		ps = append(ps, f.problem([]any{"changes"}, "%s", p))
	}
	return ps
}

// parseChanges fills the suite's default changes: section (the schema
// reports its shape).
func (s *Suite) parseChanges(f *fileCtx, raw any) Problems {
	if raw == nil {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var a statediff.Allowed
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if d.Decode(&a) != nil {
		return nil // the schema said what is wrong
	}
	if ps := changesProblems(f, &a); len(ps) > 0 {
		return ps
	}
	s.Changes = &a
	return nil
}
