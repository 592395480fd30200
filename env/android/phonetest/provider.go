package phonetest

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/observe"
)

// Provider is a table a content provider of the phone serves at one
// address ("content://sms"), as the content tool reaches it: `content
// query|insert|update|delete --uri URI`, and URI/ID for one row. The
// stand-in keeps the rows in memory; a real phone keeps them in the
// provider's database.
type Provider struct {
	// Columns are the table's columns, in the order a query lists them;
	// the first is the row's key (_id), given by the provider on insert
	// (one past the largest so far) unless the insert binds it.
	Columns []string
	rows    []map[string]*string // a column's value; nil or absent: NULL
	next    int
}

// SMS is the columns of the stand-in's messages (content://sms), those
// of Android's Telephony.Sms the tasks read.
var SMS = []string{"_id", "thread_id", "address", "date", "body", "read", "seen", "type"}

// Rows are the provider's rows: a column's value by name ("" for NULL is
// not told apart here; Query shows it).
func (p *Provider) Rows() []map[string]string {
	var out []map[string]string
	for _, r := range p.rows {
		m := map[string]string{}
		for k, v := range r {
			if v != nil {
				m[k] = *v
			}
		}
		out = append(out, m)
	}
	return out
}

// contentErr is the content tool's answer to a provider's refusal.
func contentErr(uri, msg string) (observe.CommandResult, bool) {
	auth, _, _ := strings.Cut(strings.TrimPrefix(uri, "content://"), "/")
	return observe.CommandResult{Stderr: "Error while accessing provider:" + auth + "\njava.lang.IllegalArgumentException: " + msg + "\n", ExitCode: 1}, true
}

// content answers `content query|insert|update|delete` (args after
// "content"): the settings through contentQuery, the phone's providers
// here.
func (ph *Phone) content(args []string) (observe.CommandResult, bool) {
	op := args[0]
	var uri, where string
	var projection []string
	var binds [][3]string
	for i := 1; i < len(args); i++ {
		if i+1 >= len(args) {
			return observe.CommandResult{Stderr: "Error: No value for " + args[i] + "\n", ExitCode: 1}, true
		}
		switch args[i] {
		case "--uri":
			uri = args[i+1]
		case "--where":
			where = args[i+1]
		case "--projection":
			projection = strings.Split(args[i+1], ":")
		case "--bind":
			col, rest, ok1 := strings.Cut(args[i+1], ":")
			typ, val, ok2 := strings.Cut(rest, ":")
			if !ok1 || !ok2 || !strings.Contains("sbilfdn", typ) || len(typ) != 1 {
				return observe.CommandResult{Stderr: "Error: Invalid binding: " + args[i+1] + "\n", ExitCode: 1}, true
			}
			binds = append(binds, [3]string{col, typ, val})
		case "--user", "--sort":
		default:
			return observe.CommandResult{Stderr: "Error: Unknown argument: " + args[i] + "\n", ExitCode: 1}, true
		}
		i++
	}
	if uri == "" {
		return observe.CommandResult{Stderr: "Error: Content provider URI not specified\n", ExitCode: 1}, true
	}
	if strings.HasPrefix(uri, "content://settings/") {
		if op != "query" {
			return contentErr(uri, "the stand-in changes settings through `settings put` only")
		}
		return ph.contentQuery(uri, where, projection)
	}
	base, id := uri, ""
	p := ph.Providers[base]
	if p == nil {
		if i := strings.LastIndex(uri, "/"); i > len("content://") {
			if _, err := strconv.Atoi(uri[i+1:]); err == nil {
				base, id = uri[:i], uri[i+1:]
				p = ph.Providers[base]
			}
		}
	}
	if p == nil {
		return contentErr(uri, "Unknown URL "+uri)
	}
	match, err := parseWhere(where, p.Columns)
	if err != nil {
		return contentErr(uri, err.Error())
	}
	sel := func(r map[string]*string) bool {
		if id != "" && (r[p.Columns[0]] == nil || *r[p.Columns[0]] != id) {
			return false
		}
		return match(r)
	}
	values := map[string]*string{}
	for _, b := range binds {
		if !slices.Contains(p.Columns, b[0]) {
			return contentErr(uri, "table has no column named "+b[0])
		}
		if b[0] == p.Columns[0] && (op != "insert" || b[1] != "i" && b[1] != "l") {
			return contentErr(uri, "the stand-in takes a row's "+b[0]+" on insert only, as a number")
		}
		v := b[2]
		switch b[1] {
		case "n":
			values[b[0]] = nil
			continue
		case "b":
			v = map[bool]string{true: "1", false: "0"}[v == "true"]
		}
		values[b[0]] = &v
	}
	switch op {
	case "query":
		cols := p.Columns
		if len(projection) > 0 {
			for _, c := range projection {
				if !slices.Contains(p.Columns, c) {
					return contentErr(uri, "no such column: "+c)
				}
			}
			cols = projection
		}
		var b strings.Builder
		n := 0
		for _, r := range p.rows {
			if !sel(r) {
				continue
			}
			parts := make([]string, len(cols))
			for i, c := range cols {
				v := "NULL"
				if r[c] != nil {
					v = *r[c]
				}
				parts[i] = c + "=" + v
			}
			fmt.Fprintf(&b, "Row: %d %s\n", n, strings.Join(parts, ", "))
			n++
		}
		if n == 0 {
			b.WriteString("No result found.\n")
		}
		return observe.CommandResult{Stdout: b.String()}, true
	case "insert":
		if where != "" || id != "" {
			return contentErr(uri, "an insert takes no where clause and no row")
		}
		key := strconv.Itoa(p.next + 1)
		if v := values[p.Columns[0]]; v != nil {
			n, err := strconv.Atoi(*v)
			if err != nil {
				return contentErr(uri, "datatype mismatch: "+p.Columns[0]+"="+*v)
			}
			for _, r := range p.rows {
				if *r[p.Columns[0]] == strconv.Itoa(n) {
					return contentErr(uri, "UNIQUE constraint failed: "+p.Columns[0]+"="+*v)
				}
			}
			key = strconv.Itoa(n)
		}
		n, _ := strconv.Atoi(key)
		p.next = max(p.next, n)
		r := map[string]*string{}
		for k, v := range values {
			r[k] = v
		}
		r[p.Columns[0]] = &key
		p.rows = append(p.rows, r)
	case "update":
		if len(values) == 0 {
			return contentErr(uri, "Empty values")
		}
		for _, r := range p.rows {
			if sel(r) {
				for k, v := range values {
					r[k] = v
				}
			}
		}
	case "delete":
		p.rows = slices.DeleteFunc(p.rows, sel)
	}
	return observe.CommandResult{}, true
}

