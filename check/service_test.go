package check

import (
	"strings"
	"testing"
)

func TestServiceQueryValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    ServiceQuery
		want string // "" when valid
	}{
		{"sql", ServiceQuery{SQL: &SQLQuery{Service: "rt", DB: "rt.sqlite", Query: "select id from tickets"}}, ""},
		{"sql with a comment and WITH", ServiceQuery{SQL: &SQLQuery{Service: "rt", DB: "db/rt.sqlite", Query: "-- open ones\nWITH o AS (select 1) select * from o"}}, ""},
		{"sql that writes", ServiceQuery{SQL: &SQLQuery{Service: "rt", DB: "rt.sqlite", Query: "delete from tickets"}}, "must read"},
		{"sql outside the data", ServiceQuery{SQL: &SQLQuery{Service: "rt", DB: "/etc/rt.sqlite", Query: "select 1"}}, "inside the service's data folder"},
		{"sql without service", ServiceQuery{SQL: &SQLQuery{DB: "rt.sqlite", Query: "select 1"}}, "needs the service"},
		{"both", ServiceQuery{SQL: &SQLQuery{Service: "rt", DB: "a", Query: "select 1"}, HTTP: &HTTPQuery{Service: "rt", Path: "/"}}, "one of sql, http and xmlrpc"},
		{"none", ServiceQuery{}, "one of sql, http and xmlrpc"},
		{"http", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Path: "/REST/2.0/ticket/1", User: "root", Password: "p", Headers: []string{"X-Key: 1"}}}, ""},
		{"http post", ServiceQuery{HTTP: &HTTPQuery{Service: "tryton", Method: "POST", Path: "/db/", Body: "{}"}}, ""},
		{"http delete", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Method: "DELETE", Path: "/x"}}, "GET or POST"},
		{"http body with get", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Path: "/x", Body: "{}"}}, "with POST only"},
		{"http relative path", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Path: "x"}}, "starts with /"},
		{"http password alone", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Path: "/x", Password: "p"}}, "needs a user"},
		{"http bad header", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Path: "/x", Headers: []string{"no colon"}}}, "Name: value"},
		{"http on the loopback", ServiceQuery{HTTP: &HTTPQuery{Port: 8090, Path: "/api/main/status"}}, ""},
		{"http with neither", ServiceQuery{HTTP: &HTTPQuery{Path: "/x"}}, "or the port on the environment's loopback"},
		{"http with both", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Port: 80, Path: "/x"}}, "not both"},
		{"http port too big", ServiceQuery{HTTP: &HTTPQuery{Port: 70000, Path: "/x"}}, "not a TCP port"},
		{"xmlrpc", ServiceQuery{XMLRPC: &XMLRPCQuery{Port: 9123, Method: "count_atoms", Params: []any{"chain A", 1.0, true, []any{"x"}, map[string]any{"k": "v"}}}}, ""},
		{"xmlrpc of a service", ServiceQuery{XMLRPC: &XMLRPCQuery{Service: "odoo", Path: "/xmlrpc/2/common", Method: "version"}}, ""},
		{"xmlrpc without method", ServiceQuery{XMLRPC: &XMLRPCQuery{Port: 9123}}, "needs the method"},
		{"xmlrpc bad method", ServiceQuery{XMLRPC: &XMLRPCQuery{Port: 9123, Method: "count atoms"}}, "needs the method"},
		{"xmlrpc null param", ServiceQuery{XMLRPC: &XMLRPCQuery{Port: 9123, Method: "m", Params: []any{"a", nil}}}, "params[1]: null has no XML-RPC value"},
		{"xmlrpc nested null", ServiceQuery{XMLRPC: &XMLRPCQuery{Port: 9123, Method: "m", Params: []any{[]any{map[string]any{"k": nil}}}}}, "params[0]: [0]: k: null"},
		{"xmlrpc relative path", ServiceQuery{XMLRPC: &XMLRPCQuery{Port: 9123, Path: "RPC2", Method: "m"}}, "starts with /"},
		{"xmlrpc nowhere", ServiceQuery{XMLRPC: &XMLRPCQuery{Method: "m"}}, "needs the service it calls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.q.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestServiceQueryDescribe(t *testing.T) {
	for _, tc := range []struct {
		q          ServiceQuery
		want, name string
		port       int
	}{
		{ServiceQuery{HTTP: &HTTPQuery{Port: 8090, Path: "/api/main/status"}}, "GET /api/main/status of the loopback's port 8090", "", 8090},
		{ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Method: "POST", Path: "/x"}}, "POST /x of rt", "rt", 0},
		{ServiceQuery{XMLRPC: &XMLRPCQuery{Port: 9123, Method: "count_atoms", Params: []any{"chain A", 2.0}}}, `xml-rpc count_atoms("chain A",2) of the loopback's port 9123`, "", 9123},
		{ServiceQuery{XMLRPC: &XMLRPCQuery{Service: "odoo", Method: "version"}}, "xml-rpc version() of odoo", "odoo", 0},
	} {
		if got := tc.q.Describe(); got != tc.want {
			t.Errorf("Describe() = %q, want %q", got, tc.want)
		}
		if tc.q.Name() != tc.name || tc.q.Port() != tc.port {
			t.Errorf("%s: Name() %q Port() %d, want %q %d", tc.want, tc.q.Name(), tc.q.Port(), tc.name, tc.port)
		}
	}
}
