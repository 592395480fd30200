package rescore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// ControlsDir is the folder of judge controls kept beside a suite's
// tasks: ControlsFile and the images it names. proctor validate
// --record-verdicts writes it; proctor run and proctor judge ask their
// judge on every control before judging anything.
const ControlsDir = "judge-controls"

// ControlsFile is the controls' file in ControlsDir.
const ControlsFile = "controls.json"

// ControlsVersion is the version of the controls' format.
const ControlsVersion = 1

// ControlsPerKind is how many controls are kept for each evidence kind
// and each known verdict (pass, fail).
const ControlsPerKind = 3

// goldTrajectory is validate's name of the gold solution's trajectory
// (validate.Gold), the one whose judge checks must pass.
const goldTrajectory = "gold"

// Controls are evidence with a known verdict: what a judge check of the
// suite was shown in a validation, and the verdict it must get (pass for
// the gold trajectory, fail for a wrong one), as the validation's judge
// recorded it. A judge that gets them wrong is not to be trusted with a
// run.
type Controls struct {
	Version int    `json:"version"`
	About   string `json:"about,omitempty"`
	// Judge is the judge whose verdicts chose them.
	Judge    string    `json:"judge"`
	Controls []Control `json:"controls"`
}

// Control is one judge check's request with its known verdict.
type Control struct {
	Task       string `json:"task"`
	Trajectory string `json:"trajectory"`
	Check      string `json:"check"`
	// Evidence is the check's evidence kind.
	Evidence    string               `json:"evidence"`
	Pass        bool                 `json:"pass"` // the known verdict
	Expectation string               `json:"expectation"`
	Criteria    []judgment.Criterion `json:"criteria,omitempty"`
	Parts       []ControlPart        `json:"parts"`
}

// ControlPart is one part of a control's evidence: a text, or an image
// kept in its own file of ControlsDir, named by its content's hash.
type ControlPart struct {
	Label  string `json:"label"`
	Text   string `json:"text,omitempty"`
	Image  string `json:"image,omitempty"` // the file
	Format string `json:"format,omitempty"`
	data   []byte
}

// Name names the control in messages: "TASK [TRAJECTORY] CHECK".
func (c Control) Name() string { return fmt.Sprintf("%s [%s] %s", c.Task, c.Trajectory, c.Check) }

// Request is what the judge is asked.
func (c Control) Request() judgment.Request {
	req := judgment.Request{Expectation: c.Expectation, Criteria: c.Criteria}
	for _, p := range c.Parts {
		if p.Image != "" {
			req.Evidence = append(req.Evidence, judgment.Image(p.Label, p.Format, p.data))
		} else {
			req.Evidence = append(req.Evidence, judgment.Text(p.Label, p.Text))
		}
	}
	return req
}

