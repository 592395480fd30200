package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Receipt says exactly what a run ran: the harness, the suite and each
// task's content, the environment, the agent and the judge, the machine
// and when. The runner writes it when the run starts and completes it at
// the end; proctor verify compares it with the suite and environment of
// today.
type Receipt struct {
	Harness string `json:"harness"`
	// Suite is the suite as given, SuiteHash the fingerprint of the
	// selected tasks (Run.SuiteHash) and SuiteFile the hash of the
	// suite's suite.yaml ("" when it has none).
	Suite     string `json:"suite"`
	SuiteHash string `json:"suite_hash"`
	SuiteFile string `json:"suite_file,omitempty"`
	// Filter and Tag are the selection the run made of the suite.
	Filter string        `json:"filter,omitempty"`
	Tag    string        `json:"tag,omitempty"`
	Tasks  []TaskReceipt `json:"tasks"`
	// Packages are the Debian package versions on the machine that runs
	// the harness of the apps the tasks use and of the desktop and the
	// browser (xvfb, chromium): "" for a package not installed.
	Packages map[string]string `json:"packages,omitempty"`
	// Envs are the --env values; Places the places they made.
	Envs   []string       `json:"envs,omitempty"`
	Places []PlaceReceipt `json:"places,omitempty"`
	// Seen are the environments as they described themselves when
	// started during the run (their kind, screen and versions).
	Seen []SeenEnv `json:"seen,omitempty"`

	Agent       string          `json:"agent"`
	Model       string          `json:"model,omitempty"`
	AgentParams json.RawMessage `json:"agent_params,omitempty"` // the agent's model options, as recorded
	Obs         string          `json:"obs"`
	PromptHash  string          `json:"prompt_hash,omitempty"` // of the agent's prompt template
	Judge       *JudgeReceipt   `json:"judge,omitempty"`
	// Seeds are the seeds of the run's random parts, by what they seed.
	Seeds    map[string]int64 `json:"seeds,omitempty"`
	Repeat   int              `json:"repeat"`
	Parallel int              `json:"parallel"`
	MaxCost  float64          `json:"max_cost,omitempty"`

	Machine  Machine   `json:"machine"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"` // zero while the run has not ended
	// Resumed lists the times the run was continued with --resume, and
	// what had changed since the receipt was written.
	Resumed []Resumption `json:"resumed,omitempty"`
}

// TaskReceipt is one task as it was run: the hash of its task file and of
// its content as loaded (a template's instance shares its file), the
// screen size it asks for and the assets it uses.
type TaskReceipt struct {
	ID         string         `json:"id"`
	File       string         `json:"file"` // relative to the suite
	FileHash   string         `json:"file_hash"`
	Hash       string         `json:"hash"`
	Resolution string         `json:"resolution"`
	Assets     []AssetReceipt `json:"assets,omitempty"`
}

// AssetReceipt is an asset a task uses and the hash of its content ("" when
// it could not be read).
type AssetReceipt struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

// PlaceReceipt is one place of the run's pool: its name, the environment
// types it serves and its fixed screen size ("" when it takes the size
// of each task).
type PlaceReceipt struct {
	Name   string   `json:"name"`
	Types  []string `json:"types"`
	Screen string   `json:"screen,omitempty"`
	Remote bool     `json:"remote,omitempty"`
}

// SeenEnv is an environment started during the run, as it described
// itself.
type SeenEnv struct {
	Place    string            `json:"place"`
	Kind     string            `json:"kind"`
	Screen   string            `json:"screen"`
	Display  string            `json:"display,omitempty"`
	Versions map[string]string `json:"versions,omitempty"`
}

// JudgeReceipt is the judge of the run's judge checks.
type JudgeReceipt struct {
	Models     []string `json:"models"`
	Provider   string   `json:"provider,omitempty"`
	BaseURLs   []string `json:"base_urls,omitempty"`
	PromptHash string   `json:"prompt_hash"`
}

// Machine is the machine that ran the harness.
type Machine struct {
	OS     string `json:"os"`
	Arch   string `json:"arch"`
	Kernel string `json:"kernel,omitempty"`
	Cores  int    `json:"cores"`
	Memory int64  `json:"memory,omitempty"` // bytes
	Go     string `json:"go"`
}

// Resumption is a continuation of the run: when, with which harness, and
// the differences from the receipt it found (Drift lines).
type Resumption struct {
	At      time.Time `json:"at"`
	Harness string    `json:"harness"`
	Drift   []string  `json:"drift,omitempty"`
}

// ErrNoReceipt is returned by Receipt for a run folder without one (runs
// made before receipts were kept).
var ErrNoReceipt = errors.New("no receipt recorded in this run")

// SaveReceipt records the run's receipt, replacing the one recorded.
func (s *Store) SaveReceipt(r Receipt) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(`INSERT INTO receipt (id, info) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET info = excluded.info`, string(b))
	return err
}

// Receipt reads the run's receipt; ErrNoReceipt when there is none.
func (s *Store) Receipt() (Receipt, error) {
	var info string
	err := s.db.QueryRow(`SELECT info FROM receipt WHERE id = 1`).Scan(&info)
	if errors.Is(err, sql.ErrNoRows) {
		return Receipt{}, fmt.Errorf("%s: %w", s.Dir, ErrNoReceipt)
	}
	if err != nil {
		return Receipt{}, err
	}
	var r Receipt
	if err := json.Unmarshal([]byte(info), &r); err != nil {
		return Receipt{}, fmt.Errorf("%s: unreadable receipt: %w", s.Dir, err)
	}
	return r, nil
}
