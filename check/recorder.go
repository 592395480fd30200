package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/query"
	"github.com/proctor-eval/proctor/statediff"
)

// ErrNotRecorded is the error of a probe that a complete record does not
// hold: a changed check asks for evidence nobody captured, and its verdict
// must be an error, not a guess.
var ErrNotRecorded = errors.New("not recorded")

// QueryAnswer is one element query of a complete record with the elements
// it returned.
type QueryAnswer struct {
	Query    observe.ElementQuery `json:"query"`
	Elements []observe.Element    `json:"elements"`
}

// answer returns the recorded answer to q.
func (r *Recorded) answer(q observe.ElementQuery) ([]observe.Element, error) {
	for _, a := range r.Queries {
		if a.Query == q {
			return slices.Clone(a.Elements), nil
		}
	}
	return nil, fmt.Errorf("element query %s was %w", queryString(q), ErrNotRecorded)
}

func queryString(q observe.ElementQuery) string {
	var parts []string
	for _, f := range [][2]string{{"app", q.App}, {"role", q.Role}, {"name", q.Name}, {"text", q.Text}} {
		if f[1] != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", f[0], f[1]))
		}
	}
	if q.Contains {
		parts = append(parts, "contains")
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// Recorder is Evidence that passes every probe to another Evidence and
// keeps what it answered, so that the same checks can be judged again
// later from Recorded, without the environment. Probes that failed (an
// infrastructure fault) are not kept: judged again, they are errors too.
// When a probe is made twice, the last answer is kept. It is safe for
// concurrent use.
type Recorder struct {
	ev Evidence

	mu       sync.Mutex
	files    map[string][]byte
	missing  map[string]bool
	commands map[string]observe.CommandResult
	queries  []QueryAnswer
	windows  []string
	winRead  bool
	clip     *string
	pages    []PageAnswer
	services []ServiceAnswer
	changes  *statediff.Diff
}

// PageAnswer is a recorded page probe.
type PageAnswer struct {
	Query observe.PageQuery `json:"query"`
	Value string            `json:"value,omitempty"`
	Found bool              `json:"found,omitempty"`
}

var _ Evidence = (*Recorder)(nil)

// NewRecorder records the probes made of ev.
func NewRecorder(ev Evidence) *Recorder {
	return &Recorder{ev: ev, files: map[string][]byte{}, missing: map[string]bool{}, commands: map[string]observe.CommandResult{}}
}

// Command runs cmd and records its result.
func (r *Recorder) Command(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error) {
	res, err := r.ev.Command(ctx, cmd, timeout)
	if err == nil {
		r.mu.Lock()
		r.commands[cmd] = res
		r.mu.Unlock()
	}
	return res, err
}

// ReadFile reads path and records its content, or that it is missing.
func (r *Recorder) ReadFile(ctx context.Context, path string) ([]byte, error) {
	b, err := r.ev.ReadFile(ctx, path)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		r.files[path] = bytes.Clone(b)
		if r.files[path] == nil {
			r.files[path] = []byte{}
		}
		delete(r.missing, path)
	case errors.Is(err, observe.ErrNotFound):
		delete(r.files, path)
		r.missing[path] = true
	}
	return b, err
}