// verdictWord is a verdict in words.
func verdictWord(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

// CollectControls chooses controls among the judge checks of the
// validation in st that judgeName decided: those of the gold trajectory
// of a task whose episode succeeded, which passed, and those of a wrong
// trajectory (any other) whose episode failed as it should, which
// failed; at most perKind for each evidence kind and verdict, in the
// order of task, trajectory and check. Each one's request is made again
// from the episode's stored evidence, with s's checks.
func CollectControls(ctx context.Context, st *store.Store, s *task.Suite, judgeName string, perKind int) ([]Control, error) {
	results, err := st.Results()
	if err != nil {
		return nil, err
	}
	jgs, err := st.Judgements()
	if err != nil {
		return nil, err
	}
	byTask := map[string]store.Judgement{}
	for _, jg := range jgs {
		if jg.Source == store.JudgedInRun && jg.Judge == judgeName {
			byTask[jg.Task] = jg
		}
	}
	var out []Control
	taken := map[string]int{}
	for _, r := range results {
		taskID, traj, ok := SplitVariant(r.Task)
		jg, judged := byTask[r.Task]
		if !ok || !judged {
			continue
		}
		gold := traj == goldTrajectory
		if gold != (r.Outcome == string(check.Success)) || r.Outcome == string(check.Error) {
			continue // the trajectory did not end as it should: no known verdict
		}
		t, ok := s.Task(taskID)
		if !ok {
			continue
		}
		cs, err := check.CompileAll(t.Checks, t.Milestones)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", taskID, err)
		}
		labels := make([]string, len(jg.Checks))
		for i, c := range jg.Checks {
			labels[i] = c.Name
		}
		decided := map[string]check.Result{}
		for i, name := range checkNames(labels) {
			decided[name] = jg.Checks[i]
		}
		jcs := cs.JudgeChecks()
		labels = make([]string, len(jcs))
		for i, c := range jcs {
			labels[i] = c.Spec.Label()
		}
		var ev *Screened
		for i, name := range checkNames(labels) {
			d, ok := decided[name]
			if !ok || d.Err != "" || d.Judge == nil || d.Pass != gold {
				continue
			}
			kind := jcs[i].Spec.Evidence
			key := kind + "\x00" + verdictWord(gold)
			if taken[key] >= perKind {
				continue
			}
			if ev == nil {
				if ev, err = Stored(st, r); err != nil {
					return nil, fmt.Errorf("%s #%d: %w", r.Task, r.Repeat, err)
				}
				ev.AssetDir = s.AssetPath("")
			}
			cp := &capture{}
			jcs[i].EvaluateWith(ctx, ev, nil, cp)
			if !cp.asked {
				continue
			}
			c := Control{Task: taskID, Trajectory: traj, Check: name, Evidence: kind, Pass: gold,
				Expectation: cp.req.Expectation, Criteria: cp.req.Criteria}
			for _, p := range cp.req.Evidence {
				cp := ControlPart{Label: p.Label, Text: p.Text}
				if p.IsImage() {
					cp.Format, cp.data = cmp.Or(p.Format, "png"), p.Image
				}
				c.Parts = append(c.Parts, cp)
			}
			taken[key]++
			out = append(out, c)
		}
	}
	return out, ctx.Err()
}

// Merge keeps of old the controls of the tasks not in fresh's, then
// chooses again at most perKind for each evidence kind and verdict, in
// the order of task, trajectory and check.
func Merge(fresh, old []Control, validated []string, perKind int) []Control {
	all := slices.Clone(fresh)
	for _, c := range old {
		if !slices.Contains(validated, c.Task) {
			all = append(all, c)
		}
	}
	slices.SortStableFunc(all, func(a, b Control) int {
		return cmp.Or(cmp.Compare(a.Task, b.Task), cmp.Compare(a.Trajectory, b.Trajectory), cmp.Compare(a.Check, b.Check))
	})
	taken := map[string]int{}
	var out []Control
	for _, c := range all {
		key := c.Evidence + "\x00" + verdictWord(c.Pass)
		if taken[key] < perKind {
			taken[key]++
			out = append(out, c)
		}
	}
	return out
}

// WriteControls writes the controls into the folder dir (ControlsDir of
// a suite), replacing what it held: ControlsFile, and each image in a
// file named by its hash.
func WriteControls(dir string, cs *Controls) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cs.Version = ControlsVersion
	for i := range cs.Controls {
		for j := range cs.Controls[i].Parts {
			p := &cs.Controls[i].Parts[j]
			if p.data == nil {
				continue
			}
			sum := sha256.Sum256(p.data)
			p.Image = hex.EncodeToString(sum[:8]) + "." + p.Format
			if err := os.WriteFile(filepath.Join(dir, p.Image), p.data, 0o644); err != nil {
				return err
			}
		}
	}
	b, err := json.MarshalIndent(cs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ControlsFile), append(b, '\n'), 0o644)
}

