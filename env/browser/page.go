package browser

import (
	"context"
	"errors"
	"fmt"

	"github.com/chromedp/chromedp"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/internal/devtools"
	"github.com/proctor-eval/proctor/observe"
)

// pageQuery reads the active tab's page for a check's page probe. found is
// false where there is nothing to read: no element matches the selector,
// no cookie or storage item has the name, the URL has no such parameter,
// the expression's value is null or undefined.
func (b *Browser) pageQuery(ctx context.Context, q observe.PageQuery) (string, bool, error) {
	b.use()
	if err := q.Validate(); err != nil {
		return "", false, fmt.Errorf("%w: %v", env.ErrBadAction, err)
	}
	pctx, err := b.page(ctx)
	if err != nil {
		return "", false, err
	}
	type read struct {
		v     string
		found bool
	}
	r, err := chromedp.Run(pctx, func(_ context.Context, t *chromedp.Target) (read, error) {
		v, found, err := devtools.Read(ctx, t, q)
		return read{v, found}, err
	})
	if err != nil {
		var js devtools.Error
		if errors.As(err, &js) {
			return "", false, err
		}
		return "", false, b.failed("read "+q.Describe(), err)
	}
	return r.v, r.found, nil
}
