// Package english writes the small words of messages: counts with their
// nouns in the right number, and the article before a word.
package english

import (
	"strconv"
	"strings"
	"unicode"
)

// Count writes n and the noun, in the plural unless n is 1: "1 task",
// "2 tasks", "3 entries" (a noun in a consonant and -y takes -ies), "2
// matches" (-s, -x, -z, -ch and -sh take -es).
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + Plural(n, noun)
}

// Plural is the noun in the plural unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 || noun == "" {
		return noun
	}
	switch {
	case strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "z"),
		strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		return noun + "es"
	}
	return noun + "s"
}

// A writes the indefinite article and the word: "a browser", "an
// android", "an x11" (said "ex-eleven"), "an exact". The article goes by
// the word's first letter, as the names of environments, checks and
// actions are said.
func A(word string) string {
	if an(word) {
		return "an " + word
	}
	return "a " + word
}

func an(word string) bool {
	w := strings.ToLower(strings.TrimSpace(word))
	if w == "" {
		return false
	}
	switch {
	case strings.ContainsRune("aeiou", rune(w[0])):
		return true
	case len(w) > 1 && w[0] == 'x' && unicode.IsDigit(rune(w[1])):
		return true
	}
	return false
}
