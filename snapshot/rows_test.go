package snapshot

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/statediff"
)

// rowsOf lists the database's rows as the service "redmine".
func rowsOf(t *testing.T, file string) *statediff.Snapshot {
	t.Helper()
	s := &statediff.Snapshot{Type: "browser", Items: []statediff.Item{}}
	if err := Rows(context.Background(), s, Database{Service: "redmine", File: file}, statediff.NewBudget(statediff.Limits{})); err != nil {
		t.Fatal(err)
	}
	return s
}

func names(cs []statediff.Change) []string {
	out := []string{}
	for _, c := range cs {
		n := c.String()
		if c.Filtered != "" {
			n += " [" + c.Filtered + "]"
		}
		if c.Allowed != "" {
			n += " (allowed by " + c.Allowed + ")"
		}
		out = append(out, n)
	}
	return out
}

// TestRows lists a database shaped as Redmine's (so that its noise
// applies) before and after each kind of change, and compares.
func TestRows(t *testing.T) {
	file := filepath.Join(t.TempDir(), "redmine.sqlite3")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`create table issues (id integer primary key autoincrement, subject text, status int, updated_on datetime)`)
	exec(`create table journals (id integer primary key, issue_id int, notes text)`)
	exec(`create table schema_migrations (version varchar not null)`)
	exec(`create table members_roles (member_id int, role_id int, primary key (member_id, role_id)) without rowid`)
	exec(`create table tokens (id integer primary key, value text)`)
	exec(`insert into issues (subject, status, updated_on) values ('one', 1, '2026-01-01 10:00:00'), ('two', 1, '2026-01-01 10:00:00'), ('three', 1, '2026-01-01 10:00:00')`)
	exec(`insert into schema_migrations values ('1'), ('2')`)
	exec(`insert into members_roles values (1, 3), (2, 3)`)
	exec(`insert into journals values (1, 1, '` + strings.Repeat("long ", 100) + `')`)

	before := rowsOf(t, file)
	if got := before.Apps["redmine"]; got != "redmine" {
		t.Fatalf("the application is %q", got)
	}
	compare := func(a statediff.Allowed) *statediff.Diff {
		after := rowsOf(t, file)
		b := *before
		b.Items = slices.Clone(before.Items)
		return statediff.Compare(&b, after, nil, a, statediff.Limits{})
	}
	if d := compare(statediff.Allowed{}); len(d.Changes)+len(d.Filtered) != 0 || len(d.Notes) != 0 {
		t.Fatalf("nothing changed, yet: %q %q %q", names(d.Changes), names(d.Filtered), d.Notes)
	}

	// Noise only: a timestamp and a session token.
	exec(`update issues set updated_on = '2026-01-02 10:00:00' where id = 1`)
	exec(`insert into tokens values (1, 'session')`)
	d := compare(statediff.Allowed{})
	if len(d.Changes) != 0 {
		t.Errorf("noise reported as changes: %q", names(d.Changes))
	}
	wantFiltered := []string{
		"changed updated_on of row redmine/issues id=1 [Redmine's timestamp of a record's last change]",
		"created row redmine/tokens id=1 [Redmine's session and feed tokens]",
	}
	if got := names(d.Filtered); !slices.Equal(got, wantFiltered) {
		t.Errorf("filtered:\n got %q\nwant %q", got, wantFiltered)
	}

	// An insert, a delete and a change of each kind of table.
	exec(`insert into issues (subject, status, updated_on) values ('four', 1, '2026-01-02 10:00:00')`)
	exec(`delete from issues where id = 2`)
	exec(`update issues set status = 5, subject = 'THREE', updated_on = '2026-01-02 11:00:00' where id = 3`)
	exec(`update journals set notes = notes || '!' where id = 1`)
	exec(`delete from members_roles where member_id = 2`)
	exec(`insert into schema_migrations values ('3')`)
	d = compare(statediff.Allowed{Tables: []string{"issues", "redmine/schema_*"}})
	want := []string{
		"changed notes of row redmine/journals id=1",
		"changed subject, status of row redmine/issues id=3 (allowed by issues)",
		"created row redmine/issues id=4 (allowed by issues)",
		"created row redmine/schema_migrations rowid=3 (allowed by redmine/schema_*)",
		"deleted row redmine/issues id=2 (allowed by issues)",
		"deleted row redmine/members_roles member_id=2,role_id=3",
	}
	got := names(d.Changes)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n got %q\nwant %q", got, want)
	}
	if v := d.Violations(); len(v) != 2 {
		t.Errorf("violations: %q", names(v))
	}
	for _, c := range d.Changes {
		if c.Key == "redmine/issues id=3" && !strings.Contains(c.TextDiff, "-subject = \"three\"\n-status = 1\n") {
			t.Errorf("the text diff of a changed row: %s", c.TextDiff)
		}
	}
	wantFiltered = []string{
		"changed updated_on of row redmine/issues id=1 [Redmine's timestamp of a record's last change]",
		"changed seq of row redmine/sqlite_sequence rowid=1 [SQLite's counters of AUTOINCREMENT keys]",
		"created row redmine/tokens id=1 [Redmine's session and feed tokens]",
	}
	if got := names(d.Filtered); !slices.Equal(got, wantFiltered) {
		t.Errorf("filtered:\n got %q\nwant %q", got, wantFiltered)
	}
}

// TestRowsBound stops listing rows at the bound, with a note.
func TestRowsBound(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a.db")
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`create table a (id integer primary key); insert into a values (1), (2), (3)`); err != nil {
		t.Fatal(err)
	}
	s := &statediff.Snapshot{}
	if err := Rows(context.Background(), s, Database{Service: "x", File: file}, statediff.NewBudget(statediff.Limits{MaxRows: 2})); err != nil {
		t.Fatal(err)
	}
	if len(s.Items) != 2 || len(s.Notes) != 1 || s.Apps["x"] != "" {
		t.Errorf("items %d, notes %q, apps %v", len(s.Items), s.Notes, s.Apps)
	}
}
