// Package remote is an environment served by a guest daemon ("proctor
// guest") on another machine, a VM, a container or a pod: Client is an
// env.Env over the daemon's HTTPS API, reached at a Target that pins the
// daemon's certificate by fingerprint, so that the bearer token can cross
// a network. wire.go is the protocol itself, which the daemon (package
// guest) serves.
package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
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
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
)

// Client is an env.Env served by a guest daemon.
type Client struct {
	target  Target
	base    string // target.Base()
	token   string
	api     string // the API version it declares
	version VersionInfo
	http    *http.Client
}

var _ env.Env = (*Client)(nil)

// apiVersion is the version a client declares when it is dialled,
// APIVersion but for tests, which set it to play a client of another
// version.
var apiVersion = APIVersion

// daemonError is an error about the daemon as a whole, not about one
// request: its message names the daemon, and errors.Is finds its sentinel
// and its cause.
type daemonError struct {
	msg      string
	sentinel error
	cause    error // nil: none
}

func (e *daemonError) Error() string { return e.msg }

func (e *daemonError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}

func daemonErrorf(sentinel, cause error, format string, args ...any) error {
	return &daemonError{msg: fmt.Sprintf(format, args...), sentinel: sentinel, cause: cause}
}

// Dial returns a client for the daemon at target, in the form ParseTarget
// reads ("https://10.0.0.5:7400#sha256=…", as the daemon prints it at
// start), and checks that the daemon answers, speaks this API version and
// accepts the token. Its errors name the daemon and are ErrUnauthorized,
// ErrFingerprint, ErrTLSMismatch, ErrVersion, env.ErrClosed (unreachable:
// errors.Is finds the network's error too) or a target ParseTarget
// refused.
func Dial(ctx context.Context, target, token string) (*Client, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	c := &Client{target: t, base: t.Base(), token: token, api: apiVersion, http: newHTTPClient(t)}
	var hdr http.Header
	err = c.call(ctx, "GET", PathVersion, nil, &c.version, &hdr)
	if _, ok := err.(*daemonError); ok {
		return nil, err
	}
	// A daemon from before the version handshake answers without the
	// header (and 404 here); so does something that is not a daemon.
	if hdr != nil && hdr.Get(APIHeader) == "" {
		return nil, daemonErrorf(ErrVersion, nil, "guest at %s does not say which API version it speaks (a proctor from before version 1, or not a proctor daemon); this proctor speaks %s (upgrade one of them)", c.base, c.api)
	}
	if err != nil {
		return nil, fmt.Errorf("guest at %s: %w", c.base, err)
	}
	return c, nil
}

// Version returns the daemon's API version and build, as it gave them to
// Dial.
func (c *Client) Version() VersionInfo { return c.version }

// newHTTPClient returns an HTTP client for the target: with its pin the
// certificate is checked against the fingerprint alone.
func newHTTPClient(t Target) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if t.Fingerprint != "" {
		want := t.Fingerprint
		tr.TLSClientConfig = &tls.Config{
			// The pin replaces the CA and host name checks, not skips
			// them: a self-signed certificate names no authority, and the
			// daemon is reached by whatever address routes to it, but only
			// the exact certificate passes VerifyConnection, which runs on
			// every handshake, before any request is sent.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				got := "none"
				if len(cs.PeerCertificates) > 0 {
					got = Fingerprint(cs.PeerCertificates[0].Raw)
				}
				if got != want {
					return &daemonError{sentinel: ErrFingerprint, msg: fmt.Sprintf(
						"guest at %s presented the certificate sha256=%s, not the pinned sha256=%s: another daemon, a restarted one (each start makes a new certificate) or someone in between; the token was not sent",
						t.Base(), got, want)}
				}
				return nil
			},
		}
	}
	return &http.Client{
		Transport: tr,
		// The API never redirects: a redirect is not followed, so that
		// the token goes nowhere but the target.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// transportError turns the error of a request that got no answer into
// one that names the daemon and, where the cause is known, says what to
// do. Any other is env.ErrClosed.
func (c *Client) transportError(method, path string, err error) error {
	inner := err
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		inner = ue.Err // it repeats the URL
	}
	var de *daemonError
	var rh tls.RecordHeaderError
	var cv *tls.CertificateVerificationError
	switch {
	case errors.As(err, &de):
		return de
	case strings.Contains(inner.Error(), httpsToHTTP):
		return daemonErrorf(ErrTLSMismatch, err, "guest at %s speaks plain HTTP (started with --insecure?): use http://%s, or restart it without --insecure", c.base, c.target.Host)
	case errors.As(err, &rh):
		return daemonErrorf(ErrTLSMismatch, err, "guest at %s does not speak TLS (%v): is it a proctor daemon?", c.base, inner)
	case errors.As(err, &cv):
		return daemonErrorf(ErrFingerprint, err, "guest at %s: its certificate is not one this machine trusts (%v): pin it with the https://…#sha256=… address the daemon printed at start", c.base, cv.Err)
	}
	return daemonErrorf(env.ErrClosed, err, "guest at %s: cannot reach the daemon (%s %s): %v", c.base, method, path, inner)
}

