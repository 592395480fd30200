// Package client is a Go client of the rollout service (proctor serve):
//
//	c, err := client.New("https://127.0.0.1:7500#sha256=3f1c…", token)
//	ro, err := c.Create(ctx, api.CreateRequest{Task: "editor-save", Observation: api.ObsMarks})
//	for ro.Status == api.StatusRunning {
//		st, err := c.Step(ctx, ro.ID, api.StepRequest{Actions: policy(ro.Observation)})
//		...
//	}
//
// It pins the service's certificate by the fingerprint in the address, as
// the runner pins a guest daemon's, and needs nothing of Proctor but the
// wire types (package rollout/api).
package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/rollout/api"
)

// Client calls one rollout service.
type Client struct {
	base  string // scheme://host:port
	token string
	http  *http.Client
	// Name is sent as the Proctor-Client header: the client the per-client
	// limit counts rollouts against; "": the connection's address.
	Name string
}

// New returns a client of the service at target: https://HOST:PORT#sha256=FINGERPRINT
// (as proctor serve prints it), https://HOST:PORT for a certificate this
// machine trusts, or http://HOST:PORT for a service on loopback started
// with --insecure-loopback.
func New(target, token string) (*Client, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("rollout service %q: %v", target, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.Path != "" && u.Path != "/" {
		return nil, fmt.Errorf("rollout service %q: want https://HOST:PORT#sha256=FINGERPRINT or http://HOST:PORT", target)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	if fp, ok := strings.CutPrefix(u.Fragment, "sha256="); ok {
		fp = strings.ToLower(strings.ReplaceAll(fp, ":", ""))
		if _, err := hex.DecodeString(fp); err != nil || len(fp) != 64 || u.Scheme != "https" {
			return nil, fmt.Errorf("rollout service %q: the fingerprint is not the 64 hex digits of a SHA-256 of an https service", target)
		}
		tr.TLSClientConfig = &tls.Config{
			// Exactly the pinned certificate is accepted, checked below.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return errors.New("the service sent no certificate")
				}
				sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
				if got := hex.EncodeToString(sum[:]); got != fp {
					return fmt.Errorf("the service's certificate has fingerprint %s, not the pinned %s", got, fp)
				}
				return nil
			},
		}
	} else if u.Fragment != "" {
		return nil, fmt.Errorf("rollout service %q: the only fragment is #sha256=FINGERPRINT", target)
	}
	return &Client{base: u.Scheme + "://" + u.Host, token: token, http: &http.Client{Transport: tr}}, nil
}

// Error is an error answer of the service.
type Error struct {
	Status int
	Body   api.Error
}

func (e *Error) Error() string {
	return fmt.Sprintf("rollout service: %d %s: %s", e.Status, e.Body.Kind, e.Body.Error)
}

// RetryAfter is how long the service asked to wait (an exhausted pool, a
// client over its limit); 0 when it did not say.
func (e *Error) RetryAfter() time.Duration { return time.Duration(e.Body.RetryAfter) * time.Second }

// Kind returns the kind of err's answer (api.KindExhausted...), "" when
// it is no answer of the service.
func Kind(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Body.Kind
	}
	return ""
}

// do sends a request and decodes a JSON answer into out (nil: none).
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	b, _, err := c.raw(ctx, method, path, body)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// raw sends a request and returns the answer's body and content type.
func (c *Client) raw(ctx context.Context, method, path string, body any) ([]byte, string, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, "", err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Name != "" {
		req.Header.Set(api.ClientHeader, c.Name)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode >= 300 {
		e := &Error{Status: resp.StatusCode}
		if json.Unmarshal(b, &e.Body) != nil || e.Body.Kind == "" {
			e.Body.Kind, e.Body.Error = api.KindInternal, strings.TrimSpace(string(b))
		}
		if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && e.Body.RetryAfter == 0 {
			e.Body.RetryAfter = ra
		}
		return nil, "", e
	}
	return b, resp.Header.Get("Content-Type"), nil
}

func rolloutPath(pattern, id string) string {
	return strings.Replace(pattern, "{id}", url.PathEscape(id), 1)
}

// Tasks lists the tasks the service runs, with their gold solutions when
// gold is set.
func (c *Client) Tasks(ctx context.Context, gold bool) ([]api.Task, error) {
	var out api.Tasks
	p := api.PathTasks
	if gold {
		p += "?gold=true"
	}
	err := c.do(ctx, "GET", p, nil, &out)
	return out.Tasks, err
}

// Create starts a rollout.
func (c *Client) Create(ctx context.Context, req api.CreateRequest) (api.Rollout, error) {
	var out api.Rollout
	err := c.do(ctx, "POST", api.PathRollouts, req, &out)
	return out, err
}

// Step performs a step.
func (c *Client) Step(ctx context.Context, id string, req api.StepRequest) (api.StepResponse, error) {
	var out api.StepResponse
	err := c.do(ctx, "POST", rolloutPath(api.PathStep, id), req, &out)
	return out, err
}

// Finish ends a rollout, if it runs, and returns its final result.
func (c *Client) Finish(ctx context.Context, id string) (api.Rollout, error) {
	var out api.Rollout
	err := c.do(ctx, "POST", rolloutPath(api.PathFinish, id), nil, &out)
	return out, err
}

// Get returns where a rollout stands.
func (c *Client) Get(ctx context.Context, id string) (api.Rollout, error) {
	var out api.Rollout
	err := c.do(ctx, "GET", rolloutPath(api.PathRollout, id), nil, &out)
	return out, err
}

// Delete abandons a rollout and frees its environment.
func (c *Client) Delete(ctx context.Context, id string) error {
	return c.do(ctx, "DELETE", rolloutPath(api.PathRollout, id), nil, nil)
}

// Image returns an observation's screenshot and its format (png or
// jpeg): the inline one, else fetched from its image_url.
func (c *Client) Image(ctx context.Context, o *api.Observation) ([]byte, string, error) {
	switch {
	case o == nil:
		return nil, "", errors.New("no observation")
	case o.Image != "":
		b, err := base64.StdEncoding.DecodeString(o.Image)
		return b, o.ImageFormat, err
	case o.ImageURL == "":
		return nil, "", errors.New("the observation has no screenshot")
	}
	b, typ, err := c.raw(ctx, "GET", o.ImageURL, nil)
	return b, strings.TrimPrefix(typ, "image/"), err
}
