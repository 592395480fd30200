package browser

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/chromedp/cdproto/network"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
)

// Page reads the active tab's page for a check's page probe. found is
// false where there is nothing to read: no element matches the selector,
// no cookie or storage item has the name, the URL has no such parameter,
// the expression's value is null or undefined.
func (b *Browser) Page(ctx context.Context, q observe.PageQuery) (string, bool, error) {
	if err := q.Validate(); err != nil {
		return "", false, fmt.Errorf("%w: %v", env.ErrBadAction, err)
	}
	arg := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	var expr string
	switch {
	case q.URL && q.Param != "":
		expr = "new URL(location.href).searchParams.get(" + arg(q.Param) + ")"
	case q.URL:
		expr = "location.href"
	case q.Text:
		expr = "document.body ? document.body.innerText : ''"
	case q.Selector != "" && q.Count:
		expr = "String(document.querySelectorAll(" + arg(q.Selector) + ").length)"
	case q.Selector != "" && q.Attr == "value":
		expr = "(e => e ? String(e.value ?? '') : null)(document.querySelector(" + arg(q.Selector) + "))"
	case q.Selector != "" && q.Attr != "":
		expr = "(e => e ? e.getAttribute(" + arg(q.Attr) + ") : null)(document.querySelector(" + arg(q.Selector) + "))"
	case q.Selector != "":
		expr = "(e => e ? e.textContent : null)(document.querySelector(" + arg(q.Selector) + "))"
	case q.Storage != "":
		expr = "localStorage.getItem(" + arg(q.Storage) + ")"
	case q.Cookie != "":
		res, err := onTab(ctx, b, network.GetCookies, network.GetCookiesParams{})
		if err != nil {
			return "", false, b.failed("read the cookies", err)
		}
		for _, c := range res.Cookies {
			if c.Name == q.Cookie {
				return c.Value, true, nil
			}
		}
		return "", false, nil
	default:
		expr = q.JS
	}
	v, isNull, err := b.eval(ctx, expr)
	if err != nil {
		return "", false, err
	}
	return v, !isNull, nil
}