// Elements queries the accessibility tree and records the answer to q.
func (r *Recorder) Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	els, err := r.ev.Elements(ctx, q)
	if err != nil {
		return els, err
	}
	a := QueryAnswer{Query: q, Elements: slices.Clone(els)}
	if a.Elements == nil {
		a.Elements = []observe.Element{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.queries {
		if r.queries[i].Query == q {
			r.queries[i] = a
			return els, nil
		}
	}
	r.queries = append(r.queries, a)
	return els, nil
}

// Windows lists the windows and records the list.
func (r *Recorder) Windows(ctx context.Context) ([]string, error) {
	ws, err := r.ev.Windows(ctx)
	if err == nil {
		r.mu.Lock()
		r.windows, r.winRead = slices.Clone(ws), true
		r.mu.Unlock()
	}
	return ws, err
}

// Clipboard reads the clipboard and records it.
func (r *Recorder) Clipboard(ctx context.Context) (string, error) {
	s, err := r.ev.Clipboard(ctx)
	if err == nil {
		r.mu.Lock()
		r.clip = &s
		r.mu.Unlock()
	}
	return s, err
}

// Page reads a browser's page and records the answer to q.
func (r *Recorder) Page(ctx context.Context, q observe.PageQuery) (string, bool, error) {
	v, found, err := r.ev.Page(ctx, q)
	if err != nil {
		return v, found, err
	}
	a := PageAnswer{Query: q, Value: v, Found: found}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.pages {
		if r.pages[i].Query == q {
			r.pages[i] = a
			return v, found, nil
		}
	}
	r.pages = append(r.pages, a)
	return v, found, nil
}

// Service reads a service's state and records the answer to q.
func (r *Recorder) Service(ctx context.Context, q query.Service) (string, bool, error) {
	v, found, err := r.ev.Service(ctx, q)
	if err != nil {
		return v, found, err
	}
	a := ServiceAnswer{Query: q, Value: v, Found: found}
	k := queryKey(q)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.services {
		if queryKey(r.services[i].Query) == k {
			r.services[i] = a
			return v, found, nil
		}
	}
	r.services = append(r.services, a)
	return v, found, nil
}

// FinalScreen is the final screen of the evidence recorded, when it has
// screens.
func (r *Recorder) FinalScreen(ctx context.Context) (Screen, error) {
	if sc, ok := r.ev.(Screens); ok {
		return sc.FinalScreen(ctx)
	}
	return Screen{}, errors.New("this evidence holds no screens")
}

// StepScreen is a step's screen of the evidence recorded, when it has
// screens.
func (r *Recorder) StepScreen(ctx context.Context, turn int) (Screen, error) {
	if sc, ok := r.ev.(Screens); ok {
		return sc.StepScreen(ctx, turn)
	}
	return Screen{}, errors.New("this evidence holds no screens")
}

// Asset reads a suite file; assets are not recorded, since the suite
// provides them again (Recorded.AssetDir).
func (r *Recorder) Asset(name string) ([]byte, error) { return r.ev.Asset(name) }

// Trajectory is the underlying evidence's.
func (r *Recorder) Trajectory() Trajectory { return r.ev.Trajectory() }

// Recorded returns the probes made so far and the trajectory as a complete
// record: judged with the same checks it gives the same verdict, and a
// probe it does not hold is an error (ErrNotRecorded). AssetDir is left
// for the caller to set. The result shares nothing with the recorder.
func (r *Recorder) Recorded() *Recorded {
	traj := r.ev.Trajectory()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := &Recorded{Complete: true, WindowsRead: r.winRead, Steps: Trajectory{Steps: slices.Clone(traj.Steps)}}
	if len(r.files) > 0 {
		out.Files = make(map[string][]byte, len(r.files))
		for p, b := range r.files {
			out.Files[p] = bytes.Clone(b)
		}
	}
	for p := range r.missing {
		out.Missing = append(out.Missing, p)
	}
	sort.Strings(out.Missing)
	if len(r.commands) > 0 {
		out.Commands = make(map[string]observe.CommandResult, len(r.commands))
		for c, res := range r.commands {
			out.Commands[c] = res
		}
	}
	for _, a := range r.queries {
		out.Queries = append(out.Queries, QueryAnswer{Query: a.Query, Elements: slices.Clone(a.Elements)})
	}
	out.Changes = r.changes
	out.WindowList = slices.Clone(r.windows)
	out.Pages = slices.Clone(r.pages)
	out.Services = slices.Clone(r.services)
	if r.clip != nil {
		c := *r.clip
		out.Clip = &c
	}
	return out
}
