package check

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ServiceQuery reads an application's state through one of the suite's
// command services, never through the screen: a read-only SQL query of a
// SQLite database in the service's data folder, or a call of its HTTP
// API. Exactly one of SQL and HTTP is set.
type ServiceQuery struct {
	SQL  *SQLQuery  `json:"sql,omitempty"`
	HTTP *HTTPQuery `json:"http,omitempty"`
}

// SQLQuery is a read-only query of a SQLite database file of a service's
// data folder. Its value is the rows as a JSON array of objects (column
// name to value; text as strings, numbers as numbers, NULL as null); it
// is found when there is at least one row.
type SQLQuery struct {
	Service string `json:"service" yaml:"service"`
	// DB is the database file, relative to the service's data folder.
	DB    string `json:"db" yaml:"db"`
	Query string `json:"query" yaml:"query"`
}

// HTTPQuery is a call of a service's HTTP API. Its value is the
// response's body; it is found when the status is 2xx.
type HTTPQuery struct {
	Service string `json:"service" yaml:"service"`
	// Method is GET (the default) or POST (a JSON-RPC call).
	Method string `json:"method,omitempty" yaml:"method,omitempty"`
	// Path is the URL's path and query, from the service's origin.
	Path string `json:"path" yaml:"path"`
	// Body is sent with a POST, as JSON unless a Content-Type header
	// says otherwise.
	Body string `json:"body,omitempty" yaml:"body,omitempty"`
	// User and Password are sent with basic authentication.
	User     string `json:"user,omitempty" yaml:"user,omitempty"`
	Password string `json:"password,omitempty" yaml:"password,omitempty"`
	// Headers are "Name: value" lines (an API key).
	Headers []string `json:"headers,omitempty" yaml:"headers,omitempty"`
}

// readOnlySQL matches the start of a query that reads: SELECT, WITH,
// VALUES or EXPLAIN, after comments and space. The database is opened
// read-only too; this makes a mistake plain when the task is linted.
var readOnlySQL = regexp.MustCompile(`(?is)^(\s|--[^\n]*\n|/\*.*?\*/)*(select|with|values|explain)\b`)

// headerRE is a header line.
var headerRE = regexp.MustCompile(`^[A-Za-z0-9-]+:\s*\S`)

// Validate reports what is wrong with the query.
func (q ServiceQuery) Validate() error {
	switch {
	case (q.SQL == nil) == (q.HTTP == nil):
		return fmt.Errorf("a service probe is either sql or http")
	case q.SQL != nil:
		s := q.SQL
		switch {
		case s.Service == "":
			return fmt.Errorf("sql needs the service whose database it reads")
		case s.DB == "" || !filepath.IsLocal(s.DB):
			return fmt.Errorf("sql's db is a database file inside the service's data folder, not %q", s.DB)
		case !readOnlySQL.MatchString(s.Query):
			return fmt.Errorf("sql's query must read (SELECT, WITH, VALUES), not %q", shorten(s.Query, 40))
		}
	default:
		h := q.HTTP
		switch {
		case h.Service == "":
			return fmt.Errorf("http needs the service it calls")
		case !strings.HasPrefix(h.Path, "/"):
			return fmt.Errorf("http's path starts with /, not %q", h.Path)
		case h.Method != "" && h.Method != http.MethodGet && h.Method != http.MethodPost:
			return fmt.Errorf("http's method is GET or POST, not %q (a check reads, it does not change)", h.Method)
		case h.Body != "" && h.Method != http.MethodPost:
			return fmt.Errorf("http sends a body with POST only")
		case h.Password != "" && h.User == "":
			return fmt.Errorf("http's password needs a user")
		}
		for _, l := range h.Headers {
			if !headerRE.MatchString(l) {
				return fmt.Errorf("http's header %q is not \"Name: value\"", l)
			}
		}
	}
	return nil
}

// Name is the service the query reads.
func (q ServiceQuery) Name() string {
	if q.SQL != nil {
		return q.SQL.Service
	}
	if q.HTTP != nil {
		return q.HTTP.Service
	}
	return ""
}

// Describe says what the query reads, for reasons and reports.
func (q ServiceQuery) Describe() string {
	switch {
	case q.SQL != nil:
		return fmt.Sprintf("sql %q on %s's %s", shorten(strings.Join(strings.Fields(q.SQL.Query), " "), 80), q.SQL.Service, q.SQL.DB)
	case q.HTTP != nil:
		m := q.HTTP.Method
		if m == "" {
			m = http.MethodGet
		}
		return fmt.Sprintf("%s %s of %s", m, q.HTTP.Path, q.HTTP.Service)
	}
	return "a service probe"
}

// key identifies the query among recorded answers.
func (q ServiceQuery) key() string {
	b, _ := json.Marshal(q)
	return string(b)
}

// ServiceAnswer is a recorded service probe.
type ServiceAnswer struct {
	Query ServiceQuery `json:"query"`
	Value string       `json:"value,omitempty"`
	Found bool         `json:"found,omitempty"`
}

// findService returns the recorded answer to q.
func findService(as []ServiceAnswer, q ServiceQuery) (ServiceAnswer, bool) {
	k := q.key()
	i := slices.IndexFunc(as, func(a ServiceAnswer) bool { return a.Query.key() == k })
	if i < 0 {
		return ServiceAnswer{}, false
	}
	return as[i], true
}
