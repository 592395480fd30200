package provider

import (
	"strings"
	"testing"
)

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
