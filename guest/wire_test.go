package guest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/remote"
)

// sentinels are every sentinel error an answer of the API can be.
var sentinels = []error{env.ErrNotFound, env.ErrForbidden, env.ErrBadAction, env.ErrClosed,
	remote.ErrBadRequest, remote.ErrUnauthorized, remote.ErrVersion, remote.ErrFingerprint, remote.ErrTLSMismatch}

// TestErrorKindsRoundTrip checks every error kind of the wire protocol
// both ways: the daemon answers it with its status, the client turns the
// answer into the kind's sentinel and no other; and the daemon gives an
// environment's error that is a kind's sentinel that kind, unless the
// kind is about the request (an environment that is a client may return
// ErrUnauthorized about another daemon: that is the daemon's trouble).
func TestErrorKindsRoundTrip(t *testing.T) {
	for _, k := range remote.ErrorKinds {
		t.Run(k.Kind, func(t *testing.T) {
			answers := map[string]func(http.ResponseWriter){
				"writeError": func(w http.ResponseWriter) { writeError(w, k.Kind, "it went wrong") },
			}
			if k.Err != nil {
				answers["fail"] = func(w http.ResponseWriter) { fail(w, fmt.Errorf("it went wrong: %w", k.Err)) }
			}
			for how, answer := range answers {
				var status int
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set(remote.APIHeader, remote.APIVersion)
					if r.URL.Path == remote.PathVersion {
						reply(w, remote.VersionInfo{API: remote.APIVersion})
						return
					}
					rec := httptest.NewRecorder()
					answer(rec)
					status = rec.Code
					for h, v := range rec.Header() {
						w.Header()[h] = v
					}
					w.WriteHeader(rec.Code)
					w.Write(rec.Body.Bytes())
				}))
				defer srv.Close()
				c, err := remote.Dial(context.Background(), srv.URL, "tok")
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.Info(context.Background())
				if err == nil {
					t.Fatalf("%s: the client took the answer for a success", how)
				}
				encoded := remote.KindOf(err)
				switch {
				case how == "fail" && k.Request:
					// Never this kind: a kind about the request is the
					// daemon's to give, and an environment's error is at
					// most the kind of the request's mistakes it also is.
					other := remote.KindOf(k.Err)
					if status == k.Status || status != other.Status || errors.Is(err, k.Err) != (other.Err == k.Err) {
						t.Errorf("fail(%v): status %d, the client's error %v; want %d (%s)", k.Err, status, err, other.Status, other.Kind)
					}
					continue
				case status != k.Status:
					t.Errorf("%s: status %d, want %d", how, status, k.Status)
				}
				for _, s := range sentinels {
					if want := errors.Is(k.Err, s); errors.Is(err, s) != want {
						t.Errorf("%s: the client's error %q is %v: %v, want %v", how, err, s, !want, want)
					}
				}
				if k.Err != nil && !k.Request && encoded.Kind != k.Kind {
					t.Errorf("%s: the client's error %q is of kind %s again, not %s", how, err, encoded.Kind, k.Kind)
				}
			}
		})
	}
}
