package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/proctor-eval/proctor/env"
)

// maxFile bounds a file read back.
const maxFile = 64 << 20

// home is the episode's folder.
func (b *Browser) home() (string, error) {
	ep, err := b.episode()
	if err != nil {
		return "", err
	}
	return ep.home, nil
}

// rel turns a path of the episode's folder (~/a/b, or the folder's own
// absolute path) into one relative to it; any other path is forbidden.
func (b *Browser) rel(p string) (home, rel string, err error) {
	home, err = b.home()
	if err != nil {
		return "", "", err
	}
	switch {
	case p == "~":
		rel = "."
	case strings.HasPrefix(p, "~/"):
		rel = p[2:]
	case p == home || strings.HasPrefix(p, home+"/"):
		rel = strings.TrimPrefix(strings.TrimPrefix(p, home), "/")
	default:
		return "", "", fmt.Errorf("%w: %s is outside the browser's folder (~, where downloads go to ~/Downloads)", env.ErrForbidden, p)
	}
	rel = path.Clean("./" + rel)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", fmt.Errorf("%w: %s leaves the browser's folder", env.ErrForbidden, p)
	}
	return home, rel, nil
}

// path is the absolute path of a file of the episode's folder.
func (b *Browser) path(p string) (string, error) {
	home, rel, err := b.rel(p)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, rel), nil
}

// ReadFile reads a file of the episode's folder (a download, say).
func (b *Browser) ReadFile(_ context.Context, p string) ([]byte, error) {
	home, rel, err := b.rel(p)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(home)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(rel)
	if err != nil {
		return nil, fileError(p, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fileError(p, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", env.ErrForbidden, p)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fileError(p, err)
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("%s is larger than %d MiB", p, maxFile>>20)
	}
	return data, nil
}

// WriteFile writes a file of the episode's folder, making its folders.
func (b *Browser) WriteFile(_ context.Context, p string, data []byte) error {
	b.use()
	home, rel, err := b.rel(p)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(home)
	if err != nil {
		return err
	}
	defer r.Close()
	if dir := path.Dir(rel); dir != "." {
		if err := r.MkdirAll(dir, 0o700); err != nil {
			return fileError(p, err)
		}
	}
	return fileError(p, r.WriteFile(rel, data, 0o600))
}

// fileError says which file, and maps a missing file to env.ErrNotFound.
func fileError(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s", env.ErrNotFound, p)
	}
	return fmt.Errorf("%s: %w", p, err)
}
