// Package sqlread runs a read-only query on an SQLite database file and
// gives its rows as JSON, for the checks' probes of an application's
// database: a service's on this machine, or an app's pulled from a device.
package sqlread

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// Query runs query on the database file, opened read-only, and returns
// the rows as a JSON array of objects (text for blobs, RFC 3339 for
// times); found is whether there is a row.
func Query(ctx context.Context, file, query string) (rows string, found bool, err error) {
	return run(ctx, file, filepath.Base(file), query)
}

// run is Query with the database's name for errors.
func run(ctx context.Context, file, name, query string) (rows string, found bool, err error) {
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
	rs, err := db.QueryContext(ctx, query)
	if err != nil {
		return "", false, fmt.Errorf("sql on %s: %w", name, err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return "", false, err
	}
	out := []map[string]any{}
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
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
	if err := rs.Err(); err != nil {
		return "", false, fmt.Errorf("sql on %s: %w", name, err)
	}
	b, err := json.Marshal(out)
	return string(b), len(out) > 0, err
}

// Bytes runs query on a database given as its bytes (a file pulled from a
// device), through a temporary copy.
func Bytes(ctx context.Context, db []byte, query string) (string, bool, error) {
	f, err := os.CreateTemp("", "proctor-sqlread-*.db")
	if err != nil {
		return "", false, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(db); err != nil {
		f.Close()
		return "", false, err
	}
	if err := f.Close(); err != nil {
		return "", false, err
	}
	return run(ctx, f.Name(), "the database", query)
}
