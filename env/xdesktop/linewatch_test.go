package xdesktop

import (
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/internal/tail"
)

// A session's shell says it started in a line that may come in pieces;
// what it said last is kept for the error of a shell that never does.
func TestLineWatch(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		seen   bool
		said   string
	}{
		{"in one write", []string{"warning: x\n", "GNOME Shell started at Sat\n"}, true, "warning: x | GNOME Shell started at Sat"},
		{"split over writes", []string{"GNOME Sh", "ell started", " at Sat\n"}, true, "GNOME Shell started at Sat"},
		{"never", []string{"JS ERROR: a\n", "JS ERROR: b\n"}, false, "JS ERROR: a | JS ERROR: b"},
		{"nothing", nil, false, "nothing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var log strings.Builder
			w := &lineWatch{out: &log, said: tail.New(4096), want: []byte("GNOME Shell started at"), seen: make(chan struct{})}
			for _, s := range tc.writes {
				w.Write([]byte(s))
			}
			select {
			case <-w.seen:
				if !tc.seen {
					t.Error("seen, want not")
				}
			default:
				if tc.seen {
					t.Error("not seen")
				}
			}
			if got := w.said.Lines(8); got != tc.said {
				t.Errorf("said %q, want %q", got, tc.said)
			}
			if log.String() != strings.Join(tc.writes, "") {
				t.Errorf("the log got %q", log.String())
			}
		})
	}
}

func TestMachineLoad(t *testing.T) {
	got := machineLoad()
	if !strings.HasPrefix(got, "the machine: load averages ") {
		t.Fatalf("machineLoad() = %q, want the load averages (Linux)", got)
	}
	t.Log(got)
}
