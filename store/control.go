package store

import (
	"encoding/json"
	"time"
)

// JudgeControl is the judge's answer on one control before a run or a
// proctor judge: evidence of the suite's validation whose verdict is
// known (a gold trajectory's judge check passes, a wrong one's fails).
type JudgeControl struct {
	Judge string    `json:"judge"` // judgment.Model's name
	At    time.Time `json:"at"`
	// Control names it: "TASK [TRAJECTORY] CHECK".
	Control  string `json:"control"`
	Evidence string `json:"evidence"` // the judge check's evidence kind
	Want     bool   `json:"want"`     // the known verdict: pass or fail
	Got      bool   `json:"got"`      // the judge's verdict
	Reason   string `json:"reason,omitempty"`
	// Err is set when the judge gave no verdict; the control is then
	// wrong.
	Err string `json:"error,omitempty"`
}

// Right reports whether the judge gave the known verdict.
func (c JudgeControl) Right() bool { return c.Err == "" && c.Got == c.Want }

const controlSchema = `CREATE TABLE IF NOT EXISTS judge_control (
	judge TEXT NOT NULL, control TEXT NOT NULL, info TEXT NOT NULL,
	PRIMARY KEY (judge, control))`

// SaveJudgeControls records a judge's answers on its controls, replacing
// the ones that judge gave before.
func (s *Store) SaveJudgeControls(judge string, cs []JudgeControl) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(controlSchema); err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM judge_control WHERE judge = ?`, judge); err != nil {
		return err
	}
	for _, c := range cs {
		c.Judge, c.At = judge, c.At.UTC()
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO judge_control (judge, control, info) VALUES (?, ?, ?)
			ON CONFLICT(judge, control) DO UPDATE SET info = excluded.info`, judge, c.Control, string(b)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// JudgeControls returns the judges' answers on their controls, by judge
// and control; none in a run that asked none (or was made before
// controls were asked).
func (s *Store) JudgeControls() ([]JudgeControl, error) {
	if _, err := s.db.Exec(controlSchema); err != nil {
		return nil, err
	}
	return scanInfo[JudgeControl](s.db.Query(`SELECT info FROM judge_control ORDER BY judge, control`))
}