// whereCond is one condition of the where clauses the stand-in takes:
// COL = 'TEXT', COL = NUMBER, COL != ..., COL LIKE 'PATTERN'.
var whereCond = regexp.MustCompile(`(?i)^\s*\(?\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=|!=|<>|\s+LIKE\s+)\s*(?:'((?:[^']|'')*)'|"([^"]*)"|(-?[0-9]+(?:\.[0-9]+)?))\s*\)?\s*$`)

// whereAnd splits a where clause at AND.
var whereAnd = regexp.MustCompile(`(?i)\s+AND\s+`)

// parseWhere reads a where clause of conditions joined by AND (SQLite's
// whole grammar is a real provider's; the stand-in refuses the rest by
// name). Empty: every row.
func parseWhere(where string, cols []string) (func(map[string]*string) bool, error) {
	if strings.TrimSpace(where) == "" {
		return func(map[string]*string) bool { return true }, nil
	}
	type cond struct {
		col, op, val string
		like         *regexp.Regexp
	}
	var conds []cond
	for _, part := range whereAnd.Split(where, -1) {
		m := whereCond.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("the stand-in takes where clauses of the form COL='TEXT', COL=NUMBER, COL!=... or COL LIKE 'PATTERN' joined by AND, not %q", part)
		}
		if !slices.Contains(cols, m[1]) {
			return nil, fmt.Errorf("no such column: %s", m[1])
		}
		c := cond{col: m[1], op: strings.ToUpper(strings.TrimSpace(m[2])), val: strings.ReplaceAll(m[3], "''", "'") + m[4] + m[5]}
		if c.op == "LIKE" {
			var re strings.Builder
			re.WriteString("(?is)^")
			for _, r := range c.val {
				switch r {
				case '%':
					re.WriteString(".*")
				case '_':
					re.WriteString(".")
				default:
					re.WriteString(regexp.QuoteMeta(string(r)))
				}
			}
			re.WriteString("$")
			c.like = regexp.MustCompile(re.String())
		}
		conds = append(conds, c)
	}
	return func(r map[string]*string) bool {
		for _, c := range conds {
			v := r[c.col]
			if v == nil { // NULL matches nothing, as in SQL
				return false
			}
			var ok bool
			switch c.op {
			case "=":
				ok = *v == c.val
			case "!=", "<>":
				ok = *v != c.val
			default:
				ok = c.like.MatchString(*v)
			}
			if !ok {
				return false
			}
		}
		return true
	}, nil
}
