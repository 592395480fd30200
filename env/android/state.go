package android

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/statediff"
)

// The state a snapshot of a phone lists (package snapshot): its global,
// secure and system settings (`settings list`), its installed packages
// (`pm list packages`), the rows of the content providers watched
// (`content query`) and the files of shared storage and of the watched
// folders under Roots (find, stat and sha256sum, which Android's toybox
// has). The shell's answers bound what is read: at most snapshotFiles
// files, and the hashes of files up to the budget's MaxHashFile.

// snapshotFiles bounds the files a phone's snapshot lists (a command's
// output carries their listing).
const snapshotFiles = 4000

// Namespaces are the namespaces of a device's settings.
var Namespaces = []string{"global", "secure", "system"}

// SnapshotDevice lists the phone's settings, packages and files into s.
func (p *Phone) SnapshotDevice(ctx context.Context, s *statediff.Snapshot, watch []string, b *statediff.Budget) error {
	if err := p.alive(); err != nil {
		return err
	}
	for _, ns := range Namespaces {
		out, err := p.shell(ctx, "settings list "+ns)
		if err != nil {
			return err
		}
		for _, kv := range ParseSettings(out) {
			it := statediff.Item{Kind: statediff.Setting, Key: ns + "/" + kv[0]}
			b.Value(&it, kv[1])
			s.Add(it)
		}
	}
	out, err := p.shell(ctx, "pm list packages")
	if err != nil {
		return err
	}
	for l := range strings.SplitSeq(out, "\n") {
		if pkg, ok := strings.CutPrefix(strings.TrimSpace(l), "package:"); ok && pkg != "" {
			s.Add(statediff.Item{Kind: statediff.Package, Key: pkg})
		}
	}
	roots := []string{Home}
	for _, w := range watch {
		if strings.HasPrefix(w, "content://") {
			if err := p.snapshotProvider(ctx, s, w, b); err != nil {
				return err
			}
			continue
		}
		r, err := Resolve(w)
		if err != nil {
			s.Note("watch %s: %v", w, err)
			continue
		}
		roots = append(roots, r)
	}
	return p.snapshotFiles(ctx, s, roots, b)
}

// ParseSettings reads `settings list`'s "key=value" lines; a line without
// "=" continues the value before it (a value with a line break).
func ParseSettings(out string) [][2]string {
	var kvs [][2]string
	for l := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		k, v, ok := strings.Cut(l, "=")
		switch {
		case ok && k != "" && !strings.ContainsAny(k, " \t"):
			kvs = append(kvs, [2]string{k, v})
		case len(kvs) > 0:
			kvs[len(kvs)-1][1] += "\n" + l
		}
	}
	return kvs
}

// snapshotFiles lists the files under the roots: type, size, mode and
// time with stat, then the hashes of the small ones.
func (p *Phone) snapshotFiles(ctx context.Context, s *statediff.Snapshot, roots []string, b *statediff.Budget) error {
	quoted := make([]string, len(roots))
	for i, r := range roots {
		quoted[i] = Quote(r + "/")
	}
	all := strings.Join(quoted, " ")
	// One find: each entry's stat line, and the hash of each small file
	// (the two kinds of line told apart by their form), in one command.
	out, err := p.shell(ctx, fmt.Sprintf("find %s -mindepth 1 -exec stat -c '%%F|%%s|%%a|%%Y|%%n' {} + -type f -size -%dc -exec sha256sum {} + 2>/dev/null | head -n %d; true",
		all, b.Limits.MaxHashFile+1, 2*snapshotFiles+1))
	if err != nil {
		return err
	}
	var hashes []string
	key := func(name string) string {
		name = path.Clean(strings.ReplaceAll(name, "//", "/"))
		for _, h := range []string{Home, "/storage/emulated/0"} {
			if name == h || strings.HasPrefix(name, h+"/") {
				return "~" + strings.TrimPrefix(name, h)
			}
		}
		return name
	}
	byKey := map[string]int{}
	n := 0
	for l := range strings.SplitSeq(out, "\n") {
		if sum, _, ok := strings.Cut(l, "  "); ok && len(sum) == 64 && !strings.Contains(sum, "|") {
			hashes = append(hashes, l)
			continue
		}
		f := strings.SplitN(l, "|", 5)
		if len(f) != 5 {
			continue
		}
		if n++; n > snapshotFiles {
			s.Note("more than %d files on the phone: the rest are not listed", snapshotFiles)
			break
		}
		size, err1 := strconv.ParseInt(f[1], 10, 64)
		mode, err2 := strconv.ParseUint(f[2], 8, 32)
		mtime, err3 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || !b.File(s) {
			continue
		}
		it := statediff.Item{Kind: statediff.File, Key: key(f[4]), Mode: fmt.Sprintf("%o", mode&0o777)}
		switch f[0] {
		case "directory":
			it.Type = statediff.TypeDir
		case "regular file", "regular empty file":
			it.Type, it.Size, it.Hash = statediff.TypeFile, size, statediff.Unhashed(size, mtime*1e9)
		case "symbolic link":
			it.Type = statediff.TypeLink
		default:
			it.Type = statediff.TypeOther
		}
		if _, dup := byKey[it.Key]; dup {
			continue
		}
		byKey[it.Key] = len(s.Items)
		s.Add(it)
	}
	for _, l := range hashes {
		sum, name, ok := strings.Cut(l, "  ")
		if !ok || len(sum) != 64 {
			continue
		}
		if i, ok := byKey[key(name)]; ok && s.Items[i].Type == statediff.TypeFile {
			s.Items[i].Hash = sum
		}
	}
	return nil
}

