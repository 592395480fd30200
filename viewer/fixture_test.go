package viewer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/store"
)

// shotPNG is a small screenshot: a grey desktop with a window of the
// given colour.
func shotPNG(t testing.TB, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{60, 60, 70, 255})
			if x > w/8 && x < w*7/8 && y > h/8 && y < h*7/8 {
				img.Set(x, y, c)
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// episode is one task of a generated run.
type episode struct {
	task, level, outcome string
	steps                int
}

// makeRun writes a run folder under root with the episodes: results with
// verdicts (one with milestones) and steps with screenshots, clicks,
// drags, scrolls and typing.
func makeRun(t testing.TB, root, id, agent string, started time.Time, eps []episode) string {
	t.Helper()
	dir := filepath.Join(root, id)
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetRun(store.Run{ID: id, Started: started, Harness: "test", Suite: "suites/desktop", Agent: agent,
		Model: "m-1", ObsMode: "screenshot", Resolution: "640x360", Parallel: 1, Repeat: 1}); err != nil {
		t.Fatal(err)
	}
	shots := []string{}
	for _, c := range []color.Color{color.RGBA{240, 240, 240, 255}, color.RGBA{200, 220, 255, 255}, color.RGBA{255, 230, 200, 255}} {
		name, err := st.PutShot(shotPNG(t, 640, 360, c), "png")
		if err != nil {
			t.Fatal(err)
		}
		shots = append(shots, name)
	}
	weights := map[string]float64{"paper": 0.5, "wood": 1, "bronze": 2, "silver": 3, "gold": 4}
	for _, e := range eps {
		v := check.Verdict{Outcome: check.Outcome(e.outcome), Reason: "all checks passed",
			Checks: []check.Result{{Name: "exact on file ~/out.txt", Kind: check.Exact, Pass: e.outcome == "success", Reason: `value "42" equals "42"`}}}
		if e.outcome != "success" {
			v.Reason = `exact on file ~/out.txt: value "41" is not "42"`
			v.Checks[0].Reason = `value "41" is not "42"`
		}
		if e.level == "silver" {
			v.Milestones = []check.MilestoneResult{
				{ID: "computed", Weight: 1, Rubric: "The calculator shows 1591.", Pass: true, Checks: []check.Result{{Name: "exists element", Pass: true, Reason: "exists"}}},
				{ID: "saved", Weight: 2, Rubric: "The file holds 1591.", Pass: false, Checks: []check.Result{{Name: "exact on file", Pass: false, Reason: "nothing to read"}}},
			}
			v.MilestoneScore = 1.0 / 3
		}
		vb, _ := json.Marshal(v)
		ms := 0.0
		if e.outcome == "success" {
			ms = 1
		}
		if err := st.SaveResult(store.Result{Task: e.task, Instruction: "Do " + e.task + " on the desktop.", Level: e.level,
			Weight: weights[e.level], Apps: []string{"mousepad"}, Domain: "office", Kind: "state", Difficulty: "easy",
			Outcome: e.outcome, Reason: v.Reason, Milestone: ms, Steps: e.steps, Duration: time.Duration(e.steps) * 800 * time.Millisecond,
			InputTokens: 1000 * e.steps, OutputTokens: 50 * e.steps, Cost: 0.002 * float64(e.steps), Attempts: 1,
			Verdict: vb, Finished: started.Add(time.Minute), FinalShot: shots[(e.steps+1)%len(shots)]}); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= e.steps; i++ {
			var acts []action.Action
			var done []map[string]any
			switch i % 4 {
			case 1:
				acts = []action.Action{{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "Save"}}}
				done = []map[string]any{{"action": acts[0], "element": "push button Save", "at": []int{320, 180}}}
			case 2:
				acts = []action.Action{{Kind: action.Drag, Point: &action.Point{X: 100, Y: 100}, To: &action.Point{X: 400, Y: 250}}}
				done = []map[string]any{{"action": acts[0], "at": []int{400, 250}}}
			case 3:
				acts = []action.Action{{Kind: action.Type, Text: "hello world"}, {Kind: action.Hotkey, Keys: []string{"ctrl", "s"}}}
				done = []map[string]any{{"action": acts[0]}, {"action": acts[1]}}
			default:
				acts = []action.Action{{Kind: action.Scroll, Point: &action.Point{X: 0.5, Y: 0.5, Unit: action.Ratio}, DY: 5}}
				done = []map[string]any{{"action": acts[0]}}
			}
			ab, _ := json.Marshal(acts)
			db, _ := json.Marshal(done)
			raw := fmt.Sprintf("Thought: step %d of %s.\nAction: %s", i, e.task, ab)
			tree := ""
			var prompt json.RawMessage
			if i == 1 {
				tree = "[frame] Mousepad - " + e.task + "\n  [push button] Save\n  [text] <out.txt> & more"
				prompt, _ = json.Marshal([]map[string]any{{"role": "system", "text": "You operate a Linux desktop. Do " + e.task + "."},
					{"role": "user", "text": "Step 1.", "images": []string{"png 640x360, 12 KB"}}})
			}
			if err := st.SaveTurn(store.Turn{Task: e.task, Repeat: 0, Index: i, Shot: shots[i%len(shots)], Tree: tree,
				Raw: raw, Thought: action.Thought(raw), Actions: ab, Done: db, Prompt: prompt,
				Models:       json.RawMessage(`[{"role":"planner","model":"m-1","input_tokens":600,"output_tokens":30,"cost":0.0012},{"role":"grounder","model":"g-1","input_tokens":400,"output_tokens":20,"cost":0.0008}]`),
				ModelLatency: 900 * time.Millisecond, EnvLatency: 40 * time.Millisecond, InputTokens: 1000, OutputTokens: 50, Cost: 0.002}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}
