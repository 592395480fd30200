package xdesktop

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

const pageHTML = `<!doctype html><title>Orders</title>
<label for=n>Customer</label><input id=n>
<button onclick="document.cookie='last='+encodeURIComponent(n.value);localStorage.setItem('saved',n.value);s.textContent='Saved '+n.value">Save</button>
<p id=s role=status>Nothing saved</p>`

// TestBrowserTaskOnTheDesktop runs a browser task's page in Chromium on
// the desktop: its open step starts Chromium, the agent's element actions
// go through AT-SPI and the X server as on any desktop, and the checks'
// page probes read the page over the DevTools protocol.
func TestBrowserTaskOnTheDesktop(t *testing.T) {
	need(t, "chromium")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(pageHTML))
	}))
	defer srv.Close()
	d := start(t)
	c := ctx(t)
	if _, _, err := d.Page(c, observe.PageQuery{URL: true}); !errors.Is(err, env.ErrBadAction) {
		t.Fatalf("a page probe with no Chromium running: %v, want ErrBadAction", err)
	}
	if info, _ := d.Info(c); !info.Has(task.CapPage) {
		t.Errorf("caps %v lack page", info.Caps)
	}
	err := d.Reset(c, env.Setup{Type: "browser", Steps: []task.Step{
		{Open: &task.Open{URL: srv.URL + "/orders?team=east"}},
		{WaitElement: &task.WaitElement{Element: observe.ElementQuery{Role: "push button", Name: "Save"}, Timeout: duration.Duration(60 * time.Second)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Do(c, []action.Action{
		{Kind: action.Click, Target: &action.Target{Role: "entry", Name: "Customer"}},
		{Kind: action.Type, Text: "Ada Lovelace"},
		{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "Save"}},
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]observe.PageQuery{
		srv.URL + "/orders?team=east": {URL: true},
		"east":                        {URL: true, Param: "team"},
		"Saved Ada Lovelace":          {Selector: "#s"},
		"Ada Lovelace":                {Storage: "saved"},
		"Ada%20Lovelace":              {Cookie: "last"},
		"2":                           {JS: "document.querySelectorAll('button, input').length"},
	}
	deadline := time.Now().Add(10 * time.Second)
	for v, q := range want {
		for {
			got, found, err := d.Page(c, q)
			if err != nil {
				t.Fatalf("%s: %v", q.Describe(), err)
			}
			if found && got == v {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s = %q (found %v), want %q", q.Describe(), got, found, v)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if _, found, err := d.Page(c, observe.PageQuery{Selector: "#missing"}); err != nil || found {
		t.Errorf("a selector that matches nothing: found %v, %v", found, err)
	}
	if _, _, err := d.Page(c, observe.PageQuery{JS: "nosuchname.x"}); err == nil || !strings.Contains(err.Error(), "nosuchname") {
		t.Errorf("an exception in the page: %v", err)
	}
	// The next episode's home has no profile: nothing is left to read.
	if err := d.Reset(c, env.Setup{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Page(c, observe.PageQuery{URL: true}); !errors.Is(err, env.ErrBadAction) {
		t.Errorf("a page probe after a reset: %v, want ErrBadAction", err)
	}
}
