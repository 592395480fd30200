package statediff

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
	"unicode/utf8"
)

// Budget is what is left of a snapshot's limits while it is taken: the
// files listed, the bytes hashed and the text kept so far.
type Budget struct {
	Limits   Limits
	files    int
	hashed   int64
	text     int
	full     bool // the file count was reached (noted once)
	rows     int
	rowsFull bool // the row count was reached (noted once)
}

// NewBudget starts a snapshot's budget.
func NewBudget(l Limits) *Budget { return &Budget{Limits: l.OrDefault()} }

// File counts a file; false when the file count is reached (the snapshot
// gets a note the first time).
func (b *Budget) File(s *Snapshot) bool {
	if b.files >= b.Limits.MaxFiles {
		if !b.full {
			b.full = true
			s.Note("more than %d files: the rest are not listed", b.Limits.MaxFiles)
		}
		return false
	}
	b.files++
	return true
}

// Hashable reports whether a file of size bytes may be read and hashed,
// and counts it when it may.
func (b *Budget) Hashable(size int64) bool {
	if size > b.Limits.MaxHashFile || b.hashed+size > b.Limits.MaxHashTotal {
		return false
	}
	b.hashed += size
	return true
}

// Content fills a file item from its content: its hash, and its text
// when it is a small text file and the text budget allows.
func (b *Budget) Content(it *Item, data []byte) {
	sum := sha256.Sum256(data)
	it.Hash = hex.EncodeToString(sum[:])
	it.Size = int64(len(data))
	if len(data) > 0 && len(data) <= b.Limits.MaxText && b.text+len(data) <= b.Limits.MaxTextTotal &&
		utf8.Valid(data) && bytes.IndexByte(data, 0) < 0 {
		it.Text = string(data)
		b.text += len(data)
	}
}

// Unhashed is the hash that stands for a file that was not read: its
// size and modification time.
func Unhashed(size int64, mtimeNS int64) string {
	return fmt.Sprintf("unhashed:%d:%d", size, mtimeNS)
}

// Value fills an item's Value and Hash from a value, cut at MaxValue.
func (b *Budget) Value(it *Item, v string) {
	sum := sha256.Sum256([]byte(v))
	it.Hash = hex.EncodeToString(sum[:])
	it.Value = Cut(v, b.Limits.MaxValue)
}

// Walk lists the files and folders beneath a folder of the local file
// system, opened as root (no link leads out of it), with their keys
// under prefix ("~" for the home folder): type, size, mode, content hash
// and the text of small text files, within the budget.
func Walk(s *Snapshot, root *os.Root, prefix string, b *Budget) error {
	return fs.WalkDir(root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			s.Note("%s: %v", path.Join(prefix, p), err)
			return nil
		}
		if p == "." {
			return nil
		}
		if !b.File(s) {
			return fs.SkipAll
		}
		key := path.Join(prefix, p)
		info, err := e.Info()
		if err != nil {
			s.Note("%s: %v", key, err)
			return nil
		}
		it := Item{Kind: File, Key: key, Mode: fmt.Sprintf("%o", info.Mode().Perm())}
		switch {
		case info.IsDir():
			it.Type = TypeDir
		case info.Mode()&fs.ModeSymlink != 0:
			it.Type = TypeLink
			if t, err := root.Readlink(p); err == nil {
				b.Value(&it, t)
			}
		case info.Mode().IsRegular():
			it.Type, it.Size = TypeFile, info.Size()
			it.Hash = Unhashed(info.Size(), info.ModTime().UnixNano())
			if b.Hashable(info.Size()) {
				if data, err := readRegular(root, p, b.Limits.MaxHashFile); err == nil {
					b.Content(&it, data)
				} else {
					s.Note("%s: %v", key, err)
				}
			}
		default:
			it.Type = TypeOther
		}
		s.Add(it)
		return nil
	})
}

// readRegular reads a regular file of root, at most max bytes, without
// blocking on a pipe put in its place.
func readRegular(root *os.Root, p string, max int64) ([]byte, error) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, max))
}
