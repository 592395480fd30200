package rollout

import (
	"testing"

	"github.com/proctor-eval/proctor/rollout/api"
)

// FuzzBodies sends arbitrary bodies to the routes that read one: every
// answer is one the OpenAPI document lists (never a 500), in its schema.
func FuzzBodies(f *testing.F) {
	for _, s := range []string{`{"task":"count-lines"}`, `{"actions":[{"kind":"click","point":{"x":1,"y":2}}]}`, `{"reply":"DONE"}`,
		`{"reply":"pyautogui.click(1,2)","format":"pyautogui","unit":"k"}`, `{"actions":[{"kind":"type","text":"\u0000"}]}`, `[]`, `null`, `{"actions":null}`,
		`{"task":"answer-{{n}}","seed":-9223372036854775808}`, `{"actions":[{"kind":"scroll","dy":99999999999}]}`} {
		f.Add(s)
	}
	fx := newFixture(f, options{places: 1})
	ro := fx.create(api.CreateRequest{Task: "editor-save", Observation: api.ObsMarks})
	f.Fuzz(func(t *testing.T, body string) {
		fx.t = t
		var e api.Error
		code, _ := fx.call("POST", "/v1/rollouts/"+ro.ID+"/step", body, &e)
		if code == 500 {
			t.Fatalf("step %q: %d %s", body, code, e.Error)
		}
		if code != 200 && code != 400 {
			fx.call("DELETE", "/v1/rollouts/"+ro.ID, nil, nil)
			ro = fx.create(api.CreateRequest{Task: "editor-save", Observation: api.ObsMarks})
		}
		var ok map[string]any
		code, _ = fx.call("POST", api.PathRollouts, body, &ok)
		if code == 500 {
			t.Fatalf("create %q: %d", body, code)
		}
		if code == 201 {
			fx.call("DELETE", "/v1/rollouts/"+ok["id"].(string), nil, nil)
		}
	})
}
