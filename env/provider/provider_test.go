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
		{[]string{"vm=host"}, Options{}, "", `unknown environment provider "vm" (known: local, guest=https://HOST:PORT#sha256=FINGERPRINT, browser[=N], vnc://HOST:PORT, android[=SERIAL])`},
		{[]string{"vnc://"}, Options{}, "", `--env vnc://: VNC address "" is empty: give HOST:PORT`},
		{[]string{"vnc://desk:0"}, Options{}, "", `port "0" is not a number from 1 to 65535`},
		{[]string{"vnc=user@desk:5900"}, Options{}, "", "is not HOST:PORT"},
		{[]string{"vnc://127.0.0.1:5999"}, Options{VNCGuest: "https://127.0.0.1:1#sha256=00"}, "", "no token for the guest daemon of --vnc-guest"},
		{[]string{"vnc://127.0.0.1:5999"}, Options{VNCGuest: "ftp://127.0.0.1:1", Token: "t"}, "", `--vnc-guest: `},
		{[]string{"vnc://127.0.0.1:1"}, Options{}, "", "vnc://127.0.0.1:1: "},
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

func TestSplitSpec(t *testing.T) {
	for _, c := range []struct{ spec, name, arg string }{
		{"local", "local", ""},
		{"local=3", "local", "3"},
		{"guest=https://10.0.0.5:7400#sha256=ab", "guest", "https://10.0.0.5:7400#sha256=ab"},
		{"vnc://desk:5901", "vnc", "desk:5901"},
		{"vnc=desk:5901", "vnc", "desk:5901"},
		{"vnc://", "vnc", ""},
		{"://x", "://x", ""},
	} {
		if name, arg := splitSpec(c.spec); name != c.name || arg != c.arg {
			t.Errorf("splitSpec(%q) = %q, %q; want %q, %q", c.spec, name, arg, c.name, c.arg)
		}
	}
}

func TestRedactHidesUserInfo(t *testing.T) {
	if got := redact("guest=https://me:secret@10.0.0.5:7400"); strings.Contains(got, "secret") || !strings.Contains(got, "10.0.0.5:7400") {
		t.Errorf("redact = %q", got)
	}
}
