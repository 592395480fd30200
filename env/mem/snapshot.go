package mem

import (
	"context"
	"path"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/statediff"
)

// SnapshotFiles lists the files of the home folder and of the watched
// folders (package snapshot), and the folders that hold them, keyed
// "~/..." in the home folder. Files have no modes here: every file is
// 644 and every folder 755.
func (e *Env) SnapshotFiles(_ context.Context, s *statediff.Snapshot, watch []string, b *statediff.Budget) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down != nil {
		return e.down
	}
	roots := []string{Home}
	for _, w := range watch {
		if full, err := confine(w); err == nil {
			roots = append(roots, full)
		}
	}
	key := func(p string) string {
		if p == Home || strings.HasPrefix(p, Home+"/") {
			return "~" + strings.TrimPrefix(p, Home)
		}
		return p
	}
	under := func(p string) string {
		for _, r := range roots {
			if strings.HasPrefix(p, r+"/") {
				return r
			}
		}
		return ""
	}
	paths := make([]string, 0, len(e.files))
	for p := range e.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	dirs := map[string]bool{}
	for _, p := range paths {
		root := under(p)
		if root == "" {
			continue
		}
		for d := path.Dir(p); d != root && d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
			if !b.File(s) {
				return nil
			}
			s.Add(statediff.Item{Kind: statediff.File, Key: key(d), Type: statediff.TypeDir, Mode: "755"})
		}
		if !b.File(s) {
			return nil
		}
		it := statediff.Item{Kind: statediff.File, Key: key(p), Type: statediff.TypeFile, Mode: "644"}
		data := e.files[p]
		if b.Hashable(int64(len(data))) {
			b.Content(&it, data)
		} else {
			it.Size, it.Hash = int64(len(data)), statediff.Unhashed(int64(len(data)), 0)
		}
		s.Add(it)
	}
	return nil
}
