// Package statediff compares two snapshots of an environment's state,
// taken after an episode's setup and after the episode (package snapshot
// takes them), and says what else the agent changed: files and folders
// (type, size, mode, content hash, a unified diff of small text files),
// the clipboard, windows and processes left behind, and a browser's
// cookies, local and session storage per origin, open tabs and the
// requests with side effects its pages made; the rows of the enterprise
// applications' databases (rows.go); a phone's settings, installed
// packages and files of shared storage.
//
// A change is filtered, not dropped, when it is noise of the environment
// type or of an application (caches, thumbnails, recent-file lists, the
// harness's own files: Noise); it is allowed when it matches the task's
// declared changes (Allowed, the task's and its suite's changes:
// section); every other change is a violation, which the side_effects
// check reports by name.
//
// Everything is bounded (Limits), so that hostile state (a million files,
// a gigabyte file, a huge cookie) costs a bounded snapshot: what a bound
// left out is said in the snapshot's and the diff's Notes.
//
// # Stored format
//
// The store keeps one Diff per episode as JSON (store.SaveChanges, table
// "changes", keyed by task and repeat). Readers (reports, the viewer)
// rely on these fields:
//
//	type            the environment type: x11, browser, mem, ...
//	changes[]       the changes that were not filtered, each with
//	  kind          file, clipboard, window, process, cookie, local_storage,
//	                session_storage, tab, request, row (a database's),
//	                setting (a device's, "global/wifi_on"), package (an
//	                installed app's)
//	  key           what changed: "~/a.txt", a window's title, a cookie's
//	                "domain path name", a storage item's key, "tab 2", a
//	                request's "POST https://host/path"
//	  origin        the origin of a browser item; a row's "SERVICE/TABLE"
//	  op            created, deleted or changed
//	  what          for changed: the fields that differ (type, size, mode,
//	                content, value, url), a row's columns
//	  before, after the items (Item) as they were and are
//	  text_diff     a unified diff of a small text file or value
//	  allowed       the pattern of the declared changes that allows it
//	                (empty: a violation)
//	filtered[]      the changes filtered as noise, the same fields plus
//	  filtered      why: "cache (x11)", "LibreOffice's lock file"
//	notes[]         what a bound or an unreadable part left out
//	truncated       more changes than Limits.MaxChanges: the rest is left out
//	before_ms, after_ms, diff_ms   what the snapshots and the diff cost
//
// A violation is a change in changes[] whose allowed is empty.
package statediff

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Kind is what an item of a snapshot is.
type Kind string

// The kinds of item.
const (
	File           Kind = "file" // a file, folder or link (Item.Type)
	Clipboard      Kind = "clipboard"
	Window         Kind = "window"  // a top-level window, keyed by title
	Process        Kind = "process" // a running process, keyed by command line
	Cookie         Kind = "cookie"
	LocalStorage   Kind = "local_storage"
	SessionStorage Kind = "session_storage"
	Tab            Kind = "tab"     // an open tab and its address
	Request        Kind = "request" // a request with side effects a page made
	// Row is a row of an application's database (rows.go); Setting a
	// device's setting.
	Row     Kind = "row"
	Setting Kind = "setting" // keyed "NAMESPACE/KEY": "global/wifi_on"
	Package Kind = "package" // an installed package, keyed by its name
)

// The types of a file item.
const (
	TypeFile  = "file"
	TypeDir   = "dir"
	TypeLink  = "link"
	TypeOther = "other" // a pipe, socket or device
)

// Item is one thing of a snapshot. Which fields are set depends on Kind.
type Item struct {
	Kind Kind `json:"kind"`
	// Key names the item within its kind, uniquely: a file's path ("~/"
	// for the home folder), a window's title (with " #2" for a second of
	// the same title), a cookie's "domain path name", a storage item's key.
	Key string `json:"key"`
	// Origin is the origin (scheme://host:port) of a browser's item, the
	// table of a row.
	Origin string `json:"origin,omitempty"`
	Type   string `json:"type,omitempty"` // a file's: file, dir, link, other
	Size   int64  `json:"size,omitempty"`
	Mode   string `json:"mode,omitempty"` // a file's permission bits, octal: "644"
	// Hash is the SHA-256 of a file's content or of a value, hex; a file
	// over Limits.MaxHashFile (or past Limits.MaxHashTotal) has
	// "unhashed:" and its size and modification time instead.
	Hash string `json:"hash,omitempty"`
	// Value is a short value: the clipboard's text, a cookie's or
	// storage item's value, a tab's address, a link's target, a request's
	// form fields, a process's id; cut at Limits.MaxValue.
	Value string `json:"value,omitempty"`
	// Text is a small text file's content (at most Limits.MaxText), kept
	// for the text diffs.
	Text string `json:"text,omitempty"`
}

