package rescore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/judgment"
)

func TestParseVerdicts(t *testing.T) {
	entry := `{"task": "t", "trajectory": "gold", "check": "c", "evidence": "final_screenshot", "verdict": {"pass": true, "score": 1, "reason": "seen", "model": "m"}}`
	tests := []struct {
		name, in, err string // err: "" for none
	}{
		{"one verdict", `{"version": 1, "judge": "openai:m", "verdicts": [` + entry + `]}`, ""},
		{"no verdicts", `{"version": 1, "judge": "openai:m", "verdicts": []}`, ""},
		{"another version", `{"version": 2, "judge": "openai:m", "verdicts": []}`, "version 2"},
		{"no judge", `{"version": 1, "verdicts": []}`, "no judge"},
		{"an unknown field", `{"version": 1, "judge": "j", "verdicts": [], "extra": 1}`, "unknown field"},
		{"trailing data", `{"version": 1, "judge": "j", "verdicts": []} {}`, "data after"},
		{"twice", `{"version": 1, "judge": "j", "verdicts": [` + entry + `,` + entry + `]}`, "given twice"},
		{"no trajectory", `{"version": 1, "judge": "j", "verdicts": [{"task": "t", "check": "c", "verdict": {"reason": "r"}}]}`, "required"},
		{"no reason", `{"version": 1, "judge": "j", "verdicts": [{"task": "t", "trajectory": "g", "check": "c", "verdict": {"pass": true}}]}`, "no reason"},
		{"a score out of range", `{"version": 1, "judge": "j", "verdicts": [{"task": "t", "trajectory": "g", "check": "c", "verdict": {"score": 2, "reason": "r"}}]}`, "not in [0, 1]"},
		{"not JSON", `verdicts`, "recorded verdicts"},
	}
	for _, tc := range tests {
		vs, err := ParseVerdicts([]byte(tc.in))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.err)
		case tc.err == "" && vs.Judge != "openai:m":
			t.Errorf("%s: judge %q", tc.name, vs.Judge)
		}
	}
}

// Written verdicts read back the same, sorted by task, trajectory and
// check.
func TestVerdictsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), VerdictsFile)
	vs := &Verdicts{Judge: "openai:m", Verdicts: []RecordedVerdict{
		{Task: "b", Trajectory: "gold", Check: "c", Verdict: verdictOf(true, "yes")},
		{Task: "a", Trajectory: "noop", Check: "c", Verdict: verdictOf(false, "no")},
		{Task: "a", Trajectory: "gold", Check: "c", Verdict: verdictOf(true, "yes")},
	}}
	if err := vs.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadVerdicts(path)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range back.Verdicts {
		order = append(order, r.Task+"/"+r.Trajectory)
	}
	if got := strings.Join(order, " "); got != "a/gold a/noop b/gold" {
		t.Errorf("order %s", got)
	}
	if r, ok := back.find("a", "noop", "c"); !ok || r.Verdict.Pass || r.Verdict.Reason != "no" {
		t.Errorf("find: %+v, %v", r, ok)
	}
	if _, err := ReadVerdicts(filepath.Join(t.TempDir(), "none.json")); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestSplitVariant(t *testing.T) {
	for _, tc := range []struct{ id, task, traj string }{
		{"judged-answer [gold]", "judged-answer", "gold"},
		{"judged-flow [saves through a shell, not the editor]", "judged-flow", "saves through a shell, not the editor"},
		{"judged-answer", "judged-answer", ""},
		{"odd]", "odd]", ""},
	} {
		task, traj, ok := SplitVariant(tc.id)
		if task != tc.task || traj != tc.traj || ok != (tc.traj != "") {
			t.Errorf("SplitVariant(%q) = %q, %q, %v", tc.id, task, traj, ok)
		}
	}
	if got := strings.Join(checkNames([]string{"judge", "a", "judge", "judge"}), "|"); got != "judge|a|judge #2|judge #3" {
		t.Errorf("checkNames: %s", got)
	}
}

// FuzzParseVerdicts: the recorded verdicts come with a suite, from
// outside; parsing never panics, and what it accepts writes and reads back.
func FuzzParseVerdicts(f *testing.F) {
	f.Add([]byte(`{"version": 1, "judge": "openai:m", "verdicts": [{"task": "t", "trajectory": "gold", "check": "c", "verdict": {"pass": true, "score": 1, "reason": "seen"}}]}`))
	f.Add([]byte(`{"version": 1, "judge": "j", "verdicts": null}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		vs, err := ParseVerdicts(b)
		if err != nil {
			return
		}
		path := filepath.Join(t.TempDir(), VerdictsFile)
		if err := vs.Write(path); err != nil {
			t.Fatal(err)
		}
		back, err := ReadVerdicts(path)
		if err != nil {
			t.Fatalf("accepted, written, then refused: %v", err)
		}
		if len(back.Verdicts) != len(vs.Verdicts) {
			t.Fatalf("%d verdicts read back, %d written", len(back.Verdicts), len(vs.Verdicts))
		}
	})
}

func verdictOf(pass bool, reason string) judgment.Verdict {
	v := judgment.Verdict{Pass: pass, Reason: reason}
	if pass {
		v.Score = 1
	}
	return v
}
