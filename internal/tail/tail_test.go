package tail

import (
	"strings"
	"sync"
	"testing"
)

func TestBuffer(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
		lines  string // Lines(2)
	}{
		{"nothing", 8, nil, "", "nothing"},
		{"white space only", 8, []string{" \n\n"}, "", "nothing"},
		{"under the bound", 16, []string{"a\n", "b\n"}, "a\nb", "a | b"},
		{"the bound crossed", 6, []string{"one\n", "two\n", "three\n"}, "three", "three"},
		{"a write past the bound", 4, []string{"x", "abcdefgh"}, "efgh", "efgh"},
		{"the last two lines", 64, []string{"1\n2\n", "3\n4\n"}, "1\n2\n3\n4", "3 | 4"},
		{"zero keeps nothing", 0, []string{"lost"}, "", "nothing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := New(tc.max)
			for _, w := range tc.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := b.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if got := b.Lines(2); got != tc.lines {
				t.Errorf("Lines(2) = %q, want %q", got, tc.lines)
			}
		})
	}
}

// Writers at once keep whole writes: the end is one of them, never torn.
func TestBufferConcurrent(t *testing.T) {
	b := New(10)
	var wg sync.WaitGroup
	for _, w := range []string{"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"} {
		wg.Go(func() {
			for range 1000 {
				b.Write([]byte(w))
			}
		})
	}
	wg.Wait()
	if s := b.String(); len(s) != 10 || strings.Count(s, s[:1]) != 10 {
		t.Fatalf("String() = %q, want one whole write", s)
	}
}
