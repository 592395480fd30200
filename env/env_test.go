package env

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/proctor-eval/proctor/action"
)

func TestAgentsFault(t *testing.T) {
	_, _, offScreen := action.Point{X: 99999, Y: 5}.Pixels(action.Size{W: 1920, H: 1080})
	tests := []struct {
		name  string
		err   error
		agent bool
	}{
		{"invalid action", action.Action{Kind: action.Scroll, DY: 1e9}.Validate(), true},
		{"point off the screen", fmt.Errorf("click: %w", offScreen), true},
		{"action not possible here", fmt.Errorf("%w: no browser tab 3", ErrBadAction), true},
		{"missing element", fmt.Errorf("%w: no element push button \"7\"", ErrNotFound), true},
		{"forbidden path", fmt.Errorf("%w: /etc/shadow", ErrForbidden), true},
		{"environment closed", fmt.Errorf("%w: X server exited", ErrClosed), false},
		{"broken connection", io.ErrUnexpectedEOF, false},
		{"plain failure", errors.New("xtest: bad request"), false},
		{"cancelled", context.Canceled, false},
	}
	for _, tc := range tests {
		if got := AgentsFault(tc.err); got != tc.agent {
			t.Errorf("%s: AgentsFault(%v) = %v, want %v", tc.name, tc.err, got, tc.agent)
		}
	}
}
func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "127.0.0.1": true, "127.3.4.5": true, "::1": true, "[::1]": true,
		"::ffff:127.0.0.1": true, "10.0.0.5": false, "example.com": false, "": false, "0.0.0.0": false,
	} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", host, got, want)
		}
	}
}
