package episode

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/service"
	"github.com/proctor-eval/proctor/snapshot"
	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/task"
)

// What else the agent changed: where the task asks (WantsChanges), a
// snapshot of the environment's state (package snapshot) is taken when
// the setup is done, another after the
// steps after the agent and before the checks; their diff, with noise
// filtered and the changes the task allows marked (package statediff),
// is stored with the episode (store.SaveChanges) and read by the
// side_effects check.

// WantsChanges reports whether an episode of t takes the snapshots: when
// the task or its suite declares what may change (changes:), or a check
// or milestone of the task is a side_effects check. Other episodes take
// none: a snapshot costs a tenth of a desktop's reset and more than half
// of a browser's.
func WantsChanges(s *task.Suite, t *task.Task) bool {
	if t.Changes != nil || s != nil && s.Changes != nil {
		return true
	}
	for _, c := range t.Checks {
		if c.Kind == check.SideEffects {
			return true
		}
	}
	for _, m := range t.Milestones {
		for _, c := range m.Checks {
			if c.Kind == check.SideEffects {
				return true
			}
		}
	}
	return false
}

// snapshotBefore takes the snapshot after the setup, where the task
// wants it (WantsChanges).
func (ep *Episode) snapshotBefore(ctx context.Context) error {
	if !WantsChanges(ep.cfg.Suite, ep.t) {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, ep.cfg.ResetTimeout)
	defer cancel()
	s, err := snapshot.Take(sctx, ep.e, ep.snapshotOptions())
	if err != nil {
		return infra(fmt.Errorf("the state after the setup: %w", err))
	}
	ep.before = s
	return nil
}

func (ep *Episode) snapshotOptions() snapshot.Options {
	o := snapshot.Options{Watch: ep.t.AllowedChanges(ep.cfg.Suite).Watch}
	if ep.svc != nil {
		o.Databases = Databases(ep.svc, ep.t.UsedServices())
	}
	return o
}

// Databases are the SQLite databases of the services whose rows a
// snapshot lists: a service's rows are "SERVICE/TABLE", or
// "SERVICE/FILE/TABLE" where its data folder holds several databases.
func Databases(svc *service.Instances, names []string) []snapshot.Database {
	var out []snapshot.Database
	for _, n := range names {
		files := svc.Databases(n)
		for _, f := range files {
			name := n
			if len(files) > 1 {
				name += "/" + filepath.Base(f)
			}
			out = append(out, snapshot.Database{Service: name, File: f})
		}
	}
	return out
}

// stateDiff takes the snapshot after the episode, compares it with the
// one after the setup and stores the diff.
func (ep *Episode) stateDiff(ctx context.Context) (*statediff.Diff, error) {
	if ep.before == nil {
		return nil, nil
	}
	sctx, cancel := context.WithTimeout(ctx, ep.cfg.ResetTimeout)
	defer cancel()
	after, err := snapshot.Take(sctx, ep.e, ep.snapshotOptions())
	if err != nil {
		return nil, infra(fmt.Errorf("the state after the episode: %w", err))
	}
	d := statediff.Compare(ep.before, after, nil, ep.t.AllowedChanges(ep.cfg.Suite), statediff.Limits{})
	if err := ep.cfg.Store.SaveChanges(ep.t.ID, ep.repeat, d); err != nil {
		return nil, infra(err)
	}
	return d, nil
}

// StateChanges is the episode's state diff; an error where none was taken.
func (v *Evidence) StateChanges(context.Context) (*statediff.Diff, error) {
	if v.Changes == nil {
		return nil, fmt.Errorf("no state diff was taken of this episode")
	}
	return v.Changes, nil
}
