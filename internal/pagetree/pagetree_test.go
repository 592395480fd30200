package pagetree

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/internal/cdppipe"
	"github.com/proctor-eval/proctor/observe"
)

// browser starts headless Chromium with site isolation off, as the browser
// environment runs it, and returns a context on a blank tab. The browser
// ends with the test; its process is ended by cancelling the allocator.
func browser(tb testing.TB) context.Context {
	tb.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		tb.Skip("chromium is not installed")
	}
	// The browser environment's allocator, so that the tree is read
	// through the transport it uses.
	alloc := &cdppipe.Allocator{Path: path, Args: []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
		"--disable-site-isolation-trials", "--disable-features=IsolateOrigins,site-per-process",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--disable-quic", "--user-data-dir=" + tb.TempDir(),
	}}
	actx, cancelAlloc := chromedp.NewAllocatorContext(context.Background(), alloc)
	ctx, cancel := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		alloc.Wait()
		tb.Fatalf("start chromium: %v: %s", err, alloc.Tail())
	}
	// The timeout bounds the test's actions; it comes after the start, as a
	// timeout on the first action's context would stop the browser.
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	tb.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc(); alloc.Wait() })
	return ctx
}

// serve serves the pages (path → HTML) on 127.0.0.1.
func serve(tb testing.TB, pages map[string]string) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// open navigates the tab to the URL and reads the tree.
func open(t *testing.T, ctx context.Context, url string) *observe.Tree {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate to %s: %v", url, err)
	}
	return mustRead(t, ctx)
}

// mustRead reads the tree, failing the test on an error.
func mustRead(t *testing.T, ctx context.Context) *observe.Tree {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tree, err := Read(tctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if len(tree.Errors) > 0 {
		t.Errorf("tree errors: %v", tree.Errors)
	}
	return tree
}

// dump writes the tree as indented lines, for failure messages.
func dump(tree *observe.Tree) string {
	var b strings.Builder
	var walk func(n *observe.Node, depth int)
	walk = func(n *observe.Node, depth int) {
		fmt.Fprintf(&b, "%s%s %q text=%q id=%d box=%v %v\n", strings.Repeat("  ", depth), n.Role, n.Name, n.Text, n.ID, n.Box, n.States)
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	for _, a := range tree.Apps {
		walk(a, 0)
	}
	return b.String()
}

// find returns the only node with the role and name.
func find(t *testing.T, tree *observe.Tree, role, name string) *observe.Node {
	t.Helper()
	found := tree.Find("", role, name, "", false)
	if len(found) != 1 {
		t.Fatalf("%d nodes %s %q, want 1; tree:\n%s", len(found), role, name, dump(tree))
	}
	return found[0].Node
}

// rectOf is the getBoundingClientRect() of the element of the top document
// (or of an open shadow root in it) that expr evaluates to.
func rectOf(t *testing.T, ctx context.Context, expr string) action.Box {
	t.Helper()
	r, err := chromedp.Run(ctx, chromedp.Evaluate[[4]float64](`(() => { const r = (`+expr+`).getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()`))
	if err != nil {
		t.Fatalf("rect of %s: %v", expr, err)
	}
	return toBox(rect{r[0], r[1], r[2], r[3]})
}

// near reports whether two boxes are within a pixel of each other.
func near(a, b action.Box) bool {
	d := func(x, y int) bool { return x-y <= 1 && y-x <= 1 }
	return d(a.X, b.X) && d(a.Y, b.Y) && d(a.W, b.W) && d(a.H, b.H)
}

// screen is the viewport's size.
func screen(t *testing.T, ctx context.Context) action.Size {
	t.Helper()
	wh, err := chromedp.Run(ctx, chromedp.Evaluate[[2]int](`[document.documentElement.clientWidth, window.innerHeight]`))
	if err != nil {
		t.Fatal(err)
	}
	return action.Size{W: wh[0], H: wh[1]}
}

// eval runs a script in the page.
func eval(t *testing.T, ctx context.Context, script string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](script)); err != nil {
		t.Fatalf("%s: %v", script, err)
	}
}

