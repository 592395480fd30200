//go:build linux

package guest

import "testing"

// TestPageOutExecutable checks that the program's file mappings are
// advised and that the program runs on after it (the pages come back as
// they are used).
func TestPageOutExecutable(t *testing.T) {
	if n := pageOutExecutable(); n <= 0 {
		t.Fatalf("advised %d bytes of the program's mappings", n)
	}
	// Code paged out runs again: a handler's work after it.
	tr := &trimmer{after: 1, free: freeMemory}
	done := make(chan struct{})
	tr.free = func() { freeMemory(); close(done) }
	tr.begin()
	tr.end()
	<-done
}
