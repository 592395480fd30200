// Package store keeps one run's results in a folder: an SQLite database
// (pure Go, WAL mode) with the run's configuration, every step and every
// task's verdict, and the screenshots stored once each by content hash.
package store

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/proctor-eval/proctor/check"
)

// DBFile and ShotDir are the parts of a run folder.
const (
	DBFile  = "results.db"
	ShotDir = "shots"
)

// Run describes a run so that runs can be compared honestly.
type Run struct {
	ID         string    `json:"id"`
	Started    time.Time `json:"started"`
	Harness    string    `json:"harness"` // Proctor's version
	Suite      string    `json:"suite"`
	SuiteHash  string    `json:"suite_hash"`
	Agent      string    `json:"agent"`
	Model      string    `json:"model,omitempty"`
	ObsMode    string    `json:"obs_mode"`
	Resolution string    `json:"resolution"`
	PromptHash string    `json:"prompt_hash,omitempty"`
	Parallel   int       `json:"parallel"`
	Repeat     int       `json:"repeat"`
	// Planned is how many episodes the run is to record (tasks times
	// repeats), so that a run in progress shows how far it is.
	Planned int             `json:"planned,omitempty"`
	Config  json.RawMessage `json:"config,omitempty"` // everything else, as given
	// Kind is "" for a run of an agent, RunValidation for the episodes
	// proctor validate kept (gold, do-nothing and wrong trajectories, whose
	// success rate means nothing).
	Kind string `json:"kind,omitempty"`
}

// RunValidation is the Kind of a folder proctor validate wrote.
const RunValidation = "validation"

// Result is one episode's outcome.
type Result struct {
	Task         string          `json:"task"`
	Instruction  string          `json:"instruction"`
	Repeat       int             `json:"repeat"`
	Level        string          `json:"level"`
	Weight       float64         `json:"weight"`
	Apps         []string        `json:"apps,omitempty"`
	Domain       string          `json:"domain,omitempty"`
	Persona      string          `json:"persona,omitempty"`
	Kind         string          `json:"kind"`
	Difficulty   string          `json:"difficulty,omitempty"`
	Outcome      string          `json:"outcome"`
	Reason       string          `json:"reason"`
	Milestone    float64         `json:"milestone"`
	Steps        int             `json:"steps"`
	Duration     time.Duration   `json:"duration"` // the agent's episode, after Setup (older runs: with it)
	InputTokens  int             `json:"input_tokens"`
	OutputTokens int             `json:"output_tokens"`
	Cost         float64         `json:"cost"`
	Attempts     int             `json:"attempts"` // 1 unless infrastructure faults were retried
	Verdict      json.RawMessage `json:"verdict,omitempty"`
	Answer       string          `json:"answer,omitempty"`
	Finished     time.Time       `json:"finished"`
	// Env is the kind of environment the episode ran in (x11, browser,
	// vnc): a browser task runs in the browser environment or in Chromium
	// on a desktop.
	Env string `json:"env,omitempty"`
	// FinalShot is the screen after the last action, the state the
	// checks judged (a file name under shots/).
	FinalShot string `json:"final_shot,omitempty"`
	// What the judge checks' models spent, apart from the agent's.
	JudgeInputTokens  int     `json:"judge_input_tokens,omitempty"`
	JudgeOutputTokens int     `json:"judge_output_tokens,omitempty"`
	JudgeCost         float64 `json:"judge_cost,omitempty"`
	// Setup is how long the services' and the environment's reset and
	// the task's setup took before the episode; Duration leaves it out.
	Setup time.Duration `json:"setup,omitempty"`
	// End is why an episode that its judge left undecided stopped (agent,
	// budget, early_stop): proctor judge needs it to decide the episode
	// later. Empty for every other episode.
	End string `json:"end,omitempty"`
	// Unparsed counts the agent's replies that could not be used,
	// Refused its turns whose actions were refused or failed by its own
	// fault (fed back to it); Problems are the first few reasons, a line
	// each, for a report to explain a bad agent.
	Unparsed int      `json:"unparsed,omitempty"`
	Refused  int      `json:"refused,omitempty"`
	Problems []string `json:"problems,omitempty"`
	// Template is the id of the template the task is an instance of
	// ("" for a task of its own): a report's intervals resample a
	// template's instances together.
	Template string `json:"template,omitempty"`
	// Interface is the task's interface (gui, gui+cli, cli): reports
	// break a suite built on it down by it.
	Interface string `json:"interface,omitempty"`
}

