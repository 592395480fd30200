package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/proctor-eval/proctor/statediff"
)

// What else an episode changed: the diff of the environment's state
// between the end of its setup and the start of its checks (package
// statediff documents its JSON, which reports and the viewer read), a
// row per episode in the table changes.

const changesSchema = `CREATE TABLE IF NOT EXISTS changes (
	task TEXT NOT NULL, repeat INTEGER NOT NULL, info TEXT NOT NULL,
	PRIMARY KEY (task, repeat))`

// ErrNoChanges is returned by Changes for an episode whose state diff was
// not recorded (an error episode, or a run made before diffs were kept).
var ErrNoChanges = errors.New("no recorded state diff")

// SaveChanges records an episode's state diff, replacing an earlier one
// of the same task and repeat.
func (s *Store) SaveChanges(task string, repeat int, d *statediff.Diff) error {
	if d == nil {
		return fmt.Errorf("%s: state diff of %s #%d: nil diff", s.Dir, task, repeat)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("%s: state diff of %s #%d: %w", s.Dir, task, repeat, err)
	}
	if _, err := s.db.Exec(changesSchema); err != nil {
		return err
	}
	_, err = s.db.Exec(`INSERT INTO changes (task, repeat, info) VALUES (?, ?, ?)
		ON CONFLICT(task, repeat) DO UPDATE SET info = excluded.info`, task, repeat, string(b))
	return err
}

// Changes reads an episode's state diff; ErrNoChanges when there is none.
func (s *Store) Changes(task string, repeat int) (*statediff.Diff, error) {
	if _, err := s.db.Exec(changesSchema); err != nil {
		return nil, err
	}
	var info string
	err := s.db.QueryRow(`SELECT info FROM changes WHERE task = ? AND repeat = ?`, task, repeat).Scan(&info)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s: %s #%d: %w", s.Dir, task, repeat, ErrNoChanges)
	}
	if err != nil {
		return nil, err
	}
	var d statediff.Diff
	if err := json.Unmarshal([]byte(info), &d); err != nil {
		return nil, fmt.Errorf("%s: state diff of %s #%d: %w", s.Dir, task, repeat, err)
	}
	return &d, nil
}

// AllChanges reads the state diff of every episode that has one, by task
// and repeat.
func (s *Store) AllChanges() (map[ReviewKey]*statediff.Diff, error) {
	if _, err := s.db.Exec(changesSchema); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(`SELECT task, repeat, info FROM changes`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[ReviewKey]*statediff.Diff{}
	for rows.Next() {
		var k ReviewKey
		var info string
		if err := rows.Scan(&k.Task, &k.Repeat, &info); err != nil {
			return nil, err
		}
		var d statediff.Diff
		if err := json.Unmarshal([]byte(info), &d); err != nil {
			return nil, fmt.Errorf("%s: state diff of %s #%d: %w", s.Dir, k.Task, k.Repeat, err)
		}
		out[k] = &d
	}
	return out, rows.Err()
}
