package guest

import (
	"context"
	"testing"

	"github.com/proctor-eval/proctor/action"
)

// TestDoCarriesTheSettleWait: the wait the desktop records after a turn
// reaches the client through the daemon's JSON.
func TestDoCarriesTheSettleWait(t *testing.T) {
	need(t)
	srv, token := serve(t)
	c, err := Dial(context.Background(), srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := c.Do(context.Background(), []action.Action{{Kind: action.Move, Point: &action.Point{X: 3, Y: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].Settle <= 0 {
		t.Fatalf("steps through the daemon %+v: no settle wait", steps)
	}
}
