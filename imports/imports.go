// Package imports writes Proctor suites from other benchmarks' task
// files: the part of proctor import every benchmark shares. A
// benchmark's own package (imports/osworld) reads its files and turns
// each task into a task.Task, or says why it cannot; this package writes
// the suite folder (suite.yaml, a YAML file per task, the assets), fetches
// the files tasks need from the web when asked, and writes the table of
// what was imported beside the suite.
//
// A task is one of three:
//
//   - runnable: imported, and runnable on this machine offline;
//   - blocked: imported (it lints), but it cannot run here as it is: an
//     application Debian lacks, the live web, a file not fetched yet;
//   - not imported: a part of it has no counterpart in Proctor (a setup
//     step, an evaluator, an option), named.
package imports

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/proctor-eval/proctor/internal/english"
	"github.com/proctor-eval/proctor/task"
)

// Blocker is the class of a reason a task is blocked or not imported.
type Blocker string

// The blockers.
const (
	// NotSupported: a setup step, an evaluator or an option that Proctor
	// has no counterpart for (the task is not imported).
	NotSupported Blocker = "not supported"
	// AppMissing: an application Debian does not ship.
	AppMissing Blocker = "app not installable"
	// LiveWeb: the task needs websites on the internet, never runnable
	// offline.
	LiveWeb Blocker = "live web"
	// Account: the task signs in to an online account (a cloud drive).
	Account Blocker = "account"
	// NotFetched: a file the task needs was not fetched (proctor import
	// --fetch).
	NotFetched Blocker = "file not fetched"
)

// blocks reports whether b leaves the task imported (blocked) rather
// than not imported.
func (b Blocker) blocks() bool {
	return b == AppMissing || b == LiveWeb || b == NotFetched
}

// Reason is why a task is blocked or not imported.
type Reason struct {
	Blocker Blocker `json:"blocker"`
	Detail  string  `json:"detail"`
}

func (r Reason) String() string { return string(r.Blocker) + ": " + r.Detail }

// Status is what became of a task.
type Status string

// The statuses.
const (
	Runnable    Status = "runnable"
	Blocked     Status = "blocked"
	NotImported Status = "not imported"
)

// Task is one task of a benchmark, as imported.
type Task struct {
	// ID is the benchmark's id of the task and Group its domain (the
	// folder its file is in): the task file is written as
	// GROUP/ID.yaml.
	ID, Group string
	// Task is the task in Proctor's format; nil when it was not
	// imported.
	Task *task.Task
	// Files are assets copied from the benchmark's own folder: the
	// asset's name to the file's path.
	Files map[string]string
	// Reasons are why the task is blocked or not imported.
	Reasons []Reason
}

// Block adds a reason.
func (t *Task) Block(b Blocker, format string, args ...any) {
	t.Reasons = append(t.Reasons, Reason{b, fmt.Sprintf(format, args...)})
}

// Status says what became of the task.
func (t *Task) Status() Status {
	if t.Task == nil || slices.ContainsFunc(t.Reasons, func(r Reason) bool { return !r.Blocker.blocks() }) {
		return NotImported
	}
	if len(t.Reasons) > 0 {
		return Blocked
	}
	return Runnable
}

// Mapped reports whether the task's setup, steps and checks all
// converted (its files to fetch named).
func (t *Task) Mapped() bool { return t.Status() != NotImported }

// Offline reports whether the task, mapped, needs no download and no
// live web.
func (t *Task) Offline() bool {
	return t.Mapped() && (t.Task.Origin == nil || len(t.Task.Origin.Fetch) == 0) &&
		!slices.ContainsFunc(t.Reasons, func(r Reason) bool { return r.Blocker == LiveWeb })
}

// Suite is what suite.yaml says of an imported suite.
type Suite struct {
	Name        string                  `json:"name"`
	Description string                  `json:"description,omitempty"`
	Apps        map[string]task.AppSpec `json:"apps,omitempty"`
	// Setup names the Debian packages the tasks need beyond their apps'
	// (proctor setup installs them).
	Setup *task.Setup `json:"setup,omitempty"`
}

