package mem

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
)

// roots are the folders ReadFile and WriteFile may touch, as on the
// desktop: the home folder and the temporary folder.
var roots = []string{Home, "/tmp"}

// confine turns p into a clean absolute path under a root: "~/" is the
// home folder; a relative path, a path with "..", and one outside the
// roots are forbidden, as the desktop forbids them.
func confine(p string) (string, error) {
	full := p
	if full == "~" || strings.HasPrefix(full, "~/") {
		full = Home + strings.TrimPrefix(full, "~")
	}
	if !path.IsAbs(full) {
		return "", fmt.Errorf("%w: %q is not absolute", env.ErrForbidden, p)
	}
	if slices.Contains(strings.Split(full, "/"), "..") {
		return "", fmt.Errorf("%w: %q contains ..", env.ErrForbidden, p)
	}
	full = path.Clean(full)
	for _, r := range roots {
		if full == r || strings.HasPrefix(full, r+"/") {
			return full, nil
		}
	}
	return "", fmt.Errorf("%w: %q is outside the allowed folders %v", env.ErrForbidden, p, roots)
}

// isDir reports whether full is a folder: a root, or a folder of a file.
func (e *Env) isDir(full string) bool {
	if slices.Contains(roots, full) {
		return true
	}
	for f := range e.files {
		if strings.HasPrefix(f, full+"/") {
			return true
		}
	}
	return false
}

func (e *Env) readLocked(p string) ([]byte, error) {
	full, err := confine(p)
	if err != nil {
		return nil, err
	}
	if b, ok := e.files[full]; ok {
		return append([]byte{}, b...), nil
	}
	if e.isDir(full) {
		return nil, &fs.PathError{Op: "read", Path: p, Err: syscall.EISDIR}
	}
	return nil, fmt.Errorf("%s: %w", p, observe.ErrNotFound)
}

// writeLocked writes a file, making its folders; a folder in its place,
// or a file in the place of one of its folders, fails.
func (e *Env) writeLocked(p string, data []byte) error {
	full, err := confine(p)
	if err != nil {
		return err
	}
	if e.isDir(full) {
		return &fs.PathError{Op: "write", Path: p, Err: syscall.EISDIR}
	}
	for d := path.Dir(full); !slices.Contains(roots, d) && d != "/"; d = path.Dir(d) {
		if _, ok := e.files[d]; ok {
			return &fs.PathError{Op: "write", Path: p, Err: syscall.ENOTDIR}
		}
	}
	e.files[full] = append([]byte{}, data...)
	return nil
}
