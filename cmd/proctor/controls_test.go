package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/judge/judgetest"
	"github.com/proctor-eval/proctor/rescore"
	"github.com/proctor-eval/proctor/store"
)

// TestJudgeControls: validate --record-verdicts writes the suite's judge
// controls (the gold trajectory's judge check, which passes, and the
// wrong trajectories', doing nothing's and giving up's, which fail); a judge that says pass to everything
// fails them, and the run stops before any episode, naming the controls
// it got wrong, as proctor judge does; a judge that answers right passes
// them, the run goes on and its report shows them.
func TestJudgeControls(t *testing.T) {
	right := judgetest.New(t, judgetest.Quoted)
	yes := judgetest.New(t, func(judgetest.Asked) judgetest.Reply {
		return judgetest.Reply{Text: `{"verdict": "pass", "reason": "it looks done"}`}
	})
	t.Setenv("PROCTOR_JUDGE_KEY", judgetest.Key)
	judgeWith := func(name string, s *judgetest.Server) []string {
		return []string{"--judge-model", name, "--judge-base-url", s.OpenAIURL(), "--judge-api-key-env", "PROCTOR_JUDGE_KEY"}
	}
	suite := filepath.Join(t.TempDir(), "judged")
	for _, f := range []string{"suite.yaml", "judged-answer.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/judged", f))
		if err != nil {
			t.Fatal(err)
		}
		writeSuite(t, suite, map[string]string{f: string(b)})
	}
	_, errs, code := runCLI(t, "", append([]string{"validate", suite, "--env", "mem", "--record-verdicts", "--out", filepath.Join(t.TempDir(), "validate")},
		judgeWith("judge-right", right)...)...)
	if code != 0 || !strings.Contains(errs, "recorded 4 judge controls in "+filepath.Join(suite, rescore.ControlsDir)) {
		t.Fatalf("validate --record-verdicts: code %d\n%s", code, errs)
	}
	cs, err := rescore.ReadControls(filepath.Join(suite, rescore.ControlsDir))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, c := range cs.Controls {
		known[c.Name()] = c.Pass
		if c.Evidence != "returned_result" || len(c.Request().Evidence) != 2 || !c.Request().Evidence[1].IsImage() {
			t.Errorf("control %s: evidence %s, %d parts (want the answer and the final screen)", c.Name(), c.Evidence, len(c.Request().Evidence))
		}
	}
	wantKnown := map[string]bool{"judged-answer [gold] the answer is right": true, "judged-answer [counts one too many] the answer is right": false,
		"judged-answer [fail at once] the answer is right": false, "judged-answer [noop] the answer is right": false}
	for name, pass := range wantKnown {
		if got, ok := known[name]; !ok || got != pass {
			t.Errorf("control %s: recorded %v (%v), want pass=%v; all: %v", name, got, ok, pass, known)
		}
	}

	tests := []struct {
		name    string
		judge   []string
		extra   []string
		refused bool
	}{
		{"a judge that says pass to everything", judgeWith("judge-yes", yes), nil, true},
		{"the same judge, three wrong allowed", judgeWith("judge-yes", yes), []string{"--judge-controls-tolerance", "3"}, false},
		{"a judge that answers right", judgeWith("judge-right", right), nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			out, errs, code := runCLI(t, "", append(append([]string{"run", suite, "--env", "mem", "--agent", "replay", "--out", dir}, tc.judge...), tc.extra...)...)
			if tc.refused {
				for _, want := range []string{"pre-flight refused the run", "the judge failed its controls: the judge openai:judge-yes got 3 of 4 wrong (tolerance 0)",
					"judged-answer [counts one too many] the answer is right (returned_result): should fail, said pass",
					"judged-answer [fail at once] the answer is right (returned_result): should fail, said pass",
					"judged-answer [noop] the answer is right (returned_result): should fail, said pass"} {
					if code == 0 || !strings.Contains(errs, want) {
						t.Errorf("code %d, want a refusal saying %q:\n%s", code, want, errs)
					}
				}
				if strings.Contains(errs, "[gold]") {
					t.Errorf("the refusal names a control the judge got right:\n%s", errs)
				}
				if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err == nil {
					t.Error("the refused run left a run folder")
				}
				return
			}
			if code != 0 {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			if !strings.Contains(out, "Judge controls (run): ") || !strings.Contains(out, "judged-answer [gold] the answer is right") {
				t.Errorf("the report does not show the controls:\n%s", out)
			}
			st, err := store.OpenRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			rs, err := st.JudgeControls()
			if err != nil || len(rs) != 4 {
				t.Fatalf("the run kept %d controls (%v), want 4", len(rs), err)
			}
		})
	}

	// proctor judge with the judge that says pass to everything judges
	// nothing, and keeps its answers with the run.
	dir := filepath.Join(t.TempDir(), "run")
	if _, errs, code := runCLI(t, "", append([]string{"run", suite, "--env", "mem", "--agent", "replay", "--out", dir, "--report", "none"}, judgeWith("judge-right", right)...)...); code != 0 {
		t.Fatalf("run: code %d\n%s", code, errs)
	}
	before := yes.Calls()
	_, errs, code = runCLI(t, "", append([]string{"judge", dir}, judgeWith("judge-yes", yes)...)...)
	if code == 0 || !strings.Contains(errs, "the judge failed its controls") || !strings.Contains(errs, "nothing judged") || yes.Calls()-before != 4 {
		t.Fatalf("judge with a judge failing its controls: code %d, %d calls (want the 4 controls only)\n%s", code, yes.Calls()-before, errs)
	}
	out, errs, code := runCLI(t, "", "report", dir)
	if code != 0 || !strings.Contains(out, "openai:judge-yes 1 of 4 right") || !strings.Contains(out, "openai:judge-right 4 of 4 right") {
		t.Errorf("report: code %d\n%s\n%s", code, out, errs)
	}
}
