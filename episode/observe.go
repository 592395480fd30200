package episode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/store"
)

// ObsMode is what the agent observes at each step.
type ObsMode string

// Observation modes (ScienceBoard's four).
const (
	ObsScreenshot ObsMode = "screenshot"      // the screen
	ObsTree       ObsMode = "a11y"            // the linearised accessibility tree
	ObsBoth       ObsMode = "screenshot+a11y" // both
	ObsMarks      ObsMode = "som"             // set-of-mark screenshot and the tree
)

// ObsModes lists the modes.
var ObsModes = []ObsMode{ObsScreenshot, ObsTree, ObsBoth, ObsMarks}

// Observe begins the next step: it reads the observation of the episode's
// mode from the environment and records it (its screenshot kept in the
// store). An error ends the episode (see Abort), and is returned.
func (ep *Episode) Observe(ctx context.Context) (agent.Observation, error) {
	ep.step++
	step := ep.step
	rec := &store.Turn{Task: ep.t.ID, Repeat: ep.repeat, Index: step}
	ectx, cancel := ep.Bound(ctx)
	defer cancel()
	envStart := time.Now()
	obs, err := Observation(ectx, ep.e, ep.cfg.Obs, ep.info.Screen)
	if err != nil {
		return obs, ep.fail(ctx, phaseObserving, err)
	}
	ep.res.Steps = step
	if n, ok := ep.e.(env.Notices); ok { // what the environment did as it was observed
		if notes := n.Notices(); len(notes) > 0 {
			rec.Notices = notes
			ep.feedback = strings.TrimPrefix(ep.feedback+"; "+strings.Join(notes, "; "), "; ")
		}
	}
	obs.Step, obs.Feedback = step, ep.feedback
	rec.EnvLatency = time.Since(envStart)
	if obs.Screenshot != nil {
		if rec.Shot, err = ep.cfg.Store.PutShot(obs.Screenshot, obs.Format); err != nil {
			return obs, ep.fail(ctx, phaseObserving, infra(err))
		}
		ep.shots[step] = rec.Shot
	}
	rec.Tree = obs.Tree
	if len(obs.Marks) > 0 {
		rec.Marks, _ = json.Marshal(obs.Marks)
	}
	ep.rec = rec
	return obs, nil
}

// Observation reads what an agent observes of e in mode, on a screen of
// that size: the screenshot (with the set-of-mark boxes for ObsMarks), the
// filtered and linearised accessibility tree, and a browser's tabs.
func Observation(ctx context.Context, e env.Env, mode ObsMode, screen action.Size) (agent.Observation, error) {
	obs := agent.Observation{Screen: screen}
	var tr *observe.Tree
	if mode != ObsTree {
		shot, err := e.Screenshot(ctx, env.ShotOptions{Marks: mode == ObsMarks})
		if err != nil {
			return obs, err
		}
		obs.Screenshot, obs.Format, obs.Marks = shot.Data, shot.Format, shot.Marks
		tr = shot.Tree // the tree the marks came from, when there is one
	}
	if mode != ObsScreenshot {
		if tr == nil {
			var err error
			if tr, err = e.Tree(ctx); err != nil {
				return obs, err
			}
		}
		obs.Tree = observe.Linearize(tr.Filter(observe.Options{Screen: screen}), 0)
	}
	if tb, ok := e.(env.Tabs); ok {
		tabs, err := tb.Tabs(ctx)
		if err != nil {
			return obs, err
		}
		obs.Tabs = tabs
	}
	return obs, nil
}

// stepLabel names the step in reasons.
func stepLabel(step int) string { return fmt.Sprintf("step %d", step) }
