package provider

import (
	"context"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		specs []string
		o     Options
		names string // the places, comma-separated
		err   string
	}{
		{nil, Options{Parallel: 2}, "local 1,local 2", ""},
		{[]string{"local"}, Options{}, "local 1", ""},
		{[]string{"local=3"}, Options{Parallel: 1}, "local 1,local 2,local 3", ""},
		{[]string{"local=0"}, Options{}, "", "local=0: give the number of desktops, 1 to 64"},
		{[]string{"local=many"}, Options{}, "", "give the number of desktops"},
		{[]string{"local", "local"}, Options{}, "", "local 1 is given twice"},
		{[]string{"vm=host"}, Options{}, "", `unknown environment provider "vm" (known: local, guest=https://HOST:PORT#sha256=FINGERPRINT)`},
		{[]string{"guest"}, Options{Token: "t"}, "", "say where the daemon is"},
		{[]string{"guest=https://127.0.0.1:1"}, Options{}, "", "no token for the guest daemon: give --token-file FILE or set $PROCTOR_TOKEN"},
		{[]string{"guest=ftp://127.0.0.1:1"}, Options{Token: "t"}, "", `scheme "ftp"`},
	}
	for _, tc := range tests {
		srcs, err := Parse(context.Background(), tc.specs, tc.o)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %v, want an error containing %q", tc.specs, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.specs, err)
			continue
		}
		var names []string
		for _, s := range srcs {
			names = append(names, s.Name)
			if s.Type != "x11" || s.Start == nil {
				t.Errorf("Parse(%q): place %+v", tc.specs, s)
			}
		}
		if got := strings.Join(names, ","); got != tc.names {
			t.Errorf("Parse(%q) = %s, want %s", tc.specs, got, tc.names)
		}
	}
}

func TestRedactHidesUserInfo(t *testing.T) {
	if got := redact("guest=https://me:secret@10.0.0.5:7400"); strings.Contains(got, "secret") || !strings.Contains(got, "10.0.0.5:7400") {
		t.Errorf("redact = %q", got)
	}
}
