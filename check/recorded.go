package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Recorded is Evidence captured earlier: the probe results a run stored
// after its episode, so that checks can be re-run without the environment.
// A probe that was not recorded is an error (the evidence is incomplete),
// except a file, which is missing when absent from Files.
type Recorded struct {
	Files      map[string][]byte        `json:"files,omitempty"`
	Commands   map[string]CommandResult `json:"commands,omitempty"`
	Nodes      []Element                `json:"elements,omitempty"`
	WindowList []string                 `json:"windows,omitempty"`
	Clip       *string                  `json:"clipboard,omitempty"`
	AssetDir   string                   `json:"asset_dir,omitempty"`
	Steps      Trajectory               `json:"trajectory"`
}

var _ Evidence = (*Recorded)(nil)

// Command returns the recorded result of cmd.
func (r *Recorded) Command(_ context.Context, cmd string, _ time.Duration) (CommandResult, error) {
	res, ok := r.Commands[cmd]
	if !ok {
		return CommandResult{}, fmt.Errorf("command %q was not recorded", cmd)
	}
	return res, nil
}

// ReadFile returns a recorded file, or ErrNotExist.
func (r *Recorded) ReadFile(_ context.Context, path string) ([]byte, error) {
	b, ok := r.Files[path]
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, ErrNotExist)
	}
	return b, nil
}

// Elements returns the recorded elements matching q.
func (r *Recorded) Elements(_ context.Context, q ElementQuery) ([]Element, error) {
	var out []Element
	for _, e := range r.Nodes {
		if q.Matches(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Matches reports whether e satisfies the query.
func (q ElementQuery) Matches(e Element) bool {
	eq := func(want, got string) bool {
		if want == "" {
			return true
		}
		if q.Contains {
			return strings.Contains(strings.ToLower(got), strings.ToLower(want))
		}
		return got == want
	}
	return (q.App == "" || strings.EqualFold(q.App, e.App)) && (q.Role == "" || strings.EqualFold(q.Role, e.Role)) && eq(q.Name, e.Name) && eq(q.Text, e.Text)
}

// Windows returns the recorded window titles.
func (r *Recorded) Windows(context.Context) ([]string, error) { return r.WindowList, nil }

// Clipboard returns the recorded clipboard.
func (r *Recorded) Clipboard(context.Context) (string, error) {
	if r.Clip == nil {
		return "", fmt.Errorf("the clipboard was not recorded")
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