// snapshotProvider lists the rows of a content provider (`content query
// --uri URI`), each a row item of the table URI keyed by its _id (or, for
// a provider without one, by a hash of its values, so that a change of
// such a row shows as one deleted and one made).
func (p *Phone) snapshotProvider(ctx context.Context, s *statediff.Snapshot, uri string, b *statediff.Budget) error {
	if strings.ContainsAny(uri, " \t'\"\\;&|$`") {
		s.Note("watch %s: not a content provider's address", uri)
		return nil
	}
	res, err := p.dev.Shell(ctx, "content query --uri "+uri)
	if err != nil {
		return fmt.Errorf("android %s: content query --uri %s: %w", p.serial, uri, err)
	}
	// The content tool tells a provider's refusal on its standard error,
	// with a status of 0 on some releases.
	if res.ExitCode != 0 || strings.HasPrefix(res.Stderr, "Error") {
		s.Note("watch %s: %s", uri, statediff.Cut(strings.TrimSpace(res.Stderr+res.Stdout), 300))
		return nil
	}
	for _, row := range ParseContentRows(res.Stdout) {
		cols := make([]string, len(row))
		vals := make([]any, len(row))
		var pk []string
		for i, kv := range row {
			cols[i] = kv[0]
			if kv[0] == "_id" {
				pk = []string{"_id"}
			}
			if kv[1] == "NULL" {
				continue // nil: SQL's NULL, as the content tool shows it
			}
			vals[i] = kv[1]
		}
		var rowid any
		if pk == nil {
			h := sha256.New()
			for _, kv := range row {
				h.Write([]byte(kv[0] + "=" + kv[1] + "\x00"))
			}
			rowid = hex.EncodeToString(h.Sum(nil)[:8])
		}
		it, ok := b.RowItemOf(s, uri, pk, rowid, cols, vals)
		if !ok {
			break
		}
		s.Add(it)
	}
	return nil
}

// contentRow starts a row of the content tool's query: "Row: 0 ".
var contentRow = regexp.MustCompile(`^Row: [0-9]+ `)

// contentColumn starts a column after the first: ", name=".
var contentColumn = regexp.MustCompile(`, ([A-Za-z_][A-Za-z0-9_]*)=`)

// ParseContentRows reads the rows `content query` prints, "Row: 0
// _id=1, address=+15550101, body=hi": a row's columns as (name, value)
// in order. A line that does not start a row continues the last value (a
// value with a line break). The tool does not quote values: a value
// holding ", NAME=" splits there (the stand-in's and Android's output
// alike).
func ParseContentRows(out string) [][][2]string {
	var rows [][][2]string
	var text []string // each row's text
	for l := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		if m := contentRow.FindString(l); m != "" {
			text = append(text, l[len(m):])
		} else if len(text) > 0 {
			text[len(text)-1] += "\n" + l
		}
	}
	for _, t := range text {
		first, _, ok := strings.Cut(t, "=")
		if !ok || first == "" || strings.ContainsAny(first, " ,\n") {
			continue
		}
		var row [][2]string
		name, start := first, len(first)+1
		for {
			m := contentColumn.FindStringSubmatchIndex(t[start:])
			if m == nil {
				row = append(row, [2]string{name, t[start:]})
				break
			}
			row = append(row, [2]string{name, t[start : start+m[0]]})
			name = t[start+m[2] : start+m[3]]
			start += m[1]
		}
		rows = append(rows, row)
	}
	return rows
}
