package android_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/android"
	"github.com/proctor-eval/proctor/env/android/phonetest"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/proctor-eval/proctor/validate"
)

// TestProBenchSet validates tasks of the ProBench-style set on the
// scripted phone, in process: every gold succeeds, doing nothing, giving
// up and every wrong trajectory do not; the one that taps the same place
// is stopped early, and the one that wanders is cut at ProBench's 15
// steps.
func TestProBenchSet(t *testing.T) {
	s, ps := task.Load("../../testdata/android")
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	ph := phonetest.New(t, 1080, 2340)
	phonetest.InstallProBench(ph)
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src := env.Source{Name: "phone", Type: android.Kind, Size: action.Size{W: 1080, H: 2340},
		Start: func(context.Context, action.Size) (env.Env, error) { return android.New(ph, "phone"), nil }}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The whole set runs over ADB in cmd/proctor's TestAndroidOverADB;
	// here, in process, the tasks that show the budgets and the process.
	var tasks []*task.Task
	for _, tk := range s.Tasks {
		if tk.ID == "android-dark-theme" || tk.ID == "android-airplane-off-budget" || tk.ID == "android-sushi-menu" || tk.ID == "android-note-groceries" {
			tasks = append(tasks, tk)
		}
	}
	rows, err := validate.Run(ctx, validate.Config{Suite: s, Tasks: tasks, Sources: []env.Source{src}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	validate.WriteVerbose(&b, rows)
	if v := validate.Violations(rows); v > 0 || len(rows) != 16 {
		t.Fatalf("%d violations in %d rows:\n%s", v, len(rows), b.String())
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r.Task+" / "+r.Trajectory] = r.Got
	}
	for k, want := range map[string]string{
		"android-dark-theme / taps the same place until it is stopped":           "early_stopped",
		"android-airplane-off-budget / scrolls past the budget":                  "uncompleted",
		"android-sushi-menu / opens the right menu without sorting or filtering": "failure",
		"android-sushi-menu / gold":                                              "success",
	} {
		if got[k] != want {
			t.Errorf("%s: %s, want %s\n%s", k, got[k], want, b.String())
		}
	}
}
