package statediff

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The rows of an application's database: one item a row, of kind Row,
// whose Origin is "SERVICE/TABLE" (the suite's service and the table),
// whose Key is "SERVICE/TABLE pk" ("rt/Tickets id=12", the primary key's
// columns "a=1,b=2", or the rowid of a table without one: "rowid=7"),
// and whose Value holds the columns a line each, "name = value" with the
// value a number, null or quoted text (a value over maxColumn bytes is
// cut, and its length and hash follow it, so that any change of it
// shows). A change of a row
// names the columns that differ (Change.What); the columns an
// application changes on its own (timestamps, sessions, caches:
// AppRowNoise) are filtered.

// maxColumn bounds the text of a column's value a row item keeps.
const maxColumn = 200

// RowItem makes the item of a row of table of service: pk names the
// primary key's columns (empty: rowid is the key), cols and vals the
// row's columns. It counts against the budget's rows; false when they are
// spent (the snapshot gets a note the first time).
func (b *Budget) RowItem(s *Snapshot, service, table string, pk []string, rowid any, cols []string, vals []any) (Item, bool) {
	return b.RowItemOf(s, service+"/"+table, pk, rowid, cols, vals)
}

// RowItemOf makes the item of a row of the table named origin (a
// service's "SERVICE/TABLE", a phone's content provider
// "content://sms"), as RowItem does.
func (b *Budget) RowItemOf(s *Snapshot, origin string, pk []string, rowid any, cols []string, vals []any) (Item, bool) {
	if b.rows >= b.Limits.MaxRows {
		if !b.rowsFull {
			b.rowsFull = true
			s.Note("more than %d rows: the rest are not listed", b.Limits.MaxRows)
		}
		return Item{}, false
	}
	b.rows++
	var key []string
	if len(pk) == 0 {
		key = append(key, "rowid="+cellKey(rowid))
	}
	full := sha256.New()
	v := make([]byte, 0, 64*len(cols))
	var enc []byte
	for i, c := range cols {
		enc = appendCell(enc[:0], vals[i])
		if slices.Contains(pk, c) {
			key = append(key, c+"="+cellKey(vals[i]))
		}
		full.Write([]byte(c))
		full.Write(enc)
		full.Write([]byte{0})
		v = append(v, c...)
		v = append(v, " = "...)
		if len(enc) > maxColumn {
			sum := sha256.Sum256(enc)
			v = append(v, Cut(string(enc), maxColumn)...)
			v = append(v, " sha256:"...)
			v = hex.AppendEncode(v, sum[:8])
		} else {
			v = append(v, enc...)
		}
		v = append(v, '\n')
	}
	it := Item{Kind: Row, Origin: origin, Key: origin + " " + strings.Join(key, ","), Value: string(v)}
	it.Hash = hex.EncodeToString(full.Sum(nil))
	return it, true
}

// appendCell appends a column's value as a row item shows it: a number,
// null, or quoted text (Go's quoting; bytes as text, times in RFC 3339).
func appendCell(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return strconv.AppendQuote(b, x)
	case []byte:
		return strconv.AppendQuote(b, string(x))
	case time.Time:
		return strconv.AppendQuote(b, x.UTC().Format(time.RFC3339Nano))
	}
	return strconv.AppendQuote(b, fmt.Sprint(v))
}

// cellKey is a key column's value as a key shows it.
func cellKey(v any) string {
	switch x := v.(type) {
	case []byte:
		return Cut(string(x), 64)
	case string:
		return Cut(x, 64)
	case nil:
		return "NULL"
	}
	return fmt.Sprint(v)
}

// rowColumns reads a row item's value into its columns' lines, by name.
func rowColumns(v string) (names []string, lines map[string]string) {
	lines = map[string]string{}
	for l := range strings.SplitSeq(v, "\n") {
		name, val, ok := strings.Cut(l, " = ")
		if !ok {
			continue
		}
		names = append(names, name)
		lines[name] = val
	}
	return names, lines
}

// rowDiffer names the columns in which two row items differ.
func rowDiffer(a, b Item) []string {
	if a.Hash == b.Hash && a.Value == b.Value {
		return nil
	}
	an, al := rowColumns(a.Value)
	bn, bl := rowColumns(b.Value)
	var what []string
	for _, n := range bn {
		if old, ok := al[n]; !ok || old != bl[n] {
			what = append(what, n)
		}
	}
	for _, n := range an {
		if _, ok := bl[n]; !ok {
			what = append(what, n)
		}
	}
	if len(what) == 0 {
		what = []string{"value"} // beyond what the cut values show
	}
	return what
}

// RowNoise is a table, or a column of a table's rows, that an application
// changes on its own: its sessions, caches, counters and timestamps.
type RowNoise struct {
	Table  string // a glob of the table's name
	Column string // a glob of the column's name; empty: every row of the table
	Why    string
}

