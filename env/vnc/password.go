package vnc

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// ReadPasswordFile reads a VNC password from the first line of a file,
// whole (a VNC password may hold spaces). A file that others may read is
// let through with a warning to warn, as mounted secrets often are.
func ReadPasswordFile(path string, warn io.Writer) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("VNC password file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	password := strings.TrimSuffix(line, "\r")
	if password == "" {
		return "", fmt.Errorf("VNC password file %s has no password on its first line", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 && warn != nil {
		fmt.Fprintf(warn, "warning: VNC password file %s is readable by other users (mode %v); chmod 600 it\n", path, fi.Mode().Perm())
	}
	return password, nil
}
