package browser

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/internal/pagetree"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// navTimeout bounds a navigation's wait for the page to load.
const navTimeout = 30 * time.Second

// doActions performs the actions in order and records each one. Pointer and
// keyboard actions become CDP input events; an element target (an index
// or tag of the last marks, an id, a role and name) is scrolled into view
// and acted on at its centre. Navigation, tabs, options, uploads and
// dialogs are the browser's own.
func (b *Browser) doActions(ctx context.Context, acts []action.Action) ([]action.Step, error) {
	b.use()
	b.in.Lock()
	defer b.in.Unlock()
	b.dev.ctx = ctx
	defer func() { b.dev.ctx = nil }()
	var steps []action.Step
	for i, a := range acts {
		if err := ctx.Err(); err != nil {
			return steps, err
		}
		if _, err := b.episode(); err != nil {
			return steps, err
		}
		st, err := b.do(ctx, a)
		if err != nil {
			if !env.AgentsFault(err) {
				err = b.failed(string(a.Kind), err)
			}
			return steps, fmt.Errorf("action %d (%s): %w", i+1, a, err)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// do performs one action: the browser's own kinds here, the rest through
// the input interpreter.
func (b *Browser) do(ctx context.Context, a action.Action) (action.Step, error) {
	st := action.Step{Action: a}
	if err := a.Validate(); err != nil {
		return st, fmt.Errorf("%w: %v", env.ErrBadAction, err)
	}
	switch a.Kind {
	case action.Navigate:
		u, err := b.address(ctx, a.Text)
		if err != nil {
			return st, err
		}
		if a.NewTab {
			return st, b.newTab(ctx, u)
		}
		pctx, err := b.page(ctx)
		if err != nil {
			return st, err
		}
		return st, b.navigate(ctx, pctx, u)
	case action.Back:
		return st, b.history(ctx, -1)
	case action.TabSwitch, action.TabClose:
		return st, b.tabAction(ctx, a)
	case action.Select:
		id, err := b.element(ctx, a.Target)
		if err != nil {
			return st, err
		}
		st.Element = b.describeID(ctx, id)
		return st, b.selectOption(ctx, id, a.Text)
	case action.ScrollToText:
		return st, b.scrollToText(ctx, a.Text)
	case action.API:
		out, err := b.api(ctx, a)
		st.Output = out
		return st, err
	}
	return b.input.Do(ctx, a)
}

// navigate opens a URL in a tab and waits for it to load.
func (b *Browser) navigate(ctx context.Context, pctx context.Context, u string) error {
	u = withScheme(u)
	if err := b.reach.check(ctx, u); err != nil {
		return forbidden(u, err)
	}
	nctx, cancel := context.WithTimeout(ctx, navTimeout)
	defer cancel()
	if err := chromedp.Do(pctx, chromedp.Func(func(_ context.Context, t *chromedp.Target) error {
		_, err := chromedp.Navigate(u)(nctx, t)
		return err
	})); err != nil {
		if ferr := b.landed(ctx, pctx, u); ferr != nil {
			return ferr
		}
		return fmt.Errorf("%w: open %s: %v", env.ErrBadAction, u, err)
	}
	return b.landed(ctx, pctx, u)
}

// withScheme gives an address without a scheme https, as a browser's
// address bar does.
func withScheme(u string) string {
	if !strings.Contains(u, "://") && !strings.HasPrefix(u, "about:") && !strings.HasPrefix(u, "data:") {
		return "https://" + u
	}
	return u
}

// address resolves a relative reference (/path, //host/path, ./x, ../x,
// ?query, #fragment) against the active tab's address, as a link on its page
// would; anything else is left to navigate.
func (b *Browser) address(ctx context.Context, u string) (string, error) {
	if !strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "./") && !strings.HasPrefix(u, "../") &&
		!strings.HasPrefix(u, "?") && !strings.HasPrefix(u, "#") {
		return u, nil
	}
	tabs, err := b.Tabs(ctx)
	if err != nil {
		return "", err
	}
	for _, t := range tabs {
		if !t.Active {
			continue
		}
		base, err := url.Parse(t.URL)
		if err != nil || base.Host == "" {
			break
		}
		ref, err := url.Parse(u)
		if err != nil {
			return "", fmt.Errorf("%w: %q is not a URL: %v", env.ErrBadAction, u, err)
		}
		return base.ResolveReference(ref).String(), nil
	}
	return "", fmt.Errorf("%w: %q is relative, and the active tab has no web address to resolve it against", env.ErrBadAction, u)
}

// newTab opens a URL in a new tab of the episode, which becomes active.
func (b *Browser) newTab(ctx context.Context, u string) error {
	ep, err := b.episode()
	if err != nil {
		return err
	}
	if u != "" {
		if err := b.reach.check(ctx, withScheme(u)); err != nil {
			return forbidden(withScheme(u), err) // before a tab opens
		}
	}
	if err := b.tabsFull(ep); err != nil {
		return fmt.Errorf("%w: %v", env.ErrBadAction, err)
	}
	tctx, cancel := chromedp.NewContext(ep.ctx)
	stop := context.AfterFunc(ctx, cancel) // the caller's deadline ends the opening
	err = chromedp.Do(tctx)
	if err != nil {
		stop()
		cancel()
		return fmt.Errorf("open a tab: %w", err)
	}
	t := &tab{id: chromedp.FromContext(tctx).Target.TargetID, ctx: tctx, cancel: cancel}
	err = b.prepareTab(t, ep)
	if !stop() || err != nil {
		cancel()
		return cmp.Or(ctx.Err(), err)
	}
	b.mu.Lock()
	ep.tabs = append(ep.tabs, t)
	ep.active = t
	b.mu.Unlock()
	if u == "" {
		return nil
	}
	return b.navigate(ctx, tctx, u)
}

// history goes back (-1) or forward (+1) in the active tab's history.
func (b *Browser) history(ctx context.Context, delta int) error {
	pctx, err := b.page(ctx)
	if err != nil {
		return err
	}
	nctx, cancel := context.WithTimeout(ctx, navTimeout)
	defer cancel()
	act := chromedp.NavigateBack()
	if delta > 0 {
		act = chromedp.NavigateForward()
	}
	err = chromedp.Do(pctx, chromedp.Func(func(_ context.Context, t *chromedp.Target) error {
		_, err := act(nctx, t)
		return err
	}))
	if err != nil {
		return fmt.Errorf("%w: %v", env.ErrBadAction, err)
	}
	return nil
}

// tabAction switches to or closes the tab a.Tab names: its number among
// the open tabs (from 0, as browser-use counts), or its target id (or
// the id's last 4 characters).
func (b *Browser) tabAction(ctx context.Context, a action.Action) error {
	ep, err := b.episode()
	if err != nil {
		return err
	}
	if _, err := b.syncTabs(ctx, ep); err != nil {
		return err
	}
	b.mu.Lock()
	var t *tab
	if i, err := strconv.Atoi(a.Tab); err == nil && i >= 0 && i < len(ep.tabs) {
		t = ep.tabs[i]
	}
	for _, c := range ep.tabs {
		if t == nil && (string(c.id) == a.Tab || len(a.Tab) >= 4 && strings.HasSuffix(string(c.id), a.Tab)) {
			t = c
		}
	}
	n := len(ep.tabs)
	b.mu.Unlock()
	if t == nil {
		return fmt.Errorf("%w: no tab %q among the %d open (give its number from 0)", env.ErrNotFound, a.Tab, n)
	}
	c := chromedp.FromContext(ep.ctx)
	if a.Kind == action.TabClose {
		if _, err := cdp.Call(ctx, c.Browser, target.CloseTarget, target.CloseTargetParams{TargetID: t.id}); err != nil {
			return fmt.Errorf("close the tab: %w", err)
		}
		b.mu.Lock()
		for i, x := range ep.tabs {
			if x == t {
				ep.tabs = append(ep.tabs[:i], ep.tabs[i+1:]...)
				break
			}
		}
		if ep.active == t {
			ep.active = nil
			if len(ep.tabs) > 0 {
				ep.active = ep.tabs[len(ep.tabs)-1]
			}
		}
		b.mu.Unlock()
		if t.cancel != nil {
			t.cancel()
		}
		return nil
	}
	if _, err := cdp.Call(ctx, c.Browser, target.ActivateTarget, target.ActivateTargetParams{TargetID: t.id}); err != nil {
		return fmt.Errorf("switch to the tab: %w", err)
	}
	if err := b.front(ctx, t); err != nil {
		return err
	}
	b.mu.Lock()
	ep.active = t
	b.mu.Unlock()
	return nil
}

// onTab runs a CDP command in the active tab.
func onTab[P, R any](ctx context.Context, b *Browser, c cdp.Command[P, R], p P) (R, error) {
	pctx, err := b.page(ctx)
	if err != nil {
		var zero R
		return zero, err
	}
	return chromedp.Run(pctx, func(_ context.Context, t *chromedp.Target) (R, error) {
		return cdp.Call(ctx, t, c, p)
	})
}

// element resolves an element target to its id: an index or tag of the
// last marks, an id, or a role and name in the tree.
func (b *Browser) element(ctx context.Context, t *action.Target) (int64, error) {
	if t == nil {
		return 0, fmt.Errorf("%w: the action needs an element", env.ErrBadAction)
	}
	switch {
	case t.ID != 0:
		return t.ID, nil
	case t.Tag > 0 || t.Index != nil:
		m, err := b.mark(ctx, t)
		if err != nil {
			return 0, err
		}
		if m.ID == 0 {
			return 0, fmt.Errorf("%w: element %s has no id", env.ErrNotFound, t)
		}
		return m.ID, nil
	}
	tree, err := b.Tree(ctx)
	if err != nil {
		return 0, err
	}
	r, err := tree.Resolve(*t, b.size())
	if err != nil {
		return 0, err
	}
	if r.ID == 0 {
		return 0, fmt.Errorf("%w: element %s has no id", env.ErrNotFound, t)
	}
	return r.ID, nil
}

// pointOf scrolls an element into view and returns the centre of its
// first box in the viewport.
func (b *Browser) pointOf(ctx context.Context, id int64) (int, int, error) {
	node := cdp.BackendNodeID(id)
	if _, err := onTab(ctx, b, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: node}); err != nil {
		return 0, 0, fmt.Errorf("%w: element id %d: %v", env.ErrNotFound, id, err)
	}
	res, err := onTab(ctx, b, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: node})
	if err != nil {
		return 0, 0, fmt.Errorf("%w: element id %d has no box: %v", env.ErrNotFound, id, err)
	}
	for _, q := range res.Quads {
		if len(q) < 8 {
			continue
		}
		x := (q[0] + q[2] + q[4] + q[6]) / 4
		y := (q[1] + q[3] + q[5] + q[7]) / 4
		if w, h := q[2]-q[0], q[5]-q[1]; w > 0 && h > 0 {
			return int(x), int(y), nil
		}
	}
	return 0, 0, fmt.Errorf("%w: element id %d is not shown", env.ErrBadAction, id)
}

