package rescore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/judge"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// VerdictsFile is the file of recorded judge verdicts kept beside a
// suite's tasks, which proctor validate --judge-offline decides judge
// checks from where no model can be reached (CI).
const VerdictsFile = "judge-verdicts.json"

// VerdictsVersion is the version of the recorded verdicts' format.
const VerdictsVersion = 1

// Verdicts are judge verdicts recorded by task, trajectory and check:
// unlike the judge's cache, which is keyed by the evidence's bytes, they
// apply to an episode of the same trajectory whatever its screenshots
// look like, so a validation replays them on any desktop.
type Verdicts struct {
	Version int    `json:"version"`
	About   string `json:"about,omitempty"` // how they were made
	// Judge is the judge that decided them (judgment.Model's name).
	Judge    string            `json:"judge"`
	Verdicts []RecordedVerdict `json:"verdicts"`
}

// RecordedVerdict is a judge's verdict on one judge check of one
// trajectory of a task.
type RecordedVerdict struct {
	Task       string `json:"task"`
	Trajectory string `json:"trajectory"`
	// Check is the check's name (its label; a second check of the task
	// with the same label is "NAME #2", and so on).
	Check    string           `json:"check"`
	Evidence string           `json:"evidence"`
	Verdict  judgment.Verdict `json:"verdict"`
}

func (r RecordedVerdict) key() string { return r.Task + "\x00" + r.Trajectory + "\x00" + r.Check }

