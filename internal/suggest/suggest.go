// Package suggest finds the known name nearest a misspelt one, for
// messages that say "did you mean ...".
package suggest

import (
	"strings"

	"github.com/agnivade/levenshtein"
)

// Nearest returns the name of known nearest to name by edit distance,
// case aside, when it is near enough to be a misspelling of it: at most
// two edits, and at most half of name's letters ("nmae" is "name"). ok is false when no
// name is that near, or when name is itself known.
func Nearest(name string, known []string) (string, bool) {
	l := strings.ToLower(name)
	best, dist := "", -1
	for _, k := range known {
		d := levenshtein.ComputeDistance(l, strings.ToLower(k))
		if d == 0 {
			return "", false
		}
		if dist < 0 || d < dist {
			best, dist = k, d
		}
	}
	if dist < 0 || dist > 2 || 2*dist > len([]rune(l)) {
		return "", false
	}
	return best, true
}

// DidYouMean is `; did you mean "X"?` for the name of known nearest to
// name, or "" when there is none.
func DidYouMean(name string, known []string) string {
	if s, ok := Nearest(name, known); ok {
		return `; did you mean "` + s + `"?`
	}
	return ""
}
