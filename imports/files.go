package imports

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
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
// not in one.
func Revision(src string) string {
	out, err := exec.Command("git", "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
