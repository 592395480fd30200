package store

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/observe"
)

// Where a judgement came from.
const (
	JudgedInRun = "run"   // the run's own judge, when the episode ended
	JudgedLater = "judge" // proctor judge, from the stored evidence
)

// Judgement is one judge's verdicts on the judge checks of an episode.
// An episode keeps one per judge: the run's own, and one for each judge
// that proctor judge asked later.
type Judgement struct {
	Task   string    `json:"task"`
	Repeat int       `json:"repeat"`
	Judge  string    `json:"judge"` // judgment.Model's name
	At     time.Time `json:"at"`
	Source string    `json:"source"` // JudgedInRun or JudgedLater
	// Checks are the judge checks' results, milestones' first, in the
	// task's order.
	Checks []check.Result `json:"checks"`
	// Err is set when the judge gave no verdict (down, malformed, refused):
	// Checks then holds what was decided before.
	Err string `json:"error,omitempty"`
}

// Pass reports whether every judge check passed, and whether the
// judgement decided at all (no error, at least one check).
func (j Judgement) Pass() (pass, decided bool) {
	if j.Err != "" || len(j.Checks) == 0 {
		return false, false
	}
	for _, c := range j.Checks {
		if c.Err != "" {
			return false, false
		}
		if !c.Pass {
			return false, true
		}
	}
	return true, true
}

// JudgeResults picks the judge checks' results out of a verdict,
// milestones' checks first.
func JudgeResults(v check.Verdict) []check.Result {
	var out []check.Result
	for _, m := range v.Milestones {
		for _, r := range m.Checks {
			if r.Kind == check.JudgeKind {
				out = append(out, r)
			}
		}
	}
	for _, r := range v.Checks {
		if r.Kind == check.JudgeKind {
			out = append(out, r)
		}
	}
	return out
}

// SaveJudgement records a judge's verdicts on an episode, replacing the
// same judge's earlier ones.
func (s *Store) SaveJudgement(j Judgement) error {
	j.At = j.At.UTC()
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(`INSERT INTO judgement (task, repeat, judge, info) VALUES (?, ?, ?, ?)
		ON CONFLICT(task, repeat, judge) DO UPDATE SET info = excluded.info`, j.Task, j.Repeat, j.Judge, string(b))
	return err
}

// Judgements returns every judgement of the run, by judge, then task and
// repeat.
func (s *Store) Judgements() ([]Judgement, error) {
	return scanInfo[Judgement](s.db.Query(`SELECT info FROM judgement ORDER BY judge, task, repeat`))
}

// StepScreen reads a stored screenshot as a judge check's evidence;
// observe.ErrNotFound for the empty name (a step without a screenshot).
func StepScreen(s *Store, name string) (check.Screen, error) {
	if name == "" {
		return check.Screen{}, fmt.Errorf("no screenshot: %w", observe.ErrNotFound)
	}
	b, err := s.Shot(name)
	if err != nil {
		return check.Screen{}, err
	}
	return check.Screen{Data: b, Format: strings.TrimPrefix(filepath.Ext(name), ".")}, nil
}