// uniqueIDs fails the test when two nodes share an ID.
func uniqueIDs(t *testing.T, tree *observe.Tree) {
	t.Helper()
	seen := map[int64]*observe.Node{}
	ids := 0
	tree.Walk(func(_ string, n *observe.Node) bool {
		if n.ID == 0 {
			return true
		}
		ids++
		if o := seen[n.ID]; o != nil {
			t.Errorf("ID %d shared by %s and %s", n.ID, observe.Describe(o), observe.Describe(n))
		}
		seen[n.ID] = n
		return true
	})
	if ids == 0 {
		t.Error("no node has an ID")
	}
}

// parentOf is the node that holds n.
func parentOf(tree *observe.Tree, n *observe.Node) *observe.Node {
	var p *observe.Node
	tree.Walk(func(_ string, c *observe.Node) bool {
		for _, k := range c.Children {
			if k == n {
				p = c
			}
		}
		return p == nil
	})
	return p
}

const formPage = `<!doctype html><html><head><title>Sign up</title></head><body>
<h1>Sign up</h1>
<form>
<label>Name <input id=name value="Ada"></label>
<label>Notes <textarea id=notes>hello</textarea></label>
<label><input type=checkbox id=agree checked> Agree</label>
<label><input type=checkbox id=news> News</label>
<label>Size <select id=size><option>Small</option><option selected>Large</option></select></label>
<label><input type=radio name=color checked> Red</label>
<label>Secret <input type=password value="pw"></label>
<button id=save type=button>Save</button>
<button id=nope type=button disabled>Nope</button>
<div style="display:none"><button type=button>Ghost</button></div>
<button type=button style="visibility:hidden">Invisible</button>
<a id=home href="/home">Home</a>
<p>Plain text here</p>
<select size=2 aria-label=Pick><option>Apple</option><option selected>Banana</option></select>
<details open><summary>More</summary>Extra</details>
</form>
<script>document.getElementById('notes').focus()</script>
</body></html>`

func TestForm(t *testing.T) {
	ctx := browser(t)
	srv := serve(t, map[string]string{"/": formPage})
	tree := open(t, ctx, srv.URL+"/")

	if len(tree.Apps) != 1 {
		t.Fatalf("%d roots, want 1", len(tree.Apps))
	}
	app := tree.Apps[0]
	if app.App != "chromium" || app.Role != "application" || app.Name != "Sign up" {
		t.Errorf("root = %s %q %q, want chromium application \"Sign up\"", app.App, app.Role, app.Name)
	}
	if len(app.Children) != 1 || app.Children[0].Role != "document" {
		t.Fatalf("root's children are not one document:\n%s", dump(tree))
	}

	for _, tc := range []struct {
		role, name, text string
		has, lacks       []string
	}{
		{"heading", "Sign up", "", []string{"visible", "showing", "enabled"}, nil},
		{"entry", "Name", "Ada", []string{"visible", "showing", "enabled", "sensitive", "focusable", "editable", "single line"}, []string{"focused"}},
		{"entry", "Notes", "hello", []string{"editable", "multi line", "focused"}, nil},
		{"check box", "Agree", "", []string{"checkable", "checked", "focusable", "enabled"}, nil},
		{"check box", "News", "", []string{"checkable"}, []string{"checked"}},
		{"combo box", "Size", "Large", []string{"expandable", "focusable", "enabled"}, []string{"expanded"}},
		{"radio button", "Red", "", []string{"checkable", "checked"}, nil},
		{"password text", "Secret", "", []string{"editable"}, nil},
		{"push button", "Save", "", []string{"visible", "showing", "enabled", "sensitive", "focusable"}, nil},
		{"push button", "Nope", "", []string{"visible", "showing"}, []string{"enabled", "sensitive"}},
		{"link", "Home", "", []string{"visible", "enabled", "focusable"}, nil},
		{"paragraph", "", "Plain text here", []string{"visible", "showing"}, nil}, // its text child folds into it
		{"list box", "Pick", "", []string{"focusable"}, nil},
		{"list item", "Apple", "", []string{"visible", "selectable"}, []string{"selected"}},
		{"list item", "Banana", "", []string{"visible", "selectable", "selected"}, nil},
		{"toggle button", "More", "", []string{"expandable", "expanded"}, nil},
	} {
		t.Run(tc.role+" "+tc.name, func(t *testing.T) {
			n := find(t, tree, tc.role, tc.name)
			if tc.text != "" && n.Text != tc.text {
				t.Errorf("text = %q, want %q", n.Text, tc.text)
			}
			for _, s := range tc.has {
				if !n.Has(s) {
					t.Errorf("states %v lack %q", n.States, s)
				}
			}
			for _, s := range tc.lacks {
				if n.Has(s) {
					t.Errorf("states %v have %q", n.States, s)
				}
			}
			if n.ID == 0 {
				t.Error("no ID")
			}
			if n.Box.W <= 0 || n.Box.H <= 0 {
				t.Errorf("box %v is empty", n.Box)
			}
		})
	}

	// What a person sees: the hidden buttons are not kept, the others are.
	kept := map[string]bool{}
	for _, n := range tree.Filter(observe.Options{Screen: screen(t, ctx)}) {
		kept[observe.Describe(n.Node)] = true
	}
	for _, d := range []string{"push button Save", "link Home", "entry Name", "check box Agree", "combo box Size"} {
		if !kept[d] {
			t.Errorf("Filter dropped %s; kept %v", d, kept)
		}
	}
	for _, d := range []string{"push button Ghost", "push button Invisible", "list item Small", "list item Large"} {
		if kept[d] {
			t.Errorf("Filter kept %s, which is not showing", d)
		}
	}

	// A click at the button's centre lands on it.
	save := find(t, tree, "push button", "Save")
	if want := rectOf(t, ctx, `document.getElementById('save')`); !near(save.Box, want) {
		t.Errorf("Save's box = %v, getBoundingClientRect = %v", save.Box, want)
	}
	x, y := save.Box.Center()
	at := tree.At(x, y)
	if at == nil || at.Node != save {
		t.Fatalf("At(%d, %d) = %v, want the Save button", x, y, at)
	}
	if d := observe.Describe(at.Node); d != "push button Save" {
		t.Errorf("Describe = %q, want \"push button Save\"", d)
	}
	uniqueIDs(t, tree)
}

