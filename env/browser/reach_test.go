package browser

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/task"
)

// secret is a server of the host that no task names: it counts the
// requests that reach it.
func secret(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "<title>Secret</title>the host's secret")
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

// TestNavigationRefused: the agent's navigation to an address the task
// does not allow is refused before the browser is asked, as the agent's
// error, and the page stays where it was.
func TestNavigationRefused(t *testing.T) {
	b := start(t)
	other, hits := secret(t)
	u := site(t, map[string]string{
		"page": `<!doctype html><title>Task</title><p>the task's page</p>`,
		"next": `<!doctype html><title>Next</title>`,
		"away": "",
	})
	open(t, b, u+"/page")
	ctx := testCtx(t)
	for _, c := range []struct{ name, url, why string }{
		{"host file", "file:///etc/hostname", "host's files"},
		{"another loopback server", other + "/", "loopback"},
		{"localhost alias", strings.Replace(other, "127.0.0.1", "localhost", 1) + "/", "not among the task's origins"},
		{"metadata address", "http://169.254.169.254/latest/meta-data/", "link-local"},
		{"IPv6 loopback", "http://[::1]:9/", "loopback"},
		{"the web", "https://example.com/", "the web is not open"},
		{"browser's pages", "chrome://version", "not chrome: addresses"},
		{"devtools", "devtools://devtools/bundled/inspector.html", "not devtools:"},
		{"view source", "view-source:" + other, "not view-source:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			for _, newTab := range []bool{false, true} {
				_, err := b.Do(ctx, []action.Action{{Kind: action.Navigate, Text: c.url, NewTab: newTab}})
				if !errors.Is(err, env.ErrForbidden) || !env.AgentsFault(err) || !strings.Contains(err.Error(), c.url) || !strings.Contains(err.Error(), c.why) {
					t.Fatalf("navigate (new tab %v) = %v; want the agent's error (forbidden) naming %s and %q", newTab, err, c.url, c.why)
				}
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the refusal took %s: something was tried", d)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server no task names got %d requests", n)
	}
	// The task's own pages still open.
	if _, err := b.Do(ctx, []action.Action{{Kind: action.Navigate, Text: u + "/next"}}); err != nil {
		t.Fatal(err)
	}
	if got := eval(t, b, "document.title"); got != "Next" {
		t.Fatalf("the task's page: title %q", got)
	}
}

// TestRedirectRefused: a redirect from the task's origin to another one
// is refused by the proxy, before a request reaches it, and the agent
// hears of it.
func TestRedirectRefused(t *testing.T) {
	b := start(t)
	other, hits := secret(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/go":
			http.Redirect(w, r, other+"/secret", http.StatusFound)
		case "/meta":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			fmt.Fprint(w, `<!doctype html><title>Task</title><a href="/go">next</a>`)
		}
	}))
	t.Cleanup(srv.Close)
	open(t, b, srv.URL+"/")
	ctx := testCtx(t)
	for _, c := range []struct{ path, to string }{{"/go", other + "/secret"}, {"/meta", "169.254.169.254"}} {
		_, err := b.Do(ctx, []action.Action{{Kind: action.Navigate, Text: srv.URL + c.path}})
		if !errors.Is(err, env.ErrForbidden) || !strings.Contains(err.Error(), c.to) {
			t.Fatalf("navigate to a redirect to %s = %v; want forbidden, naming where it led", c.to, err)
		}
	}
	// A link the agent clicks is refused as well; the page says why.
	open(t, b, srv.URL+"/")
	if _, err := b.Do(ctx, []action.Action{{Kind: action.Click, Target: &action.Target{Role: "link", Name: "next"}}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		return strings.Contains(eval(t, b, "document.body ? document.body.innerText : ''"), "Proctor refused")
	})
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server no task names got %d requests", n)
	}
	if r := b.Refused(); !slices.ContainsFunc(r, func(s string) bool { return strings.HasPrefix(s, other) }) {
		t.Fatalf("refused: %q", r)
	}
}

