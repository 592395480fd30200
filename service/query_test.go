package service

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/query"
	"github.com/proctor-eval/proctor/task"
)

// ticketsDB writes a small SQLite database of tickets.
func ticketsDB(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "rt.sqlite")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"create table tickets (id integer primary key, subject text, status text, owner text, hours real, body blob)",
		"insert into tickets values (5, 'Printer jams', 'open', 'rosa', 1.5, x'6869')",
		"insert into tickets values (6, 'VPN drops', 'stalled', null, 0, null)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return file
}

func TestQuerySQL(t *testing.T) {
	file := ticketsDB(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, query, want string
		found             bool
		err               string
	}{
		{name: "rows as objects", query: "select id, subject, owner, hours, body from tickets order by id",
			want: `[{"body":"hi","hours":1.5,"id":5,"owner":"rosa","subject":"Printer jams"},{"body":null,"hours":0,"id":6,"owner":null,"subject":"VPN drops"}]`, found: true},
		{name: "a count", query: "select count(*) as n from tickets where status = 'open'", want: `[{"n":1}]`, found: true},
		{name: "no rows", query: "select id from tickets where status = 'deleted'", want: `[]`},
		{name: "a syntax error", query: "select id from", err: "sql on rt.sqlite"},
		{name: "no such table", query: "select * from users", err: "no such table: users"},
		{name: "a write", query: "with x as (select 1) delete from tickets", err: "readonly"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := querySQL(ctx, file, tc.query)
			if tc.err != "" {
				if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tc.err)) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want || found != tc.found {
				t.Fatalf("got %s found %v err %v, want %s found %v", got, found, err, tc.want, tc.found)
			}
		})
	}
	if got, _, _ := querySQL(ctx, file, "select count(*) as n from tickets"); got != `[{"n":2}]` {
		t.Fatalf("after the write was refused: %s", got)
	}
	if _, _, err := querySQL(ctx, filepath.Join(t.TempDir(), "none.sqlite"), "select 1"); err == nil || !strings.Contains(err.Error(), "none.sqlite") {
		t.Fatalf("a missing database: %v", err)
	}
}

func TestQueryAPI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		switch {
		case r.URL.Path == "/big":
			w.Write([]byte(strings.Repeat("x", maxBody+1)))
		case user != "root" || pass != "password":
			http.Error(w, `{"message":"Unauthorized"}`, http.StatusUnauthorized)
		case r.Method == http.MethodPost:
			b, _ := io.ReadAll(r.Body)
			w.Write([]byte(`{"method":"` + r.Method + `","type":"` + r.Header.Get("Content-Type") + `","key":"` + r.Header.Get("X-Api-Key") + `","body":` + string(b) + `}`))
		default:
			w.Write([]byte(`{"path":"` + r.URL.RequestURI() + `"}`))
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		q     query.HTTP
		want  string
		found bool
		err   string
	}{
		{name: "get", q: query.HTTP{Path: "/REST/2.0/tickets?query=Status='open'", User: "root", Password: "password"},
			want: `{"path":"/REST/2.0/tickets?query=Status='open'"}`, found: true},
		{name: "post with a header", q: query.HTTP{Method: "POST", Path: "/rpc", Body: `{"id":1}`, User: "root", Password: "password", Headers: []string{"X-Api-Key: k1"}},
			want: `{"method":"POST","type":"application/json","key":"k1","body":{"id":1}}`, found: true},
		{name: "unauthorized", q: query.HTTP{Path: "/x"}, want: "{\"message\":\"Unauthorized\"}\n"},
		{name: "too big", q: query.HTTP{Path: "/big"}, err: "over 16 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := queryAPI(ctx, srv.URL, query.Service{HTTP: &tc.q})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want || found != tc.found {
				t.Fatalf("got %q found %v err %v, want %q found %v", got, found, err, tc.want, tc.found)
			}
		})
	}
	if _, _, err := queryAPI(ctx, "http://127.0.0.1:1", query.Service{HTTP: &query.HTTP{Path: "/"}}); err == nil {
		t.Fatal("a server that is not there is no error")
	}
}

// TestQueryNeedsARunningService: a probe of a service that does not run
// on the place is an error, and a bad query is refused before it is run.
func TestQueryNeedsARunningService(t *testing.T) {
	t.Setenv("PROCTOR_TEST_SERVER", "serve")
	in := NewInstances(appSuite(t, task.Service{}))
	defer in.Close()
	ctx := context.Background()
	q := query.Service{SQL: &query.SQL{Service: "app", DB: "records.sqlite", Query: "select 1"}}
	if _, _, err := in.Query(ctx, q); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("before the first reset: %v", err)
	}
	if err := in.Reset(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := in.Query(ctx, q); err == nil || !strings.Contains(err.Error(), "records.sqlite") {
		t.Fatalf("a database the data folder lacks: %v", err)
	}
	got, found, err := in.Query(ctx, query.Service{HTTP: &query.HTTP{Service: "app", Path: "/records"}})
	if err != nil || got != "2" || !found {
		t.Fatalf("http on the running service: %q %v %v", got, found, err)
	}
	bad := query.Service{SQL: &query.SQL{Service: "app", DB: "../x.sqlite", Query: "select 1"}}
	if _, _, err := in.Query(ctx, bad); err == nil || !strings.Contains(err.Error(), "inside the service's data folder") {
		t.Fatalf("a database outside the data folder: %v", err)
	}
}
