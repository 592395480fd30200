// Package devtools reads a page's state over the Chrome DevTools protocol
// for the checks' page probes, the same way for every environment that
// shows a Chromium page: the browser environment's own tabs, and the
// Chromium that an X desktop starts for a browser task.
package devtools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/proctor-eval/proctor/observe"
)

// EvalTimeout bounds a JavaScript expression's evaluation.
const EvalTimeout = 10 * time.Second

// Eval evaluates expr in the target's page, awaiting a promise, and
// returns its value as text: a string as it is, anything else as JSON.
// null says the value was null or undefined. A protocol failure is
// returned as it is; an exception in the page is an Error.
func Eval(ctx context.Context, t *chromedp.Target, expr string) (v string, null bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, EvalTimeout)
	defer cancel()
	res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: expr,
		ReturnByValue: new(true), AwaitPromise: new(true), Timeout: runtime.TimeDelta(EvalTimeout.Milliseconds())})
	if err != nil {
		return "", false, err
	}
	if d := res.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = d.Exception.Description
		}
		return "", false, Error(fmt.Sprintf("evaluate %q: %s", expr, msg))
	}
	if res.Result == nil || len(res.Result.Value) == 0 || string(res.Result.Value) == "null" {
		return "", true, nil
	}
	var s string
	if json.Unmarshal(res.Result.Value, &s) == nil {
		return s, false, nil
	}
	return string(res.Result.Value), false, nil
}

// Read reads a page probe in the target's page. found is false where
// there is nothing to read: no element matches the selector, no cookie or
// storage item has the name, the URL has no such parameter, the
// expression's value is null or undefined.
func Read(ctx context.Context, t *chromedp.Target, q observe.PageQuery) (string, bool, error) {
	if q.Cookie != "" {
		res, err := cdp.Call(ctx, t, network.GetCookies, network.GetCookiesParams{})
		if err != nil {
			return "", false, err
		}
		for _, c := range res.Cookies {
			if c.Name == q.Cookie {
				return c.Value, true, nil
			}
		}
		return "", false, nil
	}
	v, null, err := Eval(ctx, t, q.Script())
	return v, !null, err
}
