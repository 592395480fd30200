package xdesktop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/observe"
)

// The files an agent can reach (ReadFile, WriteFile, setup steps) are
// opened through os.Root, relative to the allowed folder and without
// following any link out of it. Checking a path and then opening it by
// name would let a link that changes in between lead anywhere.

// allowed are the folders of the desktop's folder that ReadFile and
// WriteFile may touch.
var allowed = []string{"home", "tmp"}

// openRoots opens the desktop's folder and records the allowed folders.
func (d *Desktop) openRoots() error {
	var err error
	if d.base, err = os.OpenRoot(d.s.base); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(d.s.base)
	if err != nil {
		d.base.Close()
		return err
	}
	for _, name := range allowed {
		d.roots = append(d.roots, filepath.Join(d.s.base, name))
		if real != d.s.base {
			d.roots = append(d.roots, filepath.Join(real, name))
		}
	}
	return nil
}

// errEscapes is the error os.Root gives for a name that leads out of it.
// The os package does not export it; asking for ".." provokes it.
var errEscapes = sync.OnceValue(func() error {
	r, err := os.OpenRoot(os.TempDir())
	if err != nil {
		return errors.New("no escape error") // matches nothing
	}
	defer r.Close()
	_, err = r.Open("..")
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return errors.New("no escape error")
})

// within confines p to an allowed folder: "~/" is the home folder, and
// ".." is refused. It returns the folder, opened (the caller closes it),
// and p relative to it.
func (d *Desktop) within(p string) (*os.Root, string, error) {
	full := p
	if full == "~" || strings.HasPrefix(full, "~/") {
		full = d.s.home + strings.TrimPrefix(full, "~")
	}
	if !filepath.IsAbs(full) {
		return nil, "", fmt.Errorf("%w: %q is not absolute", env.ErrForbidden, p)
	}
	for _, part := range strings.Split(full, "/") {
		if part == ".." {
			return nil, "", fmt.Errorf("%w: %q contains ..", env.ErrForbidden, p)
		}
	}
	full = filepath.Clean(full)
	for i, root := range d.roots {
		rel, ok := strings.CutPrefix(full, root+"/")
		if full == root {
			rel, ok = ".", true
		}
		if !ok {
			continue
		}
		name := filepath.Base(d.roots[i])
		r, err := d.openAllowed(name)
		return r, rel, err
	}
	return nil, "", fmt.Errorf("%w: %q is outside the allowed folders %v", env.ErrForbidden, p, d.roots[:len(allowed)])
}

// openAllowed opens an allowed folder of the desktop's folder, which must
// be that folder itself, not a link put in its place.
func (d *Desktop) openAllowed(name string) (*os.Root, error) {
	st, err := d.base.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: the desktop's %s folder was replaced", env.ErrForbidden, name)
	}
	r, err := d.base.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	if now, err := r.Stat("."); err != nil || !os.SameFile(st, now) {
		r.Close()
		return nil, fmt.Errorf("%w: the desktop's %s folder was replaced", env.ErrForbidden, name)
	}
	return r, nil
}

// fileError names p in err and classifies it: a way out of the allowed
// folders is forbidden, a missing file does not exist.
func (d *Desktop) fileError(p string, err error) error {
	switch {
	case errors.Is(err, errEscapes()):
		return fmt.Errorf("%w: %q leads outside the allowed folders %v", env.ErrForbidden, p, d.roots[:len(allowed)])
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", p, observe.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// ReadFile reads a regular file within the allowed folders. Reading a
// folder is an error that matches syscall.EISDIR.
func (d *Desktop) ReadFile(ctx context.Context, p string) ([]byte, error) {
	r, rel, err := d.within(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// Without blocking: a named pipe must not hold the reader forever.
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, d.fileError(p, err)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, d.fileError(p, err)
	case st.IsDir():
		return nil, &fs.PathError{Op: "read", Path: p, Err: syscall.EISDIR}
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%w: %s is not a regular file (%s)", env.ErrForbidden, p, st.Mode().Type())
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, d.fileError(p, err)
	}
	return b, nil
}

// WriteFile writes a file within the allowed folders, making its folders.
func (d *Desktop) WriteFile(ctx context.Context, p string, data []byte) error {
	_, err := d.writeFile(p, data, nil, false)
	return err
}

// writeFile writes data to p within the allowed folders, making the
// folders it lacks and removing them again if the write fails. A mode,
// if given, is set on the file written. With keep, a file already there
// is kept as it is and writeFile reports false.
func (d *Desktop) writeFile(p string, data []byte, mode *fs.FileMode, keep bool) (written bool, err error) {
	r, rel, err := d.within(p)
	if err != nil {
		return false, err
	}
	defer r.Close()
	if rel == "." {
		return false, &fs.PathError{Op: "write", Path: p, Err: syscall.EISDIR}
	}
	made, err := mkdirs(r, filepath.Dir(rel))
	defer func() {
		if err == nil || len(made) == 0 {
			return
		}
		// The file, if made, is in a made folder: remove it and them.
		r.Remove(rel)
		for i := len(made) - 1; i >= 0; i-- {
			r.Remove(made[i])
		}
	}()
	if err != nil {
		return false, d.fileError(p, err)
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if keep {
		flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	f, err := r.OpenFile(rel, flag, 0o644)
	if keep && errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, d.fileError(p, err)
	}
	_, err = f.Write(data)
	if err == nil && mode != nil {
		err = f.Chmod(*mode) // on the file opened, not on a name that may change
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, d.fileError(p, err)
	}
	return true, nil
}

// mkdirs makes the missing folders of dir, a path relative to r, and
// returns those it made, outermost first.
func mkdirs(r *os.Root, dir string) ([]string, error) {
	if dir == "." {
		return nil, nil
	}
	var made []string
	parts := strings.Split(dir, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		switch err := r.Mkdir(sub, 0o755); {
		case err == nil:
			made = append(made, sub)
		case errors.Is(err, fs.ErrExist):
			// A folder already, or a file that makes the next step fail.
		default:
			return made, err
		}
	}
	return made, nil
}

// resetHome empties the home folder and copies the template into it.
func (d *Desktop) resetHome() error {
	if err := os.RemoveAll(d.s.home); err != nil {
		return err
	}
	if err := os.MkdirAll(d.s.home, 0o700); err != nil {
		return err
	}
	if d.cfg.HomeTemplate == "" {
		return nil
	}
	r, err := d.openAllowed("home")
	if err != nil {
		return err
	}
	defer r.Close()
	return copyInto(r, os.DirFS(d.cfg.HomeTemplate))
}

// copyInto copies the folders and regular files of src into r, as
// os.CopyFS does, but through r: a process of the last episode that
// outlived it cannot lead the copy out of the home with a link.
func copyInto(r *os.Root, src fs.FS) error {
	return fs.WalkDir(src, ".", func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == ".":
			return nil
		case e.IsDir():
			return r.Mkdir(p, 0o777)
		case !e.Type().IsRegular():
			return &fs.PathError{Op: "copy", Path: p, Err: fs.ErrInvalid}
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		in, err := src.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := r.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666|info.Mode()&0o111)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	})
}
