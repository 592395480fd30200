package store

import (
	"errors"
	"reflect"
	"testing"

	"github.com/proctor-eval/proctor/statediff"
)

func TestChanges(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Changes("t", 0); !errors.Is(err, ErrNoChanges) {
		t.Fatalf("no diff yet: %v", err)
	}
	d := &statediff.Diff{Type: "x11", Changes: []statediff.Change{{Kind: statediff.File, Key: "~/a", Op: statediff.Created,
		After: &statediff.Item{Kind: statediff.File, Key: "~/a", Type: "file", Size: 1}, TextDiff: "--- a\n+++ b\n"}},
		Filtered: []statediff.Change{{Kind: statediff.File, Key: "~/.cache", Op: statediff.Created, Filtered: "caches"}}, BeforeMS: 1.5}
	for range 2 { // saved again, replaced
		if err := s.SaveChanges("t", 0, d); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Changes("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("got %+v, want %+v", got, d)
	}
}

func TestAllChanges(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if all, err := s.AllChanges(); err != nil || len(all) != 0 {
		t.Fatalf("none yet: %v %v", all, err)
	}
	a := &statediff.Diff{Type: "x11", Changes: []statediff.Change{{Kind: statediff.File, Key: "~/a", Op: statediff.Deleted}}}
	b := &statediff.Diff{Type: "browser", Changes: []statediff.Change{}}
	if err := s.SaveChanges("t", 0, a); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveChanges("t", 1, b); err != nil {
		t.Fatal(err)
	}
	all, err := s.AllChanges()
	if err != nil {
		t.Fatal(err)
	}
	want := map[ReviewKey]*statediff.Diff{{Task: "t", Repeat: 0}: a, {Task: "t", Repeat: 1}: b}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("got %+v, want %+v", all, want)
	}
}
