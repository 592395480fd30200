package task

import (
	"fmt"
	"os"
	"path/filepath"
)

// ReadAsset reads an asset of the suite. It is opened beneath the suite's
// assets folder (os.Root), so neither ".." nor a symbolic link can make it
// read a file outside that folder: an asset that links out is refused.
func (s *Suite) ReadAsset(name string) ([]byte, error) {
	dir := filepath.Join(s.Dir, AssetDir)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("asset %q: %w", name, err)
	}
	defer root.Close()
	b, err := root.ReadFile(filepath.FromSlash(name))
	if err != nil {
		return nil, fmt.Errorf("asset %q in %s: %w", name, dir, err)
	}
	return b, nil
}
