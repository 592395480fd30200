package service

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/internal/sqlread"

	_ "modernc.org/sqlite" // the SQLite driver, pure Go
)

// ErrNotRunning is wrapped by the error of a probe of a service that does
// not run on the place.
const ErrNotRunning Error = "the service does not run"

// maxBody bounds the body an HTTP probe reads.
const maxBody = 16 << 20

// Query reads a running service's state for a check: a read-only SQL
// query of a SQLite database of its data folder, or a call of its HTTP
// API (check.ServiceQuery says what is found). An error means the state
// could not be read; an HTTP status is an answer, not an error.
func (in *Instances) Query(ctx context.Context, q check.ServiceQuery) (string, bool, error) {
	if err := q.Validate(); err != nil {
		return "", false, err
	}
	name := q.Name()
	data, ok := in.Data(name)
	if !ok {
		return "", false, fmt.Errorf("%w: %s", ErrNotRunning, name)
	}
	if q.SQL != nil {
		return querySQL(ctx, filepath.Join(data, q.SQL.DB), q.SQL.Query)
	}
	return queryHTTP(ctx, in.Origins()[name], q.HTTP)
}

// querySQL runs a query on the database file, opened read-only, and
// returns the rows as a JSON array of objects.
func querySQL(ctx context.Context, file, query string) (string, bool, error) {
	return sqlread.Query(ctx, file, query)
}

// queryHTTP calls the API and returns the body; found is a 2xx status.
func queryHTTP(ctx context.Context, origin string, h *check.HTTPQuery) (string, bool, error) {
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
		return "", false, err
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
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxBody+1))
	if err != nil {
		return "", false, err
	}
	if len(b) > maxBody {
		return "", false, fmt.Errorf("%s %s: the answer is over %d MiB", method, h.Path, maxBody>>20)
	}
	return string(b), res.StatusCode/100 == 2, nil
}
