package service

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/proctor-eval/proctor/apicall"
	"github.com/proctor-eval/proctor/internal/sqlread"
	"github.com/proctor-eval/proctor/query"

	_ "modernc.org/sqlite" // the SQLite driver, pure Go
)

// ErrNotRunning is wrapped by the error of a probe of a service that does
// not run on the place.
const ErrNotRunning Error = "the service does not run"

// maxBody bounds the body an HTTP probe reads.
const maxBody = apicall.MaxBody

// Query reads a running service's state for a check: a read-only SQL
// query of a SQLite database of its data folder, or a call of its HTTP
// or XML-RPC API (query.Service says what is found). An error means the state
// could not be read; an HTTP status is an answer, not an error.
func (in *Instances) Query(ctx context.Context, q query.Service) (string, bool, error) {
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
	return queryAPI(ctx, in.Origins()[name], q)
}

// querySQL runs a query on the database file, opened read-only, and
// returns the rows as a JSON array of objects.
func querySQL(ctx context.Context, file, query string) (string, bool, error) {
	return sqlread.Query(ctx, file, query)
}

// queryAPI calls the service's HTTP or XML-RPC API (package apicall).
func queryAPI(ctx context.Context, origin string, q query.Service) (string, bool, error) {
	return apicall.Do(ctx, http.DefaultTransport, origin, q)
}
