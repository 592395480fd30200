package query

import (
	"strings"
	"testing"
)

func TestServiceValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    Service
		want string // "" when valid
	}{
		{"sql", Service{SQL: &SQL{Service: "rt", DB: "rt.sqlite", Query: "select id from tickets"}}, ""},
		{"sql with a comment and WITH", Service{SQL: &SQL{Service: "rt", DB: "db/rt.sqlite", Query: "-- open ones\nWITH o AS (select 1) select * from o"}}, ""},
		{"sql that writes", Service{SQL: &SQL{Service: "rt", DB: "rt.sqlite", Query: "delete from tickets"}}, "must read"},
		{"sql outside the data", Service{SQL: &SQL{Service: "rt", DB: "/etc/rt.sqlite", Query: "select 1"}}, "inside the service's data folder"},
		{"sql without service", Service{SQL: &SQL{DB: "rt.sqlite", Query: "select 1"}}, "needs the service"},
		{"both", Service{SQL: &SQL{Service: "rt", DB: "a", Query: "select 1"}, HTTP: &HTTP{Service: "rt", Path: "/"}}, "one of sql, http and xmlrpc"},
		{"none", Service{}, "one of sql, http and xmlrpc"},
		{"http", Service{HTTP: &HTTP{Service: "rt", Path: "/REST/2.0/ticket/1", User: "root", Password: "p", Headers: []string{"X-Key: 1"}}}, ""},
		{"http post", Service{HTTP: &HTTP{Service: "tryton", Method: "POST", Path: "/db/", Body: "{}"}}, ""},
		{"http delete", Service{HTTP: &HTTP{Service: "rt", Method: "DELETE", Path: "/x"}}, "GET or POST"},
		{"http body with get", Service{HTTP: &HTTP{Service: "rt", Path: "/x", Body: "{}"}}, "with POST only"},
		{"http relative path", Service{HTTP: &HTTP{Service: "rt", Path: "x"}}, "starts with /"},
		{"http password alone", Service{HTTP: &HTTP{Service: "rt", Path: "/x", Password: "p"}}, "needs a user"},
		{"http bad header", Service{HTTP: &HTTP{Service: "rt", Path: "/x", Headers: []string{"no colon"}}}, "Name: value"},
		{"http on the loopback", Service{HTTP: &HTTP{Port: 8090, Path: "/api/main/status"}}, ""},
		{"http with neither", Service{HTTP: &HTTP{Path: "/x"}}, "or the port on the environment's loopback"},
		{"http with both", Service{HTTP: &HTTP{Service: "rt", Port: 80, Path: "/x"}}, "not both"},
		{"http port too big", Service{HTTP: &HTTP{Port: 70000, Path: "/x"}}, "not a TCP port"},
		{"xmlrpc", Service{XMLRPC: &XMLRPC{Port: 9123, Method: "count_atoms", Params: []any{"chain A", 1.0, true, []any{"x"}, map[string]any{"k": "v"}}}}, ""},
		{"xmlrpc of a service", Service{XMLRPC: &XMLRPC{Service: "odoo", Path: "/xmlrpc/2/common", Method: "version"}}, ""},
		{"xmlrpc without method", Service{XMLRPC: &XMLRPC{Port: 9123}}, "needs the method"},
		{"xmlrpc bad method", Service{XMLRPC: &XMLRPC{Port: 9123, Method: "count atoms"}}, "needs the method"},
		{"xmlrpc null param", Service{XMLRPC: &XMLRPC{Port: 9123, Method: "m", Params: []any{"a", nil}}}, "params[1]: null has no XML-RPC value"},
		{"xmlrpc nested null", Service{XMLRPC: &XMLRPC{Port: 9123, Method: "m", Params: []any{[]any{map[string]any{"k": nil}}}}}, "params[0]: [0]: k: null"},
		{"xmlrpc relative path", Service{XMLRPC: &XMLRPC{Port: 9123, Path: "RPC2", Method: "m"}}, "starts with /"},
		{"xmlrpc nowhere", Service{XMLRPC: &XMLRPC{Method: "m"}}, "needs the service it calls"},
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
		q          Service
		want, name string
		port       int
	}{
		{Service{HTTP: &HTTP{Port: 8090, Path: "/api/main/status"}}, "GET /api/main/status of the loopback's port 8090", "", 8090},
		{Service{HTTP: &HTTP{Service: "rt", Method: "POST", Path: "/x"}}, "POST /x of rt", "rt", 0},
		{Service{XMLRPC: &XMLRPC{Port: 9123, Method: "count_atoms", Params: []any{"chain A", 2.0}}}, `xml-rpc count_atoms("chain A",2) of the loopback's port 9123`, "", 9123},
		{Service{XMLRPC: &XMLRPC{Service: "odoo", Method: "version"}}, "xml-rpc version() of odoo", "odoo", 0},
	} {
		if got := tc.q.Describe(); got != tc.want {
			t.Errorf("Describe() = %q, want %q", got, tc.want)
		}
		if tc.q.Name() != tc.name || tc.q.Port() != tc.port {
			t.Errorf("%s: Name() %q Port() %d, want %q %d", tc.want, tc.q.Name(), tc.q.Port(), tc.name, tc.port)
		}
	}
}
