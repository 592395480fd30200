package viewer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"

	"github.com/proctor-eval/proctor/store"
)

// policy is the pages' Content-Security-Policy: nothing from outside the
// viewer, no inline code, no framing.
const policy = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"

// metaPolicy is the policy an exported page carries in a meta element,
// which cannot say frame-ancestors; form-action and base-uri keep an
// injected form or base from sending the page elsewhere.
const metaPolicy = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'none'; base-uri 'none'"

// withPolicy puts the policy's meta element at the top of a page's head.
func withPolicy(page []byte) []byte {
	meta := []byte(`<meta http-equiv="Content-Security-Policy" content="` + metaPolicy + `">`)
	i := bytes.Index(page, []byte("<head>"))
	if i < 0 {
		return append(meta, page...)
	}
	i += len("<head>")
	return append(append(append(page[:i:i], '\n'), meta...), page[i:]...)
}

// shotFile serves a screenshot of a run: a regular file of its folder's
// screenshots, never one reached through a link.
func (s *Server) shotFile(w http.ResponseWriter, r *http.Request, dir, name string) {
	f, err := store.OpenShot(dir, name)
	if errors.Is(err, store.ErrNotShot) {
		s.fail(w, fmt.Errorf("%w: %v", errNotFound, err))
		return
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		s.fail(w, err)
		return
	}
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

// hostGuard refuses a request whose Host header names another host than
// the viewer listens as (Addr), with 421: a page of another site whose
// name was made to resolve to the viewer's address (DNS rebinding)
// cannot read it. Without Addr every host is served.
func (s *Server) hostGuard(h http.Handler) http.Handler {
	if s.Addr == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			http.Error(w, fmt.Sprintf("this viewer does not answer as %q: open it as http://%s/", r.Host, s.Addr), http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether a Host header names the viewer: its
// listening address; localhost and the loopback addresses with its port
// when it listens on loopback; any address (never a name but localhost,
// the machine's own and Hosts) with its port when it listens on every
// interface; and the names of Hosts.
func (s *Server) hostAllowed(host string) bool {
	lhost, lport, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return false
	}
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		h, port = host, "80"
	}
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
	for _, n := range s.Hosts {
		n = strings.ToLower(n)
		if n == h || n == net.JoinHostPort(h, port) {
			return true
		}
	}
	if port != lport {
		return false
	}
	if h == strings.ToLower(lhost) {
		return true
	}
	lip, err := netip.ParseAddr(lhost)
	all := lhost == "" || err == nil && lip.IsUnspecified()
	if !all && (err != nil || !lip.IsLoopback()) {
		return false
	}
	if h == "localhost" {
		return true
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		return all || ip.IsLoopback()
	}
	if all {
		name, err := os.Hostname()
		return err == nil && strings.EqualFold(name, h)
	}
	return false
}

// svgID makes a run's name fit an SVG element's id and a url(#...)
// reference: letters, digits and hyphens stay, every other byte becomes
// _ and its hex code, so that different names stay different.
func svgID(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return b.String()
}

// readShot reads a screenshot of a run folder (store.OpenShot).
func readShot(dir, name string) ([]byte, error) {
	f, err := store.OpenShot(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