const tallPage = `<!doctype html><html><head><title>Tall</title></head><body style="margin:0">
<div style="height:150px"></div>
<button id=a style="margin-left:37px; width:120px; height:30px">Alpha</button>
<input id=b aria-label=Bravo style="position:absolute; left:400.5px; top:500px; width:200px">
<a id=c href="#" style="position:absolute; left:50px; top:900px">Charlie</a>
<div style="position:fixed; right:10px; top:10px; border:4px solid"><button id=d>Delta</button></div>
<div style="position:absolute; left:300px; top:200px; transform:translate(20px, 30px)"><span id=e>Echo text</span></div>
<div id=pane style="position:absolute; left:700px; top:100px; width:200px; height:100px; overflow:auto">
<div style="height:120px"></div><button id=f>Foxtrot</button><div style="height:300px"></div></div>
<div style="height:3000px"></div>
<script>document.getElementById('pane').scrollTop = 50</script>
</body></html>`

func TestBoxes(t *testing.T) {
	ctx := browser(t)
	srv := serve(t, map[string]string{"/": tallPage})
	tree := open(t, ctx, srv.URL+"/")
	elements := []struct{ role, name, expr string }{
		{"push button", "Alpha", `document.getElementById('a')`},
		{"entry", "Bravo", `document.getElementById('b')`},
		{"link", "Charlie", `document.getElementById('c')`},
		{"push button", "Delta", `document.getElementById('d')`},
		{"static", "Echo text", `document.getElementById('e')`},
		{"push button", "Foxtrot", `document.getElementById('f')`}, // in a scrolled pane
	}
	for _, scroll := range []int{0, 300} {
		if scroll > 0 {
			eval(t, ctx, fmt.Sprintf(`window.scrollTo(0, %d)`, scroll))
			tree = mustRead(t, ctx)
		}
		for _, e := range elements {
			t.Run(fmt.Sprintf("%s at scroll %d", e.name, scroll), func(t *testing.T) {
				n := find(t, tree, e.role, e.name)
				if want := rectOf(t, ctx, e.expr); !near(n.Box, want) {
					t.Errorf("box = %v, getBoundingClientRect = %v", n.Box, want)
				}
			})
		}
	}
	doc := tree.Apps[0].Children[0]
	if s := screen(t, ctx); doc.Box.X != 0 || doc.Box.Y != 0 || doc.Box.W < s.W || doc.Box.H != s.H {
		t.Errorf("document's box = %v, want the viewport %v at 0, 0", doc.Box, s)
	}
}