// Turn is the record of one step of an episode: what the agent was
// shown, what it answered and what the environment did (a setup step is
// task.Step, a performed action action.Step).
type Turn struct {
	Task   string `json:"task"`
	Repeat int    `json:"repeat"`
	Index  int    `json:"index"` // from 1
	// By is "harness" for the steps the harness took after the agent
	// (the task's after section), and empty for the agent's turns.
	By string `json:"by,omitempty"`
	// Steps are the harness's steps of such a turn (task.Step values).
	Steps   json.RawMessage `json:"steps,omitempty"`
	Shot    string          `json:"shot,omitempty"` // screenshot file name under shots/
	Tree    string          `json:"tree,omitempty"`
	Raw     string          `json:"raw,omitempty"`
	Thought string          `json:"thought,omitempty"`
	Actions json.RawMessage `json:"actions,omitempty"`
	// Space is the coordinate space the model answered in: the size of
	// the screenshot it was shown and how that was chosen (agent.Space),
	// where it was not the screen's own.
	Space json.RawMessage `json:"space,omitempty"`
	Done  json.RawMessage `json:"done,omitempty"` // what the environment recorded
	// Models splits the step's tokens and cost by model
	// (agent.ModelUsage values), for agents that ask several.
	Models json.RawMessage `json:"models,omitempty"`
	// Prompt is what the model was sent (agent.PromptMessage values),
	// where the agent says.
	Prompt json.RawMessage `json:"prompt,omitempty"`
	// Marks is the set-of-mark table the agent was shown with the
	// screenshot (observe.Mark values), where it was.
	Marks      json.RawMessage `json:"marks,omitempty"`
	ParseError string          `json:"parse_error,omitempty"`
	EnvError   string          `json:"env_error,omitempty"`
	// Notices is what the environment did on its own during the step
	// (env.Notices: requests refused, popups closed), told to the agent.
	Notices      []string      `json:"notices,omitempty"`
	ModelLatency time.Duration `json:"model_latency"`
	EnvLatency   time.Duration `json:"env_latency"`
	InputTokens  int           `json:"input_tokens"`
	OutputTokens int           `json:"output_tokens"`
	Cost         float64       `json:"cost"`
}

// Store is an open run folder.
type Store struct {
	Dir string
	db  *sql.DB
}

const schema = `
CREATE TABLE IF NOT EXISTS run (id TEXT PRIMARY KEY, info TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS result (
	task TEXT NOT NULL, repeat INTEGER NOT NULL, outcome TEXT NOT NULL, info TEXT NOT NULL,
	PRIMARY KEY (task, repeat));
CREATE TABLE IF NOT EXISTS step (
	task TEXT NOT NULL, repeat INTEGER NOT NULL, idx INTEGER NOT NULL, info TEXT NOT NULL,
	PRIMARY KEY (task, repeat, idx));
CREATE TABLE IF NOT EXISTS review (
	task TEXT NOT NULL, repeat INTEGER NOT NULL, info TEXT NOT NULL,
	PRIMARY KEY (task, repeat));
CREATE TABLE IF NOT EXISTS review_log (
	id INTEGER PRIMARY KEY, task TEXT NOT NULL, repeat INTEGER NOT NULL, info TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS evidence (
	task TEXT NOT NULL, repeat INTEGER NOT NULL, info TEXT NOT NULL,
	PRIMARY KEY (task, repeat));
CREATE TABLE IF NOT EXISTS lost (
	id INTEGER PRIMARY KEY, info TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS judgement (
	task TEXT NOT NULL, repeat INTEGER NOT NULL, judge TEXT NOT NULL, info TEXT NOT NULL,
	PRIMARY KEY (task, repeat, judge));
CREATE TABLE IF NOT EXISTS rescore (
	task TEXT NOT NULL, repeat INTEGER NOT NULL, at TEXT NOT NULL, suite_hash TEXT NOT NULL,
	outcome TEXT NOT NULL, reason TEXT NOT NULL, verdict TEXT NOT NULL, info TEXT NOT NULL,
	PRIMARY KEY (task, repeat, at));
CREATE TABLE IF NOT EXISTS receipt (id INTEGER PRIMARY KEY CHECK (id = 1), info TEXT NOT NULL);
`

// OpenRun opens the run folder dir, which must hold a run: reading a
// folder never makes it.
func OpenRun(dir string) (*Store, error) {
	if _, err := os.Stat(filepath.Join(dir, DBFile)); err != nil {
		return nil, fmt.Errorf("%s: no run there (%v)", dir, err)
	}
	return Open(dir)
}

