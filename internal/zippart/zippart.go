// Package zippart reads one member of a zip archive (a part of an ODF or
// Office Open XML document) within a size bound: the archive's own
// declared size is checked first, and the read stops one byte past the
// bound whatever the archive declared, so a hostile document can neither
// claim a small size and inflate to a large one nor make a reader
// allocate more than the bound.
package zippart

import (
	"archive/zip"
	"fmt"
	"io"
)

// Read returns the bytes of f, refusing a part of more than max bytes.
// Errors name the part.
func Read(f *zip.File, max int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(max) {
		return nil, fmt.Errorf("%s is %d bytes, more than %d", f.Name, f.UncompressedSize64, max)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is more than %d bytes", f.Name, max)
	}
	return b, nil
}
