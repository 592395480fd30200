// Package tail keeps the end of a process's output: the last bytes
// written, for the error that says why the process did not start.
package tail

import (
	"strings"
	"sync"
)

// Buffer is an io.Writer that keeps the last Max bytes written to it. It
// is safe for concurrent use; its zero value keeps nothing.
type Buffer struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

// New returns a Buffer that keeps the last max bytes.
func New(max int) *Buffer { return &Buffer{Max: max} }

// Write keeps the end of what was written so far; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(p) >= b.Max {
		b.buf = append(b.buf[:0], p[len(p)-b.Max:]...)
		return len(p), nil
	}
	if over := len(b.buf) + len(p) - b.Max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// String returns what is kept, without surrounding white space.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(string(b.buf))
}

// Lines returns the last n lines kept, joined with " | " on one line,
// or "nothing" when nothing was written.
func (b *Buffer) Lines(n int) string {
	s := b.String()
	if s == "" {
		return "nothing"
	}
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
