package service

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxDatabaseDepth bounds how deep in a data folder Databases looks.
const maxDatabaseDepth = 2

// Databases lists the SQLite database files of the running service's data
// folder (and of its folders, two deep), by their header, sorted; none
// when the service is not running.
func (in *Instances) Databases(name string) []string {
	dir, ok := in.Data(name)
	if !ok {
		return nil
	}
	var out []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if e.IsDir() {
			if rel != "." && strings.Count(rel, string(filepath.Separator)) >= maxDatabaseDepth-1 {
				return filepath.SkipDir
			}
			return nil
		}
		if e.Type().IsRegular() && isSQLite(p) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// sqliteHeader opens every SQLite 3 database file.
var sqliteHeader = []byte("SQLite format 3\x00")

func isSQLite(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	_, err = io.ReadFull(f, head)
	return err == nil && bytes.Equal(head, sqliteHeader)
}
