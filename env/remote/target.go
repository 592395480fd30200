package remote

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Target is where a guest daemon is, as the daemon prints it at start:
// https://HOST:PORT#sha256=FINGERPRINT.
type Target struct {
	Scheme string // "https", or "http" for a daemon started with --insecure
	Host   string // HOST:PORT
	// Fingerprint pins the daemon's certificate: the SHA-256 of the DER
	// certificate, lowercase hex. With it the client accepts exactly that
	// certificate, whoever signed it and whatever names it holds; without
	// it (https only) the certificate must be one the system trusts, for
	// the host's name.
	Fingerprint string
}

// fingerprintPrefix starts a target's fragment.
const fingerprintPrefix = "sha256="

// String returns the target in the form ParseTarget reads.
func (t Target) String() string {
	u := url.URL{Scheme: t.Scheme, Host: t.Host}
	if t.Fingerprint != "" {
		u.Fragment = fingerprintPrefix + t.Fingerprint
	}
	return u.String()
}

// Base returns the URL the API's paths go under, without the pin: the
// name of the daemon in messages.
func (t Target) Base() string {
	return (&url.URL{Scheme: t.Scheme, Host: t.Host}).String()
}

// ParseTarget reads a daemon's address: https://HOST:PORT#sha256=HEX (the
// pinned certificate's fingerprint, 64 hex digits; colons between bytes,
// as openssl prints them, are allowed), https://HOST:PORT for a
// certificate the system trusts, or http://HOST:PORT for a daemon that
// serves plain HTTP. The port is required, and there is no path, query
// nor user: the token is given apart, never in the address.
func ParseTarget(s string) (Target, error) {
	// A user part may hold a password: such an input is never repeated.
	shown := strconv.Quote(s)
	if len(shown) > 200 {
		shown = shown[:200] + `..."`
	}
	if strings.Contains(s, "@") {
		shown = "(not shown, it may hold a password)"
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("guest target %s: %s", shown, fmt.Sprintf(format, args...))
	}
	const form = "https://HOST:PORT#sha256=FINGERPRINT, as the daemon prints it at start"
	if !strings.Contains(s, "://") {
		return Target{}, bad("no scheme: want %s", form)
	}
	u, err := url.Parse(s)
	if err != nil {
		// The url.Error repeats the input.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return Target{}, bad("not a URL (%v): want %s", err, form)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return Target{}, bad("scheme %q: want https, or http for a daemon started with --insecure", u.Scheme)
	case u.User != nil:
		return Target{}, bad("it holds a user or password: give the token apart, never in the address")
	case u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery:
		return Target{}, bad("a path or query: want the daemon's address alone, %s", form)
	case u.Hostname() == "":
		return Target{}, bad("no host: want %s", form)
	case u.Port() == "":
		return Target{}, bad("no port: want %s (the daemon's default port is 7400)", form)
	}
	if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
		return Target{}, bad("port %s is not 1 to 65535", u.Port())
	}
	t := Target{Scheme: u.Scheme, Host: u.Host}
	switch frag := u.Fragment; {
	case frag == "":
	case !strings.HasPrefix(frag, fingerprintPrefix):
		if len(frag) > 80 {
			frag = frag[:80] + "..."
		}
		return Target{}, bad("fragment %q: the only one is #sha256=FINGERPRINT", frag)
	case u.Scheme != "https":
		return Target{}, bad("a fingerprint pins a TLS certificate, and http is plain: use https")
	default:
		fp := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(frag, fingerprintPrefix), ":", ""))
		if len(fp) != 64 {
			return Target{}, bad("the fingerprint has %d characters, not the 64 hex digits of a SHA-256", len(fp))
		}
		if _, err := hex.DecodeString(fp); err != nil {
			return Target{}, bad("the fingerprint is not hexadecimal: %v", err)
		}
		t.Fingerprint = fp
	}
	return t, nil
}
