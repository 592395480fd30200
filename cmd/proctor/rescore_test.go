package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/run"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// rescoreSuite is a small suite; the test changes some of its checks
// after the run.
var rescoreSuite = map[string]string{
	"greet.yaml": `id: greet
instruction: Write "Hello, Proctor" into ~/greeting.txt.
app: mousepad
level: wood
kind: state
checks:
  - kind: exact
    name: the file holds the greeting
    probe: {file: ~/greeting.txt}
    expected: Hello, Proctor
    case_sensitive: true
gold:
  - {kind: click, point: {x: 100, y: 200}}
  - {kind: type, text: "Hello, Proctor"}
  - {kind: hotkey, keys: [ctrl, s]}
  - {kind: done}
`,
	"fruits.yaml": `id: fruits
instruction: Save the list of fruits as ~/fruits.txt.
app: mousepad
level: wood
kind: state
checks:
  - kind: file_equal
    file: ~/fruits.txt
    asset: fruits.txt
gold:
  - {kind: type, text: "apple\nkiwi\n"}
  - {kind: done}
`,
	"count.yaml": `id: count
instruction: How many rows does ~/table.csv have?
app: xterm
level: wood
kind: qa
checks:
  - kind: answer
    accepted: ["3"]
gold:
  - {kind: answer, text: "3"}
`,
	"notes.yaml": `id: notes
instruction: Add "todo" to ~/notes.txt.
app: mousepad
level: wood
kind: state
checks:
  - kind: contains
    probe: {file: ~/notes.txt}
    value: todo
gold:
  - {kind: type, text: todo}
  - {kind: done}
`,
	"old.yaml": `id: old
instruction: Copy "x" to the clipboard.
app: xterm
level: wood
kind: state
checks:
  - kind: exact
    probe: {clipboard: true}
    expected: x
gold:
  - {kind: done}
`,
	"assets/fruits.txt": "apple\nkiwi\n",
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// episode is what an agent did and what the desktop held afterwards.
type fakeEpisode struct {
	task   string
	repeat int
	files  map[string][]byte
	clip   *string
	steps  [][]action.Action // the actions of each step, the final one included
	end    check.End
	want   check.Outcome // the run's verdict
	result string        // set: the episode's recorded outcome, with no evidence (an error)
}

// recordRun writes a run folder as proctor run would, without a desktop:
// each episode is judged live through a check.Recorder over fake evidence,
// and its result, steps and recorded evidence are stored.
func recordRun(t *testing.T, dir, suiteDir string, eps []fakeEpisode) {
	t.Helper()
	s, ps := task.Load(suiteDir)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cb, _ := json.Marshal(runConfig{Suite: suiteDir, Agent: "replay", Obs: "som", Parallel: 1, Repeat: 2})
	if err := st.SetRun(store.Run{ID: filepath.Base(dir), Started: time.Now().UTC(), Suite: suiteDir, SuiteHash: run.SuiteHash(s.Tasks),
		Agent: "replay", ObsMode: "som", Parallel: 1, Repeat: 2, Config: cb}); err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		tk, ok := s.Task(ep.task)
		if !ok {
			t.Fatalf("no task %s", ep.task)
		}
		res := store.Result{Task: tk.ID, Repeat: ep.repeat, Level: string(tk.Level), Weight: tk.Level.Weight(), Kind: string(tk.Kind), Steps: len(ep.steps)}
		var traj check.Trajectory
		for i, acts := range ep.steps {
			var done []map[string]any
			for _, a := range acts {
				traj.Steps = append(traj.Steps, check.Step{Action: a})
				if !a.Kind.Terminal() {
					done = append(done, map[string]any{"action": a})
				}
			}
			ab, _ := json.Marshal(acts)
			db, _ := json.Marshal(done)
			if err := st.SaveTurn(store.Turn{Task: tk.ID, Repeat: ep.repeat, Index: i + 1, Actions: ab, Done: db}); err != nil {
				t.Fatal(err)
			}
		}
		if ep.result != "" {
			res.Outcome, res.Reason = ep.result, "infrastructure fault after 3 attempts: reset: boom"
		} else {
			cs, err := check.CompileAll(tk.Checks, tk.Milestones)
			if err != nil {
				t.Fatal(err)
			}
			live := &check.Recorded{Files: ep.files, Clip: ep.clip, Steps: traj, AssetDir: s.AssetPath("")}
			ev := check.NewRecorder(live)
			v := cs.Evaluate(context.Background(), ev, ep.end)
			if v.Outcome != ep.want {
				t.Fatalf("%s #%d judged %s live (%s), want %s", ep.task, ep.repeat, v.Outcome, v.Reason, ep.want)
			}
			if v.Outcome == check.Uncompleted {
				v.Reason = "the step budget of 25 steps was used up"
			}
			vb, _ := json.Marshal(v)
			res.Outcome, res.Reason, res.Milestone, res.Verdict = string(v.Outcome), v.Reason, v.MilestoneScore, vb
			if err := st.SaveEvidence(tk.ID, ep.repeat, ev.Recorded()); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.SaveResult(res); err != nil {
			t.Fatal(err)
		}
	}
}

func act(k action.Kind, text string) action.Action { return action.Action{Kind: k, Text: text} }

func click(x, y float64) action.Action {
	return action.Action{Kind: action.Click, Point: &action.Point{X: x, Y: y}}
}

var rescoreEpisodes = []fakeEpisode{
	{task: "greet", repeat: 0, files: map[string][]byte{"~/greeting.txt": []byte("Hello, Proctor")}, end: check.EndAgent, want: check.Success,
		steps: [][]action.Action{{click(100, 200)}, {act(action.Type, "Hello, Proctor"), {Kind: action.Hotkey, Keys: []string{"ctrl", "s"}}, act(action.Done, "")}}},
	{task: "greet", repeat: 1, files: map[string][]byte{"~/greeting.txt": []byte("Hello Proctor")}, end: check.EndAgent, want: check.Failure,
		steps: [][]action.Action{{click(900, 40)}, {act(action.Type, "Hello Proctor"), act(action.Done, "")}}},
	{task: "fruits", repeat: 0, files: map[string][]byte{"~/fruits.txt": []byte("apple\nkiwi\n")}, end: check.EndAgent, want: check.Success,
		steps: [][]action.Action{{act(action.Type, "apple\nkiwi\n"), act(action.Done, "")}}},
	{task: "count", repeat: 0, end: check.EndAgent, want: check.Success, steps: [][]action.Action{{act(action.Answer, "3")}}},
	{task: "count", repeat: 1, end: check.EndBudget, want: check.Uncompleted, steps: [][]action.Action{{click(5, 5)}, {click(5, 5)}}},
	{task: "notes", repeat: 0, files: map[string][]byte{"~/notes.txt": []byte("todo: rescore")}, end: check.EndAgent, want: check.Success,
		steps: [][]action.Action{{act(action.Type, "todo"), act(action.Done, "")}}},
	{task: "old", repeat: 0, clip: new("x"), end: check.EndAgent, want: check.Success, steps: [][]action.Action{{act(action.Done, "")}}},
	{task: "notes", repeat: 1, result: "error"},
}

// TestRescoreFlips records a run, changes checks of its suite, and judges
// the run again with proctor rescore.
func TestRescoreFlips(t *testing.T) {
	tmp := t.TempDir()
	suite, orig := filepath.Join(tmp, "suite"), filepath.Join(tmp, "orig")
	writeFiles(t, suite, rescoreSuite)
	writeFiles(t, orig, rescoreSuite)
	dir := filepath.Join(tmp, "run")
	recordRun(t, dir, suite, rescoreEpisodes)

	// The checks change: greet wants no comma, count accepts 4, notes reads
	// a file the run never read, and old leaves the suite.
	edit := func(name, from, to string) {
		p := filepath.Join(suite, name)
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), from) {
			t.Fatalf("%s: %v or no %q", name, err, from)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(b), from, to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("greet.yaml", "expected: Hello, Proctor", "expected: Hello Proctor")
	edit("count.yaml", `accepted: ["3"]`, `accepted: ["4"]`)
	edit("notes.yaml", "    value: todo\n", "    value: todo\n  - kind: exists\n    file: ~/done.txt\n")
	if err := os.Remove(filepath.Join(suite, "old.yaml")); err != nil {
		t.Fatal(err)
	}

	out, errs, code := runCLI(t, "", "rescore", dir)
	if code != 0 {
		t.Fatalf("rescore exited %d:\n%s\n%s", code, out, errs)
	}
	want := `TASK   REPEAT  OLD -> NEW          REASON
count  0       success -> failure  answer: answer "3" matches none of [4]
greet  0       success -> failure  the file holds the greeting: value "Hello, Proctor" is not "Hello Proctor"
greet  1       failure -> success  all checks passed
notes  0       success -> error    evidence could not be read: file ~/done.txt was not recorded
task old is no longer in the suite (1 episode not judged)
6 episodes re-judged, 4 flipped, 1 skipped (error), 1 not in the suite
`
	if out != want {
		t.Errorf("rescore printed:\n%s\nwant:\n%s", out, want)
	}
	if !strings.Contains(errs, "re-judged "+dir+" with the checks of "+suite+" (its tasks changed since the run)") {
		t.Errorf("stderr: %s", errs)
	}

	// The results stay; the new verdicts lie beside them.
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fin, _ := st.Finished()
	if fin["greet"][0] != "success" || fin["greet"][1] != "failure" || fin["notes"][0] != "success" || fin["old"][0] != "success" {
		t.Errorf("the original results changed: %v", fin)
	}
	rs, err := st.Rescores()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rs {
		got[r.Task+"#"+string(rune('0'+r.Repeat))] = r.OldOutcome + ">" + r.Outcome
	}
	wantRS := map[string]string{"greet#0": "success>failure", "greet#1": "failure>success", "fruits#0": "success>success",
		"count#0": "success>failure", "count#1": "uncompleted>uncompleted", "notes#0": "success>error"}
	if len(got) != len(wantRS) {
		t.Errorf("rescores %v, want %v", got, wantRS)
	}
	for k, v := range wantRS {
		if got[k] != v {
			t.Errorf("rescore of %s = %q, want %q", k, got[k], v)
		}
	}
	for _, r := range rs {
		if r.Task == "count" && r.Repeat == 1 && r.Reason != "the step budget of 25 steps was used up" {
			t.Errorf("an uncompleted episode lost the runner's reason: %q", r.Reason)
		}
	}
	st.Close()

	// proctor report lists the flips in every format.
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"text", []string{"success rate", "Re-judged: 4 flipped (run, 6 episodes,", "greet  0       success -> failure  the file holds the greeting"}},
		{"markdown", []string{"### Re-judged: 4 flipped", "| notes | 0 | success -> error | evidence could not be read: file ~/done.txt was not recorded |"}},
		{"json", []string{`"rejudged": {`, `"old_outcome": "failure"`, `"episodes": 6`}},
	} {
		out, errs, code := runCLI(t, "", "report", dir, "--format", tc.format)
		if code != 0 {
			t.Fatalf("report exited %d: %s", code, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s report lacks %q:\n%s", tc.format, w, out)
			}
		}
	}

	// Judged again with the suite as it was, nothing flips; the report
	// shows the latest re-judging.
	out, errs, code = runCLI(t, "", "rescore", dir, "--suite", orig)
	if code != 0 || out != "no outcome flipped\n7 episodes re-judged, 0 flipped, 1 skipped (error)\n" || !strings.Contains(errs, "unchanged since the run") {
		t.Errorf("rescore --suite %s exited %d:\n%s\n%s", orig, code, out, errs)
	}
	out, _, _ = runCLI(t, "", "report", dir)
	if !strings.Contains(out, "Re-judged: 0 flipped") {
		t.Errorf("the report does not show the latest re-judging:\n%s", out)
	}
}

