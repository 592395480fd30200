package provider_test

import (
	"context"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/env/provider"
	_ "github.com/proctor-eval/proctor/env/provider/all"
)

func TestParse(t *testing.T) {
	tests := []struct {
		specs []string
		o     provider.Options
		names string // the places, comma-separated
		err   string
	}{
		{nil, provider.Options{Parallel: 2}, "local 1,local 2", ""},
		{[]string{"local"}, provider.Options{}, "local 1", ""},
		{[]string{"local=3"}, provider.Options{Parallel: 1}, "local 1,local 2,local 3", ""},
		{[]string{"local=0"}, provider.Options{}, "", "local=0: give the number of desktops, 1 to 64"},
		{[]string{"local=many"}, provider.Options{}, "", "give the number of desktops"},
		{[]string{"local", "local"}, provider.Options{}, "", "local 1 is given twice"},
		{[]string{"vm=host"}, provider.Options{}, "", `unknown environment provider "vm" (known: local, guest=https://HOST:PORT#sha256=FINGERPRINT, browser[=N], vnc://HOST:PORT, android[=SERIAL], mem[=N|=WxH|=N:WxH], kube://[CONTEXT/]NAMESPACE?pods=N&image=IMAGE&...)`},
		{[]string{"vnc://"}, provider.Options{}, "", `--env vnc://: VNC address "" is empty: give HOST:PORT`},
		{[]string{"vnc://desk:0"}, provider.Options{}, "", `port "0" is not a number from 1 to 65535`},
		{[]string{"vnc=user@desk:5900"}, provider.Options{}, "", "is not HOST:PORT"},
		{[]string{"vnc://127.0.0.1:5999"}, provider.Options{Settings: map[string]string{"vnc.guest": "https://127.0.0.1:1#sha256=00"}}, "", "no token for the guest daemon of --vnc-guest"},
		{[]string{"vnc://127.0.0.1:5999"}, provider.Options{Settings: map[string]string{"vnc.guest": "ftp://127.0.0.1:1"}, Token: "t"}, "", `--vnc-guest: `},
		{[]string{"vnc://127.0.0.1:1"}, provider.Options{}, "", "vnc://127.0.0.1:1: "},
		{[]string{"guest"}, provider.Options{Token: "t"}, "", "say where the daemon is"},
		{[]string{"guest=https://127.0.0.1:1"}, provider.Options{}, "", "no token for the guest daemon: give --token-file FILE or set $PROCTOR_TOKEN"},
		{[]string{"guest=ftp://127.0.0.1:1"}, provider.Options{Token: "t"}, "", `scheme "ftp"`},
	}
	for _, tc := range tests {
		srcs, err := provider.Parse(context.Background(), tc.specs, tc.o)
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
