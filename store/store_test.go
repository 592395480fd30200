package store

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(); !errors.Is(err, ErrNoRun) {
		t.Fatalf("empty folder: %v", err)
	}
	run := Run{ID: "r1", Started: time.Now().UTC().Round(time.Second), Agent: "replay", Suite: "s", SuiteHash: "abc", Parallel: 2, Repeat: 3}
	if err := s.SetRun(run); err != nil {
		t.Fatal(err)
	}
	for _, r := range []Result{{Task: "b", Repeat: 0, Outcome: "success"}, {Task: "a", Repeat: 1, Outcome: "failure"}, {Task: "a", Repeat: 0, Outcome: "error"}} {
		if err := s.SaveResult(r); err != nil {
			t.Fatal(err)
		}
	}
	// A rerun replaces the result.
	if err := s.SaveResult(Result{Task: "a", Repeat: 0, Outcome: "success", Steps: 4}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if err := s.SaveTurn(Turn{Task: "a", Repeat: 0, Index: i, Raw: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Run()
	if err != nil || got.ID != "r1" || got.Repeat != 3 || !got.Started.Equal(run.Started) {
		t.Fatalf("Run = %+v, %v", got, err)
	}
	rs, err := s.Results()
	if err != nil || len(rs) != 3 || rs[0].Task != "a" || rs[0].Outcome != "success" || rs[0].Steps != 4 || rs[2].Task != "b" {
		t.Fatalf("Results = %+v, %v", rs, err)
	}
	fin, _ := s.Finished()
	if _, ok := fin["b"][1]; fin["a"][0] != "success" || fin["a"][1] == "" || fin["b"][0] == "" || ok {
		t.Fatalf("Finished = %v", fin)
	}
	steps, _ := s.Turns("a", 0)
	if len(steps) != 3 || steps[2].Index != 3 {
		t.Fatalf("Steps = %+v", steps)
	}
	s.ClearTurns("a", 0)
	if steps, _ := s.Turns("a", 0); len(steps) != 0 {
		t.Fatal("ClearSteps left steps")
	}
}

func TestShotsStoredOnce(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a1, _ := s.PutShot([]byte("frame one"), "png")
	a2, _ := s.PutShot([]byte("frame one"), "png")
	b, _ := s.PutShot([]byte("frame two"), "png")
	if a1 != a2 || a1 == b {
		t.Fatalf("names %s %s %s", a1, a2, b)
	}
	files, _ := os.ReadDir(filepath.Join(s.Dir, ShotDir))
	if len(files) != 2 {
		t.Fatalf("%d files for two distinct frames", len(files))
	}
	if data, err := s.Shot(a1); err != nil || string(data) != "frame one" {
		t.Fatalf("Shot = %q, %v", data, err)
	}
	if _, err := s.Shot("../results.db"); err == nil {
		t.Fatal("a name outside the shots folder was read")
	}
}

func TestReviews(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for _, r := range []Review{
		{Task: "a", Repeat: 0, Pass: true, Reviewer: "ann", At: at},
		{Task: "a", Repeat: 0, Pass: false, Note: "the file is empty", Reviewer: "bob", At: at.Add(time.Minute)},
		{Task: "a", Repeat: 1, Pass: true, Reviewer: "ann", At: at},
	} {
		if err := s.SaveReview(r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Reviews()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[ReviewKey{"a", 0}].Reviewer != "bob" || got[ReviewKey{"a", 0}].Pass || !got[ReviewKey{"a", 1}].Pass {
		t.Fatalf("reviews = %+v; want the latest review of each episode", got)
	}
	hist, err := s.ReviewHistory("a", 0)
	if err != nil || len(hist) != 2 || hist[0].Reviewer != "bob" || hist[1].Reviewer != "ann" || !hist[1].Pass {
		t.Fatalf("history = %+v (%v); want bob's then ann's review", hist, err)
	}
	if hist, _ := s.ReviewHistory("a", 1); len(hist) != 1 {
		t.Fatalf("history of a/1 = %+v; want one review", hist)
	}
}

// A result's setup time and a step's set-of-mark table are kept, left
// out of the record when empty, and records written before them load.
func TestSetupAndMarksKeptAndOptional(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	marks := json.RawMessage(`[{"tag":1,"role":"push button","name":"Save","box":{"x":1,"y":2,"w":3,"h":4}}]`)
	if err := s.SaveResult(Result{Task: "a", Outcome: "success", Duration: time.Second, Setup: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveTurn(Turn{Task: "a", Index: 1, Marks: marks}); err != nil {
		t.Fatal(err)
	}
	// Records of an older run: no setup, no marks.
	if _, err := s.db.Exec(`INSERT INTO result (task, repeat, outcome, info) VALUES ('old', 0, 'failure', '{"task":"old","outcome":"failure","duration":2000000000}')`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO step (task, repeat, idx, info) VALUES ('old', 0, 1, '{"task":"old","index":1,"raw":"x"}')`); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Results()
	if err != nil || len(rs) != 2 || rs[0].Setup != 3*time.Second || rs[0].Duration != time.Second || rs[1].Setup != 0 || rs[1].Duration != 2*time.Second {
		t.Fatalf("Results = %+v, %v", rs, err)
	}
	steps, err := s.Turns("a", 0)
	if err != nil || len(steps) != 1 || string(steps[0].Marks) != string(marks) {
		t.Fatalf("Steps = %+v, %v", steps, err)
	}
	if old, err := s.Turns("old", 0); err != nil || len(old) != 1 || old[0].Marks != nil {
		t.Fatalf("an older step = %+v, %v", old, err)
	}
	for _, v := range []any{Result{Task: "b"}, Turn{Task: "b"}} {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), `"setup"`) || strings.Contains(string(b), `"marks"`) {
			t.Errorf("an empty setup or marks is written: %s", b)
		}
	}
}
