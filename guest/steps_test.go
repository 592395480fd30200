package guest

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/mem"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/task"
)

// TestStepsThroughTheDaemon: a task's steps after the agent run on the
// daemon's environment as it is (no reset), and an environment that runs
// none says so, an action not possible.
func TestStepsThroughTheDaemon(t *testing.T) {
	ctx := context.Background()
	m, err := mem.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	srv := httptest.NewServer((&Server{Env: m, Token: "tok"}).Handler())
	t.Cleanup(srv.Close)
	c, err := remote.Dial(ctx, srv.URL, "tok")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Reset(ctx, env.Setup{Steps: []task.Step{{Write: &task.Write{Path: "~/kept.txt", Content: "from the setup"}}}}); err != nil {
		t.Fatal(err)
	}
	err = env.RunSteps(ctx, c, env.Setup{Steps: []task.Step{{Write: &task.Write{Path: "~/after.txt", Content: "after"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"~/kept.txt": "from the setup", "~/after.txt": "after"} {
		if b, err := c.ReadFile(ctx, file); err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", file, b, err, want)
		}
	}
	err = env.RunSteps(ctx, c, env.Setup{Steps: []task.Step{{Close: &task.Close{Title: "Nothing"}}}})
	if err == nil || !strings.Contains(err.Error(), `after[0] close: `) {
		t.Fatalf("a close of no window: %v", err)
	}

	plain := httptest.NewServer((&Server{Env: newRootEnv(t), Token: "tok"}).Handler())
	t.Cleanup(plain.Close)
	c2, err := remote.Dial(ctx, plain.URL, "tok")
	if err != nil {
		t.Fatal(err)
	}
	err = env.RunSteps(ctx, c2, env.Setup{Steps: []task.Step{{Write: &task.Write{Path: "~/after.txt", Content: "after"}}}})
	if !errors.Is(err, env.ErrBadAction) || !strings.Contains(err.Error(), "runs no steps after the agent") {
		t.Fatalf("an environment without steps after the agent: %v", err)
	}
}
