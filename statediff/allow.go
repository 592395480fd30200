package statediff

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Allowed is what a task declares may change: its changes: section,
// joined with its suite's default. Paths, origins, tables and settings
// are globs of doublestar's ("*" within a folder or a host's label,
// "**" across folders); window titles and command lines are globs where
// "*" is any text.
type Allowed struct {
	// Paths are the files and folders that may be created, changed or
	// deleted: "~/Documents/report.odt", "~/out/**". A folder made for
	// allowed files only is allowed with them.
	Paths []string `json:"paths,omitempty"`
	// Origins are where a browser may keep cookies and storage, open tabs
	// and send requests with side effects: "http://127.0.0.1:*",
	// "https://*.example.com". A cookie, which has a domain, not an
	// origin, is matched by its host. A pattern with a path allows only
	// the tabs and requests of the addresses it matches
	// ("http://127.0.0.1:*/api/send/dana", "http://127.0.0.1:*/api/**").
	Origins []string `json:"origins,omitempty"`
	// Tables are the database tables whose rows may be inserted, deleted
	// or changed: "SERVICE/TABLE" ("rt/Tickets", "tryton/sale_*") or a
	// table of any service ("Transactions"); with a row's key after a
	// space, only the rows of that key ("rt/Tickets id=22"). Settings are the device
	// settings ("secure/*").
	Tables   []string `json:"tables,omitempty"`
	Settings []string `json:"settings,omitempty"`
	// Packages are the packages that may be installed or removed:
	// "com.example.*".
	Packages []string `json:"packages,omitempty"`
	// Windows are the titles of windows that may be left open (or
	// closed); Processes the command lines of processes that may be left
	// running (or ended).
	Windows   []string `json:"windows,omitempty"`
	Processes []string `json:"processes,omitempty"`
	// Clipboard allows the clipboard to change.
	Clipboard bool `json:"clipboard,omitempty"`
	// Watch are folders besides the home folder whose files the
	// snapshots list (where the environment can list them): "/etc/app";
	// on a phone also content providers whose rows they list
	// ("content://sms"), each row a row of the table named by the
	// address (tables: ["content://sms"]).
	Watch []string `json:"watch,omitempty"`
}

// Join is a and b together.
func (a Allowed) Join(b Allowed) Allowed {
	cat := func(x, y []string) []string {
		out := slices.Clone(x)
		for _, s := range y {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	return Allowed{Paths: cat(a.Paths, b.Paths), Origins: cat(a.Origins, b.Origins), Tables: cat(a.Tables, b.Tables),
		Settings: cat(a.Settings, b.Settings), Packages: cat(a.Packages, b.Packages), Windows: cat(a.Windows, b.Windows), Processes: cat(a.Processes, b.Processes),
		Clipboard: a.Clipboard || b.Clipboard, Watch: cat(a.Watch, b.Watch)}
}

// Problems lists what is wrong with the declared changes, a line each,
// naming the field: "paths[1]: ...".
func (a Allowed) Problems() []string {
	var out []string
	globs := func(field string, list []string, check func(string) string) {
		for i, p := range list {
			if why := check(p); why != "" {
				out = append(out, fmt.Sprintf("%s[%d]: %s", field, i, why))
			}
		}
	}
	path := func(p string) string {
		switch {
		case p == "":
			return "is empty"
		case p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "**"):
			return fmt.Sprintf("%q is not a path of the home folder (~/...) or an absolute one", p)
		case !ValidGlob(p):
			return fmt.Sprintf("%q is not a valid glob", p)
		}
		return ""
	}
	glob := func(p string) string {
		switch {
		case p == "":
			return "is empty"
		case !ValidGlob(p):
			return fmt.Sprintf("%q is not a valid glob", p)
		}
		return ""
	}
	origin := func(p string) string {
		if why := glob(p); why != "" {
			return why
		}
		if p != "*" && !strings.Contains(p, "://") {
			return fmt.Sprintf("%q is not an origin (scheme://host[:port], globs allowed)", p)
		}
		return ""
	}
	text := func(p string) string {
		if p == "" {
			return "is empty"
		}
		return ""
	}
	watch := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "content://"); ok {
			if rest == "" || strings.ContainsAny(rest, "*?[{ \t'\"\\;&|$`()<>") {
				return fmt.Sprintf("%q is not a content provider's address (content://AUTHORITY[/PATH], no globs or shell characters)", p)
			}
			return ""
		}
		if p == "" || (!strings.HasPrefix(p, "/") && p != "~" && !strings.HasPrefix(p, "~/")) || strings.ContainsAny(p, "*?[{") {
			return fmt.Sprintf("%q is not a folder's path (~/... or absolute, no globs)", p)
		}
		return ""
	}
	globs("paths", a.Paths, path)
	globs("origins", a.Origins, origin)
	globs("tables", a.Tables, glob)
	globs("settings", a.Settings, glob)
	globs("packages", a.Packages, glob)
	globs("windows", a.Windows, text)
	globs("processes", a.Processes, text)
	globs("watch", a.Watch, watch)
	return out
}

