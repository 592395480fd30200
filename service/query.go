package service

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/check"

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
	if _, err := os.Stat(file); err != nil {
		// Opening a missing file read-only fails anyway; say which.
		return "", false, fmt.Errorf("database %s: %w", file, err)
	}
	u := url.URL{Scheme: "file", Path: file, RawQuery: "mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return "", false, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return "", false, fmt.Errorf("sql on %s: %w", filepath.Base(file), err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", false, err
	}
	out := []map[string]any{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", false, err
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			switch v := vals[i].(type) {
			case []byte:
				row[c] = string(v)
			case time.Time:
				row[c] = v.UTC().Format(time.RFC3339Nano)
			default:
				row[c] = v
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return "", false, fmt.Errorf("sql on %s: %w", filepath.Base(file), err)
	}
	b, err := json.Marshal(out)
	return string(b), len(out) > 0, err
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