// TestPageRequestsRefused: what a page fetches, embeds or frames from an
// origin the task does not allow never reaches it, from the page, from
// a popup it opens and from a worker; an origin the task allows (a
// service) is reached.
func TestPageRequestsRefused(t *testing.T) {
	b := start(t)
	other, hits := secret(t)
	service, served := secret(t)
	page := `<!doctype html><title>Hostile</title><p id=out>…</p>
<script>
const other = %q, service = %q;
const out = [];
const note = s => { out.push(s); document.getElementById("out").textContent = out.join(" "); };
fetch(other + "/fetch").then(r => r.text()).then(t => note(t.includes("secret") ? "fetch-leaked" : "fetch-refused"), () => note("fetch-refused"));
fetch("http://169.254.169.254/latest/meta-data/").then(r => r.text()).then(t => note(t.startsWith("Proctor refused") ? "meta-refused" : "meta-leaked"), () => note("meta-refused"));
fetch(service + "/service").then(r => r.text()).then(t => note(t.includes("secret") ? "service-ok" : "service-failed"), () => note("service-failed"));
const img = new Image(); img.src = other + "/img"; document.body.append(img);
const f = document.createElement("iframe"); f.src = other + "/frame"; document.body.append(f);
new Worker(URL.createObjectURL(new Blob(["fetch(" + JSON.stringify(other + "/worker") + ").catch(() => 0)"], {type: "text/javascript"})));
try { new WebSocket(other.replace("http", "ws") + "/ws"); } catch (e) {}
document.onclick = () => window.open(other + "/popup"); // a popup needs a gesture
</script>`
	u := site(t, map[string]string{"page": fmt.Sprintf(page, other, service)})
	ctx := testCtx(t)
	if err := b.Reset(ctx, env.Setup{Steps: []task.Step{{Open: &task.Open{URL: u + "/page"}}}, Origins: []string{service}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Do(ctx, []action.Action{{Kind: action.Click, Point: action.At(600, 400)}}); err != nil {
		t.Fatal(err)
	}
	// The popup becomes the active tab: the page is read in the first.
	said := func() string {
		if _, err := b.Do(ctx, []action.Action{{Kind: action.TabSwitch, Tab: "0"}}); err != nil {
			t.Fatal(err)
		}
		return eval(t, b, "document.getElementById('out').textContent")
	}
	waitFor(t, func() bool { return strings.Count(said(), "-") == 3 })
	if got := said(); !strings.Contains(got, "fetch-refused") || !strings.Contains(got, "meta-refused") || !strings.Contains(got, "service-ok") {
		t.Fatalf("the page says %q", got)
	}
	// The frame, image, worker, socket and popup have had time to ask.
	waitFor(t, func() bool {
		r := b.Refused()
		return slices.ContainsFunc(r, func(s string) bool { return strings.HasSuffix(s, "/popup") }) &&
			slices.ContainsFunc(r, func(s string) bool { return strings.HasSuffix(s, "/worker") })
	})
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server no task names got %d requests", n)
	}
	if served.Load() == 0 {
		t.Fatal("the task's service got no request")
	}
	var want []string
	for _, p := range []string{"/fetch", "/img", "/frame", "/worker", "/popup"} {
		want = append(want, other+p)
	}
	want = append(want, "http://169.254.169.254/latest/meta-data/")
	for _, w := range want {
		if !slices.Contains(b.Refused(), w) {
			t.Errorf("%s is not among the refused: %q", w, b.Refused())
		}
	}
}

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("gave up waiting")
		}
	}
}

