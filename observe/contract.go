package observe

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
)

// What an environment answers besides screenshots and trees: the types of
// the environment contract that the checks read too. They live here, in
// the data model, so that package env (which implements the contract) and
// package check (which reads it) share them without importing each other.

// DefaultCommandTimeout bounds a command run in the environment (a
// check's command among them) when none is given.
const DefaultCommandTimeout = 30 * time.Second

// CommandResult is the outcome of a command run in the environment.
type CommandResult struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exit_code"`
}

// Element is an accessibility node found by a query.
type Element struct {
	App    string     `json:"app,omitempty"`
	Role   string     `json:"role"`
	Name   string     `json:"name"`
	Text   string     `json:"text,omitempty"`
	Box    action.Box `json:"box"`
	States []string   `json:"states,omitempty"`
}

// ElementQuery selects accessibility nodes. Empty fields match anything;
// Name and Text match exactly unless Contains is set (names without the
// spaces around them, as SameName compares).
type ElementQuery struct {
	Role     string `json:"role,omitempty" yaml:"role,omitempty"`
	Name     string `json:"name,omitempty" yaml:"name,omitempty"`
	Text     string `json:"text,omitempty" yaml:"text,omitempty"`
	App      string `json:"app,omitempty" yaml:"app,omitempty"`
	Contains bool   `json:"contains,omitempty" yaml:"contains,omitempty"`
}

// Matches reports whether e satisfies the query.
func (q ElementQuery) Matches(e Element) bool {
	eq := func(want, got string) bool {
		if want == "" {
			return true
		}
		if q.Contains {
			return strings.Contains(strings.ToLower(got), strings.ToLower(want))
		}
		return got == want
	}
	name := eq(q.Name, e.Name) || !q.Contains && SameName(q.Name, e.Name)
	return (q.App == "" || strings.EqualFold(q.App, e.App)) && (q.Role == "" || SameRole(q.Role, e.Role)) && name && eq(q.Text, e.Text)
}

// Describe renders the query for messages: push button "Save" in kcalc.
func (q ElementQuery) Describe() string {
	var parts []string
	if q.Role != "" {
		parts = append(parts, q.Role)
	}
	if q.Name != "" {
		parts = append(parts, fmt.Sprintf("%q", q.Name))
	}
	if q.Text != "" {
		parts = append(parts, fmt.Sprintf("with text %q", q.Text))
	}
	if q.App != "" {
		parts = append(parts, "in "+q.App)
	}
	if len(parts) == 0 {
		return "(any)"
	}
	return strings.Join(parts, " ")
}

// PageQuery reads the web page a browser shows (its active tab). Exactly
// one of URL, Text, Selector, JS, Cookie and Storage is set.
type PageQuery struct {
	// URL reads the page's address; with Param, one query parameter's
	// value.
	URL   bool   `json:"url,omitempty" yaml:"url,omitempty"`
	Param string `json:"param,omitempty" yaml:"param,omitempty"`
	// Text reads the page's visible text (innerText).
	Text bool `json:"text,omitempty" yaml:"text,omitempty"`
	// Selector reads the first element a CSS selector matches: its text,
	// or Attr ("value" for a field's value, else an attribute's value),
	// or with Count the number of matching elements.
	Selector string `json:"selector,omitempty" yaml:"selector,omitempty"`
	Attr     string `json:"attr,omitempty" yaml:"attr,omitempty"`
	Count    bool   `json:"count,omitempty" yaml:"count,omitempty"`
	// JS reads a JavaScript expression's value (a promise is awaited):
	// a string as it is, anything else as JSON; null or undefined is
	// nothing to read.
	JS string `json:"js,omitempty" yaml:"js,omitempty"`
	// Cookie reads the value of the page's cookie of that name (HttpOnly
	// ones too).
	Cookie string `json:"cookie,omitempty" yaml:"cookie,omitempty"`
	// Storage reads the item of the page's localStorage with that key.
	Storage string `json:"local_storage,omitempty" yaml:"local_storage,omitempty"`
}

// Validate says what is wrong with the query.
func (q PageQuery) Validate() error {
	n := 0
	for _, set := range []bool{q.URL, q.Text, q.Selector != "", q.JS != "", q.Cookie != "", q.Storage != ""} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return fmt.Errorf("a page probe needs exactly one of url, text, selector, js, cookie, local_storage")
	case q.Param != "" && !q.URL:
		return fmt.Errorf("param reads a query parameter of the url: give url: true")
	case (q.Attr != "" || q.Count) && q.Selector == "":
		return fmt.Errorf("attr and count apply to a selector")
	case q.Attr != "" && q.Count:
		return fmt.Errorf("give attr or count, not both")
	}
	return nil
}

// Describe names the query in messages.
func (q PageQuery) Describe() string {
	switch {
	case q.URL && q.Param != "":
		return "the page's URL parameter " + strconv.Quote(q.Param)
	case q.URL:
		return "the page's URL"
	case q.Text:
		return "the page's text"
	case q.Selector != "" && q.Count:
		return "the number of " + strconv.Quote(q.Selector)
	case q.Selector != "" && q.Attr != "":
		return q.Attr + " of " + strconv.Quote(q.Selector)
	case q.Selector != "":
		return "the text of " + strconv.Quote(q.Selector)
	case q.JS != "":
		return "the JavaScript " + strconv.Quote(q.JS)
	case q.Cookie != "":
		return "the cookie " + strconv.Quote(q.Cookie)
	}
	return "the local storage item " + strconv.Quote(q.Storage)
}

// Script is the JavaScript expression that reads the query in the page,
// for every environment that reads pages over the DevTools protocol; it is
// empty for a cookie, which the protocol reads itself (HttpOnly ones too).
func (q PageQuery) Script() string {
	arg := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	switch {
	case q.URL && q.Param != "":
		return "new URL(location.href).searchParams.get(" + arg(q.Param) + ")"
	case q.URL:
		return "location.href"
	case q.Text:
		return "document.body ? document.body.innerText : ''"
	case q.Selector != "" && q.Count:
		return "String(document.querySelectorAll(" + arg(q.Selector) + ").length)"
	case q.Selector != "" && q.Attr == "value":
		return "(e => e ? String(e.value ?? '') : null)(document.querySelector(" + arg(q.Selector) + "))"
	case q.Selector != "" && q.Attr != "":
		return "(e => e ? e.getAttribute(" + arg(q.Attr) + ") : null)(document.querySelector(" + arg(q.Selector) + "))"
	case q.Selector != "":
		return "(e => e ? e.textContent : null)(document.querySelector(" + arg(q.Selector) + "))"
	case q.Storage != "":
		return "localStorage.getItem(" + arg(q.Storage) + ")"
	case q.Cookie != "":
		return ""
	}
	return q.JS
}
