// Package api holds the wire types of the rollout service (package
// rollout, proctor serve): what its routes take and answer, in JSON. A
// client imports this package and package rollout/client, not the
// service, so that a trainer does not build the environments' code.
package api

import (
	"encoding/json"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

// Routes of the API, as net/http's ServeMux patterns; the OpenAPI
// document lists the same.
const (
	PathTasks    = "/v1/tasks"
	PathRollouts = "/v1/rollouts"
	PathRollout  = "/v1/rollouts/{id}"
	PathStep     = "/v1/rollouts/{id}/step"
	PathFinish   = "/v1/rollouts/{id}/finish"
	PathImage    = "/v1/rollouts/{id}/image"
	PathOpenAPI  = "/v1/openapi.json"
)

// ClientHeader names the client a rollout counts against for the
// per-client limit; without it, the client's address does.
const ClientHeader = "Proctor-Client"

// Task is one task instance the service runs.
type Task struct {
	ID          string   `json:"id"`
	Instruction string   `json:"instruction"`
	Apps        []string `json:"apps,omitempty"`
	Level       string   `json:"level"`
	Kind        string   `json:"kind"`
	Difficulty  string   `json:"difficulty,omitempty"`
	Interface   string   `json:"interface,omitempty"`
	Domain      string   `json:"domain,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Template is the template the task is an instance of, if any: a
	// rollout may name the template and a seed instead of the instance.
	Template    string      `json:"template,omitempty"`
	Environment string      `json:"environment"` // its environment type: x11, browser, android...
	Screen      action.Size `json:"screen"`
	MaxSteps    int         `json:"max_steps"`
	WallTime    float64     `json:"wall_time_s"`
	Milestones  int         `json:"milestones"` // how many milestones give step rewards
	// Gold is the task's gold solution, one action a step, when the
	// request asked for it (?gold=true).
	Gold []action.Action `json:"gold,omitempty"`
}

// Tasks is the answer of GET /v1/tasks.
type Tasks struct {
	Tasks []Task `json:"tasks"`
}

// Observation kinds a rollout may ask for.
const (
	ObsScreenshot = "screenshot" // the screen
	ObsTree       = "tree"       // the linearised accessibility tree
	ObsBoth       = "both"       // the screen and the tree
	ObsMarks      = "som"        // a set-of-mark screenshot, its marks and the tree
)

// Image formats of the observation's screenshot.
const (
	ImagePNG  = "png"
	ImageJPEG = "jpeg"
)

// CreateRequest is the body of POST /v1/rollouts.
type CreateRequest struct {
	// Task is a task id, or a template's id: Seed then picks the
	// instance (seed modulo their number; a random one without it).
	Task string `json:"task"`
	Seed *int64 `json:"seed,omitempty"`
	// Observation is screenshot, tree, both or som; "": screenshot.
	Observation string `json:"observation,omitempty"`
	// Image is png or jpeg; "": png.
	Image string `json:"image,omitempty"`
	// Inline puts the screenshot in the answers (base64); false: the
	// client fetches it from ImageURL.
	Inline bool `json:"inline,omitempty"`
	// Format and Unit are the defaults of the steps' replies.
	Format string `json:"format,omitempty"`
	Unit   string `json:"unit,omitempty"`
	// Space is the coordinate space the policy sees and speaks (the
	// Space* values, or a display WIDTHxHEIGHT); "": the screen, as it
	// is, in Unit.
	Space string `json:"space,omitempty"`
}

// Coordinate spaces a rollout may ask for. In every space but the screen
// the screenshot is resized to the space's image, the tree's and marks'
// positions are given in that image's pixels, and the points of the
// steps' actions and replies are read in it and mapped to the screen.
const (
	// SpaceScreen: the screen as it is; points in Unit (px, ratio, k).
	SpaceScreen = "screen"
	// SpaceSmartResize: the screenshot after UI-TARS's (and
	// Qwen2.5-VL's) smart resize, points in its pixels.
	SpaceSmartResize = "smart-resize"
	// SpaceAnthropic: the display Anthropic's computer-use tool is
	// declared (XGA, WXGA, FWXGA, or the screen scaled to fit the API),
	// points in its pixels.
	SpaceAnthropic = "anthropic"
	// A display WIDTHxHEIGHT, e.g. 1024x768: the screen scaled to it, as
	// for OpenAI's computer-use tool, points in its pixels.
)

// Space is the coordinate space of a rollout's observations and steps.
type Space struct {
	Name   string      `json:"name"`   // what the rollout asked for
	Screen action.Size `json:"screen"` // the environment's screen
	Image  action.Size `json:"image"`  // the screenshot as the policy gets it
	Unit   string      `json:"unit"`   // how the points read: px of Image, ratio or k
	Rule   string      `json:"rule"`   // how Image was chosen
}

// Observation is what the policy observes at a step.
type Observation struct {
	Step   int         `json:"step"`
	Screen action.Size `json:"screen"`
	// Image is the screenshot, base64, when the rollout asked for it
	// inline; ImageURL is where to fetch it otherwise (until the next
	// step). ImageFormat says which (png or jpeg).
	Image       string         `json:"image,omitempty"`
	ImageURL    string         `json:"image_url,omitempty"`
	ImageFormat string         `json:"image_format,omitempty"`
	Tree        string         `json:"tree,omitempty"`
	Marks       []observe.Mark `json:"marks,omitempty"`
	Tabs        []observe.Tab  `json:"tabs,omitempty"`
	// Feedback is what happened to the last step's actions: a reply that
	// did not parse, an action refused, what the environment did.
	Feedback string `json:"feedback,omitempty"`
	// Space is the coordinate space of the image, tree, marks and the
	// next step's points, when the rollout asked for one.
	Space *Space `json:"space,omitempty"`
}

// Statuses of a rollout.
const (
	StatusRunning  = "running"  // steps may be taken
	StatusFinished = "finished" // the checks decided: Final holds the reward
	StatusError    = "error"    // an infrastructure fault ended it: no reward
)

// Rollout is the answer of POST /v1/rollouts and GET /v1/rollouts/{id}.
type Rollout struct {
	ID          string       `json:"id"`
	Task        string       `json:"task"`
	Instruction string       `json:"instruction"`
	Status      string       `json:"status"`
	Observation *Observation `json:"observation,omitempty"`
	Info        Info         `json:"info"`
	Final       *Final       `json:"final,omitempty"`
}

// StepRequest is the body of POST /v1/rollouts/{id}/step: actions in the
// unified action space, or a model's raw reply in a format Proctor
// parses (the rollout's format when Format is empty).
type StepRequest struct {
	Actions []action.Action `json:"actions,omitempty"`
	Reply   *string         `json:"reply,omitempty"`
	Format  string          `json:"format,omitempty"`
	Unit    string          `json:"unit,omitempty"`
}

// StepResponse is the answer of a step.
type StepResponse struct {
	// Observation is the next step's; none when Done.
	Observation *Observation `json:"observation,omitempty"`
	// Reward is the step's: the rise of the milestone score where the
	// task has milestones, else 0. The final reward is Final's.
	Reward float64 `json:"reward"`
	Done   bool    `json:"done"`
	Info   Info    `json:"info"`
	// Final is the rollout's end when Done: the checks' reward, or the
	// fault that gave none.
	Final *Final `json:"final,omitempty"`
}

// Info is where the rollout stands.
type Info struct {
	Status string `json:"status"`
	Step   int    `json:"step"` // the steps observed
	// StepsLeft and TimeLeft are what the budget leaves.
	StepsLeft int     `json:"steps_left"`
	TimeLeft  float64 `json:"time_left_s"`
	// Milestone is the milestone score so far (0..1); Milestones says
	// whether the task has milestones that step rewards follow.
	Milestone  float64 `json:"milestone"`
	Milestones bool    `json:"milestones"`
	// Performed lists the actions the environment performed this step.
	Performed []action.Action `json:"performed,omitempty"`
	// Errors are the step's problems the policy caused: a reply that did
	// not parse, an action refused. They end nothing.
	Errors []string `json:"errors,omitempty"`
	// End says why the rollout ended, once it has.
	End string `json:"end,omitempty"`
}

// Final is how a rollout ended. Status finished: the task's checks gave
// Reward (1 for a success, else 0), the outcome and the verdicts. Status
// error: the environment or a check failed, Reason says how, and there is
// no reward: an infrastructure fault is never an agent's failure.
type Final struct {
	Status  string   `json:"status"`
	Reward  *float64 `json:"reward,omitempty"`
	Outcome string   `json:"outcome"`
	Reason  string   `json:"reason"`
	// Milestone is the final milestone score (0..1); MilestoneDelta what
	// it adds to the step rewards given so far.
	Milestone      float64         `json:"milestone"`
	MilestoneDelta float64         `json:"milestone_delta"`
	Steps          int             `json:"steps"`
	Verdict        json.RawMessage `json:"verdict,omitempty"`
	// SideEffects is what else the policy changed in the environment,
	// where the task declares what may change (changes:) or has a
	// side_effects check.
	SideEffects *SideEffects `json:"side_effects,omitempty"`
	// Run and Repeat name the episode in the run folder (proctor report,
	// proctor view).
	Run    string `json:"run"`
	Repeat int    `json:"repeat"`
}

// Side-effect verdicts.
const (
	SideEffectsPass = "pass" // nothing changed outside what the task allows
	SideEffectsFail = "fail" // Violations lists what did
)

// SideEffects is the side-effect verdict of a rollout: the changes to the
// environment's state between the end of the task's setup and its
// checks, noise filtered, that the task does not allow.
type SideEffects struct {
	Verdict    string      `json:"verdict"`
	Violations []Violation `json:"violations"`
	// Allowed and Filtered count the changes the task allows and those
	// filtered as the environment's noise.
	Allowed  int `json:"allowed"`
	Filtered int `json:"filtered"`
	// Truncated: there were more changes than were listed.
	Truncated bool `json:"truncated,omitempty"`
	// Checked says whether a side_effects check of the task counts the
	// verdict in the reward; false: it is given for the record only.
	Checked bool `json:"checked"`
}

// Violation is one change the task does not allow.
type Violation struct {
	Kind   string   `json:"kind"` // file, clipboard, window, process, cookie, local_storage, session_storage, tab, request
	Key    string   `json:"key"`
	Origin string   `json:"origin,omitempty"`
	Op     string   `json:"op"`             // created, deleted or changed
	What   []string `json:"what,omitempty"` // for changed: the fields that differ
	// Text names the change in a line: "created file ~/a.txt".
	Text string `json:"text"`
}

// Error kinds, each with its HTTP status.
const (
	KindBadRequest   = "bad_request"  // 400
	KindUnauthorized = "unauthorized" // 401
	KindNotFound     = "not_found"    // 404: no such task, rollout or route
	KindBadMethod    = "bad_method"   // 405
	KindDone         = "done"         // 409: the rollout ended
	KindBusy         = "busy"         // 409: another call on the rollout runs
	KindGone         = "expired"      // 410: the rollout expired or was deleted
	KindTooLarge     = "too_large"    // 413
	KindClientLimit  = "client_limit" // 429: the client holds its limit of rollouts
	KindExhausted    = "exhausted"    // 503: no environment is free
	KindFault        = "fault"        // 502: an environment failed before the rollout began
	KindInternal     = "internal"     // 500
)

// Status is the HTTP status of an error kind.
func Status(kind string) int {
	switch kind {
	case KindBadRequest:
		return 400
	case KindUnauthorized:
		return 401
	case KindNotFound:
		return 404
	case KindBadMethod:
		return 405
	case KindDone, KindBusy:
		return 409
	case KindGone:
		return 410
	case KindTooLarge:
		return 413
	case KindClientLimit:
		return 429
	case KindExhausted:
		return 503
	case KindFault:
		return 502
	}
	return 500
}

// Error is the body of every error answer.
type Error struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
	// RetryAfter is the seconds to wait before asking again (503, 429),
	// as the Retry-After header says.
	RetryAfter int `json:"retry_after,omitempty"`
}
