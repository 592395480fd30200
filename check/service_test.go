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
		{"both", ServiceQuery{SQL: &SQLQuery{Service: "rt", DB: "a", Query: "select 1"}, HTTP: &HTTPQuery{Service: "rt", Path: "/"}}, "either sql or http"},
		{"http", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Path: "/REST/2.0/ticket/1", User: "root", Password: "p", Headers: []string{"X-Key: 1"}}}, ""},
		{"http post", ServiceQuery{HTTP: &HTTPQuery{Service: "tryton", Method: "POST", Path: "/db/", Body: "{}"}}, ""},
		{"http delete", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Method: "DELETE", Path: "/x"}}, "GET or POST"},
		{"http body with get", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Path: "/x", Body: "{}"}}, "with POST only"},
		{"http relative path", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Path: "x"}}, "starts with /"},
		{"http password alone", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Path: "/x", Password: "p"}}, "needs a user"},
		{"http bad header", ServiceQuery{HTTP: &HTTPQuery{Service: "rt", Path: "/x", Headers: []string{"no colon"}}}, "Name: value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.q.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}