func TestFrames(t *testing.T) {
	ctx := browser(t)
	inner := func(name string) string {
		return `<!doctype html><html><body style="margin:12px"><div style="height:20px"></div>
<button id=btn>` + name + ` button</button><div style="height:800px"></div>
<script>const r = document.getElementById('btn').getBoundingClientRect();
parent.postMessage({name: '` + name + `', rect: [r.x, r.y, r.width, r.height]}, '*');</script></body></html>`
	}
	other := serve(t, map[string]string{"/cross": inner("cross")})
	// localhost is another site than 127.0.0.1: with site isolation on,
	// this frame would be in a process of its own.
	crossSite := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	srv := serve(t, map[string]string{
		"/same": inner("same"),
		"/": `<!doctype html><html><head><title>Frames</title>
<script>window.rects = {}; addEventListener('message', e => { window.rects[e.data.name] = e.data.rect; });</script>
</head><body style="margin:10px"><p>Top</p>
<iframe id=same src="/same" style="border:5px solid black; padding:7px; margin-left:30px" width=300 height=120></iframe>
<iframe id=cross src="` + crossSite + `/cross" style="border:2px solid; padding:3px" width=300 height=120></iframe>
<div style="height:2000px"></div></body></html>`,
	})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"),
		chromedp.Poll[chromedp.Void](`window.rects.same && window.rects.cross`)); err != nil {
		t.Fatal(err)
	}
	if cross, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('cross').contentDocument === null`)); err != nil || !cross {
		t.Fatalf("the cross frame is readable from the page (%v): it is not cross-origin", err)
	}
	// expected is where a frame's button is: the iframe's content box in the
	// page plus the button's rect in the frame.
	expected := func(frame string, inner string) action.Box {
		r, err := chromedp.Run(ctx, chromedp.Evaluate[[4]float64](`(() => {
			const f = document.getElementById('`+frame+`'), r = f.getBoundingClientRect(), cs = getComputedStyle(f);
			const b = `+inner+`;
			return [r.x + f.clientLeft + parseFloat(cs.paddingLeft) + b[0], r.y + f.clientTop + parseFloat(cs.paddingTop) + b[1], b[2], b[3]];
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		return toBox(rect{r[0], r[1], r[2], r[3]})
	}
	check := func(tree *observe.Tree, frame string, inner string) {
		t.Helper()
		n := find(t, tree, "push button", frame+" button")
		if want := expected(frame, inner); !near(n.Box, want) {
			t.Errorf("%s button's box = %v, want %v", frame, n.Box, want)
		}
		doc := parentOf(tree, n)
		if doc == nil || doc.Role != "document" || parentOf(tree, doc) == nil || parentOf(tree, doc).Role != "frame" {
			t.Errorf("%s button is not in a frame's document:\n%s", frame, dump(tree))
		}
		x, y := n.Box.Center()
		if at := tree.At(x, y); at == nil || at.Node != n {
			t.Errorf("At(%d, %d) = %v, want the %s button", x, y, at, frame)
		}
	}
	sameRect := `(() => { const r = f.contentDocument.getElementById('btn').getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()`

	tree := mustRead(t, ctx)
	check(tree, "same", sameRect)
	check(tree, "cross", `window.rects.cross`)
	uniqueIDs(t, tree)

	// Scrolled: the page by 40 pixels, the same-origin frame by 15.
	eval(t, ctx, `window.scrollTo(0, 40); document.getElementById('same').contentWindow.scrollTo(0, 15)`)
	tree = mustRead(t, ctx)
	check(tree, "same", sameRect)
	check(tree, "cross", `window.rects.cross`)
}

