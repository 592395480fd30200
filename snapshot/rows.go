package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/statediff"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// Database is an SQLite database of a service whose rows a snapshot
// lists (an enterprise application's, in its instance's data folder).
type Database struct {
	// Service names the rows' origin, "SERVICE/TABLE": the suite's
	// service (with the file's name after a "/" where it has several).
	Service string
	File    string
}

// Rows lists the rows of every table of the database, each keyed by its
// primary key, in one read transaction, and names the application whose
// database it is (statediff.AppOfTables) for the noise of its rows.
func Rows(ctx context.Context, s *statediff.Snapshot, d Database, b *statediff.Budget) error {
	if _, err := os.Stat(d.File); err != nil {
		return err
	}
	u := url.URL{Scheme: "file", Path: d.File, RawQuery: "mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	type table struct {
		name  string
		rowid bool
		pk    []string
	}
	var tables []table
	rs, err := tx.QueryContext(ctx, `select name, coalesce(sql, '') from sqlite_master where type = 'table' order by name`)
	if err != nil {
		return err
	}
	for rs.Next() {
		var name, def string
		if err := rs.Scan(&name, &def); err != nil {
			rs.Close()
			return err
		}
		up := strings.ToUpper(def)
		if strings.HasPrefix(up, "CREATE VIRTUAL TABLE") {
			s.Note("%s: the virtual table %s is not listed", d.Service, name)
			continue
		}
		tables = append(tables, table{name: name, rowid: !strings.Contains(up, "WITHOUT ROWID")})
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return err
	}
	names := make([]string, len(tables))
	for i := range tables {
		names[i] = tables[i].name
	}
	if s.Apps == nil {
		s.Apps = map[string]string{}
	}
	s.Apps[d.Service] = statediff.AppOfTables(names)
	for _, t := range tables {
		pk, err := primaryKey(ctx, tx, t.name)
		if err != nil {
			return fmt.Errorf("table %s: %w", t.name, err)
		}
		if len(pk) == 0 && !t.rowid {
			s.Note("%s: the table %s has neither a primary key nor a rowid: not listed", d.Service, t.name)
			continue
		}
		q := "select * from " + quoteIdent(t.name)
		if len(pk) == 0 {
			q = "select rowid, * from " + quoteIdent(t.name) + " order by rowid"
		} else {
			quoted := make([]string, len(pk))
			for i, c := range pk {
				quoted[i] = quoteIdent(c)
			}
			q += " order by " + strings.Join(quoted, ", ")
		}
		if full, err := tableRows(ctx, tx, s, d.Service, t.name, pk, q, b); err != nil {
			return fmt.Errorf("table %s: %w", t.name, err)
		} else if full {
			return nil
		}
	}
	return nil
}

// primaryKey names the columns of a table's primary key, in its order.
func primaryKey(ctx context.Context, tx *sql.Tx, table string) ([]string, error) {
	rs, err := tx.QueryContext(ctx, "select name, pk from pragma_table_info(?) where pk > 0 order by pk", table)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var name string
		var n int
		if err := rs.Scan(&name, &n); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rs.Err()
}

// tableRows adds the rows q selects; full is true when the budget's rows
// are spent.
func tableRows(ctx context.Context, tx *sql.Tx, s *statediff.Snapshot, service, table string, pk []string, q string, b *statediff.Budget) (full bool, err error) {
	rs, err := tx.QueryContext(ctx, q)
	if err != nil {
		return false, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return false, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return false, err
		}
		var rowid any
		c, v := cols, vals
		if len(pk) == 0 {
			rowid, c, v = vals[0], cols[1:], vals[1:]
		}
		it, ok := b.RowItem(s, service, table, pk, rowid, c, slices.Clone(v))
		if !ok {
			return true, nil
		}
		s.Add(it)
	}
	return false, rs.Err()
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