// ReadVerdicts reads recorded verdicts; the error wraps os.ErrNotExist
// when there is no file.
func ReadVerdicts(path string) (*Verdicts, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	vs, err := ParseVerdicts(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vs, nil
}

// ParseVerdicts decodes recorded verdicts, strictly: unknown fields, a
// version other than VerdictsVersion, an entry without task, trajectory
// or check, a verdict without a reason or with a score outside [0, 1],
// and the same check given twice are errors.
func ParseVerdicts(b []byte) (*Verdicts, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var vs Verdicts
	if err := dec.Decode(&vs); err != nil {
		return nil, fmt.Errorf("recorded verdicts: %w", err)
	}
	if dec.More() {
		return nil, errors.New("recorded verdicts: data after the JSON object")
	}
	if vs.Version != VerdictsVersion {
		return nil, fmt.Errorf("recorded verdicts: version %d (want %d)", vs.Version, VerdictsVersion)
	}
	if strings.TrimSpace(vs.Judge) == "" {
		return nil, errors.New("recorded verdicts: no judge named")
	}
	seen := map[string]bool{}
	for i, r := range vs.Verdicts {
		where := fmt.Sprintf("recorded verdict %d", i+1)
		switch {
		case r.Task == "" || r.Trajectory == "" || r.Check == "":
			return nil, fmt.Errorf("%s: task, trajectory and check are required", where)
		case seen[r.key()]:
			return nil, fmt.Errorf("%s: %s [%s] check %q is given twice", where, r.Task, r.Trajectory, r.Check)
		case strings.TrimSpace(r.Verdict.Reason) == "":
			return nil, fmt.Errorf("%s: %s [%s] check %q: the verdict has no reason", where, r.Task, r.Trajectory, r.Check)
		case !(r.Verdict.Score >= 0 && r.Verdict.Score <= 1):
			return nil, fmt.Errorf("%s: %s [%s] check %q: score %v is not in [0, 1]", where, r.Task, r.Trajectory, r.Check, r.Verdict.Score)
		}
		seen[r.key()] = true
	}
	return &vs, nil
}

// Write stores the verdicts at path, sorted by task, trajectory and check,
// indented, so that the file diffs well.
func (vs *Verdicts) Write(path string) error {
	vs.Version = VerdictsVersion
	sort.SliceStable(vs.Verdicts, func(a, b int) bool {
		x, y := vs.Verdicts[a], vs.Verdicts[b]
		if x.Task != y.Task {
			return x.Task < y.Task
		}
		if x.Trajectory != y.Trajectory {
			return x.Trajectory < y.Trajectory
		}
		return x.Check < y.Check
	})
	b, err := json.MarshalIndent(vs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func (vs *Verdicts) find(taskID, trajectory, name string) (RecordedVerdict, bool) {
	want := RecordedVerdict{Task: taskID, Trajectory: trajectory, Check: name}.key()
	for _, r := range vs.Verdicts {
		if r.key() == want {
			return r, true
		}
	}
	return RecordedVerdict{}, false
}

// SplitVariant splits a validation episode's task, "ID [TRAJECTORY]"
// (validate's naming), into the task's id and the trajectory; ok is false
// for an episode of an ordinary run.
func SplitVariant(id string) (taskID, trajectory string, ok bool) {
	if !strings.HasSuffix(id, "]") {
		return id, "", false
	}
	i := strings.LastIndex(id, " [")
	if i < 0 {
		return id, "", false
	}
	return id[:i], id[i+2 : len(id)-1], true
}

// checkNames names a task's judge checks, in the order of
// check.Suite.JudgeChecks: each its label, a repeated label numbered.
func checkNames(labels []string) []string {
	out := make([]string, len(labels))
	n := map[string]int{}
	for i, l := range labels {
		n[l]++
		out[i] = l
		if n[l] > 1 {
			out[i] = fmt.Sprintf("%s #%d", l, n[l])
		}
	}
	return out
}

// CollectVerdicts gathers the verdicts the run's own judge gave in the
// validation run of st: every decided judge check of every episode named
// "ID [TRAJECTORY]". Undecided checks are left out and counted.
func CollectVerdicts(st *store.Store, judgeName string) (vs *Verdicts, undecided int, err error) {
	jgs, err := st.Judgements()
	if err != nil {
		return nil, 0, err
	}
	vs = &Verdicts{Version: VerdictsVersion, Judge: judgeName}
	for _, jg := range jgs {
		taskID, traj, ok := SplitVariant(jg.Task)
		if !ok || jg.Source != store.JudgedInRun || jg.Judge != judgeName {
			continue
		}
		labels := make([]string, len(jg.Checks))
		for i, c := range jg.Checks {
			labels[i] = c.Name
		}
		for i, name := range checkNames(labels) {
			c := jg.Checks[i]
			if c.Err != "" || c.Judge == nil {
				undecided++
				continue
			}
			v := judgment.Verdict{Pass: c.Pass, Score: c.Judge.Score, Reason: c.Reason, Criteria: c.Judge.Criteria, Model: c.Judge.Model}
			for _, vote := range c.Judge.Votes {
				v.Votes = append(v.Votes, judgment.Verdict{Pass: vote.Pass, Score: vote.Score, Reason: vote.Reason, Model: vote.Model})
			}
			vs.Verdicts = append(vs.Verdicts, RecordedVerdict{Task: taskID, Trajectory: traj, Check: name, Evidence: c.Judge.Evidence, Verdict: v})
		}
	}
	return vs, undecided, nil
}

// Decided is an episode that the recorded verdicts decided.
type Decided struct {
	Result   store.Result // the episode's result as it is now
	Recorded int          // judge checks decided from the recorded verdicts
	// Missing names the judge checks that have no recorded verdict; the
	// episode then stays an error.
	Missing []string
}

// DecideRecorded decides the judge checks of every validation episode of
// st that its judge left undecided (Undecided) from the recorded
// verdicts, which are found by task, trajectory and check name whatever
// the evidence, and evaluates the episode's checks again on its stored
// evidence (with the suite s's checks), saving the new result and the
// judgement in st.
func DecideRecorded(ctx context.Context, st *store.Store, s *task.Suite, vs *Verdicts) ([]Decided, error) {
	results, err := st.Results()
	if err != nil {
		return nil, err
	}
	var out []Decided
	for _, r := range results {
		taskID, traj, ok := SplitVariant(r.Task)
		if !ok || !Undecided(r) {
			continue
		}
		t, ok := s.Task(taskID)
		if !ok {
			continue
		}
		cs, err := check.CompileAll(t.Checks, t.Milestones)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", taskID, err)
		}
		ev, err := Stored(st, r)
		if err != nil {
			return nil, fmt.Errorf("%s #%d: %w", r.Task, r.Repeat, err)
		}
		ev.AssetDir = s.AssetPath("")
		d := Decided{}
		// What each judge check asks, from the stored evidence, tells the
		// recorded verdict that answers it.
		jcs := cs.JudgeChecks()
		labels := make([]string, len(jcs))
		for i, c := range jcs {
			labels[i] = c.Spec.Label()
		}
		byKey := map[string]judgment.Verdict{}
		for i, name := range checkNames(labels) {
			cp := &capture{}
			jcs[i].EvaluateWith(ctx, ev, nil, cp)
			rv, found := vs.find(taskID, traj, name)
			if !found || !cp.asked {
				d.Missing = append(d.Missing, name)
				continue
			}
			byKey[judge.Key("", "", cp.req)] = rv.Verdict
		}
		cs.Judge = recordedModel{name: vs.Judge, byKey: byKey}
		end := End(ev.Recorded, check.Error)
		if end == check.EndError {
			end = check.EndBudget
		}
		v := cs.Evaluate(ctx, ev, end)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, jr := range store.JudgeResults(v) {
			if jr.Err == "" && jr.Judge != nil {
				d.Recorded++
			}
		}
		if first, undecided := check.UndecidedJudge(v); undecided {
			v.Reason = fmt.Sprintf("no recorded verdict in %s for %s [%s] check %q: %s", VerdictsFile, taskID, traj, strings.Join(d.Missing, ", "), first)
		}
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		r.Outcome, r.Reason, r.Milestone, r.Verdict = string(v.Outcome), v.Reason, v.MilestoneScore, vb
		if err := st.SaveResult(r); err != nil {
			return nil, err
		}
		jg := store.Judgement{Task: r.Task, Repeat: r.Repeat, Judge: vs.Judge, At: r.Finished, Source: store.JudgedInRun, Checks: store.JudgeResults(v)}
		if first, undecided := check.UndecidedJudge(v); undecided {
			jg.Err = first
		}
		if err := st.SaveJudgement(jg); err != nil {
			return nil, err
		}
		d.Result = r
		out = append(out, d)
	}
	return out, nil
}

// capture is a judge that keeps the request it is asked and gives no
// verdict.
type capture struct {
	req   judgment.Request
	asked bool
}

func (c *capture) Name() string { return "capture" }

func (c *capture) Judge(_ context.Context, req judgment.Request) (judgment.Verdict, error) {
	c.req, c.asked = req, true
	return judgment.Verdict{}, fmt.Errorf("%w: capturing the request", judge.ErrNotRecorded)
}

// recordedModel answers each request with the recorded verdict of the
// check that asks it.
type recordedModel struct {
	name  string
	byKey map[string]judgment.Verdict
}

func (m recordedModel) Name() string { return m.name }

func (m recordedModel) Judge(_ context.Context, req judgment.Request) (judgment.Verdict, error) {
	v, ok := m.byKey[judge.Key("", "", req)]
	if !ok {
		return judgment.Verdict{}, fmt.Errorf("%w for this check of this trajectory in %s", judge.ErrNotRecorded, VerdictsFile)
	}
	v.Cached = true
	return v, nil
}