// Options are what proctor import was asked.
type Options struct {
	// Fetch downloads the files tasks need into the suite's assets;
	// without it a task whose files are not there is blocked.
	Fetch bool
	// Client fetches (http.DefaultClient when nil); Timeout bounds
	// each file (default 2 minutes) and MaxFile its size (default
	// 512 MiB).
	Client  *http.Client
	Timeout time.Duration
	MaxFile int64
	// Progress, when set, hears of every file fetched.
	Progress func(format string, args ...any)
}

// TableFile is the table of what was imported, written beside the
// suite's tasks; TableJSON the same as JSON.
const (
	TableFile = "IMPORT.md"
	TableJSON = "import.json"
)

// Write writes the suite to dir: suite.yaml, a task file per imported
// task (GROUP/ID.yaml), its assets (copied, or fetched with o.Fetch),
// and the table of every task (TableFile, TableJSON). Fetching happens
// before the statuses are final: a task whose files could not be fetched
// is blocked.
func Write(ctx context.Context, dir string, s Suite, tasks []*Task, o Options) error {
	if err := os.MkdirAll(filepath.Join(dir, task.AssetDir), 0o755); err != nil {
		return err
	}
	sb, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := writeYAML(filepath.Join(dir, task.SuiteFile), "# Imported by proctor import; IMPORT.md says what became of every task.\n", sb); err != nil {
		return err
	}
	f := fetcher{o: o}
	for _, t := range tasks {
		if t.Status() == NotImported {
			continue
		}
		if err := f.assets(ctx, dir, t); err != nil {
			return err
		}
		tb, err := json.Marshal(t.Task)
		if err != nil {
			return err
		}
		file := filepath.Join(dir, t.Group, t.ID+".yaml")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		head := fmt.Sprintf("# Imported from %s %s (%s).\n", t.Task.Origin.Peer, t.Task.Origin.File, t.Status())
		for _, r := range t.Reasons {
			head += "# Blocked: " + r.String() + "\n"
		}
		if err := writeYAML(file, head, tb); err != nil {
			return err
		}
	}
	return writeTable(dir, tasks)
}

func writeYAML(file, head string, jsonDoc []byte) error {
	y, err := yaml.JSONToYAML(jsonDoc)
	if err != nil {
		return err
	}
	return os.WriteFile(file, append([]byte(head), y...), 0o644)
}

// fetcher copies and downloads the files of tasks.
type fetcher struct {
	o Options
}

// assets puts the task's files in the suite's assets: those of the
// benchmark's folder copied, those on the web downloaded (o.Fetch) or,
// when already there from an earlier import, hashed. A file that is not
// there blocks the task.
func (f fetcher) assets(ctx context.Context, dir string, t *Task) error {
	for asset, src := range t.Files {
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("%s: %w", t.ID, err)
		}
		if err := putAsset(dir, asset, b); err != nil {
			return err
		}
	}
	if t.Task.Origin == nil {
		return nil
	}
	for i := range t.Task.Origin.Fetch {
		of := &t.Task.Origin.Fetch[i]
		dest := filepath.Join(dir, task.AssetDir, filepath.FromSlash(of.Asset))
		b, err := os.ReadFile(dest)
		if errors.Is(err, os.ErrNotExist) && f.o.Fetch {
			b, err = f.get(ctx, of.URL)
			if err == nil {
				err = putAsset(dir, of.Asset, b)
			}
			if err != nil {
				t.Block(NotFetched, "%s: %v", of.URL, err)
				continue
			}
			if f.o.Progress != nil {
				f.o.Progress("fetched %s (%d bytes) for %s", of.URL, len(b), t.ID)
			}
		}
		switch {
		case errors.Is(err, os.ErrNotExist):
			t.Block(NotFetched, "%s (proctor import --fetch downloads it)", of.URL)
		case err != nil:
			return err
		default:
			of.SHA256 = Hash(b)
		}
	}
	return nil
}

// get downloads url within the options' bounds.
func (f fetcher) get(ctx context.Context, url string) ([]byte, error) {
	client := cmp.Or(f.o.Client, http.DefaultClient)
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(f.o.Timeout, 2*time.Minute))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s", res.Status)
	}
	limit := cmp.Or(f.o.MaxFile, 512<<20)
	b, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}