// describeID names an element for the step's record.
func (b *Browser) describeID(ctx context.Context, id int64) string {
	t, err := b.Tree(ctx)
	if err != nil {
		return ""
	}
	var out string
	t.Walk(func(_ string, n *observe.Node) bool {
		if n.ID == id {
			out = observe.Describe(n)
		}
		return out == ""
	})
	return out
}

// callOn calls a JavaScript function with the element as this and the
// arguments, and returns its result as JSON.
func (b *Browser) callOn(ctx context.Context, id int64, fn string, args ...any) (json.RawMessage, error) {
	obj, err := onTab(ctx, b, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: cdp.BackendNodeID(id)})
	if err != nil || obj.Object == nil {
		return nil, fmt.Errorf("%w: element id %d: %v", env.ErrNotFound, id, err)
	}
	var cargs []*runtime.CallArgument
	for _, a := range args {
		v, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		cargs = append(cargs, &runtime.CallArgument{Value: v})
	}
	res, err := onTab(ctx, b, runtime.CallFunctionOn, runtime.CallFunctionOnParams{FunctionDeclaration: fn,
		ObjectID: obj.Object.ObjectID, Arguments: cargs, ReturnByValue: ptr(true), AwaitPromise: ptr(true), UserGesture: ptr(true)})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		msg := res.ExceptionDetails.Text
		if e := res.ExceptionDetails.Exception; e != nil && e.Description != "" {
			msg = e.Description
		}
		return nil, fmt.Errorf("%w: %s", env.ErrBadAction, msg)
	}
	if res.Result == nil {
		return nil, nil
	}
	return json.RawMessage(res.Result.Value), nil
}

