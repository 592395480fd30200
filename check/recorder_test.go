package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/query"
)

// live is a fake environment: what the probes of a desktop would answer.
type live struct {
	files    map[string][]byte
	cmds     map[string]observe.CommandResult
	nodes    []observe.Element
	windows  []string
	clip     string
	assetDir string
	traj     Trajectory
	broken   bool // every probe fails, as a dead environment's would
}

var errDead = errors.New("environment closed")

func (l *live) Command(_ context.Context, cmd string, _ time.Duration) (observe.CommandResult, error) {
	if l.broken {
		return observe.CommandResult{}, errDead
	}
	if r, ok := l.cmds[cmd]; ok {
		return r, nil
	}
	return observe.CommandResult{ExitCode: 127, Stderr: cmd + ": not found"}, nil
}

func (l *live) ReadFile(_ context.Context, path string) ([]byte, error) {
	if l.broken {
		return nil, errDead
	}
	if b, ok := l.files[path]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("%s: %w", path, observe.ErrNotFound)
}

func (l *live) Elements(_ context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	if l.broken {
		return nil, errDead
	}
	var out []observe.Element
	for _, e := range l.nodes {
		if q.Matches(e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (l *live) Windows(context.Context) ([]string, error) {
	if l.broken {
		return nil, errDead
	}
	return l.windows, nil
}

func (l *live) Clipboard(context.Context) (string, error) {
	if l.broken {
		return "", errDead
	}
	return l.clip, nil
}

// Page answers the page's URL and a cookie; any other query finds nothing.
func (l *live) Page(_ context.Context, q observe.PageQuery) (string, bool, error) {
	if l.broken {
		return "", false, errDead
	}
	switch {
	case q.URL:
		return "https://shop.test/done?order=7", true, nil
	case q.Cookie == "session":
		return "abc", true, nil
	}
	return "", false, nil
}

// Service answers a count of open tickets by SQL and a ticket by HTTP;
// other queries find nothing.
func (l *live) Service(_ context.Context, q query.Service) (string, bool, error) {
	if l.broken {
		return "", false, errDead
	}
	switch {
	case q.SQL != nil && q.SQL.Query == "select count(*) as n from tickets where status = 'open'":
		return `[{"n":3}]`, true, nil
	case q.HTTP != nil && q.HTTP.Path == "/REST/2.0/ticket/7":
		return `{"id":7,"Status":"resolved"}`, true, nil
	}
	return "[]", false, nil
}

func (l *live) Asset(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(l.assetDir, name))
}
func (l *live) Trajectory() Trajectory { return l.traj }

func newLive(t *testing.T) *live {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "expected.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &live{
		files: map[string][]byte{
			"/root/notes.txt": []byte("hello world\n"),
			"/root/out.txt":   []byte("alpha\r\nbeta\r\n"),
			"/root/empty.txt": {},
		},
		cmds: map[string]observe.CommandResult{
			"echo 42": {Stdout: "42\n"},
			"false":   {ExitCode: 1, Stderr: "boom"},
		},
		nodes: []observe.Element{
			{App: "gnome-calculator", Role: "label", Name: "result", Text: "12"},
			{App: "mousepad", Role: "push button", Name: "Save"},
		},
		windows:  []string{"notes.txt - Mousepad", "Calculator"},
		clip:     "copied text",
		assetDir: dir,
		traj: Trajectory{Steps: []Step{
			{Action: action.Action{Kind: action.Click}, Element: "menu item File"},
			{Action: action.Action{Kind: action.Click}, Element: "push button Save"},
			{Action: action.Action{Kind: action.Answer, Text: "12"}},
		}},
	}
}

// replay round-trips the recorder's record through JSON, as the store
// keeps it, and gives it the suite's assets.
func replay(t *testing.T, r *Recorder, assetDir string) *Recorded {
	t.Helper()
	b, err := json.Marshal(r.Recorded())
	if err != nil {
		t.Fatal(err)
	}
	var rec Recorded
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	rec.AssetDir = assetDir
	return &rec
}

func TestRecorderReproducesVerdict(t *testing.T) {
	tests := []struct {
		name   string
		checks []Spec
		ms     []Milestone
		end    End
		want   Outcome
	}{
		{"file, missing file, command", []Spec{
			{Kind: Contains, Probe: &Probe{File: "/root/notes.txt"}, Value: "hello"},
			{Kind: NotExists, File: "/root/gone.txt"},
			{Kind: Exact, Probe: &Probe{Command: "echo 42"}, Expected: 42},
			{Kind: CommandKind, Command: "false", ExitCode: iptr(1)},
			{Kind: Exists, File: "/root/empty.txt"},
		}, nil, EndAgent, Success},
		{"element, window, clipboard, one failing", []Spec{
			{Kind: Exact, Probe: &Probe{Element: &observe.ElementQuery{Role: "label", Name: "result"}}, Expected: 12},
			{Kind: Exists, Element: &observe.ElementQuery{Role: "push button", Name: "sav", Contains: true}},
			{Kind: NotExists, Element: &observe.ElementQuery{Role: "dialog"}},
			{Kind: Exists, Window: "mousepad"},
			{Kind: Exact, Probe: &Probe{Clipboard: true}, Expected: "other text"},
		}, nil, EndAgent, Failure},
		{"asset and answer", []Spec{
			{Kind: FileEqual, File: "/root/out.txt", Asset: "expected.txt"},
			{Kind: AnswerKind, Accepted: []string{"12"}},
			{Kind: Process, Steps: []string{"File", "Save"}},
		}, nil, EndAgent, Success},
		{"page probes", []Spec{
			{Kind: Contains, Probe: &Probe{Page: &observe.PageQuery{URL: true}}, Value: "/done"},
			{Kind: Exact, Probe: &Probe{Page: &observe.PageQuery{Cookie: "session"}}, Expected: "abc"},
			{Kind: Exact, Probe: &Probe{Page: &observe.PageQuery{Storage: "cart"}}, Expected: "x"},
		}, nil, EndAgent, Failure},
		{"a missing file fails the same way", []Spec{
			{Kind: Exact, Probe: &Probe{File: "/root/none.txt"}, Expected: "x"},
		}, nil, EndAgent, Failure},
		{"milestones under a budget end", []Spec{{Kind: Milestones, Milestones: []string{"open", "saved"}}},
			[]Milestone{
				{ID: "open", Weight: 1, Checks: []Spec{{Kind: Exists, Window: "Mousepad"}}},
				{ID: "saved", Weight: 3, Checks: []Spec{{Kind: Exists, File: "/root/saved.txt"}}},
			}, EndBudget, Uncompleted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := CompileAll(tc.checks, tc.ms)
			if err != nil {
				t.Fatal(err)
			}
			l := newLive(t)
			rec := NewRecorder(l)
			want := s.Evaluate(context.Background(), rec, tc.end)
			if want.Outcome != tc.want {
				t.Fatalf("live verdict %s (%s), want %s", want.Outcome, want.Reason, tc.want)
			}
			got := s.Evaluate(context.Background(), replay(t, rec, l.assetDir), tc.end)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("replayed verdict differs:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// The service probes of the recorder's tests.
var (
	openTickets = &query.SQL{Service: "rt", DB: "rt.db", Query: "select count(*) as n from tickets where status = 'open'"}
	ticket7     = &query.HTTP{Service: "rt", Path: "/REST/2.0/ticket/7", User: "root", Password: "password"}
)

func TestRecordedRejudgesChangedChecks(t *testing.T) {
	recordedWith := []Spec{
		{Kind: Exact, Probe: &Probe{File: "/root/notes.txt"}, Expected: "hello world"},
		{Kind: NotExists, File: "/root/gone.txt"},
		{Kind: Exact, Probe: &Probe{Command: "echo 42"}, Expected: 42},
		{Kind: Exists, Element: &observe.ElementQuery{Role: "label", Name: "result"}},
		{Kind: Exact, Probe: &Probe{SQL: openTickets}, Expected: []any{map[string]any{"n": 3}}, As: "json"},
		{Kind: Contains, Probe: &Probe{HTTP: ticket7}, Value: "resolved"},
	}
	tests := []struct {
		name   string
		check  Spec
		want   Outcome
		reason string // substring of the verdict's reason
	}{
		{"changed expected value", Spec{Kind: Exact, Probe: &Probe{Command: "echo 42"}, Expected: 43}, Failure, "42 is not 43"},
		{"same probe, other test", Spec{Kind: Contains, Probe: &Probe{File: "/root/notes.txt"}, Value: "world"}, Success, "all checks passed"},
		{"recorded missing file", Spec{Kind: Exists, File: "/root/gone.txt"}, Failure, "does not exist"},
		{"unrecorded file", Spec{Kind: Exists, File: "/root/other.txt"}, Error, "file /root/other.txt was not recorded"},
		{"unrecorded command", Spec{Kind: Exact, Probe: &Probe{Command: "echo 43"}, Expected: 43}, Error, `command "echo 43" was not recorded`},
		{"unrecorded element query", Spec{Kind: Exists, Element: &observe.ElementQuery{Role: "label", Name: "display"}}, Error, "element query {role=\"label\" name=\"display\"} was not recorded"},
		{"unrecorded windows", Spec{Kind: Exists, Window: "Calculator"}, Error, "window list was not recorded"},
		{"unrecorded clipboard", Spec{Kind: Exact, Probe: &Probe{Clipboard: true}, Expected: "copied text"}, Error, "clipboard was not recorded"},
		{"same sql, other test", Spec{Kind: Predicate, Probe: &Probe{SQL: openTickets}, Expr: "value[0].n > 2"}, Success, "all checks passed"},
		{"same http, other test", Spec{Kind: Predicate, Probe: &Probe{HTTP: ticket7}, Expr: `value.Status == "open"`}, Failure, `value.Status == "open" is false`},
		{"exists on a recorded sql", Spec{Kind: Exists, Probe: &Probe{SQL: openTickets}}, Success, "all checks passed"},
		{"not_exists on a recorded http", Spec{Kind: NotExists, Probe: &Probe{HTTP: ticket7}}, Failure, "GET /REST/2.0/ticket/7 of rt exists"},
		{"unrecorded sql", Spec{Kind: Exact, Probe: &Probe{SQL: &query.SQL{Service: "rt", DB: "rt.db", Query: "select 1"}}, Expected: "1"}, Error, `sql "select 1" on rt's rt.db was not recorded`},
		{"unrecorded http", Spec{Kind: Exact, Probe: &Probe{HTTP: &query.HTTP{Service: "rt", Path: "/REST/2.0/ticket/8"}}, Expected: "x"}, Error, "GET /REST/2.0/ticket/8 of rt was not recorded"},
	}
	orig, err := CompileAll(recordedWith, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := newLive(t)
	rec := NewRecorder(l)
	if v := orig.Evaluate(context.Background(), rec, EndAgent); v.Outcome != Success {
		t.Fatalf("live verdict %s: %s", v.Outcome, v.Reason)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			changed, err := CompileAll(append(recordedWith[:len(recordedWith):len(recordedWith)], tc.check), nil)
			if err != nil {
				t.Fatal(err)
			}
			v := changed.Evaluate(context.Background(), replay(t, rec, l.assetDir), EndAgent)
			if v.Outcome != tc.want || !strings.Contains(v.Reason, tc.reason) {
				t.Fatalf("re-judged %s (%s), want %s with %q", v.Outcome, v.Reason, tc.want, tc.reason)
			}
			if tc.want == Error && !strings.Contains(v.Checks[len(v.Checks)-1].Err, ErrNotRecorded.Error()) {
				t.Fatalf("the changed check's error is %q", v.Checks[len(v.Checks)-1].Err)
			}
		})
	}
}

func TestRecorderKeepsNoFailedProbe(t *testing.T) {
	l := newLive(t)
	l.broken = true
	rec := NewRecorder(l)
	ctx := context.Background()
	rec.ReadFile(ctx, "/root/notes.txt")
	rec.Command(ctx, "echo 42", time.Second)
	rec.Elements(ctx, observe.ElementQuery{Role: "label"})
	rec.Windows(ctx)
	rec.Clipboard(ctx)
	r := rec.Recorded()
	if len(r.Files) != 0 || len(r.Missing) != 0 || len(r.Commands) != 0 || len(r.Queries) != 0 || r.WindowsRead || r.Clip != nil {
		t.Fatalf("failed probes were recorded: %+v", r)
	}
	if _, err := r.ReadFile(ctx, "/root/notes.txt"); !errors.Is(err, ErrNotRecorded) {
		t.Fatalf("a file whose read failed replays as %v, want not recorded", err)
	}
	if len(r.Steps.Steps) != 3 || !r.Complete {
		t.Fatalf("the trajectory or completeness is lost: %+v", r)
	}
}

func TestRecorderConcurrent(t *testing.T) {
	l := newLive(t)
	for i := range 16 {
		l.files[fmt.Sprintf("/f%d", i)] = []byte(fmt.Sprint(i))
		l.cmds[fmt.Sprintf("echo %d", i)] = observe.CommandResult{Stdout: fmt.Sprint(i)}
	}
	rec := NewRecorder(l)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			rec.ReadFile(ctx, fmt.Sprintf("/f%d", i))
			rec.ReadFile(ctx, fmt.Sprintf("/missing%d", i))
			rec.Command(ctx, fmt.Sprintf("echo %d", i), time.Second)
			rec.Elements(ctx, observe.ElementQuery{Name: fmt.Sprint(i)})
			rec.Windows(ctx)
			rec.Clipboard(ctx)
			rec.Recorded()
		})
	}
	wg.Wait()
	r := rec.Recorded()
	if len(r.Files) != 16 || len(r.Missing) != 16 || len(r.Commands) != 16 || len(r.Queries) != 16 || !r.WindowsRead || r.Clip == nil {
		t.Fatalf("files %d missing %d commands %d queries %d windows %v clipboard %v",
			len(r.Files), len(r.Missing), len(r.Commands), len(r.Queries), r.WindowsRead, r.Clip)
	}
}
