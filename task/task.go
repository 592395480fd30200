// Package task defines Proctor's task format: tasks and templates in YAML,
// their JSON Schema, loading with errors that name the file, line and field,
// semantic lint, template expansion, and suites of tasks with assets.
package task

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/statediff"
)

// Level is a task's difficulty tier, after OSUniverse.
type Level string

// The levels, from reading the screen to long open-ended work.
const (
	Paper  Level = "paper"
	Wood   Level = "wood"
	Bronze Level = "bronze"
	Silver Level = "silver"
	Gold   Level = "gold"
)

// Levels lists the levels in order.
var Levels = []Level{Paper, Wood, Bronze, Silver, Gold}

// LevelRank is a level's place from paper (0) to gold (4); a name that
// is not a level comes after them all. Lists of levels sort by it.
func LevelRank(name string) int {
	for i, l := range Levels {
		if string(l) == name {
			return i
		}
	}
	return len(Levels)
}

// Weight is the level's weight in the weighted score: 0.5, 1, 2, 4, 8.
func (l Level) Weight() float64 {
	return map[Level]float64{Paper: 0.5, Wood: 1, Bronze: 2, Silver: 4, Gold: 8}[l]
}

// MaxSteps is the level's default step budget: 5, 25, 50, 75, 100.
func (l Level) MaxSteps() int {
	return map[Level]int{Paper: 5, Wood: 25, Bronze: 50, Silver: 75, Gold: 100}[l]
}

// Kind is what a task asks for.
type Kind string

// Task kinds.
const (
	StateTask      Kind = "state"      // reach a final state
	ProcessTask    Kind = "process"    // reach it through required steps
	QATask         Kind = "qa"         // answer a question
	InfeasibleTask Kind = "infeasible" // the right answer is FAIL
)

// Environment is where a task runs.
type Environment struct {
	Type       string `json:"type,omitempty"`       // x11 (default), browser, vnc, android
	Resolution string `json:"resolution,omitempty"` // WxH, default 1920x1080
	// Network and Allow say what a browser's pages may reach besides the
	// task's own pages (those its setup opens) and its suite's services:
	// network web opens the public web (never loopback, private or
	// link-local addresses), and Allow names further origins
	// (scheme://host[:port]). Everything else is refused.
	Network string   `json:"network,omitempty"`
	Allow   []string `json:"allow,omitempty"`
	// Session is the desktop session of an x11 task (Sessions): openbox
	// alone, XFCE or GNOME; empty, its suite's, else openbox.
	Session string `json:"session,omitempty"`
}

// TypeOrDefault is the environment type, x11 when the task names none.
func (e Environment) TypeOrDefault() string {
	if e.Type == "" {
		return "x11"
	}
	return e.Type
}

// DefaultResolution is the screen size when a task names none.
const DefaultResolution = "1920x1080"

// Size parses the resolution.
func (e Environment) Size() (action.Size, error) {
	r := e.Resolution
	if r == "" {
		r = DefaultResolution
	}
	w, h, ok := strings.Cut(r, "x")
	wi, err1 := strconv.Atoi(w)
	hi, err2 := strconv.Atoi(h)
	if !ok || err1 != nil || err2 != nil || wi < 16 || hi < 16 || wi > 16384 || hi > 16384 {
		return action.Size{}, fmt.Errorf("resolution %q is not WIDTHxHEIGHT", r)
	}
	return action.Size{W: wi, H: hi}, nil
}

