package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/query"
	"github.com/proctor-eval/proctor/statediff"
)

// Recorded is Evidence captured earlier: the probe results a run stored
// after its episode, so that checks can be re-run without the environment.
// A probe that was not recorded is an error (the evidence is incomplete),
// except a file, which is missing when absent from Files, and an element
// query, which is answered from Nodes. A complete record (made by a
// Recorder) is strict: it answers only the probes that were made.
type Recorded struct {
	Files      map[string][]byte                `json:"files,omitempty"`
	Commands   map[string]observe.CommandResult `json:"commands,omitempty"`
	Nodes      []observe.Element                `json:"elements,omitempty"`
	WindowList []string                         `json:"windows,omitempty"`
	Clip       *string                          `json:"clipboard,omitempty"`
	AssetDir   string                           `json:"asset_dir,omitempty"`
	Steps      Trajectory                       `json:"trajectory"`
	// Complete marks a record that a Recorder made: it holds every probe
	// the checks made, so any other probe is ErrNotRecorded, a file is
	// missing only when listed in Missing, each element query is answered
	// from Queries and the windows only when WindowsRead.
	Complete    bool          `json:"complete,omitempty"`
	Missing     []string      `json:"missing,omitempty"`
	Queries     []QueryAnswer `json:"queries,omitempty"`
	WindowsRead bool          `json:"windows_read,omitempty"`
	// Pages are the page probes' answers.
	Pages []PageAnswer `json:"pages,omitempty"`
	// Services are the service probes' answers.
	Services []ServiceAnswer `json:"services,omitempty"`
	// Changes is the state diff a side_effects check read.
	Changes *statediff.Diff `json:"changes,omitempty"`
}

var _ Evidence = (*Recorded)(nil)

// Command returns the recorded result of cmd.
func (r *Recorded) Command(_ context.Context, cmd string, _ time.Duration) (observe.CommandResult, error) {
	res, ok := r.Commands[cmd]
	if !ok {
		return observe.CommandResult{}, fmt.Errorf("command %q was %w", cmd, ErrNotRecorded)
	}
	return res, nil
}

// ReadFile returns a recorded file, or observe.ErrNotFound.
func (r *Recorded) ReadFile(_ context.Context, path string) ([]byte, error) {
	b, ok := r.Files[path]
	if !ok {
		if r.Complete && !slices.Contains(r.Missing, path) {
			return nil, fmt.Errorf("file %s was %w", path, ErrNotRecorded)
		}
		return nil, fmt.Errorf("%s: %w", path, observe.ErrNotFound)
	}
	return b, nil
}

// Elements returns the recorded elements matching q.
func (r *Recorded) Elements(_ context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	if r.Complete {
		return r.answer(q)
	}
	var out []observe.Element
	for _, e := range r.Nodes {
		if q.Matches(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Page returns the recorded answer to a page probe.
func (r *Recorded) Page(_ context.Context, q observe.PageQuery) (string, bool, error) {
	for _, a := range r.Pages {
		if a.Query == q {
			return a.Value, a.Found, nil
		}
	}
	return "", false, fmt.Errorf("%s was %w", q.Describe(), ErrNotRecorded)
}

// Service returns the recorded answer to a service probe.
func (r *Recorded) Service(_ context.Context, q query.Service) (string, bool, error) {
	if a, ok := findService(r.Services, q); ok {
		return a.Value, a.Found, nil
	}
	return "", false, fmt.Errorf("%s was %w", q.Describe(), ErrNotRecorded)
}

// Windows returns the recorded window titles.
func (r *Recorded) Windows(context.Context) ([]string, error) {
	if r.Complete && !r.WindowsRead {
		return nil, fmt.Errorf("the window list was %w", ErrNotRecorded)
	}
	return r.WindowList, nil
}

// Clipboard returns the recorded clipboard.
func (r *Recorded) Clipboard(context.Context) (string, error) {
	if r.Clip == nil {
		return "", fmt.Errorf("the clipboard was %w", ErrNotRecorded)
	}
	return *r.Clip, nil
}

// Asset reads name from AssetDir; names may not leave it.
func (r *Recorded) Asset(name string) ([]byte, error) {
	if r.AssetDir == "" {
		return nil, fmt.Errorf("no asset directory")
	}
	if !filepath.IsLocal(name) {
		return nil, fmt.Errorf("asset %q leaves the asset directory", name)
	}
	return os.ReadFile(filepath.Join(r.AssetDir, name))
}

// Trajectory returns the recorded steps.
func (r *Recorded) Trajectory() Trajectory { return r.Steps }
