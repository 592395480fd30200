// Package query holds the service queries that read an application's
// state through its own interfaces (a SQL query, an HTTP or XML-RPC call):
// tasks write them, checks ask them, services and environments answer
// them. It depends on nothing of the module.
package query

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
)

// Service reads an application's state through its own interfaces,
// never through the screen: a read-only SQL query of a SQLite database in
// the data folder of one of the suite's command services, or a call of an
// HTTP or XML-RPC API, served by a command service or by an application
// on the environment's own loopback (Port). Exactly one of SQL, HTTP and
// XMLRPC is set.
type Service struct {
	SQL    *SQL    `json:"sql,omitempty"`
	HTTP   *HTTP   `json:"http,omitempty"`
	XMLRPC *XMLRPC `json:"xmlrpc,omitempty"`
}

// SQL is a read-only query of a SQLite database file of a service's
// data folder. Its value is the rows as a JSON array of objects (column
// name to value; text as strings, numbers as numbers, NULL as null); it
// is found when there is at least one row.
type SQL struct {
	Service string `json:"service" yaml:"service"`
	// DB is the database file, relative to the service's data folder.
	DB    string `json:"db" yaml:"db"`
	Query string `json:"query" yaml:"query"`
}

// HTTP is a call of an HTTP API: a command service's (Service), or
// one an application serves on the environment's loopback (Port). Its
// value is the response's body; it is found when the status is 2xx.
type HTTP struct {
	Service string `json:"service,omitempty" yaml:"service,omitempty"`
	// Port is the TCP port on the environment's loopback (127.0.0.1 inside
	// the desktop) where an application of the episode serves the API.
	Port int `json:"port,omitempty" yaml:"port,omitempty"`
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

// XMLRPC is an XML-RPC call (a POST of a methodCall) of a command
// service's API or of one an application serves on the environment's
// loopback, such as PyMOL's cmd.* server. Its value is the decoded result
// as JSON (structs as objects, arrays as arrays, base64 as a string); it
// is found unless the server answers a fault or a status other than 2xx.
type XMLRPC struct {
	Service string `json:"service,omitempty" yaml:"service,omitempty"`
	Port    int    `json:"port,omitempty" yaml:"port,omitempty"`
	// Path is the URL's path, / by default (PyMOL's server answers on /RPC2
	// and /).
	Path   string `json:"path,omitempty" yaml:"path,omitempty"`
	Method string `json:"method" yaml:"method"`
	// Params are the call's arguments: strings, numbers (whole numbers
	// are sent as int, others as double), booleans, lists and maps.
	Params []any `json:"params,omitempty" yaml:"params,omitempty"`
}

// xmlrpcMethodRE is a method name as XML-RPC allows it.
var xmlrpcMethodRE = regexp.MustCompile(`^[A-Za-z0-9_.:/]+$`)

// readOnlySQL matches the start of a query that reads: SELECT, WITH,
// VALUES or EXPLAIN, after comments and space. The database is opened
// read-only too; this makes a mistake plain when the task is linted.
var readOnlySQL = regexp.MustCompile(`(?is)^(\s|--[^\n]*\n|/\*.*?\*/)*(select|with|values|explain)\b`)

// ReadsOnly says whether a SQL query starts as one that reads (SELECT,
// WITH, VALUES or EXPLAIN, after comments and space).
func ReadsOnly(sql string) bool { return readOnlySQL.MatchString(sql) }

// headerRE is a header line.
var headerRE = regexp.MustCompile(`^[A-Za-z0-9-]+:\s*\S`)

// Validate reports what is wrong with the query.
func (q Service) Validate() error {
	n := 0
	for _, set := range []bool{q.SQL != nil, q.HTTP != nil, q.XMLRPC != nil} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return fmt.Errorf("a service probe is one of sql, http and xmlrpc")
	case q.XMLRPC != nil:
		x := q.XMLRPC
		if err := checkPlace("xmlrpc", x.Service, x.Port); err != nil {
			return err
		}
		switch {
		case x.Path != "" && !strings.HasPrefix(x.Path, "/"):
			return fmt.Errorf("xmlrpc's path starts with /, not %q", x.Path)
		case !xmlrpcMethodRE.MatchString(x.Method):
			return fmt.Errorf("xmlrpc needs the method to call (letters, digits, _ . : /), not %q", x.Method)
		}
		for i, p := range x.Params {
			if err := checkParam(p); err != nil {
				return fmt.Errorf("xmlrpc's params[%d]: %w", i, err)
			}
		}
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
		if err := checkPlace("http", h.Service, h.Port); err != nil {
			return err
		}
		switch {
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

// checkPlace says what is wrong with where an API call goes: a service
// or a loopback port, one of them.
func checkPlace(kind, service string, port int) error {
	switch {
	case service == "" && port == 0:
		return fmt.Errorf("%s needs the service it calls, or the port on the environment's loopback", kind)
	case service != "" && port != 0:
		return fmt.Errorf("%s calls a service or a loopback port, not both", kind)
	case port < 0 || port > 65535:
		return fmt.Errorf("%s's port %d is not a TCP port (1 to 65535)", kind, port)
	}
	return nil
}

// checkParam says what is wrong with an XML-RPC argument.
func checkParam(p any) error {
	switch v := p.(type) {
	case string, bool, float64, float32, int, int64, json.Number:
		return nil
	case []any:
		for i, e := range v {
			if err := checkParam(e); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case map[string]any:
		for k, e := range v {
			if err := checkParam(e); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		return nil
	case nil:
		return fmt.Errorf("null has no XML-RPC value")
	}
	return fmt.Errorf("%T has no XML-RPC value", p)
}

// Name is the command service the query reads; "" for a call of the
// environment's loopback.
func (q Service) Name() string {
	switch {
	case q.SQL != nil:
		return q.SQL.Service
	case q.HTTP != nil:
		return q.HTTP.Service
	case q.XMLRPC != nil:
		return q.XMLRPC.Service
	}
	return ""
}

// Port is the environment's loopback port the query calls; 0 for a
// command service's.
func (q Service) Port() int {
	switch {
	case q.HTTP != nil:
		return q.HTTP.Port
	case q.XMLRPC != nil:
		return q.XMLRPC.Port
	}
	return 0
}

// where names the place a call goes, for descriptions.
func where(service string, port int) string {
	if port != 0 {
		return fmt.Sprintf("the loopback's port %d", port)
	}
	return service
}

// Describe says what the query reads, for reasons and reports.
func (q Service) Describe() string {
	switch {
	case q.SQL != nil:
		return fmt.Sprintf("sql %q on %s's %s", shorten(strings.Join(strings.Fields(q.SQL.Query), " "), 80), q.SQL.Service, q.SQL.DB)
	case q.HTTP != nil:
		m := q.HTTP.Method
		if m == "" {
			m = http.MethodGet
		}
		return fmt.Sprintf("%s %s of %s", m, q.HTTP.Path, where(q.HTTP.Service, q.HTTP.Port))
	case q.XMLRPC != nil:
		args, _ := json.Marshal(q.XMLRPC.Params)
		if len(q.XMLRPC.Params) == 0 {
			args = nil
		}
		return fmt.Sprintf("xml-rpc %s(%s) of %s", q.XMLRPC.Method, shorten(strings.Trim(string(args), "[]"), 60), where(q.XMLRPC.Service, q.XMLRPC.Port))
	}
	return "a service probe"
}

// shorten cuts s to n runes for a description.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
