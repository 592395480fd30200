package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/store"
)

// fixture writes testdata/runs/NAME.json (a run and its results) into a
// run folder and loads it as proctor report does.
func fixture(t *testing.T, name string) *Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "runs", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Run     store.Run      `json:"run"`
		Results []store.Result `json:"results"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetRun(f.Run); err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Results {
		if err := st.SaveResult(r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestRepeatStats: agent-a tried 7 tasks 3 times, one try an
// infrastructure error (rename-file's third).
func TestRepeatStats(t *testing.T) {
	r := fixture(t, "agent-a")
	r.Analyse(StatOptions{Seed: 1})
	s := r.Stats
	all := s.Intervals[0]
	if all.Scope != "all" || all.Decided != 20 || all.Errors != 1 || !near(all.Success.Estimate, 11.0/20) ||
		all.Success.Lo > all.Success.Estimate || all.Success.Hi < all.Success.Estimate || all.Success.Confidence != 0.95 {
		t.Fatalf("run interval %+v", all)
	}
	// Two calc-add instances are one template: 6 groups, not 7.
	if s.Groups != 6 {
		t.Errorf("%d bootstrap groups, want 6", s.Groups)
	}
	scopes := map[string]ScopeIntervals{}
	for _, iv := range s.Intervals {
		scopes[iv.Scope] = iv
	}
	if g := scopes["level: wood"]; g.Decided != 9 || !near(g.Success.Estimate, 7.0/9) {
		t.Errorf("wood %+v", g)
	}
	if g := scopes["app: thunar"]; g.Decided != 2 || g.Errors != 1 || !near(g.Success.Estimate, 0.5) {
		t.Errorf("thunar %+v", g)
	}
	byTask := map[string]TaskRepeats{}
	for _, tr := range s.Tasks {
		byTask[tr.Task] = tr
	}
	val := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	for _, tc := range []struct {
		task       string
		n, c, errs int
		at, hat    [3]float64 // k = 1, 3, 5; -1 for n/a
		flipped    bool
	}{
		{"calc-add-250-7", 3, 2, 0, [3]float64{2.0 / 3, 1, -1}, [3]float64{2.0 / 3, 0, -1}, true},
		{"mail-send", 3, 3, 0, [3]float64{1, 1, -1}, [3]float64{1, 1, -1}, false},
		{"sort-rows", 3, 0, 0, [3]float64{0, 0, -1}, [3]float64{0, 0, -1}, false},
		{"rename-file", 2, 1, 1, [3]float64{0.5, -1, -1}, [3]float64{0.5, -1, -1}, true},
	} {
		tr := byTask[tc.task]
		if tr.N != tc.n || tr.C != tc.c || tr.Errors != tc.errs || tr.Flipped != tc.flipped {
			t.Errorf("%s: %+v", tc.task, tr)
		}
		for i := range 3 {
			if !near(val(tr.PassAtK[i]), tc.at[i]) || !near(val(tr.PassHatK[i]), tc.hat[i]) {
				t.Errorf("%s k=%d: pass@k %v pass^k %v, want %v %v", tc.task, s.Options.K[i], val(tr.PassAtK[i]), val(tr.PassHatK[i]), tc.at[i], tc.hat[i])
			}
		}
	}
	if s.Flipped != 3 || s.Tried != 7 || !near(s.FlipRate, 3.0/7) || strings.Join(s.Flaky, ",") != "calc-add-250-7,note-write,rename-file" {
		t.Errorf("flips %d of %d (%v): %v", s.Flipped, s.Tried, s.FlipRate, s.Flaky)
	}
	// pass@1 averages c/n over the tasks; k = 3 leaves rename-file out.
	if m := s.Means[0]; m.Tasks != 7 || !near(m.PassAtK, (1+2.0/3+2.0/3+0+0.5+0+1)/7) {
		t.Errorf("pass@1 mean %+v", m)
	}
	if m := s.Means[1]; m.Tasks != 6 || !near(m.PassHatK, 2.0/6) {
		t.Errorf("pass^3 mean %+v", m)
	}
	// The same seed gives the same intervals; another seed, others.
	again := fixture(t, "agent-a")
	again.Analyse(StatOptions{Seed: 1})
	if again.Stats.Intervals[0] != all {
		t.Errorf("seed 1 gave %+v, then %+v", all, again.Stats.Intervals[0])
	}
	for _, format := range []string{"text", "markdown"} {
		var b bytes.Buffer
		if err := Write(&b, []*Report{r}, format); err != nil {
			t.Fatal(err)
		}
		golden(t, "repeats."+format, b.String())
	}
	var b bytes.Buffer
	if err := Write(&b, []*Report{r}, "json"); err != nil {
		t.Fatal(err)
	}
	var back []Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back[0].Stats == nil || len(back[0].Stats.Tasks) != 7 || back[0].Stats.Tasks[0].PassAtK[2] != nil {
		t.Fatalf("json: %v", err)
	}
}

// TestCompare: agent-b against agent-a over the 6 tasks both decided
// (draw-shape is only in b, chart-make only errors in b).
func TestCompare(t *testing.T) {
	a, b := fixture(t, "agent-a"), fixture(t, "agent-b")
	c := Compare(a, b, StatOptions{Seed: 1})
	if c.Tasks != 6 || c.OnlyA != 0 || c.OnlyB != 1 || c.Undecided != 1 || c.Won != 4 || c.Lost != 1 || c.Tied != 1 {
		t.Fatalf("comparison %+v", c)
	}
	// McNemar on 1 lost, 4 won: 2·(1 + 5)/32.
	if !near(c.P, 12.0/32) {
		t.Errorf("p = %v, want 0.375", c.P)
	}
	// Shares a: 1, 2/3, 2/3, 0, 1/2, 1 (tied calc-add-12-30, the four won,
	// mail-send lost); b: 1, 1, 1, 2/3, 1, 1/3.
	if !near(c.Success.Estimate, (5-(1+2.0/3+2.0/3+0.5+1))/6) || c.Success.Lo > c.Success.Estimate || c.Success.Hi < c.Success.Estimate {
		t.Errorf("success difference %+v", c.Success)
	}
	want := "agent-b is better than agent-a by 19.4 points (95% CI "
	if !strings.HasPrefix(c.Words, want) || !strings.Contains(c.Words, "; 4 tasks won, 1 lost; p = 0.38)") {
		t.Errorf("words %q", c.Words)
	}
	lost := Compare(b, a, StatOptions{Seed: 1})
	if lost.Won != 1 || lost.Lost != 4 || !strings.HasPrefix(lost.Words, "agent-a is worse than agent-b by 19.4 points") {
		t.Errorf("reversed: %+v", lost)
	}
	if same := Compare(a, a, StatOptions{Seed: 1}); same.Won+same.Lost != 0 || same.P != 1 || !strings.HasPrefix(same.Words, "agent-a and agent-a succeed equally often") {
		t.Errorf("a run against itself: %+v", same)
	}
	for _, format := range []string{"text", "markdown"} {
		var w bytes.Buffer
		if err := WriteComparison(&w, c, format); err != nil {
			t.Fatal(err)
		}
		golden(t, "compare."+format, w.String())
	}
}
