package vnc_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env/provider"
	_ "github.com/proctor-eval/proctor/env/provider/all"
	"github.com/proctor-eval/proctor/env/vnc"
	"github.com/proctor-eval/proctor/internal/rfb"
	"github.com/proctor-eval/proctor/task"
)

// TestProviderAttaches makes a pool's place from --env vnc://HOST:PORT
// with a password, as proctor run does, and starts it twice.
func TestProviderAttaches(t *testing.T) {
	vnc.Need(t)
	_, addr := vnc.Serve(t, "s3cret")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	_, err := vnc.Dial(ctx, vnc.Config{Addr: addr, Password: "wrong"})
	if !errors.Is(err, rfb.ErrAuth) || !strings.Contains(err.Error(), "vnc://"+addr) {
		t.Fatalf("a wrong password: %v; want rfb.ErrAuth naming the server", err)
	}
	if _, err := provider.Parse(ctx, []string{"vnc://" + addr}, provider.Options{}); err == nil || !strings.Contains(err.Error(), "no password") {
		t.Fatalf("no password: %v; want an error that says so", err)
	}

	srcs, err := provider.Parse(ctx, []string{"vnc://" + addr}, provider.Options{Settings: map[string]string{"vnc.password": "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	screen := action.Size{W: 1280, H: 800}
	if len(srcs) != 1 || srcs[0].Name != "vnc://"+addr || srcs[0].Type != "vnc" || srcs[0].Size != screen || srcs[0].Once {
		t.Fatalf("places %+v", srcs)
	}
	for i := range 2 { // the connection made while parsing, then a new one
		e, err := srcs[0].Start(ctx, screen)
		if err != nil {
			t.Fatalf("start %d: %v", i+1, err)
		}
		info, err := e.Info(ctx)
		if err != nil || info.Kind != "vnc" || info.Screen != screen || !slices.Equal(info.Caps, []task.Capability{task.CapClipboard, task.CapAfter}) {
			t.Fatalf("start %d: Info = %+v, %v", i+1, info, err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
