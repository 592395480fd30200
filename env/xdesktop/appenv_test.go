package xdesktop

import (
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/task"
)

// TestAppEnvReachesTheApp launches and opens with a suite app that
// declares environment variables, and checks the app sees them.
func TestAppEnvReachesTheApp(t *testing.T) {
	need(t, "sh")
	d := start(t)
	apps := map[string]task.AppSpec{
		"greeter": {Command: "sh -c", Env: map[string]string{"GREETING": "hello from env", "LANG": "C"}},
		"opener":  {Command: "sh", Env: map[string]string{"GREETING": "opened"}},
	}
	steps := []task.Step{
		{Launch: &task.Launch{App: "greeter", Args: []string{`echo "$GREETING $LANG" > greeting.txt; sleep 30`}}},
		{Write: &task.Write{Path: "~/open.sh", Content: "echo \"$GREETING\" > opened.txt; sleep 30\n"}},
		{Open: &task.Open{App: "opener", Path: "~/open.sh"}},
	}
	if err := d.Reset(ctx(t), env.Setup{Steps: steps, Apps: apps}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"~/greeting.txt": "hello from env C", "~/opened.txt": "opened"} {
		var got string
		for range 50 {
			b, err := d.ReadFile(ctx(t), path)
			if got = strings.TrimSpace(string(b)); err == nil && got != "" {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	bad := map[string]task.AppSpec{"bad": {Command: "sleep 30", Env: map[string]string{MarkerVar: "other"}}}
	if err := d.Reset(ctx(t), env.Setup{Steps: []task.Step{{Launch: &task.Launch{App: "bad"}}}, Apps: bad}); err == nil {
		t.Error("an app could override the desktop's marker variable")
	}
}