// Open opens (creating when needed) the run folder dir.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, ShotDir), 0o755); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFile)+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one writer; the runner's goroutines take turns
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", filepath.Join(dir, DBFile), err)
	}
	return &Store{Dir: dir, db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// ErrNoRun is returned by Run for a folder that holds no run.
var ErrNoRun = errors.New("no run recorded in this folder")

// SetRun records the run's description (once; later calls must agree on
// the id).
func (s *Store) SetRun(r Run) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(`INSERT INTO run (id, info) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET info = excluded.info`, r.ID, string(b))
	return err
}

// Run reads the run's description.
func (s *Store) Run() (Run, error) {
	var info string
	err := s.db.QueryRow(`SELECT info FROM run LIMIT 1`).Scan(&info)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("%s: %w", s.Dir, ErrNoRun)
	}
	if err != nil {
		return Run{}, err
	}
	var r Run
	return r, json.Unmarshal([]byte(info), &r)
}

// SaveResult records an episode's outcome, replacing an earlier one for
// the same task and repeat.
func (s *Store) SaveResult(r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(`INSERT INTO result (task, repeat, outcome, info) VALUES (?, ?, ?, ?)
		ON CONFLICT(task, repeat) DO UPDATE SET outcome = excluded.outcome, info = excluded.info`,
		r.Task, r.Repeat, r.Outcome, string(b))
	return err
}

// Results lists the recorded outcomes, by task and repeat.
func (s *Store) Results() ([]Result, error) {
	return scanInfo[Result](s.db.Query(`SELECT info FROM result ORDER BY task, repeat`))
}

// Finished reports the outcome of each (task, repeat) pair that has a
// result.
func (s *Store) Finished() (map[string]map[int]string, error) {
	rows, err := s.db.Query(`SELECT task, repeat, outcome FROM result`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]map[int]string{}
	for rows.Next() {
		var task, outcome string
		var rep int
		if err := rows.Scan(&task, &rep, &outcome); err != nil {
			return nil, err
		}
		if out[task] == nil {
			out[task] = map[int]string{}
		}
		out[task][rep] = outcome
	}
	return out, rows.Err()
}

// Flight is an episode in progress: steps recorded, no result yet.
type Flight struct {
	Task   string `json:"task"`
	Repeat int    `json:"repeat"`
	Steps  int    `json:"steps"` // recorded so far
	// Last is the latest step (its screenshot, its actions).
	Last Turn `json:"last"`
}

// InFlight lists the episodes that have steps and no result: those
// running now (or cut short by a killed run), by task and repeat.
func (s *Store) InFlight() ([]Flight, error) {
	rows, err := s.db.Query(`SELECT s.task, s.repeat, COUNT(*), MAX(s.idx) FROM step s
		WHERE NOT EXISTS (SELECT 1 FROM result r WHERE r.task = s.task AND r.repeat = s.repeat)
		GROUP BY s.task, s.repeat ORDER BY s.task, s.repeat`)
	if err != nil {
		return nil, err
	}
	var out []Flight
	var last []int
	for rows.Next() {
		var f Flight
		var idx int
		if err := rows.Scan(&f.Task, &f.Repeat, &f.Steps, &idx); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, f)
		last = append(last, idx)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		var info string
		err := s.db.QueryRow(`SELECT info FROM step WHERE task = ? AND repeat = ? AND idx = ?`, out[i].Task, out[i].Repeat, last[i]).Scan(&info)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(info), &out[i].Last); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ClearTurns removes the turns of an episode (before it is run again).
func (s *Store) ClearTurns(task string, repeat int) error {
	_, err := s.db.Exec(`DELETE FROM step WHERE task = ? AND repeat = ?`, task, repeat)
	return err
}

// SaveTurn records a turn.
func (s *Store) SaveTurn(st Turn) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(`INSERT OR REPLACE INTO step (task, repeat, idx, info) VALUES (?, ?, ?, ?)`, st.Task, st.Repeat, st.Index, string(b))
	return err
}

// Turns lists an episode's turns in order.
func (s *Store) Turns(task string, repeat int) ([]Turn, error) {
	return scanInfo[Turn](s.db.Query(`SELECT info FROM step WHERE task = ? AND repeat = ? ORDER BY idx`, task, repeat))
}

// StepsMatching lists the episodes with a step whose record (the model's
// reply, its thought, the actions, what the environment said) holds text,
// case aside.
func (s *Store) StepsMatching(text string) (map[ReviewKey]bool, error) {
	like := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(strings.ToLower(text)) + "%"
	rows, err := s.db.Query(`SELECT DISTINCT task, repeat FROM step WHERE lower(info) LIKE ? ESCAPE '\'`, like)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[ReviewKey]bool{}
	for rows.Next() {
		var k ReviewKey
		if err := rows.Scan(&k.Task, &k.Repeat); err != nil {
			return nil, err
		}
		out[k] = true
	}
	return out, rows.Err()
}

