package mem_test

import (
	"context"
	"errors"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/envtest"
	"github.com/proctor-eval/proctor/env/mem"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// dialog is the conformance suite's dialog as an in-memory app: each
// button writes its name to ~/rc and closes the dialog, as the desktop's
// yad dialog writes its exit code.
var dialog = mem.App{Title: "Conformance", Dialog: true, Widgets: []mem.Widget{
	{Role: mem.RoleLabel, Name: "Proceed"},
	{Role: mem.RoleButton, Name: "Yes", Press: &mem.Effect{Write: "~/rc", Content: "Yes", Close: true}},
	{Role: mem.RoleButton, Name: "Later", Press: &mem.Effect{Write: "~/rc", Content: "Later", Close: true}},
}}

// fixture is the suite's fixture for an environment made with
// mem.WithApp("conformance", dialog).
var fixture = envtest.Fixture{
	Dialog: env.Setup{Steps: []task.Step{
		{Launch: &task.Launch{App: "conformance", WaitWindow: "Conformance"}},
		{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Role: "push button", Name: "Later"}}},
	}},
	Pressed: func(ctx context.Context, e env.Env) (string, error) {
		b, err := e.ReadFile(ctx, "~/rc")
		if errors.Is(err, observe.ErrNotFound) {
			return "", nil
		}
		return string(b), err
	},
	// Copy types the text into an editor's window, selects it and copies
	// it with the keys a person uses.
	Copy: func(ctx context.Context, e env.Env, text string) error {
		if err := e.Reset(ctx, env.Setup{Steps: []task.Step{{Launch: &task.Launch{App: "mousepad"}}}}); err != nil {
			return err
		}
		_, err := e.Do(ctx, []action.Action{
			{Kind: action.Type, Target: &action.Target{Role: "text", Name: "Text"}, Text: text},
			{Kind: action.Hotkey, Keys: []string{"ctrl", "a"}},
			{Kind: action.Hotkey, Keys: []string{"ctrl", "c"}},
		})
		return err
	},
}

func TestConformance(t *testing.T) {
	e, err := mem.New(mem.WithApp("conformance", dialog))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	envtest.RunWith(t, e, fixture)
}
