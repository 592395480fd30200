package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/judge/judgetest"
	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/rescore"
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
	sa := judgetest.New(t, func(a judgetest.Asked) judgetest.Reply {
		if a.Model == "judge-dissent" { // fails everything, criteria and all
			return judgetest.Reply{Text: dissent(a)}
		}
		return judgetest.Quoted(a)
	})
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
	// trajectory fail (the half-done command task scores 0.25). The
	// verdicts it records are those committed with the suite for CI
	// (PROCTOR_UPDATE_VERDICTS=1 writes them there).
	os.Remove(filepath.Join(suite, rescore.VerdictsFile))
	out, errs, code := runCLI(t, "", append([]string{"validate", suite, "--parallel", "2", "--record-verdicts", "--out", filepath.Join(t.TempDir(), "validate")}, judgeA...)...)
	if code != 0 || !strings.Contains(errs, " 0 violations") || !strings.Contains(errs, "recorded 19 verdicts of openai:judge-a") {
		t.Fatalf("validate: code %d\n%s\n%s", code, out, errs)
	}
	got, err := os.ReadFile(filepath.Join(suite, rescore.VerdictsFile))
	if err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join("../../testdata/judged", rescore.VerdictsFile)
	if os.Getenv("PROCTOR_UPDATE_VERDICTS") == "1" {
		if err := os.WriteFile(committed, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(committed); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the verdicts recorded differ from %s (%v): run the test with PROCTOR_UPDATE_VERDICTS=1 and review the change\n%s", committed, err, got)
	}
	// The judge controls it also recorded are asked before a run
	// (TestJudgeControls); this test counts the run's questions without.
	if err := os.RemoveAll(filepath.Join(suite, rescore.ControlsDir)); err != nil {
		t.Fatal(err)
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
	if len(asked) != 6 || !preflightQuestion(asked[0]) {
		t.Fatalf("the run asked the judge %d times, want 6 (one at pre-flight, then one a task)", len(asked))
	}
	asked = asked[1:]
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

	// A panel of three judges through the command line, one dissenting:
	// each check asks every judge once, and the majority decides.
	before = sa.Calls()
	out, errs, code = runCLI(t, "", "judge", dir, "--judge-model", "judge-p1", "--judge-model", "judge-p2", "--judge-model", "judge-dissent",
		"--judge-base-url", sa.OpenAIURL(), "--judge-api-key-env", "PROCTOR_JUDGE_KEY")
	panelName := "openai:judge-p1+openai:judge-p2+openai:judge-dissent"
	if code != 0 || !strings.Contains(out, "judge "+panelName+": 5 episodes judged, 5 passed") {
		t.Fatalf("a panel: code %d\n%s\n%s", code, out, errs)
	}
	perModel := map[string]int{}
	for _, a := range sa.Asked()[before:] {
		perModel[a.Model]++
	}
	if sa.Calls()-before != 15 || perModel["judge-p1"] != 5 || perModel["judge-p2"] != 5 || perModel["judge-dissent"] != 5 {
		t.Errorf("the panel asked %d times (%v), want 3 a check: 15", sa.Calls()-before, perModel)
	}
	st, err = store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	jgs, err := st.Judgements()
	if err != nil {
		t.Fatal(err)
	}
	panelChecks := 0
	for _, jg := range jgs {
		if jg.Judge != panelName {
			continue
		}
		for _, c := range jg.Checks {
			panelChecks++
			if !c.Pass || !strings.HasPrefix(c.Reason, "pass by majority: 2 of 3 judges passed\n") ||
				!strings.Contains(c.Reason, "judge 3 (judge-dissent): fail: I disagree") {
				t.Errorf("%s: the panel's result %v: %s", jg.Task, c.Pass, c.Reason)
			}
			if c.Judge == nil || len(c.Judge.Votes) != 3 || !c.Judge.Votes[0].Pass || !c.Judge.Votes[1].Pass || c.Judge.Votes[2].Pass ||
				c.Judge.Votes[2].Model != "judge-dissent" {
				t.Errorf("%s: the panel's votes %+v", jg.Task, c.Judge)
			}
		}
	}
	if panelChecks != 5 {
		t.Errorf("%d checks judged by the panel, want 5", panelChecks)
	}
}

// dissent is a judge's reply failing the request and each of its
// criteria.
func dissent(a judgetest.Asked) string {
	v := map[string]any{"verdict": "fail", "reason": "I disagree"}
	var cs []map[string]any
	for _, id := range a.Criteria {
		cs = append(cs, map[string]any{"id": id, "pass": false, "reason": "I disagree"})
	}
	if cs != nil {
		v["criteria"] = cs
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestJudgeOutageDuringRun: a judge that is down when an episode ends
// does not make the runner run the agent again. The episode is recorded
// once as an infrastructure error naming the judge and its error, with
// its evidence kept; proctor judge against a judge still down (one that
// hangs past --judge-timeout) leaves it undecided and exits 1, and once
// the judge is back proctor judge decides it.
func TestJudgeOutageDuringRun(t *testing.T) {
	needDesktop(t)
	const (
		down = iota // 503 Service Unavailable
		hang        // no answer within the judge timeout
		up
	)
	var mode atomic.Int32
	sa := judgetest.New(t, func(a judgetest.Asked) judgetest.Reply {
		if preflightQuestion(a) {
			return judgetest.Quoted(a) // the judge was up when the run began
		}
		switch mode.Load() {
		case down:
			return judgetest.Reply{Status: 503, Text: "overloaded"}
		case hang:
			time.Sleep(1500 * time.Millisecond)
			return judgetest.Reply{Status: 503, Text: "too late"}
		}
		return judgetest.Quoted(a)
	})
	t.Setenv("PROCTOR_JUDGE_KEY", judgetest.Key)
	judgeA := []string{"--judge-model", "judge-a", "--judge-base-url", sa.OpenAIURL(), "--judge-api-key-env", "PROCTOR_JUDGE_KEY"}
	dir := filepath.Join(t.TempDir(), "run")
	out, errs, code := runCLI(t, "", append([]string{"run", "--suite", "../../testdata/judged", "--filter", "^judged-command$",
		"--agent", "replay", "--out", dir}, judgeA...)...)
	if code != 0 {
		t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
	}
	askedInRun := sa.Calls()
	st, err := store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := st.Results()
	if err != nil || len(rs) != 1 {
		t.Fatalf("results %+v, %v", rs, err)
	}
	r := rs[0]
	if r.Outcome != "error" || r.Attempts != 1 {
		t.Errorf("outcome %s after %d attempts, want error after 1 (the agent is not run again for the judge)", r.Outcome, r.Attempts)
	}
	for _, w := range []string{"judge undecided", "openai:judge-a", "judge unavailable", "503", "proctor judge"} {
		if !strings.Contains(r.Reason, w) {
			t.Errorf("the reason lacks %q: %s", w, r.Reason)
		}
	}
	if steps, err := st.Turns(r.Task, r.Repeat); err != nil || len(steps) != 2 {
		t.Errorf("%d steps recorded (%v), want the gold's 2 once", len(steps), err)
	}
	if _, err := st.Evidence(r.Task, r.Repeat); err != nil {
		t.Errorf("the evidence of the undecided episode was not kept: %v", err)
	}
	if r.End != "agent" {
		t.Errorf("the undecided episode's end is %q, want agent (the gold says DONE)", r.End)
	}
	st.Close()

	// Resuming the run does not run the agent again for it either.
	out, errs, code = runCLI(t, "", append([]string{"run", "--suite", "../../testdata/judged", "--filter", "^judged-command$",
		"--agent", "replay", "--resume", dir}, judgeA...)...)
	if code != 0 || sa.Calls() != askedInRun {
		t.Fatalf("resume: code %d, %d judge calls (want none)\n%s\n%s", code, sa.Calls()-askedInRun, out, errs)
	}
	st, err = store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := st.Results(); err != nil || len(rs) != 1 || rs[0].Attempts != 1 || rs[0].Outcome != "error" {
		t.Errorf("after --resume: %+v, %v; want the undecided episode kept as it was", rs, err)
	}
	st.Close()

	// The judge still down: proctor judge leaves the episode undecided.
	mode.Store(hang)
	out, errs, code = runCLI(t, "", append([]string{"judge", dir, "--judge-timeout", "300ms"}, judgeA...)...)
	if code == 0 || !strings.Contains(errs, "1 episode undecided") || !strings.Contains(out, "0 passed, 0 failed, 1 undecided") {
		t.Fatalf("judging with the judge down: code %d\n%s\n%s", code, out, errs)
	}
	if sa.Calls() == askedInRun {
		t.Fatal("proctor judge did not ask the judge about the undecided episode")
	}

	// The judge is back: the run's own judge decides the episode, priced
	// by --prices (1000 input and 50 output tokens at $1000 a million).
	mode.Store(up)
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"judge-a": {"input": 1000, "output": 1000}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	before := sa.Calls()
	out, errs, code = runCLI(t, "", "judge", dir, "--prices", prices)
	if code != 0 || sa.Calls()-before != 1 {
		t.Fatalf("judging with the judge up: code %d, %d calls\n%s\n%s", code, sa.Calls()-before, out, errs)
	}
	for _, w := range []string{"1 episode judged, 1 passed, 0 failed, 0 undecided", "1 episode left undecided by the run's judge",
		"1 decided, their outcome in the run's results replaced", "1000 input and 50 output tokens, $1.0500"} {
		if !strings.Contains(out, w) {
			t.Errorf("judge's output lacks %q:\n%s", w, out)
		}
	}
	// The decision replaces the run's error in its results, so the report
	// counts the episode.
	st, err = store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if rs, err = st.Results(); err != nil || len(rs) != 1 {
		t.Fatalf("results %+v, %v", rs, err)
	}
	if r := rs[0]; r.Outcome != "success" || !strings.Contains(r.Reason, "decided after the run by judge openai:judge-a") || r.End != "" {
		t.Errorf("after proctor judge decided it: outcome %s, reason %q, end %q; want success decided by the judge", r.Outcome, r.Reason, r.End)
	}
}

// TestValidateRecordedVerdicts: CI validates the judged suite with no
// model at all, from the verdicts committed with it (judge-verdicts.json,
// recorded by TestJudgeEndToEnd with the stand-in judge): every gold
// passes and every wrong trajectory fails, although the screenshots are
// not the ones the judge saw. Without the file it cannot.
func TestValidateRecordedVerdicts(t *testing.T) {
	needDesktop(t)
	suite := filepath.Join(t.TempDir(), "judged")
	if err := os.CopyFS(suite, os.DirFS("../../testdata/judged")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(suite, JudgeCacheDir)); err == nil {
		t.Fatal("the judged suite holds a judge cache: the test would not prove the recorded verdicts alone")
	}
	out, errs, code := runCLI(t, "", "validate", suite, "--judge-offline", "--parallel", "2", "--out", filepath.Join(t.TempDir(), "validate"))
	if code != 0 || !strings.Contains(errs, " 0 violations") {
		t.Fatalf("validate --judge-offline: code %d\n%s\n%s", code, out, errs)
	}
	if w := "0 asked of the model, 0 from the judge cache (the same evidence), 19 from the recorded verdicts"; !strings.Contains(errs, w) {
		t.Errorf("validate does not say where the verdicts came from (%q):\n%s", w, errs)
	}
	if !strings.Contains(out, "milestone 0.25") {
		t.Errorf("the partial credit of the command task's criteria is not replayed:\n%s", out)
	}
	if err := os.Remove(filepath.Join(suite, rescore.VerdictsFile)); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCLI(t, "", "validate", suite, "--judge-offline", "--out", filepath.Join(t.TempDir(), "none"))
	if code == 0 || !strings.Contains(errs, "no recorded verdicts") {
		t.Fatalf("validate --judge-offline without recorded verdicts: code %d\n%s\n%s", code, out, errs)
	}
}

// TestUnreachableJudgeIsRefused: a run whose judge cannot be reached is
// refused at its pre-flight, naming the judge, before any episode; a run
// whose tasks have no judge checks does not ask it.
func TestUnreachableJudgeIsRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now
	t.Setenv("PROCTOR_JUDGE_KEY", judgetest.Key)
	flags := []string{"--agent", "replay", "--env", "mem", "--judge-model", "judge-a", "--judge-base-url", dead, "--judge-api-key-env", "PROCTOR_JUDGE_KEY"}
	out := filepath.Join(t.TempDir(), "run")
	_, errs, code := runCLI(t, "", append([]string{"run", "--suite", "../../testdata/judged", "--out", out}, flags...)...)
	if code == 0 || !strings.Contains(errs, "pre-flight refused the run") || !strings.Contains(errs, "the judge openai:judge-a does not answer") {
		t.Fatalf("a run with an unreachable judge: code %d\n%s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "results.db")); err == nil {
		t.Fatal("the refused run left episodes")
	}
	// No judge checks: the judge is not asked, and the run goes on.
	_, errs, code = runCLI(t, "", append([]string{"run", "--suite", "../../testdata/mem", "--out", filepath.Join(t.TempDir(), "mem"), "--report", "none"}, flags...)...)
	if code != 0 {
		t.Fatalf("a run without judge checks: code %d\n%s", code, errs)
	}
}

// preflightQuestion tells the question a run asks its judge at pre-flight
// (judgeAnswers) from the questions of the checks.
func preflightQuestion(a judgetest.Asked) bool {
	return len(a.Texts) > 0 && strings.Contains(a.Texts[0], `The note says "ready".`)
}

// TestUnreachableModelIsRefused: an agent whose model endpoint cannot be
// reached, or refuses the key, is refused at pre-flight, before any
// episode, for each agent that calls a model API; one that answers lets
// the run go on.
func TestUnreachableModelIsRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	live := judgetest.New(t, func(judgetest.Asked) judgetest.Reply { return judgetest.Reply{Text: "ready"} })
	t.Setenv("PROCTOR_MODEL_KEY", judgetest.Key)
	t.Setenv("PROCTOR_WRONG_KEY", "not-the-key")
	tests := []struct {
		name  string
		flags []string
		want  string // "" for a run that goes on
	}{
		{"openai, nothing listens", []string{"--agent", "openai", "--model", "m", "--base-url", dead + "/v1", "--api-key-env", "PROCTOR_MODEL_KEY"}, "the openai agent's model does not answer"},
		{"openai, a wrong key", []string{"--agent", "openai", "--model", "m", "--base-url", live.OpenAIURL(), "--api-key-env", "PROCTOR_WRONG_KEY"}, "the openai agent's model does not answer"},
		{"anthropic, nothing listens", []string{"--agent", "anthropic", "--model", "m", "--base-url", dead, "--api-key-env", "PROCTOR_MODEL_KEY"}, "the anthropic agent's model does not answer"},
		{"reflect, nothing listens", []string{"--agent", "reflect", "--model", "m", "--base-url", dead + "/v1", "--api-key-env", "PROCTOR_MODEL_KEY"}, "the reflect agent's model does not answer"},
		{"openai, answers", []string{"--agent", "openai", "--model", "m", "--base-url", live.OpenAIURL(), "--api-key-env", "PROCTOR_MODEL_KEY"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			_, errs, code := runCLI(t, "", append([]string{"run", "--suite", "../../testdata/mem", "--env", "mem", "--filter", "^count-lines$", "--report", "none", "--out", out}, tc.flags...)...)
			if tc.want == "" {
				if code != 0 {
					t.Fatalf("a run whose model answers: code %d\n%s", code, errs)
				}
				return
			}
			if code == 0 || !strings.Contains(errs, "pre-flight refused the run") || !strings.Contains(errs, tc.want) {
				t.Fatalf("code %d\n%s", code, errs)
			}
			if _, err := os.Stat(filepath.Join(out, "results.db")); err == nil {
				t.Fatal("the refused run left episodes")
			}
		})
	}
}