// Task is one task instance.
type Task struct {
	ID          string   `json:"id"`
	Instruction string   `json:"instruction"`
	App         string   `json:"app,omitempty"`
	Apps        []string `json:"apps,omitempty"`
	Category    string   `json:"category,omitempty"`
	Domain      string   `json:"domain,omitempty"`
	// Persona is the role whose work the task is (SCUBA's personas: an
	// administrator, a sales representative, a service agent); reports
	// give their metrics per persona.
	Persona       string            `json:"persona,omitempty"`
	Level         Level             `json:"level"`
	Difficulty    string            `json:"difficulty,omitempty"`
	Interface     string            `json:"interface,omitempty"`
	Kind          Kind              `json:"kind"`
	Environment   Environment       `json:"environment,omitzero"`
	MaxStepsValue int               `json:"max_steps,omitempty"`
	TimeLimit     duration.Duration `json:"time_limit,omitempty"`
	Setup         []Step            `json:"setup,omitempty"`
	// After are the harness's steps after the agent's last action and
	// before the checks (save with ctrl+s, close an app so that it writes
	// its settings): recorded in the trajectory as the harness's.
	After          []Step            `json:"after,omitempty"`
	Checks         []check.Spec      `json:"checks"`
	Milestones     []check.Milestone `json:"milestones,omitempty"`
	Gold           []action.Action   `json:"gold,omitempty"`
	Demonstrations []string          `json:"demonstrations,omitempty"`
	Tags           []string          `json:"tags,omitempty"`
	// Origin is where an imported task came from (proctor import).
	Origin *Origin `json:"origin,omitempty"`
	// Unproven says why the task has no gold solution: an imported task
	// whose benchmark ships none. Lint accepts it without gold; validate
	// proves what it can without one and reports it apart.
	Unproven string `json:"unproven,omitempty"`
	// Wrong trajectories must not pass the checks: proctor validate replays
	// them to prove the checks tell right from wrong.
	Wrong []Trajectory `json:"wrong,omitempty"`

	// Changes is what the agent may change besides what the checks look
	// at (joined with the suite's default, AllowedChanges): the
	// side_effects check fails on anything else that changed.
	Changes *statediff.Allowed `json:"changes,omitempty"`

	// Template fields: present only in a template file.
	Params  map[string][]any `json:"params,omitempty"`
	Combine string           `json:"combine,omitempty"`

	// Where the task came from (not part of the format).
	File     string            `json:"-"`
	Template string            `json:"-"` // the template's id, for an instance
	Values   map[string]string `json:"-"` // the instance's parameter values
}

// Trajectory is a named sequence of actions.
type Trajectory struct {
	Name string `json:"name"`
	// Milestone is the exact milestone score a wrong trajectory reaches
	// (a partial success), which proctor validate requires; nil when it
	// is not stated.
	Milestone *float64        `json:"milestone,omitempty"`
	Actions   []action.Action `json:"actions"`
}

// AllApps is App and Apps together.
func (t *Task) AllApps() []string {
	if t.App == "" {
		return t.Apps
	}
	return append([]string{t.App}, t.Apps...)
}

// MaxSteps is the task's step budget: its own, else its level's.
func (t *Task) MaxSteps() int {
	if t.MaxStepsValue > 0 {
		return t.MaxStepsValue
	}
	return t.Level.MaxSteps()
}

// WallTime is the task's wall-time limit: its own, else 20 s a step.
func (t *Task) WallTime() time.Duration {
	if t.TimeLimit > 0 {
		return time.Duration(t.TimeLimit)
	}
	return time.Duration(t.MaxSteps()) * 20 * time.Second
}

// Section is a named list of a task's steps.
type Section struct {
	Name  string // "setup" or "after", as in the task file
	Steps []Step
}

// Sections are the task's steps: its setup, then its steps after the
// agent.
func (t *Task) Sections() []Section {
	return []Section{{"setup", t.Setup}, {"after", t.After}}
}

// Origin is where an imported task came from: the benchmark ("peer"),
// its file and id there, the revision of the benchmark's files and the
// hash of the task's own file, and the files the task needs from the web
// (its assets, downloaded by proctor import --fetch).
type Origin struct {
	Peer     string       `json:"peer"`
	File     string       `json:"file"`
	ID       string       `json:"id,omitempty"`
	Revision string       `json:"revision,omitempty"`
	SHA256   string       `json:"sha256,omitempty"`
	Fetch    []OriginFile `json:"fetch,omitempty"`
}

// OriginFile is a file an imported task needs, fetched from URL into the
// suite's assets as Asset.
type OriginFile struct {
	URL    string `json:"url"`
	Asset  string `json:"asset"`
	SHA256 string `json:"sha256,omitempty"` // once fetched
}

// Fetches reports whether the task's origin names asset as a file to
// fetch.
func (o *Origin) Fetches(asset string) bool {
	if o == nil {
		return false
	}
	for _, f := range o.Fetch {
		if f.Asset == asset {
			return true
		}
	}
	return false
}
