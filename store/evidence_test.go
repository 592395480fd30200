package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/observe"
)

func TestEvidenceRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	clip := "copied"
	rec := &check.Recorded{
		Complete: true,
		Files:    map[string][]byte{"/root/a.txt": []byte("hello"), "/root/empty": {}},
		Missing:  []string{"/root/gone"},
		Commands: map[string]observe.CommandResult{"echo 1": {Stdout: "1\n"}},
		Queries: []check.QueryAnswer{{Query: observe.ElementQuery{Role: "label"}, Elements: []observe.Element{{Role: "label", Name: "x"}}},
			{Query: observe.ElementQuery{Role: "dialog"}, Elements: []observe.Element{}}},
		WindowList:  []string{"Calculator"},
		WindowsRead: true,
		Clip:        &clip,
		Steps:       check.Trajectory{Steps: []check.Step{{Action: action.Action{Kind: action.Done}}}},
	}
	if err := s.SaveEvidence("a", 1, rec); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Evidence("a", 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name string
		err  error // nil: readable
		f    func() error
	}{
		{"file", nil, func() error { _, err := got.ReadFile(ctx, "/root/a.txt"); return err }},
		{"empty file", nil, func() error { _, err := got.ReadFile(ctx, "/root/empty"); return err }},
		{"missing file", observe.ErrNotFound, func() error { _, err := got.ReadFile(ctx, "/root/gone"); return err }},
		{"unrecorded file", check.ErrNotRecorded, func() error { _, err := got.ReadFile(ctx, "/root/b"); return err }},
		{"command", nil, func() error { _, err := got.Command(ctx, "echo 1", time.Second); return err }},
		{"empty query", nil, func() error { _, err := got.Elements(ctx, observe.ElementQuery{Role: "dialog"}); return err }},
		{"unrecorded query", check.ErrNotRecorded, func() error { _, err := got.Elements(ctx, observe.ElementQuery{Role: "button"}); return err }},
		{"windows", nil, func() error { _, err := got.Windows(ctx); return err }},
		{"clipboard", nil, func() error { _, err := got.Clipboard(ctx); return err }},
	}
	for _, tc := range tests {
		if err := tc.f(); !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	if _, final := got.Trajectory().Final(); !final {
		t.Error("the trajectory's final action is lost")
	}
	if _, err := s.Evidence("a", 0); !errors.Is(err, ErrNoEvidence) {
		t.Fatalf("Evidence of an episode without any = %v", err)
	}
}

func TestRescoresLatestPass(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rs, err := s.Rescores(); err != nil || len(rs) != 0 {
		t.Fatalf("Rescores of a run never re-judged = %v, %v", rs, err)
	}
	first := time.Date(2026, 11, 22, 3, 0, 0, 0, time.FixedZone("CET", 3600))
	second := first.Add(time.Hour)
	for _, r := range []Rescore{
		{Task: "b", Repeat: 0, At: first, OldOutcome: "success", Outcome: "failure"},
		{Task: "a", Repeat: 0, At: first, OldOutcome: "success", Outcome: "success"},
		{Task: "a", Repeat: 0, At: second, SuiteHash: "h2", OldOutcome: "success", Outcome: "failure", Reason: "x is not y"},
		{Task: "a", Repeat: 1, At: second, SuiteHash: "h2", OldOutcome: "failure", Outcome: "failure"},
	} {
		if err := s.SaveRescore(r); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := s.Rescores()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Task != "a" || rs[0].Repeat != 0 || !rs[0].Flipped() || rs[0].Reason != "x is not y" || rs[1].Flipped() || !rs[0].At.Equal(second) {
		t.Fatalf("Rescores = %+v; want a#0 (flipped) and a#1 of the second pass", rs)
	}
	// The original results are another table: a rescore leaves them alone.
	if fin, _ := s.Finished(); len(fin) != 0 {
		t.Fatalf("rescores made results: %v", fin)
	}
}

func TestOpenAddsTablesToOldDatabases(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveResult(Result{Task: "a", Outcome: "success"}); err != nil {
		t.Fatal(err)
	}
	// A database from before evidence and rescores were kept.
	if _, err := s.db.Exec(`DROP TABLE evidence; DROP TABLE rescore`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rs, err := s.Results(); err != nil || len(rs) != 1 || rs[0].Outcome != "success" {
		t.Fatalf("Results = %+v, %v", rs, err)
	}
	if _, err := s.Evidence("a", 0); !errors.Is(err, ErrNoEvidence) {
		t.Fatalf("Evidence = %v", err)
	}
	if err := s.SaveRescore(Rescore{Task: "a", At: time.Now(), OldOutcome: "success", Outcome: "failure"}); err != nil {
		t.Fatal(err)
	}
}

func TestLostEnvironments(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"guest https://10.0.0.6:7400", "local 2"} {
		if err := s.SaveLost(Lost{Name: name, Reason: "died", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.LostEnvironments()
	if err != nil || len(got) != 2 || got[0].Name != "guest https://10.0.0.6:7400" || got[1].Name != "local 2" {
		t.Fatalf("LostEnvironments = %+v, %v", got, err)
	}
}