// scanInfo decodes the JSON info column of each row.
func scanInfo[T any](rows *sql.Rows, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var info string
		if err := rows.Scan(&info); err != nil {
			return nil, err
		}
		var v T
		if err := json.Unmarshal([]byte(info), &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// PutShot stores a screenshot under its content hash and returns the file
// name; identical frames are stored once.
func (s *Store) PutShot(data []byte, format string) (string, error) {
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:16]) + "." + format
	path := filepath.Join(s.Dir, ShotDir, name)
	if _, err := os.Stat(path); err == nil {
		return name, nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return "", err
	}
	return name, os.Rename(tmp, path)
}

// Shot reads a stored screenshot.
func (s *Store) Shot(name string) ([]byte, error) {
	f, err := OpenShot(s.Dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// ErrNotShot is the error of a screenshot that is not a regular file of
// the run folder.
var ErrNotShot = errors.New("not a screenshot of the run")

// OpenShot opens a screenshot of the run folder dir: a regular file
// beneath it, never a link, nor anything reached through a link out of
// it (a run folder may come from someone else).
func OpenShot(dir, name string) (*os.File, error) {
	if !filepath.IsLocal(name) || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("%w: bad screenshot name %q", ErrNotShot, name)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	p := ShotDir + "/" + name
	if fi, err := root.Lstat(p); errors.Is(err, os.ErrNotExist) {
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotShot, err) // out of the folder
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrNotShot, name)
	}
	f, err := root.Open(p)
	if err != nil {
		return nil, err
	}
	// Replaced by something else since: a link could lead only beneath
	// the folder, and it must still be a regular file.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrNotShot, name)
	}
	return f, nil
}

// Review is a person's verdict on an episode, beside the automatic one.
type Review struct {
	Task   string `json:"task"`
	Repeat int    `json:"repeat"`
	Pass   bool   `json:"pass"`
	// Category is why the episode went wrong, one of Categories ("" for
	// none given).
	Category string    `json:"category,omitempty"`
	Note     string    `json:"note,omitempty"`
	Reviewer string    `json:"reviewer"`
	At       time.Time `json:"at"`
}

// Categories are the failure categories a review may give, as OSUniverse
// and ProBench sort their agents' failures.
var Categories = []Category{
	{"grounding-miss", "grounding miss: acted on the wrong element or point"},
	{"premature-done", "premature DONE: ended before the task was done"},
	{"wrong-plan", "wrong plan: pursued the wrong steps"},
	{"gave-up", "gave up: said FAIL, or stopped acting, on a feasible task"},
	{"looping", "looping: repeated actions without progress"},
	{"checker-wrong", "checker wrong: the checks judged the episode wrongly"},
	{"environment", "environment: the application or desktop misbehaved"},
	{"other", "other"},
}

// Category is a failure category: its key and its description.
type Category struct{ Key, Label string }

// ValidCategory reports whether key is "" or a category's key.
func ValidCategory(key string) bool {
	if key == "" {
		return true
	}
	for _, c := range Categories {
		if c.Key == key {
			return true
		}
	}
	return false
}

// ReviewKey identifies an episode among reviews.
type ReviewKey struct {
	Task   string
	Repeat int
}

// SaveReview records a review. It becomes the episode's current review
// (the one agreement is counted on); earlier ones stay in its history.
func (s *Store) SaveReview(r Review) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO review (task, repeat, info) VALUES (?, ?, ?)
		ON CONFLICT(task, repeat) DO UPDATE SET info = excluded.info`, r.Task, r.Repeat, string(b)); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO review_log (task, repeat, info) VALUES (?, ?, ?)`, r.Task, r.Repeat, string(b)); err != nil {
		return err
	}
	return tx.Commit()
}

// ReviewHistory returns every review recorded for an episode, newest
// first.
func (s *Store) ReviewHistory(task string, repeat int) ([]Review, error) {
	return scanInfo[Review](s.db.Query(`SELECT info FROM review_log WHERE task = ? AND repeat = ? ORDER BY id DESC`, task, repeat))
}

// Reviews returns the recorded reviews by episode.
func (s *Store) Reviews() (map[ReviewKey]Review, error) {
	list, err := scanInfo[Review](s.db.Query(`SELECT info FROM review`))
	if err != nil {
		return nil, err
	}
	out := make(map[ReviewKey]Review, len(list))
	for _, r := range list {
		out[ReviewKey{r.Task, r.Repeat}] = r
	}
	return out, nil
}

