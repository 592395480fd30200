package episode

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/task"
)

// TestStateDiff: every episode stores the diff of the environment's
// state between its setup and its checks, and the side_effects check
// fails on each change the task does not allow, by name.
func TestStateDiff(t *testing.T) {
	ctx := context.Background()
	sideEffects := func(tk *task.Task, allowed *statediff.Allowed) *task.Task {
		c := *tk
		c.Checks = append(slices.Clone(c.Checks), check.Spec{Kind: check.SideEffects})
		c.Changes = allowed
		return &c
	}
	copyText := []action.Action{{Kind: action.Hotkey, Keys: []string{"ctrl", "a"}}, {Kind: action.Hotkey, Keys: []string{"ctrl", "c"}}}
	tests := []struct {
		name    string
		allowed *statediff.Allowed
		noop    bool
		extra   []action.Action // the agent's before its done
		write   string          // a file written behind the agent's back
		outcome check.Outcome
		changes []string // the diff's changes, violations marked "!"
	}{
		{name: "noop", noop: true, outcome: check.Failure},
		{name: "gold, allowed", allowed: &statediff.Allowed{Paths: []string{"~/note.txt"}}, outcome: check.Success,
			changes: []string{"changed content, size of file ~/note.txt"}},
		{name: "gold, nothing allowed", outcome: check.Failure, changes: []string{"!changed content, size of file ~/note.txt"}},
		{name: "clipboard", allowed: &statediff.Allowed{Paths: []string{"~/note.txt"}}, extra: copyText, outcome: check.Failure,
			changes: []string{"!changed value of clipboard clipboard", "changed content, size of file ~/note.txt"}},
		{name: "clipboard allowed", allowed: &statediff.Allowed{Paths: []string{"~/note.txt"}, Clipboard: true}, extra: copyText, outcome: check.Success,
			changes: []string{"changed value of clipboard clipboard", "changed content, size of file ~/note.txt"}},
		{name: "a file created", allowed: &statediff.Allowed{Paths: []string{"~/note.txt"}}, write: "~/docs/extra.txt", outcome: check.Failure,
			changes: []string{"!created file ~/docs", "!created file ~/docs/extra.txt", "changed content, size of file ~/note.txt"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := sideEffects(afterSave(t), tc.allowed)
			ep := start(t, Config{}, tk)
			gold := tk.Gold
			if tc.noop {
				gold = []action.Action{{Kind: action.Done}}
			}
			gold = append(slices.Clone(gold[:len(gold)-1]), append(tc.extra, gold[len(gold)-1])...)
			if tc.write != "" {
				if err := ep.e.WriteFile(ctx, tc.write, []byte("x\n")); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; ep.Next(ctx); i++ {
				if _, err := ep.Observe(ctx); err != nil {
					t.Fatal(err)
				}
				ep.Act(ctx, turn(gold[i]))
			}
			res, err := ep.Finish(ctx)
			if err != nil || res.Outcome != string(tc.outcome) {
				t.Fatalf("Finish = %s %q, %v; want %s", res.Outcome, res.Reason, err, tc.outcome)
			}
			d, err := ep.cfg.Store.Changes(tk.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range d.Changes {
				mark := "!"
				if c.Allowed != "" {
					mark = ""
				}
				got = append(got, mark+c.String())
			}
			if !slices.Equal(got, tc.changes) || len(d.Filtered) != 0 || len(d.Notes) != 0 {
				t.Fatalf("changes %q (filtered %v, notes %q); want %q", got, d.Filtered, d.Notes, tc.changes)
			}
			var v check.Verdict
			if err := json.Unmarshal(res.Verdict, &v); err != nil {
				t.Fatal(err)
			}
			r := v.Checks[len(v.Checks)-1]
			for _, c := range tc.changes {
				if name, bad := strings.CutPrefix(c, "!"); bad && !strings.Contains(r.Reason, name) {
					t.Errorf("the side_effects check's reason %q does not name %q", r.Reason, name)
				}
			}
		})
	}
}
