// Package score aggregates task verdicts into benchmark scores: success
// rate, the level-weighted score, breakdowns, statistics over repeated runs,
// milestone averages, and the CC-Score of action sequences with its BLEU.
package score

import (
	"math"
	"slices"
)

// CharBLEU is BLEU-4 over the characters of two strings, as CC-Score uses
// for typed text and key combinations. It equals BLEU on the strings' runes
// but counts n-grams by sorting packed keys instead of hashing, which is
// several times faster on the short strings it sees.
func CharBLEU(candidate, reference string) float64 {
	c, r := []rune(candidate), []rune(reference)
	const maxN = 4
	if len(c) < maxN || len(r) == 0 {
		return 0 // some order has no n-gram, so its precision is 0
	}
	cb := make([]charGram, 0, len(c))
	rb := make([]charGram, 0, len(r))
	logSum := 0.0
	for n := 1; n <= maxN; n++ {
		cb, rb = charGrams(c, n, cb), charGrams(r, n, rb)
		m := clippedMatches(cb, rb)
		if m == 0 {
			return 0
		}
		logSum += math.Log(float64(m) / float64(len(cb)))
	}
	bp := 1.0
	if len(c) < len(r) {
		bp = math.Exp(1 - float64(len(r))/float64(len(c)))
	}
	return bp * math.Exp(logSum/maxN)
}

// charGram packs up to four runes (21 bits each) into two words.
type charGram struct{ hi, lo uint64 }

func (a charGram) cmp(b charGram) int {
	switch {
	case a.hi < b.hi:
		return -1
	case a.hi > b.hi:
		return 1
	case a.lo < b.lo:
		return -1
	case a.lo > b.lo:
		return 1
	}
	return 0
}

// charGrams returns the sorted n-grams of r (n <= 4), reusing buf.
func charGrams(r []rune, n int, buf []charGram) []charGram {
	buf = buf[:0]
	for i := 0; i+n <= len(r); i++ {
		var g charGram
		for j := 0; j < n; j++ {
			v := uint64(r[i+j]) & 0x1FFFFF
			if j < 3 {
				g.hi |= v << (21 * j)
			} else {
				g.lo = v
			}
		}
		buf = append(buf, g)
	}
	slices.SortFunc(buf, charGram.cmp)
	return buf
}

// clippedMatches is the size of the multiset intersection of two sorted
// lists: each candidate n-gram counts at most as often as the reference has it.
func clippedMatches(c, r []charGram) int {
	i, j, m := 0, 0, 0
	for i < len(c) && j < len(r) {
		switch c[i].cmp(r[j]) {
		case 0:
			m++
			i++
			j++
		case -1:
			i++
		default:
			j++
		}
	}
	return m
}
