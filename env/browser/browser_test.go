package browser

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/envtest"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// need skips a test where no Chromium is installed (scripts/test.sh
// installs it).
func need(t testing.TB) {
	t.Helper()
	if _, err := ExecPath(); err != nil {
		t.Skip(err)
	}
}

// start starts a browser the test's cleanup ends.
func start(t testing.TB) *Browser {
	t.Helper()
	need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Start(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// site serves pages by path; "/x" is served from pages["x"].
func site(t testing.TB, pages map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasPrefix(p, "DOWNLOAD ") {
			w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
			w.Header().Set("Content-Type", "text/csv")
			fmt.Fprint(w, strings.TrimPrefix(p, "DOWNLOAD "))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, p)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// open resets the browser to a page.
func open(t testing.TB, b *Browser, url string) {
	t.Helper()
	if err := b.Reset(testCtx(t), env.Setup{Steps: []task.Step{{Open: &task.Open{URL: url}}}}); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates JavaScript in the active tab and returns the value as
// text.
func eval(t testing.TB, b *Browser, js string) string {
	t.Helper()
	v, err := b.Eval(testCtx(t), js)
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

const formPage = `<!doctype html><title>Form</title>
<h1>Order</h1>
<label>Name <input id=name></label>
<select id=size aria-label=Size><option>Small</option><option>Medium</option><option>Large</option></select>
<button id=go onclick="document.getElementById('out').textContent='clicked '+document.getElementById('name').value">Go</button>
<p id=out></p>`

func TestClickAndType(t *testing.T) {
	b := start(t)
	u := site(t, map[string]string{"form": formPage})
	open(t, b, u+"/form")
	ctx := testCtx(t)
	tree, err := b.Tree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Find("", "push button", "Go", "", false)) != 1 || len(tree.Find("", "entry", "Name", "", false)) != 1 {
		t.Fatalf("tree:\n%s", observe.Linearize(tree.Filter(observe.Options{Screen: b.size()}), 0))
	}
	steps, err := b.Do(ctx, []action.Action{
		{Kind: action.Type, Target: &action.Target{Role: "entry", Name: "Name"}, Text: "Zoë Ωμέγα"},
		{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "Go"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := eval(t, b, "document.getElementById('out').textContent"); got != "clicked Zoë Ωμέγα" {
		t.Fatalf("the page says %q", got)
	}
	if steps[1].Element != "push button Go" {
		t.Fatalf("the click's record: %+v", steps[1])
	}
	shot, err := b.Screenshot(ctx, env.ShotOptions{Marks: true})
	if err != nil || shot.Format != "png" || shot.Size != b.size() || len(shot.Marks) < 3 {
		t.Fatalf("screenshot %+v %v", shot.Size, err)
	}
}

// conformance is the browser's fixture of the conformance suite: a page
// titled Conformance with the buttons Yes and Later.
var conformance = envtest.Fixture{
	Dialog: env.Setup{Steps: []task.Step{
		{Open: &task.Open{URL: "data:text/html," + url.PathEscape(`<title>Conformance</title><p>Proceed</p>`+
			`<button onclick="window.pressed='Yes'">Yes</button> <button onclick="window.pressed='Later'">Later</button>`)}},
		{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Role: "push button", Name: "Later"}}},
	}},
	Pressed: func(ctx context.Context, e env.Env) (string, error) {
		return e.(*Browser).Eval(ctx, "window.pressed || ''")
	},
}

func TestConformance(t *testing.T) {
	envtest.RunWith(t, start(t), conformance)
}

// markOf returns the index (set-of-mark tag) of the element the query
// names in a screenshot's marks.
func markOf(t *testing.T, shot env.Shot, role, name string) int {
	t.Helper()
	for _, m := range shot.Marks {
		if m.Role == role && m.Name == name {
			return m.Tag
		}
	}
	t.Fatalf("no mark %s %q among %d", role, name, len(shot.Marks))
	return 0
}

// TestFramesAndShadowRoots clicks, by their index as browser-use numbers
// them, a button inside an iframe from another origin and a button inside
// an open shadow root.
func TestFramesAndShadowRoots(t *testing.T) {
	b := start(t)
	other := site(t, map[string]string{"inner": `<!doctype html><button onclick="parent.postMessage('inner', '*')">Inner</button>`})
	main := site(t, map[string]string{"page": `<!doctype html><title>Frames</title>
<p id=out>none</p>
<iframe src="` + strings.Replace(other, "127.0.0.1", "localhost", 1) + `/inner" style="margin-left:200px;width:300px;height:120px"></iframe>
<div id=host></div>
<script>
addEventListener("message", e => document.getElementById("out").textContent = e.data + " from " + e.origin);
const root = document.getElementById("host").attachShadow({mode: "open"});
root.innerHTML = '<button>Shadow</button>';
root.querySelector("button").onclick = () => document.getElementById("out").textContent = "shadow";
</script>`})
	// The frame's origin is the task's, as a service's would be.
	ctx := testCtx(t)
	err := b.Reset(ctx, env.Setup{Steps: []task.Step{{Open: &task.Open{URL: main + "/page"}}},
		Origins: []string{strings.Replace(other, "127.0.0.1", "localhost", 1)}})
	if err != nil {
		t.Fatal(err)
	}
	shot, err := b.Screenshot(ctx, env.ShotOptions{Marks: true})
	if err != nil {
		t.Fatal(err)
	}
	inner := markOf(t, shot, "push button", "Inner")
	if _, err := b.Do(ctx, []action.Action{{Kind: action.Click, Target: &action.Target{Index: &inner}}}); err != nil {
		t.Fatal(err)
	}
	// The frame's message reaches the page a moment after the click.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got := eval(t, b, "document.getElementById('out').textContent")
		if strings.HasPrefix(got, "inner from http://localhost:") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the click in the cross-origin frame the page says %q", got)
		}
	}
	shadow := markOf(t, shot, "push button", "Shadow")
	steps, err := b.Do(ctx, []action.Action{{Kind: action.Click, Target: &action.Target{Index: &shadow}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := eval(t, b, "document.getElementById('out').textContent"); got != "shadow" || steps[0].Element != "push button Shadow" {
		t.Fatalf("after the click in the shadow root the page says %q, the step %+v", got, steps[0])
	}
}

// TestConfirmDialog answers confirm and prompt dialogs as a pixel agent
// does (clicking the drawn buttons, typing) and by their actions.
func TestConfirmDialog(t *testing.T) {
	b := start(t)
	u := site(t, map[string]string{"page": `<!doctype html><title>Dialogs</title>
<button onclick="document.getElementById('out').textContent = confirm('Delete the file?') ? 'yes' : 'no'">Delete</button>
<button onclick="document.getElementById('out').textContent = 'name=' + prompt('Your name?', 'anon')">Ask</button>
<p id=out></p>`})
	open(t, b, u+"/page")
	ctx := testCtx(t)
	click := func(name string) {
		t.Helper()
		if _, err := b.Do(ctx, []action.Action{{Kind: action.Click, Target: &action.Target{Role: "push button", Name: name}}}); err != nil {
			t.Fatal(err)
		}
	}
	out := func() string { return eval(t, b, "document.getElementById('out').textContent") }
	click("Delete")
	// The dialog is in the tree and on the screenshot.
	tree, err := b.Tree(ctx)
	if err != nil || len(tree.Find("", "alert", "Delete the file?", "", false)) != 1 {
		t.Fatalf("the dialog is not in the tree (%v)", err)
	}
	shot, err := b.Screenshot(ctx, env.ShotOptions{Marks: true})
	if err != nil || markOf(t, shot, "push button", "Cancel") == 0 {
		t.Fatal(err)
	}
	click("OK")
	if got := out(); got != "yes" {
		t.Fatalf("confirm answered OK: the page says %q", got)
	}
	click("Delete")
	if _, err := b.Do(ctx, []action.Action{{Kind: action.Key, Keys: []string{"Escape"}}}); err != nil {
		t.Fatal(err)
	}
	if got := out(); got != "no" {
		t.Fatalf("confirm dismissed with Escape: the page says %q", got)
	}
	click("Ask")
	if _, err := b.Do(ctx, []action.Action{{Kind: action.Key, Keys: []string{"BackSpace", "BackSpace", "BackSpace", "BackSpace"}},
		{Kind: action.Type, Text: "Zoë\n"}}); err != nil {
		t.Fatal(err)
	}
	if got := out(); got != "name=Zoë" {
		t.Fatalf("prompt typed into: the page says %q", got)
	}
	click("Ask")
	if _, err := b.Do(ctx, []action.Action{{Kind: action.API, Name: "accept_dialog", Args: map[string]any{"text": "Ann"}}}); err != nil {
		t.Fatal(err)
	}
	if got := out(); got != "name=Ann" {
		t.Fatalf("prompt accepted by action: the page says %q", got)
	}
	if _, err := b.Do(ctx, []action.Action{{Kind: action.API, Name: "dismiss_dialog"}}); !errors.Is(err, env.ErrBadAction) {
		t.Fatalf("dismiss with no dialog open: %v", err)
	}
}

// TestDownloadAndUpload: a download lands in ~/Downloads, where checks
// read it; a file of the episode's folder is uploaded to a file input.
func TestDownloadAndUpload(t *testing.T) {
	b := start(t)
	u := site(t, map[string]string{
		"page":       `<!doctype html><a href="/report.csv">Report</a> <input type=file id=f aria-label=Attachment onchange="document.getElementById('out').textContent = this.files[0].name + ' ' + this.files[0].size"><p id=out></p>`,
		"report.csv": "DOWNLOAD region,total\nnorth,12\n",
	})
	open(t, b, u+"/page")
	ctx := testCtx(t)
	if _, err := b.Do(ctx, []action.Action{{Kind: action.Click, Target: &action.Target{Role: "link", Name: "Report"}}}); err != nil {
		t.Fatal(err)
	}
	var data []byte
	for range 50 {
		var err error
		if data, err = b.ReadFile(ctx, "~/Downloads/report.csv"); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if string(data) != "region,total\nnorth,12\n" {
		t.Fatalf("the download holds %q", data)
	}
	if err := b.WriteFile(ctx, "~/cv.txt", []byte("12345")); err != nil {
		t.Fatal(err)
	}
	shot, err := b.Screenshot(ctx, env.ShotOptions{Marks: true})
	if err != nil {
		t.Fatal(err)
	}
	i := markOf(t, shot, "push button", "Attachment")
	if _, err := b.Do(ctx, []action.Action{{Kind: action.API, Name: "upload_file", Args: map[string]any{"index": float64(i), "path": "~/cv.txt"}}}); err != nil {
		t.Fatal(err)
	}
	if got := eval(t, b, "document.getElementById('out').textContent"); got != "cv.txt 5" {
		t.Fatalf("after the upload the page says %q", got)
	}
}

// TestIsolation: nothing of an episode is left in the next one: cookies,
// storage, tabs, files.
func TestIsolation(t *testing.T) {
	b := start(t)
	u := site(t, map[string]string{"page": `<!doctype html><title>Store</title><p>store</p>`})
	open(t, b, u+"/page")
	ctx := testCtx(t)
	eval(t, b, "document.cookie = 'session=abc; max-age=3600'; localStorage.setItem('k', 'v'); 'ok'")
	if got := eval(t, b, "document.cookie"); got != "session=abc" {
		t.Fatalf("cookie not set: %q", got)
	}
	if _, err := b.Do(ctx, []action.Action{{Kind: action.Navigate, Text: u + "/page", NewTab: true}}); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFile(ctx, "~/left.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	open(t, b, u+"/page")
	if got := eval(t, b, "document.cookie + '|' + localStorage.getItem('k')"); got != "|null" {
		t.Fatalf("the next episode sees %q", got)
	}
	ws, err := b.Windows(ctx)
	if err != nil || len(ws) != 1 {
		t.Fatalf("tabs of the next episode: %+v %v", ws, err)
	}
	if _, err := b.ReadFile(ctx, "~/left.txt"); !errors.Is(err, env.ErrNotFound) {
		t.Fatalf("a file of the last episode: %v", err)
	}
	// An episode whose page stored something on load, with no action
	// after its setup, is not taken again either.
	saver := site(t, map[string]string{"page": `<!doctype html><title>Saver</title><script>localStorage.setItem('k', 'loaded')</script>`})
	open(t, b, saver+"/page")
	if err := b.Reset(ctx, env.Setup{}); err != nil {
		t.Fatal(err)
	}
	if got, found, err := b.Page(ctx, observe.PageQuery{URL: true}); err != nil || got != "about:blank" {
		t.Fatalf("after an episode with only a setup, the next one shows %q (%v, %v)", got, found, err)
	}
}

// TestFirstResetTakesTheFreshEpisode: the episode Start opens serves the
// first reset (a cold start opens one browser context, not two), and a
// screenshot before it does not count as use.
func TestFirstResetTakesTheFreshEpisode(t *testing.T) {
	b := start(t)
	ctx := testCtx(t)
	if _, err := b.Screenshot(ctx, env.ShotOptions{}); err != nil {
		t.Fatal(err)
	}
	current := func() *episode { b.mu.Lock(); defer b.mu.Unlock(); return b.ep }
	first := current()
	if err := b.Reset(ctx, env.Setup{}); err != nil {
		t.Fatal(err)
	}
	if current() != first {
		t.Fatal("the first reset opened another browser context")
	}
	if err := b.Reset(ctx, env.Setup{}); err != nil {
		t.Fatal(err)
	}
	if current() == first {
		t.Fatal("the second reset kept the episode the first one used")
	}
}

// TestTabsAndNavigation: a link to a new window opens a tab that becomes
// active; tabs switch and close by number; back and forward.
func TestTabsAndNavigation(t *testing.T) {
	b := start(t)
	u := site(t, map[string]string{
		"a": `<!doctype html><title>Page A</title><a href="/b">To B</a> <a href="/c" target=_blank>New C</a>`,
		"b": `<!doctype html><title>Page B</title><p>b</p>`,
		"c": `<!doctype html><title>Page C</title><p>c</p>`,
	})
	open(t, b, u+"/a")
	ctx := testCtx(t)
	title := func() string { return eval(t, b, "document.title") }
	do := func(acts ...action.Action) {
		t.Helper()
		if _, err := b.Do(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	do(action.Action{Kind: action.Click, Target: &action.Target{Role: "link", Name: "To B"}})
	waitTitle(t, b, "Page B")
	do(action.Action{Kind: action.Back})
	waitTitle(t, b, "Page A")
	do(action.Action{Kind: action.API, Name: "go_forward"})
	waitTitle(t, b, "Page B")
	do(action.Action{Kind: action.Back})
	waitTitle(t, b, "Page A")
	do(action.Action{Kind: action.Click, Target: &action.Target{Role: "link", Name: "New C"}})
	waitTitle(t, b, "Page C")
	ws, err := b.Windows(ctx)
	if err != nil || len(ws) != 2 || !ws[1].Active || ws[1].Title != "Page C" {
		t.Fatalf("tabs %+v %v", ws, err)
	}
	// The observation's tabs carry the addresses.
	tabs, err := b.Tabs(ctx)
	want := []observe.Tab{{Title: "Page A", URL: u + "/a"}, {Title: "Page C", URL: u + "/c", Active: true}}
	if err != nil || !reflect.DeepEqual(tabs, want) {
		t.Fatalf("tabs %+v %v, want %+v", tabs, err, want)
	}
	// A relative address is resolved against the active tab's, in the same
	// tab or a new one.
	do(action.Action{Kind: action.Navigate, Text: "/b?x=1"})
	waitTitle(t, b, "Page B")
	do(action.Action{Kind: action.Navigate, Text: "./c", NewTab: true})
	waitTitle(t, b, "Page C")
	if tabs, _ := b.Tabs(ctx); len(tabs) != 3 || tabs[1].URL != u+"/b?x=1" || tabs[2].URL != u+"/c" || !tabs[2].Active {
		t.Fatalf("after relative navigation: %+v", tabs)
	}
	do(action.Action{Kind: action.TabClose, Tab: "2"})
	do(action.Action{Kind: action.TabSwitch, Tab: "1"})
	do(action.Action{Kind: action.Back})
	waitTitle(t, b, "Page C")
	do(action.Action{Kind: action.TabSwitch, Tab: "0"})
	if got := title(); got != "Page A" {
		t.Fatalf("after switching to tab 0: %q", got)
	}
	do(action.Action{Kind: action.TabClose, Tab: "1"})
	if ws, _ := b.Windows(ctx); len(ws) != 1 || ws[0].Title != "Page A" {
		t.Fatalf("after closing tab 1: %+v", ws)
	}
	if _, err := b.Do(ctx, []action.Action{{Kind: action.TabSwitch, Tab: "7"}}); !errors.Is(err, env.ErrNotFound) {
		t.Fatalf("switch to a missing tab: %v", err)
	}
}

// waitTitle waits for the active tab's title.
func waitTitle(t *testing.T, b *Browser, want string) {
	t.Helper()
	// A busy page (TestHugePage's) may take minutes on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for {
		got, err := b.Eval(ctx, "document.title")
		switch {
		case err != nil:
			t.Fatalf("the title, want %q: %v", want, err)
		case got == want:
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the title is %q, want %q", got, want)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestFormControls: an option chosen by its text, keys and shortcuts in a
// field, a wheel scroll, a double click.
func TestFormControls(t *testing.T) {
	b := start(t)
	u := site(t, map[string]string{"form": formPage + `<div style="height:3000px"></div><p ondblclick="this.textContent='double'" id=dbl>twice</p>`})
	open(t, b, u+"/form")
	ctx := testCtx(t)
	do := func(acts ...action.Action) {
		t.Helper()
		if _, err := b.Do(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	do(action.Action{Kind: action.Select, Target: &action.Target{Role: "combo box", Name: "Size"}, Text: "Large"})
	if got := eval(t, b, "document.getElementById('size').value"); got != "Large" {
		t.Fatalf("the select holds %q", got)
	}
	if _, err := b.Do(ctx, []action.Action{{Kind: action.Select, Target: &action.Target{Role: "combo box", Name: "Size"}, Text: "Huge"}}); !errors.Is(err, env.ErrBadAction) || !strings.Contains(err.Error(), `"Medium"`) {
		t.Fatalf("a missing option: %v", err)
	}
	do(action.Action{Kind: action.Type, Target: &action.Target{Role: "entry", Name: "Name"}, Text: "first"},
		action.Action{Kind: action.Hotkey, Keys: []string{"ctrl", "a"}},
		action.Action{Kind: action.Type, Text: "second"},
		action.Action{Kind: action.Key, Keys: []string{"Left", "Left", "BackSpace"}},
		action.Action{Kind: action.Hotkey, Keys: []string{"shift", "x"}})
	if got := eval(t, b, "document.getElementById('name').value"); got != "secXnd" {
		t.Fatalf("the field holds %q", got)
	}
	do(action.Action{Kind: action.Scroll, Point: action.At(400, 400), DY: 5})
	var y string
	for range 20 { // the page scrolls at its next frame
		if y = eval(t, b, "String(window.scrollY)"); y == "500" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if y != "500" {
		t.Fatalf("after 5 wheel notches the page is at %s", y)
	}
	do(action.Action{Kind: action.ScrollToText, Text: "twice"})
	do(action.Action{Kind: action.Click, Target: &action.Target{Role: "paragraph", Text: "twice"}, Count: 2})
	if got := eval(t, b, "document.getElementById('dbl').textContent"); got != "double" {
		t.Fatalf("after a double click: %q", got)
	}
}

// TestCapsMatchTheTaskType: lint judges browser tasks by the
// capabilities the browser declares.
func TestCapsMatchTheTaskType(t *testing.T) {
	if got, want := fmt.Sprint(Caps), fmt.Sprint(task.TypeCapabilities["browser"]); got != want {
		t.Fatalf("Caps %s, but task.TypeCapabilities[browser] %s", got, want)
	}
}

// bigPage is an application page of about 13 elements a row: a header,
// a form and a table of rows with links and buttons.
func bigPage(rows int) string {
	var sb strings.Builder
	sb.WriteString(`<!doctype html><title>Accounts</title><header><button id=target onclick="this.dataset.n = (+this.dataset.n || 0) + 1">Refresh</button> <a href=#>Home</a> <a href=#>Reports</a></header>
<form><label>Search <input></label> <select><option>All</option><option>Open</option></select> <label><input type=checkbox> Mine</label> <button type=button>Filter</button></form><table>`)
	for i := range rows {
		fmt.Fprintf(&sb, `<tr><td>%d</td><td><a href="#a%d">Account %d</a></td><td>Owner %d</td><td><span>open</span></td><td><button type=button>Edit</button> <button type=button>Delete</button></td></tr>`, i, i, i, i)
	}
	sb.WriteString(`</table><footer><p>Footer</p></footer>`)
	return sb.String()
}

// TestPageProbes reads a page the way checks do: the URL and a parameter,
// the text, selectors (text, value, attribute, count), JavaScript, an
// HttpOnly cookie and local storage; and says when there is nothing.
func TestPageProbes(t *testing.T) {
	b := start(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cret", HttpOnly: true})
		fmt.Fprint(w, `<!doctype html><title>Cart</title><h1 class=t>Your cart</h1><input id=qty value=3><a id=pay href="/pay">Pay</a>
<ul><li>one</li><li>two</li></ul><p hidden>secret text</p><script>localStorage.setItem("cart", "a,b")</script>`)
	}))
	t.Cleanup(srv.Close)
	open(t, b, srv.URL+"/cart?step=2")
	ctx := testCtx(t)
	cases := []struct {
		q     observe.PageQuery
		want  string
		found bool
	}{
		{observe.PageQuery{URL: true}, srv.URL + "/cart?step=2", true},
		{observe.PageQuery{URL: true, Param: "step"}, "2", true},
		{observe.PageQuery{URL: true, Param: "none"}, "", false},
		{observe.PageQuery{Text: true}, "Your cart\nPay\none\ntwo", true},
		{observe.PageQuery{Selector: "h1.t"}, "Your cart", true},
		{observe.PageQuery{Selector: "#qty", Attr: "value"}, "3", true},
		{observe.PageQuery{Selector: "#pay", Attr: "href"}, "/pay", true},
		{observe.PageQuery{Selector: "li", Count: true}, "2", true},
		{observe.PageQuery{Selector: "table"}, "", false},
		{observe.PageQuery{JS: "document.title + ' ' + (1 + 1)"}, "Cart 2", true},
		{observe.PageQuery{JS: "Promise.resolve({a: 1})"}, `{"a":1}`, true},
		{observe.PageQuery{JS: "undefined"}, "", false},
		{observe.PageQuery{Cookie: "session"}, "s3cret", true},
		{observe.PageQuery{Cookie: "none"}, "", false},
		{observe.PageQuery{Storage: "cart"}, "a,b", true},
		{observe.PageQuery{Storage: "none"}, "", false},
	}
	for _, c := range cases {
		got, found, err := b.Page(ctx, c.q)
		if err != nil || got != c.want || found != c.found {
			t.Errorf("%s = %q, %v, %v; want %q, %v", c.q.Describe(), got, found, err, c.want, c.found)
		}
	}
	if _, _, err := b.Page(ctx, observe.PageQuery{JS: "no.such.thing"}); err == nil || !strings.Contains(err.Error(), "ReferenceError") {
		t.Fatalf("an exception: %v", err)
	}
}

// TestIndexesNumberWhatAPersonActsOn checks the element indexes of
// browser-use's actions: controls are numbered in page order, a page's
// text containers only where the page made them focusable or editable,
// and an index works before any observation with marks was taken (a
// replayed trajectory, a screenshot-only agent).
func TestIndexesNumberWhatAPersonActsOn(t *testing.T) {
	b := start(t)
	u := site(t, map[string]string{"page": `<!doctype html><title>Indexes</title>
<h1>Orders</h1><p>Fill in the form.</p>
<label for=n>Name</label><input id=n>
<ul><li>Plain item</li></ul>
<p tabindex=0 onclick="out.textContent='focusable paragraph'">Focusable paragraph</p>
<div contenteditable=true aria-label="Notes">notes</div>
<table><tr><td>Cell</td></tr></table>
<button onclick="out.textContent='saved'">Save</button><p id=out>none</p>`})
	open(t, b, u+"/page")
	ctx := testCtx(t)
	// Before any marks: index 4 is the Save button.
	four := 4
	if _, err := b.Do(ctx, []action.Action{{Kind: action.Click, Target: &action.Target{Index: &four}}}); err != nil {
		t.Fatal(err)
	}
	if got := eval(t, b, "document.getElementById('out').textContent"); got != "saved" {
		t.Fatalf("index 4 before any marks: the page says %q, want saved", got)
	}
	shot, err := b.Screenshot(ctx, env.ShotOptions{Marks: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range shot.Marks {
		got = append(got, strings.TrimSpace(fmt.Sprintf("%d %s %s%s", m.Tag, m.Role, m.Name, m.Text)))
	}
	want := []string{"1 entry Name", "2 paragraph Focusable paragraph", "3 section Notesnotes", "4 push button Save"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("marks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
