package guest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
)

// Client is an env.Env served by a guest daemon.
type Client struct {
	base  string
	token string
	http  *http.Client
}

var _ env.Env = (*Client)(nil)

// Dial returns a client for the daemon at base ("http://127.0.0.1:7400")
// and checks that it answers and accepts the token.
func Dial(ctx context.Context, base, token string) (*Client, error) {
	c := &Client{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{}}
	if err := c.call(ctx, "GET", PathHealth, nil, nil, nil); err != nil {
		return nil, fmt.Errorf("guest at %s: %w", base, err)
	}
	return c, nil
}

// ErrUnauthorized is returned when the daemon refuses the token.
const ErrUnauthorized = env.Error("unauthorized: wrong or missing token")

// kindErrors turns an error kind back into a sentinel error.
var kindErrors = map[string]error{
	"not_found":   env.ErrNotFound,
	"forbidden":   env.ErrForbidden,
	"bad_action":  env.ErrBadAction,
	"closed":      env.ErrClosed,
	"bad_request": ErrBadRequest,
	"too_large":   ErrBadRequest,
}

// kindError is the error of an answer of the given kind. Any other kind
// (internal, or one from a newer daemon) is a plain error: the daemon's
// trouble, not the caller's.
func kindError(kind, msg string) error {
	if kind == "unauthorized" {
		return ErrUnauthorized
	}
	if err, ok := kindErrors[kind]; ok {
		return fmt.Errorf("%w: %s", err, msg)
	}
	return fmt.Errorf("guest: %s", msg)
}

// call sends a request; in is JSON-encoded unless it is []byte, out is
// JSON-decoded unless it is *[]byte. hdr receives the response headers.
func (c *Client) call(ctx context.Context, method, path string, in, out any, hdr *http.Header) error {
	var body io.Reader
	ctype := ""
	switch v := in.(type) {
	case nil:
	case []byte:
		body, ctype = bytes.NewReader(v), "application/octet-stream"
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		body, ctype = bytes.NewReader(b), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", env.ErrClosed, err)
	}
	defer resp.Body.Close()
	if hdr != nil {
		*hdr = resp.Header
	}
	if resp.StatusCode >= 300 {
		var e apiError
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if json.Unmarshal(b, &e) != nil || e.Kind == "" {
			return fmt.Errorf("guest: %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
		}
		return kindError(e.Kind, e.Error)
	}
	switch v := out.(type) {
	case nil:
		_, err = io.Copy(io.Discard, resp.Body)
	case *[]byte:
		*v, err = io.ReadAll(resp.Body)
	default:
		err = json.NewDecoder(resp.Body).Decode(out)
	}
	return err
}

// Info describes the environment.
func (c *Client) Info(ctx context.Context) (env.Info, error) {
	var i env.Info
	return i, c.call(ctx, "GET", PathInfo, nil, &i, nil)
}

// Screenshot captures the screen.
func (c *Client) Screenshot(ctx context.Context, o env.ShotOptions) (env.Shot, error) {
	q := url.Values{}
	if o.Scale > 0 && o.Scale != 1 {
		q.Set("scale", strconv.FormatFloat(o.Scale, 'g', -1, 64))
	}
	if o.JPEG > 0 {
		q.Set("jpeg", strconv.Itoa(o.JPEG))
	}
	if o.Cursor {
		q.Set("cursor", "1")
	}
	if o.Marks {
		q.Set("marks", "1")
	}
	var data []byte
	var hdr http.Header
	if err := c.call(ctx, "GET", PathScreenshot+"?"+q.Encode(), nil, &data, &hdr); err != nil {
		return env.Shot{}, err
	}
	shot := env.Shot{Data: data, Format: strings.TrimPrefix(hdr.Get("Content-Type"), "image/")}
	if m := hdr.Get(MarksHeader); m != "" {
		if err := json.Unmarshal([]byte(m), &shot.Marks); err != nil {
			return env.Shot{}, fmt.Errorf("guest: bad marks header: %v", err)
		}
	}
	return shot, nil
}

// Tree reads the accessibility tree.
func (c *Client) Tree(ctx context.Context) (*observe.Tree, error) {
	var t observe.Tree
	return &t, c.call(ctx, "GET", PathTree, nil, &t, nil)
}

// TreeText reads the filtered, linearised tree a model sees.
func (c *Client) TreeText(ctx context.Context) (string, error) {
	var b []byte
	err := c.call(ctx, "GET", PathTree+"?format=text", nil, &b, nil)
	return string(b), err
}

// Do performs actions. A request the daemon refused as malformed is
// env.ErrBadAction as well as ErrBadRequest: the actions came from the
// agent, so the runner tells the agent instead of ending the run.
func (c *Client) Do(ctx context.Context, acts []action.Action) ([]env.Step, error) {
	var resp DoResponse
	err := c.call(ctx, "POST", PathDo, DoRequest{Actions: acts}, &resp, nil)
	if err == nil && resp.Error != nil {
		err = kindError(resp.Error.Kind, resp.Error.Error)
	}
	if errors.Is(err, ErrBadRequest) && !errors.Is(err, env.ErrBadAction) {
		err = fmt.Errorf("%w: %w", env.ErrBadAction, err)
	}
	return resp.Steps, err
}

// Run runs a command.
func (c *Client) Run(ctx context.Context, cmd string, timeout time.Duration) (check.CommandResult, error) {
	var res check.CommandResult
	return res, c.call(ctx, "POST", PathRun, RunRequest{Command: cmd, TimeoutMS: int(timeout / time.Millisecond)}, &res, nil)
}

// ReadFile reads a file; a missing file is check.ErrNotExist.
func (c *Client) ReadFile(ctx context.Context, path string) ([]byte, error) {
	var b []byte
	err := c.call(ctx, "GET", PathFile+"?path="+url.QueryEscape(path), nil, &b, nil)
	if errors.Is(err, env.ErrNotFound) {
		return nil, fmt.Errorf("%s: %w", path, check.ErrNotExist)
	}
	return b, err
}

// WriteFile writes a file.
func (c *Client) WriteFile(ctx context.Context, path string, data []byte) error {
	return c.call(ctx, "PUT", PathFile+"?path="+url.QueryEscape(path), data, nil, nil)
}

// Windows lists the windows.
func (c *Client) Windows(ctx context.Context) ([]env.Window, error) {
	var ws []env.Window
	return ws, c.call(ctx, "GET", PathWindows, nil, &ws, nil)
}

// Elements finds accessibility elements.
func (c *Client) Elements(ctx context.Context, q check.ElementQuery) ([]check.Element, error) {
	var els []check.Element
	return els, c.call(ctx, "POST", PathElements, q, &els, nil)
}

// Clipboard reads the clipboard.
func (c *Client) Clipboard(ctx context.Context) (string, error) {
	var r ClipboardResponse
	return r.Text, c.call(ctx, "GET", PathClipboard, nil, &r, nil)
}

// Reset resets the environment and runs the setup.
func (c *Client) Reset(ctx context.Context, s env.Setup) error {
	return c.call(ctx, "POST", PathReset, s, nil, nil)
}

// Close closes idle connections; the daemon keeps running.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}