// ReadControls reads the controls of the folder dir with their images;
// the error wraps os.ErrNotExist when it holds none.
func ReadControls(dir string) (*Controls, error) {
	path := filepath.Join(dir, ControlsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cs Controls
	if err := dec.Decode(&cs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if cs.Version != ControlsVersion {
		return nil, fmt.Errorf("%s: version %d (want %d)", path, cs.Version, ControlsVersion)
	}
	for i := range cs.Controls {
		c := &cs.Controls[i]
		if c.Task == "" || c.Trajectory == "" || c.Check == "" || c.Expectation == "" {
			return nil, fmt.Errorf("%s: control %d: task, trajectory, check and expectation are required", path, i+1)
		}
		for j := range c.Parts {
			p := &c.Parts[j]
			if p.Image == "" {
				continue
			}
			if filepath.Base(p.Image) != p.Image || strings.HasPrefix(p.Image, ".") {
				return nil, fmt.Errorf("%s: control %s: image %q is not a file of the folder", path, c.Name(), p.Image)
			}
			if p.data, err = readImage(dir, p.Image); err != nil {
				return nil, fmt.Errorf("%s: control %s: %w", path, c.Name(), err)
			}
		}
	}
	return &cs, nil
}

// maxControlImage bounds a control's image.
const maxControlImage = 16 << 20

// readImage reads a control's image beneath dir only (a link out of the
// folder is refused: a suite from elsewhere cannot send a host file to
// the judge), a regular file of at most maxControlImage bytes.
func readImage(dir, name string) ([]byte, error) {
	f, err := os.OpenInRoot(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxControlImage {
		return nil, fmt.Errorf("image %s: not a regular file of at most %d MiB", name, maxControlImage>>20)
	}
	return io.ReadAll(io.LimitReader(f, maxControlImage))
}

// controlWorkers is how many controls are asked at once.
const controlWorkers = 4

// AskControls asks jm on every control, a few at once, each within
// timeout (0: none), and tells for each whether it gave the known
// verdict.
func AskControls(ctx context.Context, jm judgment.Model, cs []Control, timeout time.Duration) []store.JudgeControl {
	out := make([]store.JudgeControl, len(cs))
	sem := make(chan struct{}, controlWorkers)
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			jctx, cancel := ctx, context.CancelFunc(func() {})
			if timeout > 0 {
				jctx, cancel = context.WithTimeout(ctx, timeout)
			}
			defer cancel()
			v, err := jm.Judge(jctx, c.Request())
			r := store.JudgeControl{Judge: jm.Name(), At: time.Now().UTC(), Control: c.Name(), Evidence: c.Evidence, Want: c.Pass, Got: v.Pass, Reason: v.Reason}
			if err != nil {
				r.Got, r.Err = false, err.Error()
			}
			out[i] = r
		}()
	}
	wg.Wait()
	return out
}

// ErrControls is wrapped by ControlsFailed's error.
var ErrControls = errors.New("the judge failed its controls")

// ControlsFailed is an error naming the controls the judge got wrong when
// they are more than tolerance; nil otherwise.
func ControlsFailed(rs []store.JudgeControl, tolerance int) error {
	var wrong []string
	for _, r := range rs {
		if r.Right() {
			continue
		}
		got := "said " + verdictWord(r.Got)
		if r.Err != "" {
			got = "gave no verdict: " + oneLine(r.Err)
		}
		wrong = append(wrong, fmt.Sprintf("%s (%s): should %s, %s", r.Control, r.Evidence, verdictWord(r.Want), got))
	}
	if len(wrong) <= tolerance {
		return nil
	}
	judgeName := ""
	if len(rs) > 0 {
		judgeName = " " + rs[0].Judge
	}
	return fmt.Errorf("%w: the judge%s got %d of %d wrong (tolerance %d):\n  %s", ErrControls, judgeName, len(wrong), len(rs), tolerance, strings.Join(wrong, "\n  "))
}

// ControlsSummary says in one line how the judge did on its controls.
func ControlsSummary(rs []store.JudgeControl) string {
	right := 0
	for _, r := range rs {
		if r.Right() {
			right++
		}
	}
	return fmt.Sprintf("%d of %d controls right", right, len(rs))
}