// Classify marks each change that the declared changes allow with the
// pattern that allows it, and clears the mark of the others.
func (d *Diff) Classify(a Allowed) {
	for i := range d.Changes {
		d.Changes[i].Allowed = a.allows(d.Changes[i])
	}
	// A folder made only to hold allowed files is allowed with them.
	for i, c := range d.Changes {
		if c.Allowed != "" || c.Kind != File || c.Op != Created || c.After == nil || c.After.Type != TypeDir {
			continue
		}
		inside, clean := 0, true
		for _, o := range d.Changes {
			if o.Kind == File && strings.HasPrefix(o.Key, c.Key+"/") {
				if o.Allowed == "" && !(o.Op == Created && o.After != nil && o.After.Type == TypeDir) {
					clean = false
				}
				if o.Allowed != "" {
					inside++
				}
			}
		}
		if clean && inside > 0 {
			d.Changes[i].Allowed = "(a folder of allowed files)"
		}
	}
}

// allows returns the pattern that allows c, or "".
func (a Allowed) allows(c Change) string {
	first := func(list []string, match func(string) bool) string {
		for _, p := range list {
			if match(p) {
				return p
			}
		}
		return ""
	}
	switch c.Kind {
	case File:
		return first(a.Paths, func(p string) bool { return matchKey(p, c.Key) })
	case Cookie:
		return first(a.Origins, func(p string) bool { return matchHost(p, c.Origin) })
	case LocalStorage, SessionStorage:
		return first(a.Origins, func(p string) bool { return p == "*" || !hasPath(p) && matchKey(p, c.Origin) })
	case Tab, Request:
		// A pattern with a path allows the tabs and requests of the
		// addresses it matches; one without, all of its origins'.
		addr := baseKey(c.Key)
		if c.Kind == Request {
			_, addr, _ = strings.Cut(addr, " ")
		}
		return first(a.Origins, func(p string) bool {
			if hasPath(p) {
				return matchKey(p, addr)
			}
			return p == "*" || matchKey(p, c.Origin)
		})
	case Row:
		return first(a.Tables, func(p string) bool {
			// "TABLE KEY" allows the rows of that key only:
			// "rt/Tickets id=22", "Transactions *".
			if table, key, ok := strings.Cut(p, " "); ok {
				_, rowKey, _ := strings.Cut(baseKey(c.Key), " ")
				return matchTable(table, c.Origin) && matchKey(key, rowKey)
			}
			return matchTable(p, c.Origin)
		})
	case Setting:
		return first(a.Settings, func(p string) bool { return matchKey(p, c.Key) })
	case Package:
		return first(a.Packages, func(p string) bool { return matchKey(p, c.Key) })
	case Window:
		return first(a.Windows, func(p string) bool { return matchText(p, baseKey(c.Key)) })
	case Process:
		return first(a.Processes, func(p string) bool { return matchText(p, baseKey(c.Key)) })
	case Clipboard:
		if a.Clipboard {
			return "clipboard"
		}
	}
	return ""
}

// hasPath says whether an origin pattern names addresses: a path after
// its host ("http://127.0.0.1:*/api/send/dana").
func hasPath(p string) bool {
	_, rest, ok := strings.Cut(p, "://")
	return ok && strings.Contains(rest, "/")
}

// matchTable matches a table pattern against a row's "SERVICE/TABLE": a
// pattern with a "/" against both, one without against the table of any
// service.
func matchTable(pattern, origin string) bool {
	if strings.Contains(pattern, "/") {
		return matchKey(pattern, origin)
	}
	return matchKey(pattern, origin[strings.LastIndex(origin, "/")+1:])
}

// matchHost matches an origin pattern against a cookie's host: the
// pattern's host part (scheme and port left out) against the host.
func matchHost(pattern, host string) bool {
	if pattern == "*" {
		return true
	}
	h := pattern
	if _, rest, ok := strings.Cut(pattern, "://"); ok {
		h = rest
	}
	h, _, _ = strings.Cut(h, "/")
	if strings.HasPrefix(h, "[") { // [::1]:port
		if i := strings.Index(h, "]"); i > 0 {
			h = h[:i+1]
		}
	} else if i := strings.LastIndex(h, ":"); i >= 0 {
		h = h[:i]
	}
	return matchKey(h, host)
}

// matchText matches a glob where "*" is any text and "?" any character.
func matchText(pattern, s string) bool {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString("(?s:.*)")
		case '?':
			b.WriteString("(?s:.)")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(s)
}

// OriginOf is the origin (scheme://host:port, the port as written) of a
// web address, or "" for one without a host (about:blank, data:).
func OriginOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}
