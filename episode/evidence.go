package episode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/query"
	"github.com/proctor-eval/proctor/service"
	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// Evidence lets the checks read an environment after an episode: the one
// adapter from env.Env to check.Evidence (and check.Screens), which the
// runner's episodes and proctor probe share.
type Evidence struct {
	Env  env.Env
	Traj check.Trajectory
	// Suite serves the asset checks; nil: no assets.
	Suite *task.Suite
	// Services are the suite's command services of the environment's
	// place; nil when the suite has none.
	Services *service.Instances
	// Store and Shots serve the screens of the steps (the screenshot of
	// each step, by name in the store); nil: none.
	Store *store.Store
	Shots map[int]string
	// Final is the screen after the episode; zero: none was taken.
	Final check.Screen
	// Changes is the state diff of the episode (the side_effects check
	// reads it); nil: none was taken.
	Changes *statediff.Diff
}

func (v *Evidence) FinalScreen(context.Context) (check.Screen, error) {
	if v.Final.Data == nil {
		return check.Screen{}, errors.New("no screen was taken after the episode")
	}
	return v.Final, nil
}

func (v *Evidence) StepScreen(_ context.Context, turn int) (check.Screen, error) {
	if v.Store == nil {
		return check.Screen{}, fmt.Errorf("no screenshot of step %d: %w", turn, observe.ErrNotFound)
	}
	return store.StepScreen(v.Store, v.Shots[turn])
}

func (v *Evidence) Service(ctx context.Context, q query.Service) (string, bool, error) {
	if q.Port() != 0 {
		return env.CallLoopback(ctx, v.Env, q)
	}
	if v.Services == nil {
		return "", false, fmt.Errorf("%s: the suite runs no command service", q.Describe())
	}
	return v.Services.Query(ctx, q)
}

func (v *Evidence) Command(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error) {
	return v.Env.Run(ctx, cmd, timeout)
}

func (v *Evidence) ReadFile(ctx context.Context, p string) ([]byte, error) {
	return v.Env.ReadFile(ctx, p)
}

func (v *Evidence) Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	return v.Env.Elements(ctx, q)
}

func (v *Evidence) Windows(ctx context.Context) ([]string, error) {
	ws, err := v.Env.Windows(ctx)
	titles := make([]string, len(ws))
	for i, w := range ws {
		titles[i] = w.Title
	}
	return titles, err
}

func (v *Evidence) Clipboard(ctx context.Context) (string, error) { return v.Env.Clipboard(ctx) }

func (v *Evidence) Page(ctx context.Context, q observe.PageQuery) (string, bool, error) {
	return env.ReadPage(ctx, v.Env, q)
}

func (v *Evidence) Asset(name string) ([]byte, error) {
	if v.Suite == nil {
		return nil, fmt.Errorf("asset %s: no suite: %w", name, observe.ErrNotFound)
	}
	return v.Suite.ReadAsset(name)
}

func (v *Evidence) Trajectory() check.Trajectory { return v.Traj }
