package rollout

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/rollout/api"
	"github.com/proctor-eval/proctor/rollout/client"
)

// TestGoClient plays a gold solution with the Go client over TLS, pinned
// by the certificate's fingerprint, and checks that another pin is
// refused.
func TestGoClient(t *testing.T) {
	f := newFixture(t, options{})
	srv := httptest.NewTLSServer(Handler(f.s, token, nil))
	defer srv.Close()
	fp := remote.Fingerprint(srv.Certificate().Raw)
	ctx := context.Background()
	bad, err := client.New(srv.URL+"#sha256="+strings.Repeat("0", 64), token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Tasks(ctx, false); err == nil || !strings.Contains(err.Error(), "not the pinned") {
		t.Fatalf("another pin: %v", err)
	}
	c, err := client.New(srv.URL+"#sha256="+fp, token)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := c.Tasks(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	var gold []action.Action
	for _, tk := range tasks {
		if tk.ID == "editor-save" {
			gold = tk.Gold
		}
	}
	if _, err := c.Create(ctx, api.CreateRequest{Task: "nope"}); client.Kind(err) != api.KindNotFound {
		t.Fatalf("an unknown task: %v", err)
	}
	ro, err := c.Create(ctx, api.CreateRequest{Task: "editor-save", Observation: api.ObsMarks})
	if err != nil {
		t.Fatal(err)
	}
	if img, format, err := c.Image(ctx, ro.Observation); err != nil || format != "png" || len(img) == 0 {
		t.Fatalf("image: %v %s", err, format)
	}
	var last api.StepResponse
	for _, a := range gold {
		if last, err = c.Step(ctx, ro.ID, api.StepRequest{Actions: []action.Action{a}}); err != nil {
			t.Fatal(err)
		}
	}
	if !last.Done || last.Final.Reward == nil || *last.Final.Reward != 1 {
		t.Fatalf("final: %+v", last.Final)
	}
	if _, err := c.Step(ctx, ro.ID, api.StepRequest{Actions: gold[:1]}); client.Kind(err) != api.KindDone {
		t.Fatalf("a step after the end: %v", err)
	}
	if err := c.Delete(ctx, ro.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, ro.ID); client.Kind(err) != api.KindGone {
		t.Fatalf("after delete: %v", err)
	}
}