func TestRescoreErrors(t *testing.T) {
	tmp := t.TempDir()
	suite := filepath.Join(tmp, "suite")
	writeFiles(t, suite, rescoreSuite)
	dir := filepath.Join(tmp, "run")
	recordRun(t, dir, suite, rescoreEpisodes[:1])
	broken := filepath.Join(tmp, "broken")
	writeFiles(t, broken, map[string]string{"greet.yaml": strings.Replace(rescoreSuite["greet.yaml"], "kind: exact", "kind: exactly", 1)})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no run", []string{"rescore", filepath.Join(tmp, "nothing")}, filepath.Join(tmp, "nothing") + ": no run there"},
		{"suite gone", []string{"rescore", filepath.Join(tmp, "run")}, dir + ": the suite the run was made with is not there"},
		{"suite with problems", []string{"rescore", dir, "--suite", broken}, "the suite " + broken + " has problems"},
		{"no argument", []string{"rescore"}, "accepts 1 arg(s)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "suite gone" {
				os.RemoveAll(suite)
			}
			_, errs, code := runCLI(t, "", tc.args...)
			if code != 1 || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 1 and %q", code, errs, tc.want)
			}
		})
	}
}

// TestReportCCScore scores the performed actions against the gold: the
// episode that did the gold scores 1, the other less.
func TestReportCCScore(t *testing.T) {
	tmp := t.TempDir()
	suite := filepath.Join(tmp, "suite")
	writeFiles(t, suite, rescoreSuite)
	dir := filepath.Join(tmp, "run")
	recordRun(t, dir, suite, rescoreEpisodes)
	out, errs, code := runCLI(t, "", "report", dir, "--ccscore", "--format", "json")
	if code != 0 {
		t.Fatalf("report --ccscore exited %d: %s", code, errs)
	}
	var reps []struct {
		CC struct {
			CCScore  float64 `json:"cc_score"`
			Seqs     int     `json:"sequences"`
			Unscored int     `json:"unscored"`
			Tasks    []struct {
				Task    string  `json:"task"`
				CCScore float64 `json:"cc_score"`
			} `json:"tasks"`
		} `json:"cc_score"`
	}
	if err := json.Unmarshal([]byte(out), &reps); err != nil || len(reps) != 1 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	cc := reps[0].CC
	// Every episode but the error is scored.
	if cc.Seqs != 7 || cc.Unscored != 1 || len(cc.Tasks) != 5 {
		t.Fatalf("cc = %+v", cc)
	}
	byTask := map[string]float64{}
	for _, tc := range cc.Tasks {
		byTask[tc.Task] = tc.CCScore
	}
	// greet #0 did the gold (1), greet #1 clicked elsewhere and typed
	// other text; fruits did its gold; count #1 never answered.
	if g := byTask["greet"]; g <= 0.5 || g >= 1 {
		t.Errorf("greet's mean CC-Score %.3f: want the mean of 1 (the gold) and a lower score", g)
	}
	if byTask["fruits"] != 1 || byTask["count"] != 0.5 || cc.CCScore >= 1 {
		t.Errorf("CC-Scores %v, mean %.3f", byTask, cc.CCScore)
	}
	out, _, code = runCLI(t, "", "report", dir, "--ccscore")
	if code != 0 || !strings.Contains(out, "CC-Score against the gold solutions") || !strings.Contains(out, "episodes scored (unscored)  7 (1)") {
		t.Fatalf("text report:\n%s", out)
	}
	if out, _, _ := runCLI(t, "", "report", dir); strings.Contains(out, "CC-Score") {
		t.Fatalf("CC-Score shown without --ccscore:\n%s", out)
	}
}
