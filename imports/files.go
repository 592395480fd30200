package imports

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// MaxTaskFile bounds the size of a benchmark's task file.
const MaxTaskFile = 1 << 20

// ReadTaskFile reads a benchmark's task file, refusing one larger than
// MaxTaskFile.
func ReadTaskFile(p string) ([]byte, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxTaskFile {
		return nil, fmt.Errorf("larger than %d bytes", MaxTaskFile)
	}
	return os.ReadFile(p)
}

// Revision is the git commit of the checkout src is in, or "" when it is
// not in one (or git does not answer within 10 s).
func Revision(src string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// GroupFiles lists, sorted, the regular files with one of the extensions
// in the group folders directly under dir (dir/GROUP/NAME.EXT), as the
// benchmarks lay out their task files.
func GroupFiles(dir string, exts ...string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && slices.Contains(exts, filepath.Ext(p)) && filepath.Dir(filepath.Dir(p)) == dir {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}
