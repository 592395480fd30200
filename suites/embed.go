// Package suites carries the built-in task suites inside the binary, so
// that `proctor run` works from any directory, not only from a checkout.
// The task loader reads folders (task.Load takes a path, and tasks name
// their assets by path), so Dir writes an embedded suite out once to the
// user's cache and returns that folder.
package suites

import (
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// FS holds the built-in suites, one top-level folder each. The all:
// prefix keeps files whose names start with '.' or '_', which a plain
// pattern would drop without a word: the binary's suite must be the
// folder as it is, assets included.
//
//go:embed all:desktop all:enterprise all:safety all:science all:web
var FS embed.FS

// Names lists the built-in suites.
func Names() []string {
	entries, _ := fs.ReadDir(FS, ".") // embedded: cannot fail
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// Dir returns a folder holding the built-in suite name, written to
// os.UserCacheDir()/proctor/suites/<hash>/<name> the first time and reused
// after. The hash is of the suite's embedded content, so a binary with a
// changed suite writes a new folder rather than trusting an old one.
func Dir(name string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("built-in suite %s: no cache folder to write it to: %w", name, err)
	}
	return dirIn(filepath.Join(cache, "proctor", "suites"), name)
}

// hashes caches each suite's content hash: the content never changes
// while the binary runs.
var hashes sync.Map // name -> string

// dirIn is Dir under root (tests choose the root).
func dirIn(root, name string) (string, error) {
	if !valid(name) {
		return "", fmt.Errorf("no built-in suite %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	sum, err := contentHash(name)
	if err != nil {
		return "", err
	}
	parent := filepath.Join(root, sum)
	dir := filepath.Join(parent, name)
	// A folder there is complete: it only ever appears by rename.
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	// Written beside its final place (same file system) and renamed, so
	// that another process never sees half a suite; a concurrent writer
	// may win the rename, and its folder is as good as ours.
	tmp, err := os.MkdirTemp(parent, "."+name+"-tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // a no-op after a successful rename
	if err := writeTree(name, tmp); err != nil {
		return "", fmt.Errorf("built-in suite %s: %w", name, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
			return dir, nil
		}
		return "", fmt.Errorf("built-in suite %s: %w", name, err)
	}
	return dir, nil
}

// valid reports whether name is one built-in suite (and not a path that
// would reach elsewhere in FS).
func valid(name string) bool {
	for _, n := range Names() {
		if n == name {
			return true
		}
	}
	return false
}

// contentHash fingerprints the suite: every path and every file's bytes,
// each length-prefixed so that no two suites hash alike by shifting bytes
// between a name and a content.
func contentHash(name string) (string, error) {
	if h, ok := hashes.Load(name); ok {
		return h.(string), nil
	}
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	err := fs.WalkDir(FS, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			field([]byte(p + "/"))
			return nil
		}
		b, err := FS.ReadFile(p)
		if err != nil {
			return err
		}
		field([]byte(p))
		field(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	s := hex.EncodeToString(h.Sum(nil))[:16]
	hashes.Store(name, s)
	return s, nil
}

// writeTree writes the embedded folder name into dir: folders 0755, files
// 0644, set explicitly so that the umask of the first run does not decide
// what later runs (and other tools) may read.
func writeTree(name, dir string) error {
	if err := os.Chmod(dir, 0o755); err != nil { // MkdirTemp makes it 0700
		return err
	}
	return fs.WalkDir(FS, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, name), "/")
		if rel == "" {
			return nil
		}
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			if err := os.Mkdir(target, 0o755); err != nil {
				return err
			}
			return os.Chmod(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return errors.New(path.Join(name, rel) + ": not a regular file")
		}
		b, err := FS.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			return err
		}
		return os.Chmod(target, 0o644)
	})
}