// AppRowNoise is the noise of each application's database, by the
// application's name (AppOfTables recognizes them).
var AppRowNoise = map[string][]RowNoise{
	"tryton": {
		{"ir_session", "", "Tryton's sessions"},
		{"ir_session_wizard", "", "Tryton's wizard sessions"},
		{"ir_cache", "", "Tryton's cache"},
		{"ir_queue", "", "Tryton's task queue"},
		{"res_user_login_attempt", "", "Tryton's login attempts"},
		{"res_user_device", "", "Tryton's known devices"},
		{"*", "write_date", "Tryton's timestamp of a record's last change"},
		{"*", "write_uid", "Tryton's author of a record's last change"},
		{"*", "create_date", "Tryton's timestamp of a record's creation"},
		{"*", "create_uid", "Tryton's author of a record's creation"},
		{"res_user", "last_login", "Tryton's time of a user's last login"},
	},
	"request-tracker": {
		{"Sessions", "", "Request Tracker's sessions"},
		{"*", "LastUpdated", "Request Tracker's timestamp of a record's last change"},
		{"*", "LastUpdatedBy", "Request Tracker's author of a record's last change"},
		{"*", "Created", "Request Tracker's timestamp of a record's creation"},
		{"*", "Creator", "Request Tracker's author of a record's creation"},
		{"Tickets", "Told", "Request Tracker's time of the last reply"},
		{"Attributes", "", "Request Tracker's per-user state (recently viewed, preferences)"},
	},
	"redmine": {
		{"tokens", "", "Redmine's session and feed tokens"},
		{"*", "updated_on", "Redmine's timestamp of a record's last change"},
		{"*", "created_on", "Redmine's timestamp of a record's creation"},
		{"users", "last_login_on", "Redmine's time of a user's last login"},
		// The preferences keep the recently used projects, which a visit
		// of an issue changes; a preference set in the same column is
		// filtered with them.
		{"user_preferences", "others", "Redmine's preferences of a user, with the recently used projects"},
	},
	"": {
		{"sqlite_sequence", "", "SQLite's counters of AUTOINCREMENT keys"},
		{"sqlite_stat*", "", "SQLite's statistics"},
	},
}

// AppOfTables names the application whose database has these tables, by
// the tables only it has: "tryton", "request-tracker", "redmine", or ""
// for another.
func AppOfTables(tables []string) string {
	has := func(names ...string) bool {
		for _, n := range names {
			if !slices.Contains(tables, n) {
				return false
			}
		}
		return true
	}
	switch {
	case has("ir_model", "ir_translation", "res_user"):
		return "tryton"
	case has("Tickets", "CachedGroupMembers", "Transactions"):
		return "request-tracker"
	case has("issues", "journals", "schema_migrations"):
		return "redmine"
	}
	return ""
}

// rowNoise is the noise of the databases of a snapshot's services: each
// service's application's list, and SQLite's own tables of every one.
func rowNoise(apps map[string]string) []Noise {
	var out []Noise
	svcs := make([]string, 0, len(apps))
	for s := range apps {
		svcs = append(svcs, s)
	}
	slices.Sort(svcs)
	for _, svc := range svcs {
		for _, list := range [][]RowNoise{AppRowNoise[""], AppRowNoise[apps[svc]]} {
			for _, n := range list {
				out = append(out, Noise{Kind: Row, Pattern: svc + "/" + n.Table, Column: n.Column, Why: n.Why})
			}
		}
	}
	return out
}

// volatile says why a column of a row is noise, or "".
func volatile(noise []Noise, origin, col string) string {
	for _, n := range noise {
		if n.Kind == Row && n.Column != "" && matchKey(n.Pattern, origin) && matchKey(n.Column, col) {
			return n.Why
		}
	}
	return ""
}

// filterColumns splits the columns of a changed row into those that are
// noise (and why) and the others.
func filterColumns(noise []Noise, c Change) (rest []string, why []string) {
	for _, col := range c.What {
		if w := volatile(noise, c.Origin, col); w == "" {
			rest = append(rest, col)
		} else if !slices.Contains(why, w) {
			why = append(why, w)
		}
	}
	return rest, why
}

// withoutVolatile is a row item without its columns that are noise, for
// its text diff.
func withoutVolatile(noise []Noise, it *Item) *Item {
	if it == nil {
		return nil
	}
	c := *it
	var b strings.Builder
	for l := range strings.SplitSeq(it.Value, "\n") {
		name, _, ok := strings.Cut(l, " = ")
		if ok && volatile(noise, it.Origin, name) == "" {
			b.WriteString(l + "\n")
		}
	}
	c.Value = b.String()
	return &c
}
