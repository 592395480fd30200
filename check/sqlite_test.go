package check

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file probe read as sqlite runs its query on the database file (an
// app's, pulled from a device) and gives the rows as JSON.
func TestSQLiteProbe(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.db")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE notes (title TEXT, body TEXT)`, `INSERT INTO notes VALUES ('Groceries', 'milk, eggs'), ('Plan', '')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ev := &Recorded{Files: map[string][]byte{"/data/data/org.notes/databases/notes.db": b, "/root/not-a-db": []byte("hello")}}
	probe := func(f, q string) *Probe { return &Probe{File: f, Read: "sqlite", Query: q} }
	for _, tc := range []struct {
		name string
		spec Spec
		pass bool
		why  string
	}{
		{"rows as JSON", Spec{Kind: Exact, Probe: probe("/data/data/org.notes/databases/notes.db", "SELECT body FROM notes WHERE title = 'Groceries'"),
			Expected: []any{map[string]any{"body": "milk, eggs"}}, As: "json"}, true, "equal"},
		{"no row is nothing to read", Spec{Kind: Exact, Probe: probe("/data/data/org.notes/databases/notes.db", "SELECT body FROM notes WHERE title = 'None'"),
			Expected: "x"}, false, "nothing to read"},
		{"count", Spec{Kind: Predicate, Probe: probe("/data/data/org.notes/databases/notes.db", "SELECT count(*) AS n FROM notes"),
			Expr: `value[0].n == 2`}, true, "holds"},
		{"not a database", Spec{Kind: Exact, Probe: probe("/root/not-a-db", "SELECT 1"), Expected: "x"}, false, "not-a-db"},
		{"a bad query", Spec{Kind: Exact, Probe: probe("/data/data/org.notes/databases/notes.db", "SELECT x FROM nowhere"), Expected: "x"}, false, "no such table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compile(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			r := c.Evaluate(context.Background(), ev, nil)
			if r.Pass != tc.pass || !strings.Contains(r.Reason, tc.why) || r.Err != "" {
				t.Fatalf("%+v, want pass %v with %q", r, tc.pass, tc.why)
			}
		})
	}
	for _, tc := range []struct {
		p    Probe
		want string
	}{
		{Probe{File: "/a.db", Read: "sqlite"}, "takes a query"},
		{Probe{File: "/a.db", Query: "SELECT 1"}, "takes a query"},
		{Probe{File: "/a.db", Read: "sqlite", Query: "DELETE FROM notes"}, "must read"},
	} {
		if err := tc.p.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.p, err, tc.want)
		}
	}
}
