package remote

import (
	"net/url"
	"strings"
	"testing"
)

const fp = "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12"

func TestParseTarget(t *testing.T) {
	colons := strings.ToUpper(fp[:2])
	for i := 2; i < len(fp); i += 2 {
		colons += ":" + strings.ToUpper(fp[i:i+2])
	}
	tests := []struct {
		in   string
		want Target
		err  string // a part of the error; "": none
	}{
		{in: "https://10.0.0.5:7400#sha256=" + fp, want: Target{"https", "10.0.0.5:7400", fp}},
		{in: "https://guest.local:7400/#sha256=" + strings.ToUpper(fp), want: Target{"https", "guest.local:7400", fp}},
		{in: "https://[::1]:7400#sha256=" + colons, want: Target{"https", "[::1]:7400", fp}},
		{in: "HTTPS://h:1", want: Target{"https", "h:1", ""}},
		{in: "http://127.0.0.1:7400", want: Target{"http", "127.0.0.1:7400", ""}},
		{in: "http://127.0.0.1:7400/", want: Target{"http", "127.0.0.1:7400", ""}},

		{in: "127.0.0.1:7400", err: "no scheme"},
		{in: "localhost:7400", err: "no scheme"},
		{in: "", err: "no scheme"},
		{in: "ftp://h:7400", err: `scheme "ftp": want https`},
		{in: "tcp://h:7400", err: `scheme "tcp"`},
		{in: "https://h", err: "no port"},
		{in: "https://h:", err: "no port"},
		{in: "https://:7400", err: "no host"},
		{in: "https://h:0", err: "port 0 is not 1 to 65535"},
		{in: "https://h:65536", err: "port 65536 is not 1 to 65535"},
		{in: "https://h:port", err: "not a URL"},
		{in: "https://h:7400/v1", err: "a path or query"},
		{in: "https://h:7400?x=1", err: "a path or query"},
		{in: "https://h:7400?", err: "a path or query"},
		{in: "https://h:7400#sha1=" + fp[:40], err: `fragment "sha1=`},
		{in: "https://h:7400#sha256=" + fp[:63], err: "63 characters, not the 64 hex digits"},
		{in: "https://h:7400#sha256=" + fp + "00", err: "66 characters"},
		{in: "https://h:7400#sha256=", err: "0 characters"},
		{in: "https://h:7400#sha256=" + strings.Repeat("g", 64), err: "not hexadecimal"},
		{in: "http://h:7400#sha256=" + fp, err: "http is plain: use https"},
		{in: "https://user:s3cret@h:7400", err: "give the token apart"},
		{in: "https://h :7400", err: "not a URL"},
	}
	for _, tc := range tests {
		got, err := ParseTarget(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("ParseTarget(%q): %v", tc.in, err)
		case tc.err == "" && got != tc.want:
			t.Errorf("ParseTarget(%q) = %+v, want %+v", tc.in, got, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseTarget(%q) = %+v, %v; want an error saying %q", tc.in, got, err, tc.err)
		case tc.err != "" && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("ParseTarget(%q): the error %q repeats the password", tc.in, err)
		}
	}
	if s := (Target{"https", "[::1]:7400", fp}).String(); s != "https://[::1]:7400#sha256="+fp {
		t.Errorf("String() = %q", s)
	}
}

// FuzzParseTarget checks that ParseTarget never panics, that what it
// accepts is a target a client can use, that its String reads back the
// same, and that an error never repeats a password.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{
		"https://10.0.0.5:7400#sha256=" + fp,
		"https://[fe80::1%25eth0]:7400#sha256=" + fp,
		"http://localhost:7400/",
		"https://h:7400#sha256=AB:CD",
		"https://u:p@h:1",
		"https://h:7400?q#f",
		"//h:1",
		"https://%31%32%37.0.0.1:1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		if err != nil {
			if u, perr := url.Parse(s); perr == nil && u.User != nil {
				if p, ok := u.User.Password(); ok && len(p) >= 4 && strings.Contains(err.Error(), p) {
					t.Fatalf("the error %q repeats the password of %q", err, s)
				}
			}
			return
		}
		if tg.Scheme != "https" && tg.Scheme != "http" {
			t.Fatalf("%q: scheme %q", s, tg.Scheme)
		}
		if tg.Fingerprint != "" && (len(tg.Fingerprint) != 64 || strings.Trim(tg.Fingerprint, "0123456789abcdef") != "" || tg.Scheme != "https") {
			t.Fatalf("%q: fingerprint %q", s, tg.Fingerprint)
		}
		back, err := ParseTarget(tg.String())
		if err != nil || back != tg {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, tg, tg.String(), back, err)
		}
		if b, err := ParseTarget(tg.Base()); err != nil || b.Host != tg.Host || b.Fingerprint != "" {
			t.Fatalf("%q: Base %q reads as %+v, %v", s, tg.Base(), b, err)
		}
	})
}