// putAsset writes an asset beneath the suite's assets folder only.
func putAsset(dir, asset string, b []byte) error {
	if !filepath.IsLocal(filepath.FromSlash(asset)) {
		return fmt.Errorf("asset %q is not a path beneath the assets folder", asset)
	}
	p := filepath.Join(dir, task.AssetDir, filepath.FromSlash(asset))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

// Hash is the hex SHA-256 of b.
func Hash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Counts are the totals of an import.
type Counts struct {
	Tasks, Runnable, Blocked, NotImported int
	// Mapped are the tasks whose setup, steps and checks all converted;
	// Offline those of them that need no download and no live web.
	Mapped, Offline int
	// ByBlocker counts the tasks each class of reason holds back (a
	// task with several counts once in each).
	ByBlocker map[Blocker]int
}

// Count totals tasks.
func Count(tasks []*Task) Counts {
	c := Counts{Tasks: len(tasks), ByBlocker: map[Blocker]int{}}
	for _, t := range tasks {
		switch t.Status() {
		case Runnable:
			c.Runnable++
		case Blocked:
			c.Blocked++
		default:
			c.NotImported++
		}
		if t.Mapped() {
			c.Mapped++
		}
		if t.Offline() {
			c.Offline++
		}
		seen := map[Blocker]bool{}
		for _, r := range t.Reasons {
			if !seen[r.Blocker] {
				seen[r.Blocker] = true
				c.ByBlocker[r.Blocker]++
			}
		}
	}
	return c
}

// Summary is the counts in a few lines, as proctor import prints them.
func (c Counts) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d runnable here, %d imported but blocked, %d not imported\n", english.Count(c.Tasks, "task"), c.Runnable, c.Blocked, c.NotImported)
	fmt.Fprintf(&b, "mapped %d of %d (setup, steps and checks all convert); %d of them need no download and no live web\n", c.Mapped, c.Tasks, c.Offline)
	blockers := make([]Blocker, 0, len(c.ByBlocker))
	for k := range c.ByBlocker {
		blockers = append(blockers, k)
	}
	slices.SortFunc(blockers, func(a, b Blocker) int { return cmp.Or(cmp.Compare(c.ByBlocker[b], c.ByBlocker[a]), cmp.Compare(a, b)) })
	for _, k := range blockers {
		fmt.Fprintf(&b, "  %-20s %s\n", k, english.Count(c.ByBlocker[k], "task"))
	}
	return b.String()
}

// tableRow is a task in TableJSON.
type tableRow struct {
	ID      string   `json:"id"`
	Group   string   `json:"group"`
	Status  Status   `json:"status"`
	Mapped  bool     `json:"mapped"`
	Offline bool     `json:"offline"`
	File    string   `json:"file,omitempty"`
	Reasons []Reason `json:"reasons,omitempty"`
}

// writeTable writes TableFile and TableJSON.
func writeTable(dir string, tasks []*Task) error {
	c := Count(tasks)
	var md strings.Builder
	md.WriteString("# What proctor import made of every task\n\n```\n" + c.Summary() + "```\n\n")
	md.WriteString("| task | group | status | reasons |\n|---|---|---|---|\n")
	rows := make([]tableRow, 0, len(tasks))
	sorted := slices.Clone(tasks)
	slices.SortFunc(sorted, func(a, b *Task) int { return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.ID, b.ID)) })
	for _, t := range sorted {
		r := tableRow{ID: t.ID, Group: t.Group, Status: t.Status(), Mapped: t.Mapped(), Offline: t.Offline(), Reasons: t.Reasons}
		if r.Status != NotImported {
			r.File = filepath.ToSlash(filepath.Join(t.Group, t.ID+".yaml"))
		}
		rows = append(rows, r)
		var rs []string
		for _, x := range t.Reasons {
			rs = append(rs, strings.ReplaceAll(x.String(), "|", `\|`))
		}
		fmt.Fprintf(&md, "| %s | %s | %s | %s |\n", t.ID, t.Group, r.Status, strings.Join(rs, "; "))
	}
	if err := os.WriteFile(filepath.Join(dir, TableFile), []byte(md.String()), 0o644); err != nil {
		return err
	}
	jb, err := json.MarshalIndent(struct {
		Counts Counts     `json:"counts"`
		Tasks  []tableRow `json:"tasks"`
	}{c, rows}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, TableJSON), append(jb, '\n'), 0o644)
}