// selectJS chooses the option of a select whose text or value is the
// argument, as a person would, and says what it did.
const selectJS = `function (want) {
	if (!(this instanceof HTMLSelectElement)) return "not a select: " + this.tagName.toLowerCase();
	const opts = Array.from(this.options);
	const o = opts.find(o => o.text.trim() === want.trim()) || opts.find(o => o.value === want);
	if (!o) return "no option " + JSON.stringify(want) + " among " + JSON.stringify(opts.map(o => o.text.trim()));
	this.focus();
	o.selected = true;
	this.dispatchEvent(new Event("input", {bubbles: true}));
	this.dispatchEvent(new Event("change", {bubbles: true}));
	return "";
}`

// selectOption chooses an option of a select element by its text.
func (b *Browser) selectOption(ctx context.Context, id int64, text string) error {
	res, err := b.callOn(ctx, id, selectJS, text)
	if err != nil {
		return err
	}
	var msg string
	json.Unmarshal(res, &msg)
	if msg != "" {
		return fmt.Errorf("%w: %s", env.ErrBadAction, msg)
	}
	return nil
}

// optionsJS lists a select's options.
const optionsJS = `function () {
	if (!(this instanceof HTMLSelectElement)) return null;
	return Array.from(this.options).map((o, i) => i + ": " + o.text.trim() + (o.selected ? " (selected)" : "")).join("\n");
}`

