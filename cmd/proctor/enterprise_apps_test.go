package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/episode"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
)

// TestEnterpriseReportByApp: the report of a run of the enterprise suite
// names its applications under "By app" (each task's app is the command
// service it drives), not one "-" row. The run is a fixture: each task's
// result as an episode starts it, with an outcome.
func TestEnterpriseReportByApp(t *testing.T) {
	s, ps := task.Load("../../suites/enterprise")
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	dir := filepath.Join(t.TempDir(), "run")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetRun(store.Run{ID: "enterprise", Agent: "replay", Suite: s.Dir}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for i, tk := range s.Tasks {
		res := episode.Result(tk, 0)
		res.Outcome = map[bool]string{true: "success", false: "failure"}[i%2 == 0]
		if err := st.SaveResult(res); err != nil {
			t.Fatal(err)
		}
		for _, a := range res.Apps {
			want[a]++
		}
	}
	st.Close()
	if len(want) != 3 || want["tryton"] == 0 || want["rt"] == 0 || want["redmine"] == 0 {
		t.Fatalf("the tasks' apps %v, want tryton, rt and redmine", want)
	}
	out, errs, code := runCLI(t, "", "report", dir)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, errs)
	}
	_, byApp, ok := strings.Cut(out, "\nBy app\n")
	byApp, _, _ = strings.Cut(byApp, "\n\n")
	if !ok {
		t.Fatalf("no table by app:\n%s", out)
	}
	var apps []string
	for _, line := range strings.Split(byApp, "\n")[1:] {
		apps = append(apps, strings.Fields(line)[0])
	}
	if strings.Join(apps, " ") != "redmine rt tryton" {
		t.Errorf("by app %q, want redmine rt tryton:\n%s", apps, byApp)
	}
}
