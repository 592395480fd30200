package rescore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/store"
)

// TestControlsFailed checks the tolerance and the naming of the controls
// a judge got wrong.
func TestControlsFailed(t *testing.T) {
	right := store.JudgeControl{Judge: "j", Control: "a [gold] c", Evidence: "final_screenshot", Want: true, Got: true}
	saidPass := store.JudgeControl{Judge: "j", Control: "a [noop] c", Evidence: "final_screenshot", Want: false, Got: true}
	silent := store.JudgeControl{Judge: "j", Control: "b [gold] c", Evidence: "command_output", Want: true, Err: "judge down\nretry later"}
	tests := []struct {
		name      string
		rs        []store.JudgeControl
		tolerance int
		want      []string // in the error; none: no error
	}{
		{"none", nil, 0, nil},
		{"all right", []store.JudgeControl{right}, 0, nil},
		{"one wrong, none allowed", []store.JudgeControl{right, saidPass}, 0,
			[]string{"the judge j got 1 of 2 wrong (tolerance 0)", "a [noop] c (final_screenshot): should fail, said pass"}},
		{"one wrong, one allowed", []store.JudgeControl{right, saidPass}, 1, nil},
		{"no verdict is wrong", []store.JudgeControl{right, saidPass, silent}, 1,
			[]string{"got 2 of 3 wrong (tolerance 1)", "b [gold] c (command_output): should pass, gave no verdict: judge down retry later"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ControlsFailed(tc.rs, tc.tolerance)
			if (err != nil) != (len(tc.want) > 0) {
				t.Fatalf("error %v, want one: %v", err, len(tc.want) > 0)
			}
			if err != nil && !errors.Is(err, ErrControls) {
				t.Errorf("%v does not wrap ErrControls", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			if err != nil && strings.Contains(err.Error(), "a [gold] c") {
				t.Errorf("%q names a control the judge got right", err)
			}
		})
	}
}

// TestControlsFile checks that controls written with their images read
// back the same, that Merge keeps the tasks not validated again and at
// most perKind of each kind and verdict, and that a file naming an image
// outside its folder, or of another version, is refused.
func TestControlsFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ControlsDir)
	shot := []byte("\x89PNG fake screen")
	old := []Control{
		{Task: "a", Trajectory: "gold", Check: "c", Evidence: "final_screenshot", Pass: true, Expectation: "old a"},
		{Task: "b", Trajectory: "gold", Check: "c", Evidence: "final_screenshot", Pass: true, Expectation: "b",
			Parts: []ControlPart{{Label: "the screen", Format: "png", data: shot}}},
		{Task: "c", Trajectory: "gold", Check: "c", Evidence: "final_screenshot", Pass: true, Expectation: "c"},
	}
	fresh := []Control{{Task: "a", Trajectory: "noop", Check: "c", Evidence: "final_screenshot", Pass: false, Expectation: "new a",
		Parts: []ControlPart{{Label: "the answer", Text: "4"}}}}
	merged := Merge(fresh, old, []string{"a"}, 1)
	var names []string
	for _, c := range merged {
		names = append(names, c.Name())
	}
	if got, want := strings.Join(names, "; "), "a [noop] c; b [gold] c"; got != want {
		t.Fatalf("merged %s, want %s", got, want)
	}
	if err := WriteControls(dir, &Controls{Judge: "j", Controls: merged}); err != nil {
		t.Fatal(err)
	}
	cs, err := ReadControls(dir)
	if err != nil {
		t.Fatal(err)
	}
	req := cs.Controls[1].Request()
	if len(req.Evidence) != 1 || string(req.Evidence[0].Image) != string(shot) || req.Expectation != "b" {
		t.Errorf("read back %+v", req)
	}
	if req := cs.Controls[0].Request(); len(req.Evidence) != 1 || req.Evidence[0].Text != "4" || req.Evidence[0].IsImage() {
		t.Errorf("read back %+v", req)
	}
	bad := []struct{ name, file string }{
		{"an image outside", `{"version": 1, "judge": "j", "controls": [{"task": "a", "trajectory": "gold", "check": "c", "evidence": "final_screenshot", "pass": true, "expectation": "e", "parts": [{"label": "x", "image": "../secret.png"}]}]}`},
		{"another version", `{"version": 2, "judge": "j", "controls": []}`},
		{"no expectation", `{"version": 1, "judge": "j", "controls": [{"task": "a", "trajectory": "gold", "check": "c", "pass": true, "parts": []}]}`},
	}
	for _, b := range bad {
		if err := os.WriteFile(filepath.Join(dir, ControlsFile), []byte(b.file), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadControls(dir); err == nil {
			t.Errorf("%s: read without error", b.name)
		}
	}
	if _, err := ReadControls(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a folder without controls: %v", err)
	}
}

// TestControlImageLinkRefused: an image of a suite's controls that is a
// link out of the folder (to a host file) is refused, never read.
func TestControlImageLinkRefused(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret.png")
	if err := os.WriteFile(secret, []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "shot.png")); err != nil {
		t.Fatal(err)
	}
	file := `{"version": 1, "controls": [{"task": "a", "trajectory": "gold", "check": "c", "evidence": "final_screenshot", "pass": true,
		"expectation": "e", "parts": [{"label": "the screen", "format": "png", "image": "shot.png"}]}]}`
	if err := os.WriteFile(filepath.Join(dir, ControlsFile), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := ReadControls(dir)
	if err == nil || !strings.Contains(err.Error(), "shot.png") {
		t.Fatalf("a linked image: %+v, %v", cs, err)
	}
}

// FuzzReadControls: any controls file is read or refused, without a
// panic, and never names an image outside its folder.
func FuzzReadControls(f *testing.F) {
	f.Add(`{"version": 1, "controls": [{"task": "a", "trajectory": "gold", "check": "c", "evidence": "final_screenshot", "pass": true, "expectation": "e", "parts": [{"label": "l", "text": "t"}]}]}`)
	f.Add(`{"version": 1, "controls": [{"task": "a", "trajectory": "gold", "check": "c", "expectation": "e", "parts": [{"image": "../x.png"}]}]}`)
	f.Add(`{"version": 2}`)
	f.Add(`[`)
	f.Fuzz(func(t *testing.T, file string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ControlsFile), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		cs, err := ReadControls(dir)
		if err != nil {
			return
		}
		for _, c := range cs.Controls {
			for _, p := range c.Parts {
				if p.Image != "" && filepath.Base(p.Image) != p.Image {
					t.Fatalf("image %q outside the folder accepted", p.Image)
				}
			}
		}
	})
}