// scrollTextJS scrolls the first text that holds the argument into view.
const scrollTextJS = `(want) => {
	const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = w.nextNode(); n; n = w.nextNode()) {
		if (n.textContent.includes(want) && n.parentElement && n.parentElement.getClientRects().length) {
			n.parentElement.scrollIntoView({block: "center"});
			return true;
		}
	}
	return false;
}`

// scrollToText scrolls until a text shows.
func (b *Browser) scrollToText(ctx context.Context, text string) error {
	arg, _ := json.Marshal(text)
	res, err := onTab(ctx, b, runtime.Evaluate, runtime.EvaluateParams{Expression: "(" + scrollTextJS + ")(" + string(arg) + ")",
		ReturnByValue: ptr(true), UserGesture: ptr(true)})
	if err != nil {
		return err
	}
	if res.Result == nil || string(res.Result.Value) != "true" {
		return fmt.Errorf("%w: no text %q on the page", env.ErrNotFound, text)
	}
	return nil
}

// APIs are the browser's own actions that the unified space names by API
// (browser-use's that have no kind of their own, and the dialog's).
var APIs = []string{"go_forward", "reload", "accept_dialog", "dismiss_dialog", "get_dropdown_options", "upload_file", "upload_file_to_element"}

// api performs one of APIs.
func (b *Browser) api(ctx context.Context, a action.Action) (string, error) {
	str := func(k string) string { s, _ := a.Args[k].(string); return s }
	index := func() (*action.Target, error) {
		switch v := a.Args["index"].(type) {
		case float64:
			i := int(v)
			return &action.Target{Index: &i}, nil
		case int:
			return &action.Target{Index: &v}, nil
		}
		if id, ok := a.Args["id"].(float64); ok {
			return &action.Target{ID: int64(id)}, nil
		}
		return nil, fmt.Errorf("%w: %s needs the element's index", env.ErrBadAction, a.Name)
	}
	switch a.Name {
	case "go_forward":
		return "", b.history(ctx, +1)
	case "reload":
		_, err := onTab(ctx, b, page.Reload, page.ReloadParams{})
		return "", err
	case "accept_dialog":
		var text *string
		if t, ok := a.Args["text"].(string); ok {
			text = &t
		}
		return "", b.answer(ctx, true, text)
	case "dismiss_dialog":
		return "", b.answer(ctx, false, nil)
	case "get_dropdown_options":
		t, err := index()
		if err != nil {
			return "", err
		}
		id, err := b.element(ctx, t)
		if err != nil {
			return "", err
		}
		res, err := b.callOn(ctx, id, optionsJS)
		if err != nil {
			return "", err
		}
		var out *string
		json.Unmarshal(res, &out)
		if out == nil {
			return "", fmt.Errorf("%w: element %s is not a select", env.ErrBadAction, t)
		}
		return *out, nil
	case "upload_file", "upload_file_to_element":
		t, err := index()
		if err != nil {
			return "", err
		}
		id, err := b.element(ctx, t)
		if err != nil {
			return "", err
		}
		p := str("path")
		if p == "" {
			p = str("file")
		}
		abs, err := b.path(p)
		if err != nil {
			return "", err
		}
		if _, err := b.ReadFile(ctx, p); err != nil {
			return "", err
		}
		_, err = onTab(ctx, b, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{abs}, BackendNodeID: cdp.BackendNodeID(id)})
		if err != nil {
			return "", fmt.Errorf("%w: upload to element %s: %v", env.ErrBadAction, t, err)
		}
		return "", nil
	}
	return "", fmt.Errorf("%w: no API %q in the browser (it has %s)", env.ErrBadAction, a.Name, strings.Join(APIs, ", "))
}