// ErrNoEvidence is returned by Evidence for an episode whose evidence was
// not recorded (runs made before evidence was kept, or error episodes).
var ErrNoEvidence = errors.New("no recorded evidence")

// SaveEvidence records what the checks of an episode read, replacing an
// earlier record of the same task and repeat.
func (s *Store) SaveEvidence(task string, repeat int, r *check.Recorded) error {
	if r == nil {
		return fmt.Errorf("%s: evidence of %s #%d: nil record", s.Dir, task, repeat)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("%s: evidence of %s #%d: %w", s.Dir, task, repeat, err)
	}
	_, err = s.db.Exec(`INSERT INTO evidence (task, repeat, info) VALUES (?, ?, ?)
		ON CONFLICT(task, repeat) DO UPDATE SET info = excluded.info`, task, repeat, string(b))
	return err
}

// Evidence reads the recorded evidence of an episode; ErrNoEvidence when
// there is none.
func (s *Store) Evidence(task string, repeat int) (*check.Recorded, error) {
	var info string
	err := s.db.QueryRow(`SELECT info FROM evidence WHERE task = ? AND repeat = ?`, task, repeat).Scan(&info)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s: %s #%d: %w", s.Dir, task, repeat, ErrNoEvidence)
	}
	if err != nil {
		return nil, err
	}
	var r check.Recorded
	if err := json.Unmarshal([]byte(info), &r); err != nil {
		return nil, fmt.Errorf("%s: evidence of %s #%d: %w", s.Dir, task, repeat, err)
	}
	return &r, nil
}

// Rescore is an episode judged again, from its recorded evidence, with the
// checks of a later version of its task. The episode's result is kept as
// it was; rescores are stored beside it.
type Rescore struct {
	Task       string          `json:"task"`
	Repeat     int             `json:"repeat"`
	At         time.Time       `json:"at"`         // when; every episode of one re-judging shares it
	SuiteHash  string          `json:"suite_hash"` // of the tasks as re-judged
	OldOutcome string          `json:"old_outcome"`
	Outcome    string          `json:"outcome"`
	Reason     string          `json:"reason"`
	Milestone  float64         `json:"milestone"`
	Verdict    json.RawMessage `json:"verdict,omitempty"`
}

// Flipped reports whether the re-judged outcome differs from the old one.
func (r Rescore) Flipped() bool { return r.Outcome != r.OldOutcome }

// atFormat sorts as text in time order.
const atFormat = "2006-01-02T15:04:05.000000000Z"

// SaveRescore records a re-judged verdict, replacing one of the same
// episode and time.
func (s *Store) SaveRescore(r Rescore) error {
	r.At = r.At.UTC()
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	verdict := string(r.Verdict)
	if verdict == "" {
		verdict = "null"
	}
	_, err = s.db.Exec(`INSERT INTO rescore (task, repeat, at, suite_hash, outcome, reason, verdict, info) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(task, repeat, at) DO UPDATE SET suite_hash = excluded.suite_hash, outcome = excluded.outcome,
		reason = excluded.reason, verdict = excluded.verdict, info = excluded.info`,
		r.Task, r.Repeat, r.At.Format(atFormat), r.SuiteHash, r.Outcome, r.Reason, verdict, string(b))
	return err
}

// Rescores returns the verdicts of the latest re-judging (the rescores
// that share the latest time), by task and repeat; none when the run was
// never re-judged.
func (s *Store) Rescores() ([]Rescore, error) {
	return scanInfo[Rescore](s.db.Query(`SELECT info FROM rescore WHERE at = (SELECT MAX(at) FROM rescore) ORDER BY task, repeat`))
}

// Lost is an environment that left the run's pool for good (a guest
// daemon that died), or died under an episode and was started again (a
// pod replaced), and why.
type Lost struct {
	Name string `json:"name"`
	// Task and Repeat name the episode the environment was running when
	// it was lost (Task is empty in run folders from before they were
	// kept); Reason says so too, in words.
	Task   string    `json:"task,omitempty"`
	Repeat int       `json:"repeat,omitempty"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// SaveLost records an environment that left the pool.
func (s *Store) SaveLost(l Lost) error {
	l.At = l.At.UTC()
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(`INSERT INTO lost (info) VALUES (?)`, string(b))
	return err
}

// LostEnvironments lists the environments that left the pool, in order.
func (s *Store) LostEnvironments() ([]Lost, error) {
	return scanInfo[Lost](s.db.Query(`SELECT info FROM lost ORDER BY id`))
}
