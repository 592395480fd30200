package viewer

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/store"
)

// linkedRun is a run of someone else's: its screenshots folder holds a
// link to a file of the host, and a second run's screenshots folder is
// itself a link out of it.
func linkedRun(t *testing.T) (root, secret string) {
	t.Helper()
	root = twoRuns(t)
	host := t.TempDir()
	secret = filepath.Join(host, "secret.png")
	if err := os.WriteFile(secret, []byte("the host's secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root, "run-a", store.ShotDir, "link.png")); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(root, "run-b", store.ShotDir)
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, b); err != nil {
		t.Fatal(err)
	}
	return root, secret
}

// TestShotLinksRefused: a screenshot reached through a link is neither
// served nor exported; the run's own ones are.
func TestShotLinksRefused(t *testing.T) {
	root, _ := linkedRun(t)
	h := (&Server{Root: root}).Handler()
	for _, target := range []string{"/run/run-a/shot/link.png", "/run/run-b/shot/secret.png"} {
		code, body := get(t, h, target)
		if code != http.StatusNotFound || strings.Contains(body, "secret") && !strings.Contains(body, "secret.png") {
			t.Errorf("GET %s = %d %q, want 404", target, code, body)
		}
	}
	entries, err := os.ReadDir(filepath.Join(root, "run-a", store.ShotDir))
	if err != nil {
		t.Fatal(err)
	}
	own := ""
	for _, e := range entries {
		if e.Type().IsRegular() {
			own = e.Name()
		}
	}
	if code, body := get(t, h, "/run/run-a/shot/"+own); code != http.StatusOK || !strings.HasPrefix(body, "\x89PNG") {
		t.Errorf("the run's own screenshot: %d", code)
	}
	// The store refuses them as well (GIFs, zips, judges).
	st, err := store.Open(filepath.Join(root, "run-a"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if b, err := st.Shot("link.png"); err == nil {
		t.Errorf("the store read %q through a link", b)
	}
	if _, err := st.Shot(own); err != nil {
		t.Error(err)
	}
	out := t.TempDir()
	if err := Export(filepath.Join(root, "run-a"), out, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(out, "shot", "link.png")); err == nil {
		t.Error("the export copied the linked file")
	}
	if _, err := os.Stat(filepath.Join(out, "shot", own)); err != nil {
		t.Errorf("the export lacks the run's screenshot: %v", err)
	}
	out = t.TempDir()
	if err := Export(filepath.Join(root, "run-b"), out, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(out, "shot", "secret.png")); err == nil {
		t.Error("the export copied a file of the folder the link leads to")
	}
}

// TestSideIDsEscaped: a run whose folder's name holds quotes and angle
// brackets gives valid SVG ids on the side-by-side page.
func TestSideIDsEscaped(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	name := `r"><img src=x onerror=alert(1)>'&`
	makeRun(t, root, name, "openai", day, []episode{{"sort-rows", "bronze", "failure", 5}})
	makeRun(t, root, "run-b", "anthropic", day, []episode{{"sort-rows", "bronze", "success", 4}})
	h := (&Server{Root: root}).Handler()
	code, body := get(t, h, "/side?"+url.Values{"run": {name, "run-b"}, "task": {"sort-rows"}, "repeat": {"0"}}.Encode())
	if code != http.StatusOK {
		t.Fatalf("side = %d:\n%s", code, body)
	}
	if strings.Contains(body, "<img src=x") {
		t.Fatal("the run's name is in the page raw")
	}
	ids := regexp.MustCompile(`<marker id="([^"]*)"`).FindAllStringSubmatch(body, -1)
	refs := regexp.MustCompile(`marker-end="url\(#([^)"]*)\)"`).FindAllStringSubmatch(body, -1)
	if len(ids) != 9 || len(refs) == 0 {
		t.Fatalf("%d markers, %d references", len(ids), len(refs))
	}
	valid := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
	seen := map[string]bool{}
	for _, m := range ids {
		if !valid.MatchString(m[1]) || seen[m[1]] {
			t.Errorf("marker id %q is not a valid, unique id", m[1])
		}
		seen[m[1]] = true
	}
	for _, m := range refs {
		if !seen[m[1]] {
			t.Errorf("a line refers to %q, which no marker has", m[1])
		}
	}
	if svgID("a b") == svgID("a_b") || svgID("a_20b") == svgID("a b") {
		t.Error("different names give the same id")
	}
}

// TestHostGuard: the viewer answers only as the host it listens as, so
// a page whose name was made to resolve to it (DNS rebinding) cannot read
// it.
func TestHostGuard(t *testing.T) {
	root := twoRuns(t)
	for _, c := range []struct {
		addr  string
		hosts []string
		host  string
		ok    bool
	}{
		{"127.0.0.1:8080", nil, "127.0.0.1:8080", true},
		{"127.0.0.1:8080", nil, "localhost:8080", true},
		{"127.0.0.1:8080", nil, "LOCALHOST.:8080", true},
		{"127.0.0.1:8080", nil, "[::1]:8080", true},
		{"127.0.0.1:8080", nil, "evil.example", false},
		{"127.0.0.1:8080", nil, "evil.example:8080", false},
		{"127.0.0.1:8080", nil, "127.0.0.1:9090", false},
		{"127.0.0.1:8080", nil, "127.0.0.1", false},
		{"127.0.0.1:80", nil, "localhost", true},
		{"[::1]:8080", nil, "localhost:8080", true},
		{"0.0.0.0:8080", nil, "192.168.1.5:8080", true},
		{"[::]:8080", nil, "[fe80::1]:8080", true},
		{"[::]:8080", nil, "evil.example:8080", false},
		{"192.168.1.5:8080", nil, "192.168.1.5:8080", true},
		{"192.168.1.5:8080", nil, "localhost:8080", false},
		{"127.0.0.1:8080", []string{"viewer.example"}, "viewer.example", true},
		{"127.0.0.1:8080", []string{"viewer.example:443"}, "viewer.example:443", true},
		{"127.0.0.1:8080", []string{"viewer.example"}, "other.example", false},
	} {
		h := (&Server{Root: root, Addr: c.addr, Hosts: c.hosts}).Handler()
		req := httptest.NewRequest("GET", "/run/run-a", nil)
		req.Host = c.host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := rec.Code == http.StatusOK; got != c.ok {
			t.Errorf("listening on %s (hosts %q), Host %s: %d, want served %v", c.addr, c.hosts, c.host, rec.Code, c.ok)
		}
		if !c.ok && (rec.Code != http.StatusMisdirectedRequest || strings.Contains(rec.Body.String(), "run-a")) {
			t.Errorf("Host %s: %d %q, want 421 without the page", c.host, rec.Code, rec.Body.String())
		}
		if rec.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("Host %s: no Content-Security-Policy", c.host)
		}
	}
}

// TestExportPolicy: the exported pages carry the security policy.
func TestExportPolicy(t *testing.T) {
	root := twoRuns(t)
	out := t.TempDir()
	if err := Export(filepath.Join(root, "run-a"), out, nil); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"index.html", "episode/sort-rows-0.html"} {
		b, err := os.ReadFile(filepath.Join(out, page))
		if err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(string(b), "</head>")
		if !strings.Contains(head, `<meta http-equiv="Content-Security-Policy" content="default-src 'self';`) ||
			!strings.Contains(head, "script-src 'self'") {
			t.Errorf("%s has no security policy in its head:\n%s", page, head)
		}
	}
}