// TestReachCheck is the policy's table, without a browser.
func TestReachCheck(t *testing.T) {
	var r reach
	r.set([]string{"http://127.0.0.1:8080", "https://Shop.example", "http://[::1]:81/x"}, []string{"file:///tmp/home/page.html"}, false)
	ctx := context.Background()
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8080/a?b", true},
		{"ws://127.0.0.1:8080/socket", true},
		{"http://127.0.0.1:8081/", false},
		{"http://localhost:8080/", false},
		{"https://shop.example/cart", true},
		{"https://shop.example:444/", false},
		{"http://shop.example/", false},
		{"http://[::1]:81/", true},
		{"http://169.254.169.254/", false},
		{"http://[fe80::1]/", false},
		{"http://10.0.0.1/", false},
		{"http://example.com/", false},
		{"data:text/html,hi", true},
		{"blob:http://127.0.0.1:8080/0b1c", true},
		{"about:blank", true},
		{"about:version", false},
		{"file:///tmp/home/page.html#top", true},
		{"file:///tmp/home/other.html", false},
		{"file:///etc/hostname", false},
		{"chrome://settings", false},
		{"javascript:alert(1)", false},
		{"filesystem:http://127.0.0.1:8080/temporary/x", false},
	} {
		if err := r.check(ctx, c.url); (err == nil) != c.ok {
			t.Errorf("check(%s) = %v; want allowed %v", c.url, err, c.ok)
		}
	}
	// With the web open: public addresses, never private ones.
	r.set(nil, nil, true)
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"https://93.184.215.14/", true},
		{"http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/", true},
		{"http://127.0.0.1:8080/", false},
		{"http://localhost:8080/", false},
		{"http://169.254.169.254/", false},
		{"http://[::ffff:169.254.169.254]/", false},
		{"http://192.168.1.1/", false},
		{"http://100.64.0.1/", false},
		{"http://0.0.0.0:8080/", false},
		{"http://[::]:8080/", false},
	} {
		if err := r.check(ctx, c.url); (err == nil) != c.ok {
			t.Errorf("web: check(%s) = %v; want allowed %v", c.url, err, c.ok)
		}
	}
	if private(netip.MustParseAddr("8.8.8.8")) != "" {
		t.Error("8.8.8.8 is public")
	}
}

// TestQueryKeptAsWritten: a request through the filter reaches the task's
// server with its query as the page wrote it, ';' separators included
// (Request Tracker's links: Update.html?Action=Comment;id=25).
func TestQueryKeptAsWritten(t *testing.T) {
	b := start(t)
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/update" {
			got.Store(r.URL.RawQuery)
		}
		fmt.Fprint(w, `<!doctype html><title>Task</title><a href="/update?Action=Comment;id=25">Comment</a>`)
	}))
	t.Cleanup(srv.Close)
	open(t, b, srv.URL+"/")
	if _, err := b.Do(testCtx(t), []action.Action{{Kind: action.Click, Target: &action.Target{Role: "link", Name: "Comment"}}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { q, _ := got.Load().(string); return q != "" })
	if q := got.Load().(string); q != "Action=Comment;id=25" {
		t.Fatalf("the server got the query %q, want Action=Comment;id=25", q)
	}
}

// TestRefusalNews: the agent is told of the page's refused requests since
// the last time, the last few addresses, and not of Chromium's own calls
// to its services.
func TestRefusalNews(t *testing.T) {
	var r reach
	r.set(nil, nil, false)
	for _, a := range []string{"https://accounts.google.com:443", "http://127.0.0.1:9/secret", "https://update.googleapis.com:443",
		"http://169.254.169.254/latest/meta-data/", "http://update.googleapis.com/service/update2/json?x=1"} {
		r.refuse(a, errors.New("no"))
	}
	n, last := r.news(3)
	if n != 2 || !slices.Equal(last, []string{"http://127.0.0.1:9/secret", "http://169.254.169.254/latest/meta-data/"}) {
		t.Fatalf("news = %d %q", n, last)
	}
	if n, last := r.news(3); n != 0 || len(last) != 0 {
		t.Fatalf("told twice: %d %q", n, last)
	}
	r.refuse("http://10.0.0.1/x", errors.New("no"))
	if n, last := r.news(3); n != 1 || !slices.Equal(last, []string{"http://10.0.0.1/x"}) {
		t.Fatalf("news = %d %q", n, last)
	}
}
