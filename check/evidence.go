// Package check evaluates a task's outcome from evidence: probes of the live
// environment (command output, files, the accessibility tree, windows, the
// clipboard) and the recorded trajectory. The same checks run on a live
// environment and on a stored run, because both provide Evidence.
package check

import (
	"context"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/query"
)

// Step is one action of the trajectory with what the environment recorded
// about it: for a click, the description of the element under the pointer.
type Step struct {
	Action  action.Action `json:"action"`
	Element string        `json:"element,omitempty"`
	// Turn is the agent's step (from 1) that chose the action, whose
	// screenshot the agent had seen; 0 where unknown.
	Turn int `json:"turn,omitempty"`
}

// Trajectory is what the agent did, in order.
type Trajectory struct {
	Steps []Step `json:"steps"`
}

// Final is the last action if it ended the episode (done, fail or answer).
func (t Trajectory) Final() (action.Action, bool) {
	if len(t.Steps) == 0 {
		return action.Action{}, false
	}
	a := t.Steps[len(t.Steps)-1].Action
	return a, a.Kind.Terminal()
}

// Answer is the text the agent submitted: ANS s, or the text given with DONE.
func (t Trajectory) Answer() (string, bool) {
	a, ok := t.Final()
	if !ok || a.Kind == action.Fail {
		return "", false
	}
	return a.Text, a.Kind == action.Answer || a.Text != ""
}

// Evidence is what checks read. A live environment implements it with
// probes; a stored run implements it from its records.
type Evidence interface {
	// Command runs a shell command in the environment.
	Command(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error)
	// ReadFile reads a file of the environment; observe.ErrNotFound when missing.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// Elements returns the accessibility nodes matching q.
	Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error)
	// Windows returns the titles of the open top-level windows.
	Windows(ctx context.Context) ([]string, error)
	// Clipboard returns the clipboard's text.
	Clipboard(ctx context.Context) (string, error)
	// Page reads a browser's page; found is false where there is nothing
	// to read (no element matches, no such cookie, a null value).
	Page(ctx context.Context, q observe.PageQuery) (val string, found bool, err error)
	// Service reads an application's state through a service of the
	// suite, or an API on the environment's own loopback (query.Service
	// says when a value is found).
	Service(ctx context.Context, q query.Service) (val string, found bool, err error)
	// Asset reads a file shipped with the suite (expected outputs).
	Asset(name string) ([]byte, error)
	// Trajectory is what the agent did.
	Trajectory() Trajectory
}
