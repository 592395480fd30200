// Package apicall makes the API calls of the checks' service probes: an
// HTTP request or an XML-RPC call (query.HTTP, query.XMLRPC),
// sent through a transport that reaches the API, a command service's
// origin or an application on an environment's own loopback, and the
// answer read as the probe's value.
//
// XML-RPC is encoded and decoded with github.com/kolo/xmlrpc; this package
// turns the decoded result into JSON, the form every probe value of a
// structured answer takes.
package apicall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/kolo/xmlrpc"

	"github.com/proctor-eval/proctor/query"
)

// MaxBody bounds the answer a call reads.
const MaxBody = 16 << 20

// Do sends q's call through rt to origin (scheme and host, such as
// http://127.0.0.1:9123) and returns the probe's value: an HTTP call's
// body, found when the status is 2xx; an XML-RPC call's result as JSON,
// found unless the server answers a fault (whose code and text are the
// value) or a status other than 2xx. An error means no answer came.
func Do(ctx context.Context, rt http.RoundTripper, origin string, q query.Service) (string, bool, error) {
	req, err := Request(ctx, origin, q)
	if err != nil {
		return "", false, err
	}
	// A client, not the bare transport: it follows redirects, as the
	// service probes always have (an API that answers 302 to a path).
	res, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", q.Describe(), err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, MaxBody+1))
	if err != nil {
		return "", false, fmt.Errorf("%s: read the answer: %w", q.Describe(), err)
	}
	if len(b) > MaxBody {
		return "", false, fmt.Errorf("%s: the answer is over %d MiB", q.Describe(), MaxBody>>20)
	}
	ok := res.StatusCode/100 == 2
	if q.XMLRPC == nil || !ok {
		return string(b), ok, nil
	}
	return Result(b)
}

// Request builds q's HTTP request to origin.
func Request(ctx context.Context, origin string, q query.Service) (*http.Request, error) {
	origin = strings.TrimSuffix(origin, "/")
	switch {
	case q.XMLRPC != nil:
		x := q.XMLRPC
		params := make([]any, len(x.Params))
		for i, p := range x.Params {
			params[i] = Param(p)
		}
		body, err := xmlrpc.EncodeMethodCall(x.Method, params...)
		if err != nil {
			return nil, fmt.Errorf("%s: encode the call: %w", q.Describe(), err)
		}
		path := x.Path
		if path == "" {
			path = "/"
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, origin+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "text/xml")
		return req, nil
	case q.HTTP != nil:
		h := q.HTTP
		method := h.Method
		if method == "" {
			method = http.MethodGet
		}
		var body io.Reader
		if h.Body != "" {
			body = strings.NewReader(h.Body)
		}
		req, err := http.NewRequestWithContext(ctx, method, origin+h.Path, body)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		if h.Body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if h.User != "" {
			req.SetBasicAuth(h.User, h.Password)
		}
		for _, l := range h.Headers {
			k, v, _ := strings.Cut(l, ":")
			req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		return req, nil
	}
	return nil, fmt.Errorf("%s is not an API call", q.Describe())
}

// Param is an XML-RPC argument as the encoder takes it: a whole number
// becomes an int (XML-RPC's int, which Python's servers need where they
// count), any other number a double, and lists and maps are converted
// element by element.
func Param(p any) any {
	switch v := p.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<31 {
			return int(v)
		}
		return v
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return int(i)
		}
		f, _ := v.Float64()
		return f
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = Param(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = Param(e)
		}
		return out
	}
	return p
}

// Result decodes an XML-RPC methodResponse into the probe's value: the
// result as JSON, found; or, for a fault, "fault CODE: TEXT", not found.
// A body that is not a methodResponse is an error.
func Result(body []byte) (string, bool, error) {
	r := xmlrpc.Response(body)
	if err := r.Err(); err != nil {
		var f xmlrpc.FaultError
		if errors.As(err, &f) {
			return fmt.Sprintf("fault %d: %s", f.Code, f.String), false, nil
		}
		return "", false, fmt.Errorf("the XML-RPC fault does not decode: %w", err)
	}
	if !bytes.Contains(body, []byte("methodResponse")) {
		return "", false, fmt.Errorf("the answer is not an XML-RPC methodResponse: %q", shorten(body, 80))
	}
	var v any
	if err := xmlrpc.Response(untyped.ReplaceAll(body, []byte("<value><string>$1</string></value>"))).Unmarshal(&v); err != nil {
		return "", false, fmt.Errorf("the XML-RPC answer does not decode: %w", err)
	}
	out, err := json.Marshal(jsonable(v))
	if err != nil {
		return "", false, fmt.Errorf("the XML-RPC answer has no JSON form: %w", err)
	}
	return string(out), true, nil
}

// untyped is a value without a type element, a string by XML-RPC's rule,
// which the decoder takes for a string only where it decodes into one: it
// is given its string element first.
var untyped = regexp.MustCompile(`<value>([^<]*)</value>`)

// jsonable replaces what JSON cannot hold: a NaN or infinite double
// becomes its text, a date its RFC 3339 form.
func jsonable(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
	case time.Time:
		return x.Format(time.RFC3339)
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
	}
	return v
}

func shorten(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
