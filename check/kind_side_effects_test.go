package check

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/statediff"
)

// violatingDiff is a state diff with one allowed change, one filtered and
// one violation.
func violatingDiff() *statediff.Diff {
	return &statediff.Diff{Type: "x11", Changes: []statediff.Change{
		{Kind: statediff.File, Key: "~/out.txt", Op: statediff.Created, Allowed: "~/out.txt"},
		{Kind: statediff.File, Key: "~/x.txt", Op: statediff.Created}},
		Filtered: []statediff.Change{{Kind: statediff.File, Key: "~/.cache/a", Op: statediff.Created, Filtered: "caches"}}}
}

func TestSideEffects(t *testing.T) {
	many := &statediff.Diff{Changes: []statediff.Change{}}
	for i := range 25 {
		many.Changes = append(many.Changes, statediff.Change{Kind: statediff.File, Key: fmt.Sprintf("~/f%02d", i), Op: statediff.Deleted})
	}
	many.Truncated = true
	clean := &statediff.Diff{Changes: []statediff.Change{{Kind: statediff.Clipboard, Key: "clipboard", Op: statediff.Changed, What: []string{"value"}, Allowed: "clipboard"}}}
	tests := []struct {
		name  string
		diff  *statediff.Diff
		pass  bool
		why   string
		infra bool
	}{
		{"nothing changed", &statediff.Diff{}, true, "nothing changed outside the allowed set (0 allowed, 0 filtered as noise)", false},
		{"allowed only", clean, true, "nothing changed outside the allowed set (1 allowed, 0 filtered as noise)", false},
		{"a violation", violatingDiff(), false, "1 change outside the allowed set: created file ~/x.txt (1 allowed, 1 filtered as noise)", false},
		{"many", many, false, "25 changes outside the allowed set: deleted file ~/f00; ", false},
		{"not recorded", nil, false, "evidence could not be read: the state diff: the state diff was not recorded", true},
	}
	c, err := Compile(Spec{Kind: SideEffects})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Evaluate(context.Background(), &Recorded{Changes: tc.diff}, nil)
			if r.Pass != tc.pass || !strings.HasPrefix(r.Reason, tc.why) || (r.Err != "") != tc.infra {
				t.Fatalf("got pass %v, %q (error %q); want pass %v, %q", r.Pass, r.Reason, r.Err, tc.pass, tc.why)
			}
		})
	}
	r := c.Evaluate(context.Background(), &Recorded{Changes: many}, nil)
	if !strings.Contains(r.Reason, "deleted file ~/f19; and 5 more (0 allowed, 0 filtered as noise; more changes than were listed)") {
		t.Errorf("a long list is cut: %q", r.Reason)
	}
	if _, err := Compile(Spec{Kind: SideEffects, File: "~/a"}); err == nil || !strings.Contains(err.Error(), "does not apply") {
		t.Errorf("a stray field: %v", err)
	}
}

// TestSideEffectsRecorded: the diff a side_effects check read is kept
// in the record, which judges it again alike.
func TestSideEffectsRecorded(t *testing.T) {
	c, _ := Compile(Spec{Kind: SideEffects})
	rec := NewRecorder(&Recorded{Changes: violatingDiff()})
	live := c.Evaluate(context.Background(), rec, nil)
	again := c.Evaluate(context.Background(), rec.Recorded(), nil)
	if live.Pass || again.Reason != live.Reason {
		t.Errorf("live %q, from the record %q", live.Reason, again.Reason)
	}
	if _, err := (&Recorded{Complete: true}).StateChanges(context.Background()); !errors.Is(err, ErrNotRecorded) {
		t.Errorf("no diff: %v", err)
	}
}
