package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/judge/judgetest"
	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/store"
)

// TestJudgeEndToEnd runs the judged suite - one task for each evidence
// kind a judge check can show - on local desktops with the replay agent,
// its judge checks decided by a local stand-in of the model APIs through
// the real clients: validate proves them, a run records them, proctor
// judge decides them again with another judge and, the second time, from
// the cache alone; the report compares both judges with reviews and with
// the rule-based checks.
func TestJudgeEndToEnd(t *testing.T) {
	needDesktop(t)
	sa := judgetest.New(t, judgetest.Quoted)
	t.Setenv("PROCTOR_JUDGE_KEY", judgetest.Key)
	suite := filepath.Join(t.TempDir(), "judged") // validate keeps its verdicts beside the suite
	if err := os.CopyFS(suite, os.DirFS("../../testdata/judged")); err != nil {
		t.Fatal(err)
	}
	judgeA := []string{"--judge-model", "judge-a", "--judge-base-url", sa.OpenAIURL(), "--judge-api-key-env", "PROCTOR_JUDGE_KEY"}

	// Without a judge, nothing runs.
	if _, errs, code := runCLI(t, "", "run", "--suite", suite, "--agent", "replay", "--out", filepath.Join(t.TempDir(), "none")); code == 0 ||
		!strings.Contains(errs, "5 tasks have judge checks") || !strings.Contains(errs, "give --judge-model") {
		t.Fatalf("a run without a judge: code %d\n%s", code, errs)
	}

	// validate: every gold passes, doing nothing and every wrong
	// trajectory fail (the half-done command task scores 0.25).
	out, errs, code := runCLI(t, "", append([]string{"validate", suite, "--parallel", "2", "--out", filepath.Join(t.TempDir(), "validate")}, judgeA...)...)
	if code != 0 || !strings.Contains(errs, " 0 violations") {
		t.Fatalf("validate: code %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "milestone 0.25") {
		t.Errorf("validate does not show the partial credit of the command task's criteria:\n%s", out)
	}
	// --judge-offline replays the verdicts validate kept with the suite,
	// asking no model, where the evidence is the same byte for byte (the
	// command task's: text only).
	before := sa.Calls()
	out, errs, code = runCLI(t, "", append([]string{"validate", suite, "--filter", "^judged-command$", "--judge-offline", "--out", filepath.Join(t.TempDir(), "offline")}, judgeA...)...)
	if code != 0 || sa.Calls() != before || !strings.Contains(errs, " 0 violations") {
		t.Fatalf("offline validation: code %d, %d calls\n%s\n%s", code, sa.Calls()-before, out, errs)
	}
	if _, err := os.Stat(filepath.Join(suite, JudgeCacheDir)); err != nil {
		t.Errorf("validate kept no verdicts with the suite: %v", err)
	}

	// run
	dir := filepath.Join(t.TempDir(), "run")
	before = sa.Calls()
	out, errs, code = runCLI(t, "", append([]string{"run", "--suite", suite, "--agent", "replay", "--parallel", "2", "--out", dir}, judgeA...)...)
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "judge tokens, total (in/out)") || !strings.Contains(out, "5000 / 250") {
		t.Errorf("the report does not show the judge's tokens apart:\n%s", out)
	}
	asked := sa.Asked()[before:]
	if len(asked) != 5 {
		t.Fatalf("the run asked the judge %d times, want 5 (one a task)", len(asked))
	}
	images := map[string]int{}
	for _, a := range asked {
		switch text := a.Text(); {
		case strings.Contains(text, "the agent's answer"):
			images["returned_result"] = a.Images
		case strings.Contains(text, "the output of `cat ~/out.txt 2>/dev/null`"):
			images["command_output"] = a.Images
			if len(a.Criteria) != 2 {
				t.Errorf("criteria %v", a.Criteria)
			}
		case strings.Contains(text, "the steps the agent took"):
			images["expected_flow"] = a.Images
		case strings.Contains(text, "the process information"):
			images["process"] = a.Images
			if !strings.Contains(text, "-> on text") {
				t.Errorf("the process information does not name the element clicked:\n%s", text)
			}
		default:
			images["final_screenshot"] = a.Images
		}
	}
	want := map[string]int{"returned_result": 1, "final_screenshot": 1, "command_output": 0, "expected_flow": 3, "process": 2}
	for k, n := range want {
		if images[k] != n {
			t.Errorf("%s showed %d images, want %d (all: %v)", k, images[k], n, images)
		}
	}

	// Reviews: a person agrees on three episodes and disagrees on one.
	st, err := store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	for task, pass := range map[string]bool{"judged-answer": true, "judged-command": true, "judged-flow": true, "judged-screen": false} {
		if err := st.SaveReview(store.Review{Task: task, Pass: pass, Reviewer: "ana", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	// Another judge, over the other API.
	judgeB := []string{"judge", dir, "--judge-model", "anthropic:judge-b", "--judge-base-url", sa.AnthropicURL(), "--judge-api-key-env", "PROCTOR_JUDGE_KEY"}
	before = sa.Calls()
	out, errs, code = runCLI(t, "", judgeB...)
	if code != 0 || sa.Calls()-before != 5 {
		t.Fatalf("judge: code %d, %d calls\n%s\n%s", code, sa.Calls()-before, out, errs)
	}
	for _, w := range []string{"judge anthropic:judge-b: 5 episodes judged, 5 passed", "5 by asking the model, 0 from the cache",
		"Judges against people and rules", "openai:judge-a", "anthropic:judge-b"} {
		if !strings.Contains(out, w) {
			t.Errorf("judge's output lacks %q:\n%s", w, out)
		}
	}
	// The same judge again asks no model.
	before = sa.Calls()
	out, errs, code = runCLI(t, "", judgeB...)
	if code != 0 || sa.Calls() != before || !strings.Contains(out, "0 by asking the model, 5 from the cache") || !strings.Contains(out, "$0.0000") {
		t.Fatalf("judging again: code %d, %d calls\n%s\n%s", code, sa.Calls()-before, out, errs)
	}

	// The report keeps both judges and compares each with the reviews and
	// the rules.
	out, _, code = runCLI(t, "", "report", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("report: %d\n%s", code, out)
	}
	var reps []*report.Report
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatal(err)
	}
	if len(reps[0].Judges) != 2 {
		t.Fatalf("%d judges in the report, want 2", len(reps[0].Judges))
	}
	for _, j := range reps[0].Judges {
		h, r := j.VsHuman, j.VsRules
		// People: judged-screen passed by the judge, failed by the person.
		if h.N != 4 || h.PassPass != 3 || h.PassFail != 1 || len(h.Disagree) != 1 || h.Disagree[0].Task != "judged-screen" {
			t.Errorf("%s against people: %+v", j.Judge, h)
		}
		// Rules: the tasks with rule checks besides the judge's.
		if r.N != 4 || r.PassPass != 4 || r.Agreement != 1 {
			t.Errorf("%s against rules: %+v", j.Judge, r)
		}
		if len(j.ByEvidence) != 5 {
			t.Errorf("%s: %d evidence kinds", j.Judge, len(j.ByEvidence))
		}
	}
	text, _, _ := runCLI(t, "", "report", dir)
	for _, w := range []string{"Judges against people and rules", "pass/pass 3, pass/fail 1, fail/pass 0, fail/fail 0", "Disagreements", "judged-screen"} {
		if !strings.Contains(text, w) {
			t.Errorf("the text report lacks %q:\n%s", w, text)
		}
	}

	// rescore decides the judge checks from the run's cache, asking no one.
	before = sa.Calls()
	out, errs, code = runCLI(t, "", "rescore", dir, "--suite", suite)
	if code != 0 || sa.Calls() != before || !strings.Contains(out, "no outcome flipped") {
		t.Fatalf("rescore: code %d, %d calls\n%s\n%s", code, sa.Calls()-before, out, errs)
	}
}
