package remote

import (
	"net/http"
	"testing"
)

func TestAllow(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{PathFile, "GET, PUT"},
		{PathDo, "POST"},
		{PathVersion, "GET"},
		{"/v1/none", ""},
		{"/v1/file/", ""},
	} {
		if got := Allow(tc.path); got != tc.want {
			t.Errorf("Allow(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestErrorKinds checks the table itself: one entry a kind, a status
// that is an error's, and the kinds the client decodes to each sentinel.
func TestErrorKinds(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range ErrorKinds {
		if seen[k.Kind] {
			t.Errorf("kind %s is in the table twice", k.Kind)
		}
		seen[k.Kind] = true
		if k.Status < 400 || http.StatusText(k.Status) == "" {
			t.Errorf("kind %s: status %d", k.Kind, k.Status)
		}
	}
	for _, tc := range []struct {
		kind, want string
	}{
		{KindNotFound, "not found: it"},
		{KindTooLarge, "bad request: it"},
		{KindBadRequest, "bad request: it"},
		{KindNoRoute, "guest: it"},
		{"from_a_newer_daemon", "guest: it"},
	} {
		if got := KindError(tc.kind, "it").Error(); got != tc.want {
			t.Errorf("KindError(%s) = %q, want %q", tc.kind, got, tc.want)
		}
	}
	if got := Status("from_a_newer_daemon"); got != http.StatusInternalServerError {
		t.Errorf("Status of an unknown kind = %d", got)
	}
}
