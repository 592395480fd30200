package episode

import (
	"context"
	"errors"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

func TestGUIOnlyRefusesCommands(t *testing.T) {
	acts := []action.Action{
		{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "OK"}},
		{Kind: action.Code, Text: "touch ~/x"},
		{Kind: action.Type, Text: "after"},
	}
	tests := []struct {
		iface   string
		kept    int
		refused bool
	}{
		{"gui", 1, true},
		{"gui+cli", 3, false},
		{"cli", 3, false},
		{"", 3, false},
	}
	for _, tc := range tests {
		got, err := GUIOnly(&task.Task{Interface: tc.iface}, acts)
		if len(got) != tc.kept || (err != nil) != tc.refused {
			t.Errorf("interface %q: kept %d, err %v; want %d kept, refused %v", tc.iface, len(got), err, tc.kept, tc.refused)
		}
		if err != nil && !errors.Is(err, env.ErrForbidden) {
			t.Errorf("interface %q: error %v is not ErrForbidden", tc.iface, err)
		}
	}
}

// shotEnv takes a screenshot of one byte.
type shotEnv struct{ env.Env }

func (shotEnv) Screenshot(context.Context, env.ShotOptions) (env.Shot, error) {
	return env.Shot{Data: []byte{1}, Format: "png"}, nil
}

// tabbedEnv is a shotEnv with a browser's tabs.
type tabbedEnv struct{ shotEnv }

func (tabbedEnv) Tabs(context.Context) ([]observe.Tab, error) {
	return []observe.Tab{{Title: "Orders", URL: "http://127.0.0.1/orders", Active: true}}, nil
}

// TestObservationTabs: an environment with tabs shows them in every
// observation; one without has none.
func TestObservationTabs(t *testing.T) {
	screen := action.Size{W: 1280, H: 800}
	obs, err := Observation(context.Background(), tabbedEnv{}, ObsScreenshot, screen)
	if err != nil || len(obs.Tabs) != 1 || obs.Tabs[0].URL != "http://127.0.0.1/orders" || !obs.Tabs[0].Active {
		t.Fatalf("with tabs: %+v %v", obs.Tabs, err)
	}
	if obs, err := Observation(context.Background(), shotEnv{}, ObsScreenshot, screen); err != nil || obs.Tabs != nil {
		t.Fatalf("without tabs: %+v %v", obs.Tabs, err)
	}
}

// TestResultNamesTemplate: an instance's result names its template, so
// that a report resamples a template's instances together.
func TestResultNamesTemplate(t *testing.T) {
	for _, tc := range []struct{ template string }{{"calc-add-{{a}}-{{b}}"}, {""}} {
		tk := &task.Task{ID: "calc-add-12-30", Level: "wood", Template: tc.template}
		if r := Result(tk, 2); r.Template != tc.template || r.Task != tk.ID || r.Repeat != 2 {
			t.Errorf("result %+v, want template %q", r, tc.template)
		}
	}
}