func TestShadowRoot(t *testing.T) {
	ctx := browser(t)
	srv := serve(t, map[string]string{"/": `<!doctype html><html><head><title>Shadow</title></head><body>
<p>Before</p>
<div id=host style="margin:40px"><button id=light slot=s>Light button</button></div>
<script>
const root = document.getElementById('host').attachShadow({mode: 'open'});
root.innerHTML = '<style>button { padding: 10px 20px }</style><span>Inside</span> <button id=sb>Shadow button</button> <slot name=s></slot>';
</script></body></html>`})
	tree := open(t, ctx, srv.URL+"/")
	for _, tc := range []struct{ name, expr string }{
		{"Shadow button", `document.getElementById('host').shadowRoot.getElementById('sb')`},
		{"Light button", `document.getElementById('light')`},
	} {
		n := find(t, tree, "push button", tc.name)
		if want := rectOf(t, ctx, tc.expr); !near(n.Box, want) {
			t.Errorf("%s's box = %v, getBoundingClientRect = %v", tc.name, n.Box, want)
		}
		if !n.Has("showing") || n.ID == 0 {
			t.Errorf("%s: states %v, ID %d", tc.name, n.States, n.ID)
		}
	}
	find(t, tree, "static", "Inside")
	uniqueIDs(t, tree)
}

func TestIDs(t *testing.T) {
	ctx := browser(t)
	srv := serve(t, map[string]string{"/": `<!doctype html><html><head><title>IDs</title></head><body>
<div id=list><button id=one>One</button><button id=two>Two</button></div></body></html>`})
	first := open(t, ctx, srv.URL+"/")
	second := mustRead(t, ctx)
	one := find(t, first, "push button", "One").ID
	two := find(t, first, "push button", "Two").ID
	if one == 0 || two == 0 || one == two {
		t.Fatalf("IDs of One and Two = %d, %d", one, two)
	}
	if again := find(t, second, "push button", "One").ID; again != one {
		t.Errorf("One's ID changed between reads: %d, then %d", one, again)
	}
	uniqueIDs(t, second)

	// Two goes and a new button comes, with its text: it is a new element.
	eval(t, ctx, `document.getElementById('two').remove();
const b = document.createElement('button'); b.textContent = 'Two'; document.getElementById('list').append(b);`)
	third := mustRead(t, ctx)
	if again := find(t, third, "push button", "One").ID; again != one {
		t.Errorf("One's ID changed after a sibling changed: %d, then %d", one, again)
	}
	if id := find(t, third, "push button", "Two").ID; id == two || id == one || id == 0 {
		t.Errorf("the new Two's ID = %d; the old Two's was %d, One's %d", id, two, one)
	}
	uniqueIDs(t, third)
}

// TestAtDescribesWhatIsClicked: the record of a click (At, a hit test and
// the hit node's ancestors) names what the tree (observe.Tree.At) names
// at the same point: the smallest interactive element, or, where that is
// only the page's document, the element with a name of its own there.
func TestAtDescribesWhatIsClicked(t *testing.T) {
	ctx := browser(t)
	srv := serve(t, map[string]string{"/": `<!doctype html><title>Help desk</title>
<h1 id=h style="width:600px">Open tickets <a href="#all">all</a></h1>
<p>Some text with no element of its own, in a paragraph.</p>
<div><span id=loose>Loose text in a div</span></div>
<img id=logo alt="Logo" width=60 height=40 src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
<label>Portal password <input id=pw type=password></label>
<label>Name <input id=name></label>
<button id=save><span>Save</span></button>`})
	tree := open(t, ctx, srv.URL+"/")
	for _, tc := range []struct {
		element string // the element clicked at its centre (a script's expression)
		want    string
	}{
		{`(() => { const r = document.createRange(); r.selectNodeContents(document.getElementById('h').firstChild); return r; })()`, "heading Open tickets all"},
		{`document.getElementById('h')`, "heading Open tickets all"}, // beside its text
		{`document.querySelector('#h a')`, "link all"},
		{`document.getElementById('logo')`, "image Logo"},
		{`document.getElementById('pw')`, "password text Portal password"},
		{`document.getElementById('name')`, "entry Name"},
		{`document.querySelector('#save span')`, "push button Save"},
		{`document.querySelector('p')`, "paragraph Some text with no element of its own, in a paragraph."},
		{`document.getElementById('loose')`, "document Help desk"},
	} {
		r := rectOf(t, ctx, tc.element)
		x, y := r.Center()
		got, err := At(ctx, x, y)
		if err != nil {
			t.Fatalf("At(%d, %d): %v", x, y, err)
		}
		fromTree := ""
		if at := tree.At(x, y); at != nil {
			fromTree = observe.Describe(at.Node)
		}
		if got != tc.want || fromTree != tc.want {
			t.Errorf("%s at (%d, %d): At %q, the tree's At %q, want %q", tc.element, x, y, got, fromTree, tc.want)
		}
	}
}