// place gives the input interpreter the page's elements.
type place struct{ b *Browser }

// Target scrolls the element into view and returns its centre.
func (p place) Target(ctx context.Context, t *action.Target) (int, int, int, error) {
	matches := 0
	if t.Role != "" || t.Name != "" {
		tree, err := p.b.Tree(ctx)
		if err != nil {
			return 0, 0, 0, err
		}
		r, err := tree.Resolve(*t, p.b.size())
		if err != nil {
			return 0, 0, 0, err
		}
		if r.Ambiguous {
			matches = r.Matches
		}
		if r.ID == 0 { // a dialog's button
			x, y := r.Box.Center()
			return x, y, matches, nil
		}
		x, y, err := p.b.pointOf(ctx, r.ID)
		return x, y, matches, err
	}
	if t.Tag > 0 || t.Index != nil {
		m, err := p.b.mark(ctx, t)
		if err != nil {
			return 0, 0, 0, err
		}
		if m.ID == 0 { // a dialog's button: where it was drawn
			x, y := m.Center()
			return x, y, 0, nil
		}
		x, y, err := p.b.pointOf(ctx, m.ID)
		return x, y, 0, err
	}
	id, err := p.b.element(ctx, t)
	if err != nil {
		return 0, 0, 0, err
	}
	x, y, err := p.b.pointOf(ctx, id)
	return x, y, 0, err
}

// Describe names the element under a point: the page's hit test and that
// node's ancestors, or the tree where that fails (a dialog is open).
func (p place) Describe(ctx context.Context, x, y int) string {
	if p.b.dialogOpen() == nil {
		if pctx, err := p.b.page(ctx); err == nil {
			if d, err := pagetree.At(pctx, x, y); err == nil {
				return d
			}
		}
	}
	t, err := p.b.Tree(ctx)
	if err != nil {
		return ""
	}
	if n := t.At(x, y); n != nil {
		return observe.Describe(n.Node)
	}
	return ""
}

// Shell refuses: the browser has no shell.
func (p place) Shell(context.Context, string) (string, error) {
	return "", p.b.missing("a code action", task.CapCommands)
}

// mark looks up the element a tag or index names among the marks of the
// last observation with marks; before any (a replayed trajectory, an agent
// shown screenshots only), the page is numbered as it is now.
func (b *Browser) mark(ctx context.Context, t *action.Target) (observe.Mark, error) {
	b.mu.Lock()
	marks := b.marks
	b.mu.Unlock()
	if marks == nil {
		tree, err := b.Tree(ctx)
		if err != nil {
			return observe.Mark{}, err
		}
		marks = b.marksOf(tree)
	}
	return observe.LookupTarget(marks, *t)
}