// httpToHTTPS is in what net/http answers a plain HTTP request on a TLS
// port; httpsToHTTP in the error of its client when a TLS handshake is
// answered in plain HTTP, an errors.New that only its text tells apart.
var httpToHTTPS = []byte("HTTP request to an HTTPS server")

const httpsToHTTP = "server gave HTTP response to HTTPS client"

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
	req.Header.Set(APIHeader, c.api)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(method, path, err)
	}
	defer resp.Body.Close()
	if hdr != nil {
		*hdr = resp.Header
	}
	// Checked first: a daemon of another version may answer anything.
	if v := resp.Header.Get(APIHeader); v != "" && v != c.api {
		return daemonErrorf(ErrVersion, nil, "guest at %s speaks API version %s; this proctor speaks %s (upgrade one of them)", c.base, ShortVersion(v), c.api)
	}
	if resp.StatusCode >= 300 {
		var e ErrorBody
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		switch {
		case resp.StatusCode == http.StatusBadRequest && bytes.Contains(b, httpToHTTPS):
			return daemonErrorf(ErrTLSMismatch, nil, "guest at %s speaks TLS: use https://%s#sha256=… with the fingerprint the daemon printed at start", c.base, c.target.Host)
		case json.Unmarshal(b, &e) != nil || e.Kind == "":
			// Not the daemon's JSON (a proxy, say): a little of it, so
			// that nothing a stranger echoes fills a run's records.
			msg := string(bytes.TrimSpace(b))
			if len(msg) > 300 {
				msg = strings.ToValidUTF8(msg[:300], "") + "…"
			}
			return fmt.Errorf("guest: %s %s: %s: %s", method, path, resp.Status, msg)
		case e.Kind == KindUnauthorized:
			return daemonErrorf(ErrUnauthorized, nil, "guest at %s: %v", c.base, ErrUnauthorized)
		case e.Kind == KindVersion: // without the header: not from this package's daemon
			return daemonErrorf(ErrVersion, nil, "guest at %s: %s", c.base, e.Error)
		}
		return KindError(e.Kind, e.Error)
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
func (c *Client) Do(ctx context.Context, acts []action.Action) ([]action.Step, error) {
	var resp DoResponse
	err := c.call(ctx, "POST", PathDo, DoRequest{Actions: acts}, &resp, nil)
	if err == nil && resp.Error != nil {
		err = KindError(resp.Error.Kind, resp.Error.Error)
	}
	if errors.Is(err, ErrBadRequest) && !errors.Is(err, env.ErrBadAction) {
		err = fmt.Errorf("%w: %w", env.ErrBadAction, err)
	}
	return resp.Steps, err
}

// Run runs a command.
func (c *Client) Run(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error) {
	var res observe.CommandResult
	return res, c.call(ctx, "POST", PathRun, RunRequest{Command: cmd, TimeoutMS: int(timeout / time.Millisecond)}, &res, nil)
}

// ReadFile reads a file; a missing file is env.ErrNotFound.
func (c *Client) ReadFile(ctx context.Context, path string) ([]byte, error) {
	var b []byte
	err := c.call(ctx, "GET", PathFile+"?path="+url.QueryEscape(path), nil, &b, nil)
	if errors.Is(err, env.ErrNotFound) {
		return nil, fmt.Errorf("%s: %w", path, err) // name the file
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
func (c *Client) Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	var els []observe.Element
	return els, c.call(ctx, "POST", PathElements, q, &els, nil)
}

// Clipboard reads the clipboard.
func (c *Client) Clipboard(ctx context.Context) (string, error) {
	var r ClipboardResponse
	return r.Text, c.call(ctx, "GET", PathClipboard, nil, &r, nil)
}

// RunSteps runs a task's steps after the agent on the guest's
// environment as it is.
func (c *Client) RunSteps(ctx context.Context, s env.Setup) error {
	return c.call(ctx, "POST", PathSteps, s, nil, nil)
}

// Reset resets the environment and runs the setup.
func (c *Client) Reset(ctx context.Context, s env.Setup) error {
	return c.call(ctx, "POST", PathReset, s, nil, nil)
}

// LoopbackTransport sends HTTP requests to port on the remote desktop's
// own loopback, through the daemon (POST /v1/loopback): the checks'
// loopback probes reach its apps with network: private.
func (c *Client) LoopbackTransport(port int) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		var buf bytes.Buffer
		if err := req.Write(&buf); err != nil {
			return nil, err
		}
		var out []byte
		if err := c.call(req.Context(), "POST", PathLoopback+"?port="+strconv.Itoa(port), buf.Bytes(), &out, nil); err != nil {
			return nil, err
		}
		return http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), req)
	})
}

// roundTripper is a function that is an http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Close closes idle connections; the daemon keeps running.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

var _ env.LoopbackAPI = (*Client)(nil)
