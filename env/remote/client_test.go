package remote_test

import (
	"context"
	"errors"
	"testing"

	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/guest/guesttest"
)

// TestClientOfAnotherVersion: a client of another API version is refused
// by the daemon before anything else, and its error names both versions.
func TestClientOfAnotherVersion(t *testing.T) {
	d := guesttest.Serve(t, nil) // the handshake reaches no environment
	remote.SetAPIVersion(t, "2")
	_, err := remote.Dial(context.Background(), d.Target, d.Token)
	want := "guest at " + d.URL + " speaks API version 1; this proctor speaks 2 (upgrade one of them)"
	if !errors.Is(err, remote.ErrVersion) || err.Error() != want {
		t.Fatalf("Dial: %v, want %q", err, want)
	}
}