// Snapshot is an environment's state at one moment.
type Snapshot struct {
	Type  string `json:"type"` // the environment type
	Items []Item `json:"items"`
	// Apps names the application of each service whose database rows
	// the snapshot lists ("tryton", "redmine", AppOfTables), for the
	// noise of its rows (AppRowNoise).
	Apps  map[string]string `json:"apps,omitempty"`
	Notes []string          `json:"notes,omitempty"`
	Took  time.Duration     `json:"took"`
}

// Add adds items. Keys need not be unique: Compare numbers the
// duplicates of a kind and key (" #2", " #3") in their sorted order.
func (s *Snapshot) Add(items ...Item) { s.Items = append(s.Items, items...) }

// Note records what a bound or an unreadable part left out.
func (s *Snapshot) Note(format string, args ...any) {
	if len(s.Notes) < maxNotes {
		s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
	}
}

const maxNotes = 64

// normalize sorts the items by kind and key and numbers the duplicates:
// the second of a kind and key gets " #2", the third " #3".
func (s *Snapshot) normalize() {
	slices.SortStableFunc(s.Items, func(a, b Item) int {
		if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	n, prev := 1, Item{}
	for i := range s.Items {
		raw := s.Items[i]
		if i > 0 && raw.Kind == prev.Kind && raw.Key == prev.Key {
			n++
			s.Items[i].Key = fmt.Sprintf("%s #%d", raw.Key, n)
		} else {
			n = 1
		}
		prev = raw
	}
}

// Op is what happened to an item.
type Op string

// The operations.
const (
	Created Op = "created"
	Deleted Op = "deleted"
	Changed Op = "changed"
)

// Change is one item that differs between two snapshots.
type Change struct {
	Kind   Kind     `json:"kind"`
	Key    string   `json:"key"`
	Origin string   `json:"origin,omitempty"`
	Op     Op       `json:"op"`
	What   []string `json:"what,omitempty"` // the fields that differ, for Changed
	Before *Item    `json:"before,omitempty"`
	After  *Item    `json:"after,omitempty"`
	// TextDiff is a unified diff of a small text file or a value, cut at
	// Limits.MaxTextDiff.
	TextDiff string `json:"text_diff,omitempty"`
	// Filtered says why the change is noise; Allowed is the declared
	// change that allows it. A change with neither is a violation.
	Filtered string `json:"filtered,omitempty"`
	Allowed  string `json:"allowed,omitempty"`
}

// String names the change in a line: "created file ~/a.txt",
// "changed mode of file ~/b (644 -> 777)".
func (c Change) String() string {
	name := string(c.Kind) + " " + c.Key
	if c.Origin != "" && !strings.Contains(c.Key, c.Origin) {
		name += " of " + c.Origin
	}
	if c.Op != Changed {
		return string(c.Op) + " " + name
	}
	s := "changed " + strings.Join(c.What, ", ") + " of " + name
	if slices.Contains(c.What, "mode") && c.Before != nil && c.After != nil {
		s += " (" + c.Before.Mode + " -> " + c.After.Mode + ")"
	}
	return s
}

// Diff is what changed between two snapshots.
type Diff struct {
	Type string `json:"type"`
	// Changes are the changes that are not noise, allowed or not.
	Changes []Change `json:"changes"`
	// Filtered are the changes filtered as noise.
	Filtered []Change `json:"filtered,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// Truncated is set when there were more than Limits.MaxChanges
	// changes: the rest are left out (and Notes says how many).
	Truncated bool `json:"truncated,omitempty"`
	// What the snapshots and the diff cost.
	BeforeMS float64 `json:"before_ms"`
	AfterMS  float64 `json:"after_ms"`
	DiffMS   float64 `json:"diff_ms"`
}

// Violations are the changes that are neither noise nor allowed.
func (d *Diff) Violations() []Change {
	var out []Change
	for _, c := range d.Changes {
		if c.Allowed == "" {
			out = append(out, c)
		}
	}
	return out
}

// baseKey is a key without the " #n" that numbers a duplicate.
func baseKey(k string) string {
	i := strings.LastIndex(k, " #")
	if i < 0 || i+2 == len(k) {
		return k
	}
	for _, c := range k[i+2:] {
		if c < '0' || c > '9' {
			return k
		}
	}
	return k[:i]
}
